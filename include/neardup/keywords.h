// Copyright 2026 The neardup Authors.
//
// TF-IDF keywords and IDF tables (the nlp layer, on top of segmenter.h): jieba's
// IDF table format (IdfTable), jieba.analyse.extract_tags (KeywordExtractor)
// and IDF training from a user's corpus (IdfBuilder, SPEC section 6).
//
// Usage guide
// -----------
//   auto seg = neardup::Segmenter::Open(neardup::SegmenterOptions());
//   auto idf = neardup::IdfTable::LoadDefault();   // <jieba_dir>/analyse/idf.txt
//   if (!seg.ok() || !idf.ok()) return 1;
//   neardup::KeywordExtractor extractor(seg->get(), &*idf);
//   std::vector<neardup::Keyword> keywords;
//   extractor.Extract(text, 20, &keywords);        // == jieba.analyse.extract_tags(
//                                                  //      text, topK=20, withWeight=True)
//
//   neardup::IdfBuilder builder(seg->get());       // an IDF table of your own corpus
//   for (const auto& doc : corpus) builder.AddDocument(normalized_text);
//   neardup::IdfTable table = builder.Build(neardup::IdfFormula::kSeed003);
//   NEARDUP_RETURN_IF_ERROR(table.Save("idf.txt")); // usable as --idf / PipelineOptions::idf_path
//
// Compatibility contract
// ----------------------
// KeywordExtractor::Extract equals jieba.analyse.extract_tags(text, topK,
// withWeight=True) with jieba's default stop words and the given IDF table:
// same words, same order (ties keep first-occurrence order), weights computed
// with the same floating-point operations (bitwise equal on the same libm).
//
// IDF training: the terms counted are exactly the words extract_tags (and the
// tfidf, improved and entropy weights) looks up: the jieba tokens
// (Segmenter::Cut) t with len(t.strip()) >= 2 whose lower-case form is not one
// of jieba's stop words. df(t) = the number of documents containing t at least
// once; N = the number of documents added (empty ones included). log is the
// natural logarithm, as in jieba's own idf.txt.
//   seed003: idf = log(N / (df + 1))
//   seed000: idf = log(N / df + 0.01)
// Words appear in the built table in order of first appearance in the corpus.
//
// Thread safety: IdfTable is immutable after loading. KeywordExtractor is
// immutable and thread-safe as long as the Segmenter and IdfTable it points
// to outlive it. DistinctTerms may be called from any number of threads; an
// IdfBuilder is not shared (add terms from one thread).

#ifndef NEARDUP_KEYWORDS_H_
#define NEARDUP_KEYWORDS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "neardup/segmenter.h"
#include "neardup/status.h"

namespace neardup {

// An IDF table in jieba's analyse/idf.txt format: one "word idf" pair per
// line, separated by one ASCII space. Later lines override earlier ones for
// the same word (as in jieba). Immutable after loading; cheap to move.
class IdfTable {
 public:
  // An empty table (median 0).
  IdfTable();
  ~IdfTable();
  IdfTable(IdfTable&&) noexcept;
  IdfTable& operator=(IdfTable&&) noexcept;

  // The largest |idf| Load accepts. Counted IDF values lie within +-45
  // (log of a ratio of 64-bit counts); anything far beyond is a broken file.
  static constexpr double kMaxAbsIdf = 1e6;

  // Reads `path`. A line that is not "word number", or whose number is not
  // finite (nan, inf) or exceeds kMaxAbsIdf in magnitude, gives a Corruption
  // error "<path>:<line>: ...". A missing file gives NotFound.
  static Result<IdfTable> Load(const std::string& path);
  // <jieba_dir>/analyse/idf.txt; an empty jieba_dir means DefaultJiebaDir().
  static Result<IdfTable> LoadDefault(const std::string& jieba_dir = "");
  // Builds a table from (word, idf) pairs; later pairs override earlier ones.
  static IdfTable FromEntries(const std::vector<std::pair<std::string, double>>& entries);

  // The word's IDF; median() for words not in the table.
  double Idf(std::string_view word) const;
  // The word's IDF, or nullopt when it is not in the table.
  std::optional<double> Find(std::string_view word) const;
  // jieba's median_idf: sorted(values)[size() / 2]; 0 for an empty table.
  double median() const;
  size_t size() const;
  // (word, idf) pairs, one per distinct word, in order of first appearance.
  std::vector<std::pair<std::string_view, double>> Entries() const;

  // Writes the table in idf.txt format ("word idf\n", shortest round-trip
  // decimal), in Entries() order. Returns IOError on failure, and
  // InvalidArgument (writing nothing) when a value is one Load refuses.
  Status Save(const std::string& path) const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

struct Keyword {
  std::string word;
  double weight = 0;
};

// jieba.analyse.extract_tags(text, topK, withWeight=True).
class KeywordExtractor {
 public:
  // Does not take ownership; both must outlive the extractor.
  // REQUIRES: segmenter != nullptr, idf != nullptr
  KeywordExtractor(const Segmenter* segmenter, const IdfTable* idf);

  // Replaces *out with the top_k keywords of `text` by weight, highest first.
  // top_k <= 0: all candidate words.
  // REQUIRES: out != nullptr
  void Extract(std::string_view text, int top_k, std::vector<Keyword>* out) const;

  // jieba's KeywordExtractor.STOP_WORDS (31 lower-case English words).
  static bool IsStopWord(std::string_view lower_case_word);

 private:
  // The IDF table indexed by the segmenter's word ids, built on first use.
  struct IdIndex;
  const IdIndex& Index() const;

  const Segmenter* segmenter_;
  const IdfTable* idf_;
  std::shared_ptr<IdIndex> index_;
};

// IDF training.

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

#endif  // NEARDUP_KEYWORDS_H_
