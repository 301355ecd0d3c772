// Copyright 2026 The neardup Authors.
//
// The obviously-correct SimHash: one double per bit, updated one bit at a
// time in the order the features come (the library's code before SIMD).
// SimHasher (vectorized) and UnitSimHasher (bit-sliced integer counters) are
// checked against it. Slow; for tests only.

#ifndef NEARDUP_TESTS_TESTING_SIMHASH_ORACLE_H_
#define NEARDUP_TESTS_TESTING_SIMHASH_ORACLE_H_

#include <span>

#include "neardup/features.h"
#include "neardup/fingerprint.h"

namespace neardup::testing {

struct WeightedHash {
  FeatureHash hash;
  double weight = 0;
};

// V_j = sum of (+w if bit j of the hash is set, else -w), in order; bit j of
// the result is 1 iff V_j > 0. REQUIRES: bits == 64 || bits == 128
Fingerprint ScalarSimHash(std::span<const WeightedHash> features, int bits);

// The same over weighted features hashed by HashWeightedFeature.
Fingerprint ScalarSimHash(std::span<const WeightedFeature> features, int bits,
                          FeatureHashAlgorithm algorithm = FeatureHashAlgorithm::kXxh3);

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_TESTING_SIMHASH_ORACLE_H_
