// Copyright 2026 The neardup Authors.

#include "neardup/presets.h"

namespace neardup {
namespace {

Preset Make(std::string name, std::string seed, std::string description, FeatureKind kind,
            int ngram, WeightScheme weights, int top_k, int bits, int default_k,
            FeatureHashAlgorithm hash = FeatureHashAlgorithm::kXxh3) {
  Preset p;
  p.name = std::move(name);
  p.seed = std::move(seed);
  p.description = std::move(description);
  p.pipeline.features.kind = kind;
  p.pipeline.features.ngram = ngram;
  p.pipeline.features.weights = weights;
  p.pipeline.features.top_k = top_k;
  p.pipeline.bits = bits;
  p.pipeline.hash = hash;
  p.default_k = default_k;
  return p;
}

std::vector<Preset> BuildPresets() {
  std::vector<Preset> presets;
  presets.push_back(Make("classic", "Charikar 2002; Manku et al. 2007",
                         "every jieba word weighted by its count, 64 bits, k = 3",
                         FeatureKind::kWords, 3, WeightScheme::kTf, 0, 64, 3));
  presets.push_back(Make("tfidf", "seeds 001 and 002",
                         "jieba extract_tags top 20 (TF-IDF weights), 64 bits, k = 3",
                         FeatureKind::kWords, 3, WeightScheme::kTfidf, 20, 64, 3));
  presets.push_back(Make("chargram", "seed 000's shingles as SimHash features",
                         "character 3-grams weighted by count, 64 bits, k = 3",
                         FeatureKind::kCharNgrams, 3, WeightScheme::kTf, 0, 64, 3));
  presets.push_back(Make("improved", "seed 000 (improved SimHash)",
                         "jieba candidates weighted tf*idf*(1+CX+Len+Logo+Title), top 20, "
                         "64 bits, k = 3",
                         FeatureKind::kWords, 3, WeightScheme::kImproved, 20, 64, 3));
  presets.push_back(Make("esimhash", "seed 003 (E-SimHash)",
                         "top 20 jieba candidates by min(W_t, sqrt((tfidf^2+H^2)/2)), hashes "
                         "mixed with position rank, 128 bits, k = 10",
                         FeatureKind::kWords, 3, WeightScheme::kEntropy, 20, 128, 10));
  presets.push_back(Make("sentence", "seed 004 (sentence SimHash)",
                         "sentences (split after 。？！?! and line breaks), "
                         "weight 1, MD5, 64 bits, k = 3",
                         FeatureKind::kSentences, 3, WeightScheme::kUniform, 0, 64, 3,
                         FeatureHashAlgorithm::kMd5));
  // The default, chosen by `neardup eval` (doc/evaluation.md): character
  // 5-grams by count at 128 bits reach F1 0.985 (THUCNews) and 0.984 (BBC,
  // English) at T = 10 % with precision >= 0.999 at k = 24.
  presets.push_back(Make("chars5", "neardup's measured default (doc/evaluation.md)",
                         "character 5-grams weighted by count, 128 bits, k = 24",
                         FeatureKind::kCharNgrams, 5, WeightScheme::kTf, 0, 128, 24));
  // chars5 with every distinct 5-gram weighted 1 (a set, not counts) and
  // k = 28: repeated n-grams (runs of spaces, table rows) no longer decide
  // the fingerprint of long pages, which buys 4 more bits of threshold at the
  // same precision: F1 at T = 20 % 0.90 (THUCNews >= 800) and 0.85 (BBC)
  // against chars5's 0.80 and 0.84; natural duplicates F1 1.000
  // (doc/evaluation.md, "Weights, shingle size and k").
  presets.push_back(Make("chars5u", "neardup's measured alternative (doc/evaluation.md)",
                         "distinct character 5-grams (uniform weights), 128 bits, k = 28",
                         FeatureKind::kCharNgrams, 5, WeightScheme::kUniform, 0, 128, 28));
  return presets;
}

}  // namespace

const std::vector<Preset>& Presets() {
  static const std::vector<Preset>* presets = new std::vector<Preset>(BuildPresets());
  return *presets;
}

Result<Preset> FindPreset(std::string_view name) {
  for (const Preset& p : Presets()) {
    if (p.name == name) return p;
  }
  return Status::InvalidArgument("unknown method '" + std::string(name) + "' (expected " +
                                 PresetNames() + ")");
}

std::string PresetNames() {
  std::string out;
  for (const Preset& p : Presets()) {
    if (!out.empty()) out += "|";
    out += p.name;
  }
  return out;
}

}  // namespace neardup
