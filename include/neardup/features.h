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
// Weight schemes:
//   uniform   each distinct feature weight 1
//   tf        weight = count in the document
//   tfidf     words: exactly jieba.analyse.extract_tags(text, topK, withWeight=True)
//             (words of two or more characters that are not stop words,
//             tf = count / total, weight = tf * idf, unknown words the median
//             IDF); chars:N: count / total * idf of the n-gram (median when unknown)
// top_k keeps the top_k heaviest features (ties: first occurrence first);
// 0 keeps all. Features come out in order of weight, heaviest first (tfidf) or
// in order of first occurrence (uniform, tf with top_k = 0).
//
// Thread safety: a FeatureExtractor is immutable after Create() and may be
// used from any number of threads; the Segmenter and IdfTable must outlive it.

#ifndef NEARDUP_FEATURES_H_
#define NEARDUP_FEATURES_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/segmenter.h"
#include "neardup/status.h"

namespace neardup {

enum class FeatureKind {
  kWords,
  kCharNgrams,
};

enum class WeightScheme {
  kUniform,
  kTf,
  kTfidf,
};

struct FeatureOptions {
  FeatureKind kind = FeatureKind::kWords;
  int ngram = 3;  // N of chars:N; 1 <= N <= 16
  WeightScheme weights = WeightScheme::kTfidf;
  int top_k = 20;  // 0 = all features
};

// "words" or "chars:N" (N defaults to 3 for "chars").
Status ParseFeatureKind(std::string_view spec, FeatureOptions* options);
// "uniform", "tf" or "tfidf".
Result<WeightScheme> ParseWeightScheme(std::string_view name);
// The spec as ParseFeatureKind reads it, e.g. "chars:3".
std::string FeatureKindName(const FeatureOptions& options);
std::string_view WeightSchemeName(WeightScheme scheme);

struct WeightedFeature {
  std::string text;
  double weight = 0;
};

class FeatureExtractor {
 public:
  // `segmenter` is required for kWords; `idf` for kTfidf. Neither is owned.
  static Result<std::unique_ptr<FeatureExtractor>> Create(const FeatureOptions& options,
                                                          const Segmenter* segmenter,
                                                          const IdfTable* idf);
  virtual ~FeatureExtractor() = default;

  const FeatureOptions& options() const { return options_; }

  // Replaces *out with the features of `text` (valid UTF-8, normally already
  // normalized). An empty *out means the document has no features.
  virtual void Extract(std::string_view text, std::vector<WeightedFeature>* out) const = 0;

 protected:
  explicit FeatureExtractor(const FeatureOptions& options) : options_(options) {}

 private:
  FeatureOptions options_;
};

// The SimHash of weighted features, each hashed with HashFeature(text, bits, algorithm).
// REQUIRES: bits == 64 || bits == 128
Fingerprint SimHash(std::span<const WeightedFeature> features, int bits,
                    FeatureHashAlgorithm algorithm = FeatureHashAlgorithm::kXxh3);

}  // namespace neardup

#endif  // NEARDUP_FEATURES_H_
