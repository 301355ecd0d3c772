// Copyright 2026 The neardup Authors.

#include "neardup/fingerprint.h"

#include <gtest/gtest.h>

#include <random>

namespace neardup {
namespace {

TEST(FingerprintTest, HexRoundTrip64) {
  const Fingerprint fp = Fingerprint::From64(0x0123456789abcdefULL);
  EXPECT_EQ(fp.ToHex(), "0123456789abcdef");
  Result<Fingerprint> back = Fingerprint::FromHex("0123456789ABCDEF");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, fp);
}

TEST(FingerprintTest, HexRoundTrip128) {
  const Fingerprint fp = Fingerprint::From128(0x1ULL, 0xfedcba9876543210ULL);
  EXPECT_EQ(fp.ToHex(), "0000000000000001fedcba9876543210");
  Result<Fingerprint> back = Fingerprint::FromHex(fp.ToHex());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, fp);
  EXPECT_EQ(back->bits(), 128);
  EXPECT_TRUE(fp.bit(64));
  EXPECT_FALSE(fp.bit(65));
}

TEST(FingerprintTest, FromHexRejectsBadInput) {
  EXPECT_FALSE(Fingerprint::FromHex("").ok());
  EXPECT_FALSE(Fingerprint::FromHex("0123").ok());
  EXPECT_FALSE(Fingerprint::FromHex("0123456789abcdeg").ok());
  EXPECT_TRUE(Fingerprint::FromHex("0123456789abcdeg").status().IsInvalidArgument());
}

TEST(FingerprintTest, DistanceIsPopcountOfXor) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t a = rng(), b = rng();
    int expected = 0;
    for (int j = 0; j < 64; ++j) expected += static_cast<int>(((a ^ b) >> j) & 1u);
    EXPECT_EQ(HammingDistance(Fingerprint::From64(a), Fingerprint::From64(b)), expected);
  }
  const Fingerprint x = Fingerprint::From128(~0ULL, 0);
  const Fingerprint y = Fingerprint::From128(0, 0);
  EXPECT_EQ(HammingDistance(x, y), 64);
  EXPECT_DOUBLE_EQ(Similarity(x, y), 0.5);
}

TEST(SimHasherTest, SingleFeatureReproducesItsHash) {
  for (int bits : {64, 128}) {
    const FeatureHash h = HashFeature("近似重复", bits);
    SimHasher hasher(bits);
    hasher.Add(h, 2.5);
    const Fingerprint fp = hasher.Finish();
    EXPECT_EQ(fp.lo(), h.lo);
    EXPECT_EQ(fp.hi(), h.hi);
  }
}

TEST(SimHasherTest, NoFeaturesGivesZero) {
  SimHasher hasher(128);
  EXPECT_EQ(hasher.count(), 0u);
  EXPECT_EQ(hasher.Finish(), Fingerprint::From128(0, 0));
}

TEST(SimHasherTest, WeightsDecideTheVote) {
  // Two features whose hashes differ in some bits: the heavier one wins each disputed bit.
  const FeatureHash a = HashFeature("甲", 64);
  const FeatureHash b = HashFeature("乙", 64);
  SimHasher hasher(64);
  hasher.Add(a, 1.0);
  hasher.Add(b, 3.0);
  EXPECT_EQ(hasher.Finish().lo(), b.lo);
  hasher.Reset();
  hasher.Add(a, 3.0);
  hasher.Add(b, 1.0);
  EXPECT_EQ(hasher.Finish().lo(), a.lo);
}

TEST(SimHasherTest, TiesGiveZeroBits) {
  // Equal and opposite votes: V_j == 0 is not > 0, so the bit is 0.
  const FeatureHash a{0, 0xffffffff00000000ULL};
  const FeatureHash b{0, 0x00000000ffffffffULL};
  SimHasher hasher(64);
  hasher.Add(a, 1.0);
  hasher.Add(b, 1.0);
  EXPECT_EQ(hasher.Finish().lo(), 0u);
}

TEST(HashFeatureTest, Md5IsBigEndianDigestPrefix) {
  // MD5("abc") = 900150983cd24fb0d6963f7d28e17f72
  const FeatureHash h64 = HashFeature("abc", 64, FeatureHashAlgorithm::kMd5);
  EXPECT_EQ(h64.lo, 0x900150983cd24fb0ULL);
  const FeatureHash h128 = HashFeature("abc", 128, FeatureHashAlgorithm::kMd5);
  EXPECT_EQ(h128.hi, 0x900150983cd24fb0ULL);
  EXPECT_EQ(h128.lo, 0xd6963f7d28e17f72ULL);
}

}  // namespace
}  // namespace neardup
