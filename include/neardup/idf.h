// Copyright 2026 The neardup Authors.
//
// IDF training (SPEC section 6): an IDF table from a user's corpus, in jieba's
// idf.txt format (IdfTable::Save), usable in place of jieba's default table
// (PipelineOptions::idf_path, --idf).
//
//   neardup::IdfBuilder builder(segmenter.get());
//   for (const auto& doc : corpus) builder.AddDocument(normalized_text);
//   neardup::IdfTable table = builder.Build(neardup::IdfFormula::kSeed003);
//   NEARDUP_RETURN_IF_ERROR(table.Save("idf.txt"));
//
// The terms counted are exactly the words extract_tags (and the tfidf,
// improved and entropy weights) looks up: the jieba tokens (Segmenter::Cut)
// t with len(t.strip()) >= 2 whose lower-case form is not one of jieba's stop
// words. df(t) = the number of documents containing t at least once; N = the
// number of documents added (empty ones included). log is the natural
// logarithm, as in jieba's own idf.txt.
//   seed003: idf = log(N / (df + 1))
//   seed000: idf = log(N / df + 0.01)
// Words appear in the table in order of first appearance in the corpus.
//
// Thread safety: DistinctTerms may be called from any number of threads; an
// IdfBuilder is not shared (add terms from one thread).

#ifndef NEARDUP_IDF_H_
#define NEARDUP_IDF_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "neardup/segmenter.h"
#include "neardup/status.h"

namespace neardup {

enum class IdfFormula {
  kSeed003,  // log(N / (df + 1))
  kSeed000,  // log(N / df + 0.01)
};

// "seed003" or "seed000".
Result<IdfFormula> ParseIdfFormula(std::string_view name);
std::string_view IdfFormulaName(IdfFormula formula);
// The formula's IDF of a word found in `df` of `n` documents. REQUIRES: df >= 1
double IdfValue(IdfFormula formula, uint64_t n, uint64_t df);

// The distinct counted terms of `text` (see the header comment), in order of
// first occurrence; views into `text`.
void DistinctTerms(const Segmenter& segmenter, std::string_view text,
                   std::vector<std::string_view>* out);

class IdfBuilder {
 public:
  // REQUIRES: segmenter != nullptr for AddDocument (AddTerms needs none).
  explicit IdfBuilder(const Segmenter* segmenter) : segmenter_(segmenter) {}

  // Counts one document (normally normalized as the pipeline normalizes).
  void AddDocument(std::string_view text);
  // Counts one document given its distinct terms (from DistinctTerms).
  void AddTerms(std::span<const std::string_view> distinct_terms);

  uint64_t documents() const { return documents_; }
  size_t terms() const { return order_.size(); }
  IdfTable Build(IdfFormula formula) const;

 private:
  const Segmenter* segmenter_;
  uint64_t documents_ = 0;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::pair<std::string, uint64_t>> order_;  // (term, df)
};

}  // namespace neardup

#endif  // NEARDUP_IDF_H_
