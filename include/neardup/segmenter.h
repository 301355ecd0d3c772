// Copyright 2026 The neardup Authors.
//
// jieba-compatible Chinese word segmentation. TF-IDF keywords (extract_tags)
// and IDF tables are in keywords.h.
//
// Usage guide
// -----------
//   neardup::SegmenterOptions options;            // python3-jieba's data, HMM on
//   auto seg = neardup::Segmenter::Open(options);
//   if (!seg.ok()) { std::cerr << seg.status().ToString() << "\n"; return 1; }
//   std::vector<std::string_view> words;
//   (*seg)->Cut("我来到北京清华大学", &words);    // 我 / 来到 / 北京 / 清华大学
//
// Compatibility contract
// ----------------------
// Segmenter::Cut(text) returns the same tokens as python3-jieba 0.42.1's
// jieba.lcut(text) (cut_all=False, HMM per options) for every valid UTF-8
// text, when it reads the same data files: dict.txt, finalseg/prob_start.py,
// finalseg/prob_trans.py and finalseg/prob_emit.py of the jieba directory.
// Every character, whitespace included, ends up in exactly one token, so the
// tokens concatenate to the input. Bytes that are not valid UTF-8 (overlong
// forms, surrogates, truncated sequences, stray continuation bytes) are
// treated as single characters outside every class jieba knows: each becomes
// a one-byte token of its own. The segmenter never reads outside `text`.
//
// POS tags (CutWithPos, Tag): a word's tag is the dictionary's (dict.txt's
// third column, overridden by user dictionaries). Words without a dictionary
// tag get "m" when they consist of ASCII digits and '.' with at least one
// digit, "eng" when they consist of ASCII letters and digits with at least one
// letter, and "x" otherwise. This is a neardup decision (SPEC section 5), not
// jieba.posseg, whose own HMM tagger also guesses tags for unknown Chinese
// words.
//
// Thread safety: a Segmenter is built by Open() and immutable afterwards; its
// const methods may be called from any number of threads at once. Cut keeps a
// per-thread scratch buffer (grown to the longest text seen by that thread).

#ifndef NEARDUP_SEGMENTER_H_
#define NEARDUP_SEGMENTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/status.h"

namespace neardup {

struct SegmenterOptions {
  // The python3-jieba package directory that holds dict.txt, finalseg/ and
  // analyse/. Empty (default): $NEARDUP_JIEBA_DIR when set and non-empty, else
  // /usr/lib/python3/dist-packages/jieba (Debian's python3-jieba).
  std::string jieba_dir;
  // jieba-format user dictionaries, loaded in order after dict.txt with
  // jieba.load_userdict semantics: one entry per line, "word [freq] [tag]"
  // (freq: ASCII digits, tag: lower-case ASCII letters, separated by single
  // spaces; a leading BOM and surrounding ASCII whitespace are ignored, blank
  // lines skipped). A missing freq gets jieba's suggest_freq(word, False)
  // computed against the dictionary as loaded so far: the smallest frequency
  // that makes the non-HMM segmentation keep the word whole. freq 0 makes the
  // HMM split the word into characters (jieba's add_force_split). Default: none.
  std::vector<std::string> user_dicts;
  // jieba.cut(text, HMM=True): runs of unknown single characters are
  // segmented by the BMES hidden Markov model. Default: true.
  bool hmm = true;
};

// The default jieba directory as described for SegmenterOptions::jieba_dir.
std::string DefaultJiebaDir();

struct Token {
  std::string_view word;  // a view into the text passed to CutWithPos
  std::string_view pos;   // a view into storage owned by the Segmenter
};

class Segmenter {
 public:
  // Loads the dictionary, the HMM model and the user dictionaries. Errors
  // (NotFound / IOError / Corruption) name the file (and line) and say how to
  // install the data.
  static Result<std::unique_ptr<Segmenter>> Open(const SegmenterOptions& options);

  ~Segmenter();
  Segmenter(const Segmenter&) = delete;
  Segmenter& operator=(const Segmenter&) = delete;

  // Replaces *words with the tokens of `utf8_text` (== jieba.lcut(text)). The
  // views point into `utf8_text`, which must outlive them.
  // REQUIRES: words != nullptr
  void Cut(std::string_view utf8_text, std::vector<std::string_view>* words) const;

  // Same tokens as Cut, each with its POS tag (see the header comment).
  // REQUIRES: tokens != nullptr
  void CutWithPos(std::string_view utf8_text, std::vector<Token>* tokens) const;

  // Cut, plus each token's word id (WordId(words[i]), computed along the
  // cut): (*ids)[i] belongs to (*words)[i].
  // REQUIRES: words != nullptr, ids != nullptr
  void CutWithWordIds(std::string_view utf8_text, std::vector<std::string_view>* words,
                      std::vector<int32_t>* ids) const;
  // A dense id in [0, word_id_count()) for every word of the dictionary and
  // every prefix of one (jieba's FREQ keys, frequency 0 included), -1 for
  // any other string (the empty one included). Lets callers keep per-word
  // data in flat arrays instead of string-keyed maps.
  int32_t WordId(std::string_view word) const;
  size_t word_id_count() const;

  // The dictionary's POS tag of `word`, or nullopt when the word has none.
  std::optional<std::string_view> Tag(std::string_view word) const;
  // The tag CutWithPos gives `word`: Tag(word) or the eng / m / x fallback.
  std::string_view TagOrFallback(std::string_view word) const;
  // jieba's FREQ.get(word, 0): the word's dictionary frequency; 0 for unknown
  // words and for prefixes that are not words themselves.
  int64_t Frequency(std::string_view word) const;
  // The sum of all frequencies (jieba's Tokenizer.total).
  int64_t total_frequency() const;
  const SegmenterOptions& options() const;

 private:
  struct Impl;
  explicit Segmenter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup

#endif  // NEARDUP_SEGMENTER_H_
