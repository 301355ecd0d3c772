// Copyright 2026 The neardup Authors.
//
// Features and weights: a document becomes a list of (feature, weight) pairs,
// which SimHash() turns into a fingerprint. This is the pluggable stage between
// segmentation and fingerprinting (SPEC section 6).
//
//   neardup::FeatureOptions options;                  // words, tfidf, top 20
//   auto extractor = neardup::FeatureExtractor::Create(options, segmenter, &idf);
//   std::vector<neardup::WeightedFeature> features;
//   (*extractor)->Extract(text, &features);
//   neardup::Fingerprint fp = neardup::SimHash(features, 64);
//
// Feature kinds:
//   words     jieba tokens (Segmenter::Cut). Tokens without a letter, digit or
//             Han character (white space, punctuation, symbols) are not features.
//   chars:N   overlapping N-grams of code points over the letters, digits and
//             Han characters of the text (white space and punctuation removed);
//             a text with fewer than N such characters is one feature.
//   sentences sentences (seed 004): the text is split after each of 。？！?! and
//             after each line break (\n; a \r before it belongs to the break);
//             the delimiter stays with its sentence, surrounding white space
//             is trimmed and empty sentences are skipped.
// Weight schemes:
//   uniform   each distinct feature weight 1
//   tf        weight = count in the document
//   tfidf     words: exactly jieba.analyse.extract_tags(text, topK, withWeight=True)
//             (words of two or more characters that are not stop words,
//             tf = count / total, weight = tf * idf, unknown words the median
//             IDF); chars:N and sentences: count / total * idf of the feature
//             (median when unknown)
//   improved  words only (seed 000): the extract_tags candidates, weight
//             tf * idf * (1 + CX + Len + Logo + Title) (see ImprovedFactor),
//             top_k by that weight, heaviest first.
//   entropy   words only (seed 003, E-SimHash): weight
//             min(W_t, sqrt((tfidf^2 + H^2) / 2)) with H the mean of the word's
//             left and right neighbour entropies (see NeighbourEntropy); the
//             top_k heaviest are output in order of first occurrence, each
//             with its position rank (0, 1, ...) that SimHash mixes into its
//             hash (PositionMask).
// top_k keeps the top_k heaviest features (ties: first occurrence first);
// 0 keeps all. Features come out in order of weight, heaviest first (tfidf) or
// in order of first occurrence (uniform, tf with top_k = 0).
//
// Thread safety: a FeatureExtractor is immutable after Create() and may be
// used from any number of threads; the Segmenter and IdfTable must outlive it.

#ifndef NEARDUP_FEATURES_H_
#define NEARDUP_FEATURES_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/keywords.h"
#include "neardup/segmenter.h"
#include "neardup/status.h"

namespace neardup {

enum class FeatureKind {
  kWords,
  kCharNgrams,
  kSentences,
};

enum class WeightScheme {
  kUniform,
  kTf,
  kTfidf,
  kImproved,
  kEntropy,
};

// E-SimHash's weight threshold W_t used when none is given (doc/methods.md
// has the measurement that chose it).
inline constexpr double kDefaultEntropyThreshold = 2.0;

struct FeatureOptions {
  FeatureKind kind = FeatureKind::kWords;
  int ngram = 3;  // N of chars:N; 1 <= N <= 16
  WeightScheme weights = WeightScheme::kTfidf;
  int top_k = 20;  // 0 = all features
  // entropy: weights above this are set to it (W_t). Must be > 0.
  double entropy_threshold = kDefaultEntropyThreshold;
};

// "words", "chars:N" (N defaults to 3 for "chars") or "sentences".
Status ParseFeatureKind(std::string_view spec, FeatureOptions* options);
// "uniform", "tf", "tfidf", "improved" or "entropy".
Result<WeightScheme> ParseWeightScheme(std::string_view name);
// The spec as ParseFeatureKind reads it, e.g. "chars:3".
std::string FeatureKindName(const FeatureOptions& options);
std::string_view WeightSchemeName(WeightScheme scheme);

struct WeightedFeature {
  std::string text;
  double weight = 0;
  // The feature's position rank (entropy weights): SimHash XORs its hash with
  // PositionMask(position, bits). -1 (every other scheme): no position.
  int position = -1;
};

// Seed 000's marker words ("Logo"): summary and turn words such as 总之 and
// 综上所述. Immutable after loading.
class MarkerLexicon {
 public:
  // One word per line (UTF-8); blank lines and lines starting with '#' are
  // skipped, surrounding ASCII white space is trimmed. A missing file is
  // NotFound; an empty lexicon is Corruption.
  static Result<MarkerLexicon> Load(const std::string& path);
  static MarkerLexicon FromWords(std::vector<std::string> words);

