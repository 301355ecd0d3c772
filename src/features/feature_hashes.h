// Copyright 2026 The neardup Authors.
//
// Internal to the library (src/, not installed): the feature hashes of a
// document in text order, for a Jaccard sketch (dedup.h), which needs the
// set's elements but neither their order nor their uniqueness.

#ifndef NEARDUP_FEATURES_FEATURE_HASHES_H_
#define NEARDUP_FEATURES_FEATURE_HASHES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "neardup/features.h"

namespace neardup {

// The elements of extractor.FeatureHashes(text, title, algorithm), in any
// order, with repeats: character n-grams (top_k 0, XXH3) hash every
// occurrence and skip the sort; other features give FeatureHashes itself.
void FeatureHashOccurrences(const FeatureExtractor& extractor, std::string_view text,
                            std::string_view title, FeatureHashAlgorithm algorithm,
                            std::vector<uint64_t>* out);

}  // namespace neardup

#endif  // NEARDUP_FEATURES_FEATURE_HASHES_H_
