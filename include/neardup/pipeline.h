// Copyright 2026 The neardup Authors.
//
// The whole fingerprinting pipeline in one object:
//   normalize -> segment -> features + weights -> SimHash
//                                     \-> feature set -> MinHash (minhash.h)
//
//   neardup::PipelineOptions options;          // the default method chars5u: NFKC + case
//                                              // folding, distinct character 5-grams,
//                                              // 128 bits
//   options.normalize.t2s = "t2s";
//   auto pipeline = neardup::Pipeline::Create(options);
//   if (!pipeline.ok()) { ...pipeline.status()... }
//   neardup::DocumentFingerprint fp = (*pipeline)->Fingerprint(doc.text);
//   if (fp.empty()) { /* no features: never a duplicate of anything */ }
//
//   neardup::MinHasher hasher(128);             // the method `minhash` (method.h)
//   std::vector<uint32_t> sig(128);
//   size_t n = (*pipeline)->MinHashSignature(hasher, doc.text, "", sig.data());
//
// Thread safety: a Pipeline is immutable after Create(); Fingerprint() and
// Features() may be called from any number of threads at once.

#ifndef NEARDUP_PIPELINE_H_
#define NEARDUP_PIPELINE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/boilerplate.h"
#include "neardup/features.h"
#include "neardup/fingerprint.h"
#include "neardup/keywords.h"
#include "neardup/minhash.h"
#include "neardup/segmenter.h"
#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup {

class FusedNgramSimHash;  // src/features/fused_ngram_simhash.h

struct PipelineOptions {
  NormalizeOptions normalize;  // default: NFKC + case folding, no t2s
  SegmenterOptions segmenter;  // default: python3-jieba's data, HMM on
  // An IDF table in jieba's idf.txt format; empty: <jieba_dir>/analyse/idf.txt.
  std::string idf_path;
  // improved weights: the marker word lexicon (one word per line); empty:
  // FindDataFile(kMarkerWordsFile, data_dir).
  std::string marker_words_path;
  // Where shipped data files are looked for; empty: $NEARDUP_DATA_DIR, else
  // the install directory, else the source tree (see FindDataFile).
  std::string data_dir;
  // The defaults are the default method's, the tool's (method.h:
  // Method::Default(), `chars5u`): the distinct character 5-grams, uniform
  // weights, 128-bit fingerprints, XXH3 feature hashes.
  FeatureOptions features = {
      .kind = FeatureKind::kCharNgrams, .ngram = 5, .weights = WeightScheme::kUniform, .top_k = 0};
  int bits = 128;  // 64 or 128
  FeatureHashAlgorithm hash = FeatureHashAlgorithm::kXxh3;
  // Corpus boilerplate removal (boilerplate.h). The Pipeline itself never
  // strips: a caller with corpus statistics strips with a BoilerplateFilter
  // before Fingerprint(), so one document alone fingerprints as without it.
  BoilerplateOptions boilerplate;
};

struct DocumentFingerprint {
  Fingerprint fingerprint;
  size_t features = 0;  // number of features; 0 = an empty document
  bool empty() const { return features == 0; }
};

class Pipeline {
 public:
  // Loads what the options need (the segmenter only for word features, the
  // IDF table only for tfidf, improved and entropy weights, the marker word
  // lexicon only for improved weights).
  static Result<std::unique_ptr<Pipeline>> Create(const PipelineOptions& options);
  ~Pipeline();

  const PipelineOptions& options() const { return options_; }
  // Null when the features need no segmenter.
  const Segmenter* segmenter() const { return segmenter_.get(); }
  const Normalizer& normalizer() const { return *normalizer_; }

  std::string Normalize(std::string_view text) const { return normalizer_->Normalize(text); }
  // The weighted features of `text` after normalization. `title` (the
  // document's title, normalized the same way; empty: none) only matters to
  // improved weights.
  void Features(std::string_view text, std::string_view title,
                std::vector<WeightedFeature>* out) const;
  void Features(std::string_view text, std::vector<WeightedFeature>* out) const {
    Features(text, std::string_view(), out);
  }
  DocumentFingerprint Fingerprint(std::string_view text, std::string_view title) const;
  DocumentFingerprint Fingerprint(std::string_view text) const {
    return Fingerprint(text, std::string_view());
  }
  // The fingerprint of already extracted features (as Features() gives them).
  DocumentFingerprint FingerprintFeatures(const std::vector<WeightedFeature>& features) const;

  // The set MinHash samples: the sorted distinct 64-bit hashes
  // (HashFeature(text, 64, options().hash).lo) of Features(text, title),
  // weights ignored.
  void FeatureSet(std::string_view text, std::string_view title, std::vector<uint64_t>* out) const;
  // Fingerprint(text, title), and the elements of FeatureSet(text, title)
  // in *set, in any order and possibly with repeats (character n-grams:
  // each distinct one once where Fingerprint's fused pass takes the text,
  // else every occurrence), from one pass or one normalization: what a
  // Jaccard sketch needs (dedup's verified pairs; its set size is the
  // fingerprint's `features`).
  DocumentFingerprint FingerprintAndFeatureSet(std::string_view text, std::string_view title,
                                               std::vector<uint64_t>* set) const;
  // hasher's signature of FeatureSet(text, title), written to
  // out[0 .. hasher.num_perm()); returns the size of the set (0: an empty
  // document, never a duplicate of anything). `set`, when given, receives the
  // set (for exact Jaccard).
  size_t MinHashSignature(const MinHasher& hasher, std::string_view text, std::string_view title,
                          uint32_t* out, std::vector<uint64_t>* set = nullptr) const;

 private:
  explicit Pipeline(const PipelineOptions& options);

  PipelineOptions options_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<Segmenter> segmenter_;
  std::unique_ptr<IdfTable> idf_;
  std::unique_ptr<MarkerLexicon> markers_;
  std::unique_ptr<FeatureExtractor> extractor_;
  // The default fingerprint in one pass, when the options allow it (null:
  // always the general path).
  std::unique_ptr<FusedNgramSimHash> fused_;
};

}  // namespace neardup

#endif  // NEARDUP_PIPELINE_H_