  // True when `word` contains one of the marker words.
  bool Matches(std::string_view word) const;
  const std::vector<std::string>& words() const { return data_->words; }

 private:
  struct Data {
    std::vector<std::string> words;
    std::unordered_set<std::string_view> set;  // views into words
    std::vector<size_t> lengths;               // distinct marker lengths in bytes
    std::vector<uint32_t> first;               // sorted distinct first code points
  };
  // Shared and immutable, so that copies keep the views valid.
  std::shared_ptr<const Data> data_ = std::make_shared<const Data>();
};

// The marker lexicon's file name inside a data directory.
inline constexpr std::string_view kMarkerWordsFile = "marker_words.txt";

// Finds the shipped data file `name`: in `data_dir` when non-empty, else in
// $NEARDUP_DATA_DIR when set and non-empty, else in the install directory
// (<datadir>/neardup), else in the source tree's data/. NotFound lists the
// places tried.
Result<std::string> FindDataFile(std::string_view name, const std::string& data_dir = "");

// Seed 000's factor (1 + CX + Len + Logo + Title) of one candidate word.
//   pos:  the word's POS tag (CX = 3 for tags starting with 'n', 2 for 'v', else 1)
//   len, min_len, max_len: code point lengths (Len = (len - min) / (max - min), 0 when max == min)
//   marker: Logo = 5 when true;  in_title: Title = 5 when true.
double ImprovedFactor(std::string_view pos, size_t len, size_t min_len, size_t max_len, bool marker,
                      bool in_title);

// Base-2 Shannon entropy of a distribution given by its counts (0 for none).
double Entropy(std::span<const uint32_t> counts);

// The value XORed into the hash of the feature with position rank `rank`:
// lo = Mix64(rank), hi = Mix64(rank + 2^32) for 128 bits (0 for 64), where
// Mix64 is the SplitMix64 finalizer of x + 0x9E3779B97F4A7C15. Frozen.
FeatureHash PositionMask(int rank, int bits);

// Sentence splitting: the one rule set of the library (seed 004, the
// `sentence` preset). A sentence ends after a run of sentence ends (。？！?!
// and \n); the next sentence starts at the first code point after the run.
// Bytes that are not valid UTF-8 are never sentence ends.
struct SentenceSplitOptions {
  // Closing quotes and brackets (”’」』）)]"') right after the run of sentence
  // ends stay with the sentence they close. Default false (seed 004: they
  // begin the next sentence).
  bool keep_closers = false;
  // Also end a sentence at ；; and at '.' followed by a space or \n (clauses,
  // English text). Default false (seed 004).
  bool clause_and_period_ends = false;
};

// A sentence as the byte range [begin, end) of the text it was cut from.
struct SentenceSpan {
  size_t begin = 0;
  size_t end = 0;
  friend bool operator==(const SentenceSpan&, const SentenceSpan&) = default;
};

// The sentences of `text` as pieces that tile it: in order, without gaps or
// overlaps, nothing trimmed or skipped (concatenated they give `text` back
// byte for byte); empty text has none. For callers that keep offsets (the
// store's sentence chunks, eval's perturbations).
std::vector<SentenceSpan> SplitSentenceSpans(std::string_view text,
                                             const SentenceSplitOptions& options = {});

// The sentences of `text` as FeatureKind::kSentences splits them (views into
// text): the SplitSentenceSpans() pieces (default options) with Unicode white
// space trimmed from both ends, empty ones skipped.
void SplitSentences(std::string_view text, std::vector<std::string_view>* out);

class FeatureExtractor {
 public:
  // `segmenter` is required for kWords; `idf` for kTfidf, kImproved and
  // kEntropy; `markers` for kImproved. None is owned.
  static Result<std::unique_ptr<FeatureExtractor>> Create(const FeatureOptions& options,
                                                          const Segmenter* segmenter,
                                                          const IdfTable* idf,
                                                          const MarkerLexicon* markers = nullptr);
  virtual ~FeatureExtractor() = default;

