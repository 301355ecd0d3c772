// Copyright 2026 The neardup Authors.
//
// SimHasher (vectorized double counters) and UnitSimHasher (bit-sliced
// integer counters) against the scalar oracle (tests/testing/simhash_oracle.h)
// on seeded random hashes and weights: the fingerprints must be identical.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "neardup/fingerprint.h"
#include "tests/testing/simhash_oracle.h"

namespace neardup {
namespace {

using testing::ScalarSimHash;
using testing::WeightedHash;

// Hashes that stress the counters: random, all ones, all zeros, one bit.
FeatureHash RandomHash(int bits, std::mt19937_64& rng) {
  FeatureHash h;
  switch (rng() % 8) {
    case 0:
      h = {~uint64_t{0}, ~uint64_t{0}};
      break;
    case 1:
      h = {0, 0};
      break;
    case 2:
      h = {0, uint64_t{1} << (rng() % 64)};
      break;
    default:
      h = {rng(), rng()};
  }
  if (bits == 64) h.hi = 0;
  return h;
}

// Weights whose sums round: small integers, fractions like 0.1, huge and tiny
// magnitudes, negative values, zeros of both signs.
double RandomWeight(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  switch (rng() % 8) {
    case 0:
      return static_cast<double>(rng() % 10);
    case 1:
      return 0.1 * static_cast<double>(rng() % 7);
    case 2:
      return unit(rng) * 1e16;
    case 3:
      return unit(rng) * 1e-300;
    case 4:
      return (rng() % 2) != 0 ? 0.0 : -0.0;
    case 5:
      return -static_cast<double>(rng() % 4);
    default:
      return unit(rng);
  }
}

TEST(SimHasherSimdTest, MatchesScalarOracle) {
  std::mt19937_64 rng(20261122);
  SimHasher reused64(64), reused128(128);
  for (int round = 0; round < 3000; ++round) {
    const int bits = (round % 2) != 0 ? 128 : 64;
    const size_t n = rng() % 64;
    std::vector<WeightedHash> features;
    for (size_t i = 0; i < n; ++i) features.push_back({RandomHash(bits, rng), RandomWeight(rng)});
    SimHasher fresh(bits);
    SimHasher& reused = bits == 64 ? reused64 : reused128;
    reused.Reset();
    for (const WeightedHash& f : features) {
      fresh.Add(f.hash, f.weight);
      reused.Add(f.hash, f.weight);
    }
    const Fingerprint expected = ScalarSimHash(features, bits);
    ASSERT_EQ(fresh.Finish(), expected) << "round " << round << ", " << n << " features";
    ASSERT_EQ(reused.Finish(), expected) << "round " << round;
    ASSERT_EQ(fresh.count(), n);
  }
}

TEST(SimHasherSimdTest, RoundingOrderIsKept) {
  // Sums whose sign depends on the order of the additions: 1e16 + 1 - 1e16
  // is 0 in doubles, (0.1 + 0.2) - 0.3 > 0 but (0.3 - 0.1) - 0.2 < 0.
  const FeatureHash ones{~uint64_t{0}, ~uint64_t{0}};
  const FeatureHash zeros{0, 0};
  for (int bits : {64, 128}) {
    const std::vector<WeightedHash> cases[] = {
        {{ones, 1e16}, {ones, 1.0}, {zeros, 1e16}},
        {{ones, 0.1}, {ones, 0.2}, {zeros, 0.3}},
        {{ones, 0.3}, {zeros, 0.1}, {zeros, 0.2}},
        {{ones, std::numeric_limits<double>::infinity()}, {zeros, 1.0}},
        {{ones, std::numeric_limits<double>::denorm_min()}},
    };
    for (const auto& features : cases) {
      SimHasher hasher(bits);
      for (const WeightedHash& f : features) hasher.Add(f.hash, f.weight);
      EXPECT_EQ(hasher.Finish(), ScalarSimHash(features, bits));
    }
  }
}

Fingerprint Unit(const std::vector<FeatureHash>& hashes, int bits) {
  UnitSimHasher hasher(bits);
  for (const FeatureHash& h : hashes) hasher.Add(h);
  EXPECT_EQ(hasher.count(), hashes.size());
  return hasher.Finish();
}

Fingerprint Oracle(const std::vector<FeatureHash>& hashes, int bits) {
  std::vector<WeightedHash> features;
  for (const FeatureHash& h : hashes) features.push_back({h, 1.0});
  return ScalarSimHash(features, bits);
}

TEST(UnitSimHasherTest, MatchesScalarOracleWithUnitWeights) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 800; ++round) {
    const int bits = (round % 2) != 0 ? 128 : 64;
    // Every count around the 16-hash blocks, then larger documents.
    const size_t n = round < 200 ? static_cast<size_t>(round / 2) : rng() % 3000;
    std::vector<FeatureHash> hashes;
    for (size_t i = 0; i < n; ++i) hashes.push_back(RandomHash(bits, rng));
    ASSERT_EQ(Unit(hashes, bits), Oracle(hashes, bits)) << "round " << round << ", n " << n;
  }
}

TEST(UnitSimHasherTest, TiesAndMajorities) {
  // n hashes of which `set` have every bit set: bits are 1 iff 2 set > n.
  const FeatureHash ones{~uint64_t{0}, ~uint64_t{0}};
  const FeatureHash zeros{0, 0};
  for (size_t n : {1u, 2u, 15u, 16u, 17u, 31u, 32u, 33u, 1000u}) {
    for (size_t set : {n / 2, n / 2 + 1, n - n / 2, size_t{0}, n}) {
      if (set > n) continue;
      std::vector<FeatureHash> hashes(n, zeros);
      for (size_t i = 0; i < set; ++i) hashes[i] = ones;
      ASSERT_EQ(Unit(hashes, 128), Oracle(hashes, 128)) << n << " " << set;
    }
  }
}

TEST(UnitSimHasherTest, LongRunsCarryThroughManyPlanes) {
  // 2^17 + 5 identical hashes: the 16s counter climbs to plane 13.
  const FeatureHash h{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  UnitSimHasher hasher(128);
  for (int i = 0; i < (1 << 17) + 5; ++i) hasher.Add(h);
  EXPECT_EQ(hasher.Finish(), Fingerprint::From128(h.hi, h.lo));
  // One more than half the other way flips every bit.
  const FeatureHash inverse{~h.hi, ~h.lo};
  for (int i = 0; i < (1 << 17) + 6; ++i) hasher.Add(inverse);
  EXPECT_EQ(hasher.Finish(), Fingerprint::From128(inverse.hi, inverse.lo));
  hasher.Reset();
  EXPECT_EQ(hasher.count(), 0u);
  EXPECT_EQ(hasher.Finish(), Fingerprint::From128(0, 0));
  hasher.Add(h);
  EXPECT_EQ(hasher.Finish(), Fingerprint::From128(h.hi, h.lo));
}

TEST(UnitSimHasherTest, SixtyFourBitsIgnoreTheHighWord) {
  UnitSimHasher hasher(64);
  hasher.Add({~uint64_t{0}, 0x5555});
  const Fingerprint fp = hasher.Finish();
  EXPECT_EQ(fp.bits(), 64);
  EXPECT_EQ(fp.hi(), 0u);
  EXPECT_EQ(fp.lo(), 0x5555u);
}

}  // namespace
}  // namespace neardup
