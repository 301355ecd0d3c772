// Copyright 2026 The neardup Authors.

#include "neardup/pipeline.h"

#include <string>
#include <utility>

#include "features/feature_hashes.h"
#include "features/fused_ngram_simhash.h"

namespace neardup {
namespace {

// The text, and the title where the weights use it (improved), normalized.
std::pair<std::string, std::string> NormalizeTextAndTitle(const Normalizer& normalizer,
                                                          const PipelineOptions& options,
                                                          std::string_view text,
                                                          std::string_view title) {
  std::pair<std::string, std::string> out(normalizer.Normalize(text), std::string());
  if (!title.empty() && options.features.weights == WeightScheme::kImproved) {
    out.second = normalizer.Normalize(title);
  }
  return out;
}

}  // namespace

Pipeline::Pipeline(const PipelineOptions& options) : options_(options) {}

Pipeline::~Pipeline() = default;

Result<std::unique_ptr<Pipeline>> Pipeline::Create(const PipelineOptions& options) {
  if (options.bits != 64 && options.bits != 128) {
    return Status::InvalidArgument("fingerprint bits must be 64 or 128, got " +
                                   std::to_string(options.bits));
  }
  std::unique_ptr<Pipeline> p(new Pipeline(options));
  NEARDUP_ASSIGN_OR_RETURN(auto normalizer, Normalizer::Create(options.normalize));
  p->normalizer_ = std::move(normalizer);
  if (options.features.kind == FeatureKind::kWords) {
    NEARDUP_ASSIGN_OR_RETURN(auto segmenter, Segmenter::Open(options.segmenter));
    p->segmenter_ = std::move(segmenter);
  }
  const WeightScheme weights = options.features.weights;
  if (weights == WeightScheme::kTfidf || weights == WeightScheme::kImproved ||
      weights == WeightScheme::kEntropy) {
    NEARDUP_ASSIGN_OR_RETURN(auto idf, options.idf_path.empty()
                                           ? IdfTable::LoadDefault(options.segmenter.jieba_dir)
                                           : IdfTable::Load(options.idf_path));
    p->idf_ = std::make_unique<IdfTable>(std::move(idf));
  }
  if (weights == WeightScheme::kImproved) {
    std::string path = options.marker_words_path;
    if (path.empty()) {
      NEARDUP_ASSIGN_OR_RETURN(auto found, FindDataFile(kMarkerWordsFile, options.data_dir));
      path = found;
    }
    NEARDUP_ASSIGN_OR_RETURN(auto markers, MarkerLexicon::Load(path));
    p->markers_ = std::make_unique<MarkerLexicon>(std::move(markers));
  }
  NEARDUP_ASSIGN_OR_RETURN(
      auto extractor, FeatureExtractor::Create(options.features, p->segmenter_.get(), p->idf_.get(),
                                               p->markers_.get()));
  p->extractor_ = std::move(extractor);
  p->fused_ = FusedNgramSimHash::Create(options);
  return p;
}

void Pipeline::Features(std::string_view text, std::string_view title,
                        std::vector<WeightedFeature>* out) const {
  const std::string normalized = normalizer_->Normalize(text);
  if (title.empty() || options_.features.weights != WeightScheme::kImproved) {
    extractor_->Extract(normalized, out);
    return;
  }
  const std::string normalized_title = normalizer_->Normalize(title);
  extractor_->Extract(normalized, normalized_title, out);
}

DocumentFingerprint Pipeline::Fingerprint(std::string_view text, std::string_view title) const {
  // The fused pass gives the general path's bytes, or declines the text.
  DocumentFingerprint out;
  if (fused_ != nullptr && fused_->Fingerprint(text, &out)) return out;
  const auto [normalized, normalized_title] =
      NormalizeTextAndTitle(*normalizer_, options_, text, title);
  out.fingerprint = extractor_->SimHashOf(normalized, normalized_title, options_.bits,
                                          options_.hash, &out.features);
  return out;
}

DocumentFingerprint Pipeline::FingerprintFeatures(
    const std::vector<WeightedFeature>& features) const {
  DocumentFingerprint out;
  out.features = features.size();
  out.fingerprint = SimHash(features, options_.bits, options_.hash);
  return out;
}

DocumentFingerprint Pipeline::FingerprintAndFeatureSet(std::string_view text,
                                                       std::string_view title,
                                                       std::vector<uint64_t>* set) const {
  // The fused pass gives the general path's fingerprint and the same set
  // (each distinct n-gram's hash once, not every occurrence's), or declines.
  DocumentFingerprint fused;
  if (fused_ != nullptr && fused_->Fingerprint(text, &fused, set)) return fused;
  const auto [normalized, normalized_title] =
      NormalizeTextAndTitle(*normalizer_, options_, text, title);
  DocumentFingerprint out;
  out.fingerprint = extractor_->SimHashOf(normalized, normalized_title, options_.bits,
                                          options_.hash, &out.features);
  FeatureHashOccurrences(*extractor_, normalized, normalized_title, options_.hash, set);
  return out;
}

void Pipeline::FeatureSet(std::string_view text, std::string_view title,
                          std::vector<uint64_t>* out) const {
  const auto [normalized, normalized_title] =
      NormalizeTextAndTitle(*normalizer_, options_, text, title);
  extractor_->FeatureHashes(normalized, normalized_title, options_.hash, out);
}

size_t Pipeline::MinHashSignature(const MinHasher& hasher, std::string_view text,
                                  std::string_view title, uint32_t* out,
                                  std::vector<uint64_t>* set) const {
  thread_local std::vector<uint64_t> local;
  std::vector<uint64_t>* hashes = set != nullptr ? set : &local;
  FeatureSet(text, title, hashes);
  hasher.Signature(*hashes, out);
  return hashes->size();
}

}  // namespace neardup
