// Copyright 2026 The neardup Authors.

#include "tests/testing/simhash_oracle.h"

#include <array>
#include <vector>

namespace neardup::testing {

Fingerprint ScalarSimHash(std::span<const WeightedHash> features, int bits) {
  std::array<double, 128> v{};
  for (const WeightedHash& f : features) {
    for (int j = 0; j < bits; ++j) {
      const double sign = f.hash.bit(j) ? 1.0 : -1.0;
      v[static_cast<size_t>(j)] += sign * f.weight;
    }
  }
  uint64_t words[2] = {0, 0};
  for (int j = 0; j < bits; ++j) {
    if (v[static_cast<size_t>(j)] > 0) words[j / 64] |= uint64_t{1} << (j % 64);
  }
  return bits == 64 ? Fingerprint::From64(words[0]) : Fingerprint::From128(words[1], words[0]);
}

Fingerprint ScalarSimHash(std::span<const WeightedFeature> features, int bits,
                          FeatureHashAlgorithm algorithm) {
  std::vector<WeightedHash> hashes;
  for (const WeightedFeature& f : features) {
    hashes.push_back({HashWeightedFeature(f, bits, algorithm), f.weight});
  }
  return ScalarSimHash(hashes, bits);
}

}  // namespace neardup::testing