  const FeatureOptions& options() const { return options_; }

  // Replaces *out with the features of `text` (valid UTF-8, normally already
  // normalized). `title` (normalized the same way; may be empty) is used only
  // by improved weights. An empty *out means the document has no features.
  void Extract(std::string_view text, std::string_view title,
               std::vector<WeightedFeature>* out) const {
    DoExtract(text, title, out);
  }
  void Extract(std::string_view text, std::vector<WeightedFeature>* out) const {
    DoExtract(text, std::string_view(), out);
  }

  // SimHash(features, bits, algorithm) of the features Extract() gives, and
  // their number in *num_features. chars:N with uniform or tf weights, top_k 0
  // and XXH3 hashes computes it without building the features: each n-gram
  // is hashed once, counted in a flat table and added to a UnitSimHasher.
  // REQUIRES: bits == 64 || bits == 128
  Fingerprint SimHashOf(std::string_view text, std::string_view title, int bits,
                        FeatureHashAlgorithm algorithm, size_t* num_features) const {
    return DoSimHashOf(text, title, bits, algorithm, num_features);
  }

  // Replaces *out with the sorted distinct 64-bit hashes
  // (HashFeature(f.text, 64, algorithm).lo) of the features Extract() gives,
  // weights and positions ignored: the set MinHash samples. chars:N with
  // top_k 0 and XXH3 hashes computes it without building the features.
  void FeatureHashes(std::string_view text, std::string_view title, FeatureHashAlgorithm algorithm,
                     std::vector<uint64_t>* out) const {
    DoFeatureHashes(text, title, algorithm, out);
  }

 protected:
  explicit FeatureExtractor(const FeatureOptions& options) : options_(options) {}
  virtual void DoExtract(std::string_view text, std::string_view title,
                         std::vector<WeightedFeature>* out) const = 0;
  // Default: Extract(), then SimHash().
  virtual Fingerprint DoSimHashOf(std::string_view text, std::string_view title, int bits,
                                  FeatureHashAlgorithm algorithm, size_t* num_features) const;
  // Default: Extract(), then each feature's hash, sorted and made unique.
  virtual void DoFeatureHashes(std::string_view text, std::string_view title,
                               FeatureHashAlgorithm algorithm, std::vector<uint64_t>* out) const;

 private:
  FeatureOptions options_;
};

// The hash SimHash() accumulates for `feature`: HashFeature(feature.text, bits,
// algorithm), XORed with PositionMask(feature.position, bits) when the
// position is >= 0. REQUIRES: bits == 64 || bits == 128
FeatureHash HashWeightedFeature(const WeightedFeature& feature, int bits,
                                FeatureHashAlgorithm algorithm = FeatureHashAlgorithm::kXxh3);

// The SimHash of weighted features, each hashed with HashWeightedFeature.
// REQUIRES: bits == 64 || bits == 128
Fingerprint SimHash(std::span<const WeightedFeature> features, int bits,
                    FeatureHashAlgorithm algorithm = FeatureHashAlgorithm::kXxh3);

}  // namespace neardup

#endif  // NEARDUP_FEATURES_H_
