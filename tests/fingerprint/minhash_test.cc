// Copyright 2026 The neardup Authors.
//
// MinHash signatures (stored by users like fingerprints: golden vectors), the
// Jaccard estimate against the exact value, and the band arithmetic against
// brute-force oracles.

#include "neardup/minhash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "util/random.h"

namespace neardup {
namespace {

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// XXH3-64 of a signature's little-endian bytes: one number per golden vector.
std::string Digest(const std::vector<uint32_t>& sig) {
  std::string bytes;
  for (uint32_t v : sig) {
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  return Hex(XXH3_64bits(bytes.data(), bytes.size()));
}

TEST(MinHashGolden, SignaturesOfHashesDoNotDrift) {
  const MinHasher hasher(128);
  const std::vector<uint64_t> set = {1, 2, 3, 0xdeadbeefcafef00dULL};
  const std::vector<uint32_t> sig = hasher.Signature(set);
  ASSERT_EQ(sig.size(), 128u);
  const std::vector<uint32_t> head(sig.begin(), sig.begin() + 4);
  EXPECT_EQ(head, (std::vector<uint32_t>{467205672, 55022824, 64088865, 804704872}));
  EXPECT_EQ(Digest(sig), "406dcbda169f1397");
  // The definition: permutation i is (a_i h + b_i) >> 32, a_i and b_i the
  // SplitMix64 outputs at the seed's states 2i and 2i + 1 (a_i made odd).
  for (size_t i = 0; i < sig.size(); ++i) {
    const uint64_t a = SplitMix64(kMinHashSeed + 2 * i * kSplitMix64Gamma) | 1;
    const uint64_t b = SplitMix64(kMinHashSeed + (2 * i + 1) * kSplitMix64Gamma);
    uint32_t expect = 0xFFFFFFFFu;
    for (uint64_t h : set) expect = std::min(expect, static_cast<uint32_t>((a * h + b) >> 32));
    ASSERT_EQ(sig[i], expect) << i;
  }
  // An empty set: every component is the maximum.
  EXPECT_EQ(hasher.Signature({}), std::vector<uint32_t>(128, 0xFFFFFFFFu));
  // Another seed, another signature.
  EXPECT_NE(MinHasher(128, 1).Signature(set), sig);
}

// The definition, permutation by permutation: the oracle of the blocked
// (and, where the CPU has AVX-512, vectorized) signature.
std::vector<uint32_t> DefinitionSignature(int num_perm, const std::vector<uint64_t>& set) {
  std::vector<uint32_t> sig(static_cast<size_t>(num_perm), 0xFFFFFFFFu);
  for (size_t i = 0; i < sig.size(); ++i) {
    const uint64_t a = SplitMix64(kMinHashSeed + 2 * i * kSplitMix64Gamma) | 1;
    const uint64_t b = SplitMix64(kMinHashSeed + (2 * i + 1) * kSplitMix64Gamma);
    for (uint64_t h : set) sig[i] = std::min(sig[i], static_cast<uint32_t>((a * h + b) >> 32));
  }
  return sig;
}

TEST(MinHash, SignatureMatchesTheDefinitionAtEveryWidth) {
  // Widths around the 8-lane vectors and the 64-permutation blocks.
  std::mt19937_64 rng(27);
  for (int num_perm : {1, 7, 8, 9, 15, 63, 64, 65, 100, 127, 128, 129, 200, 1024}) {
    const MinHasher hasher(num_perm);
    for (size_t size : {0, 1, 3, 500}) {
      std::vector<uint64_t> set;
      for (size_t i = 0; i < size; ++i) set.push_back(rng());
      if (size >= 3) {
        set[0] = 0;
        set[1] = ~uint64_t{0};
      }
      ASSERT_EQ(hasher.Signature(set), DefinitionSignature(num_perm, set))
          << "num_perm " << num_perm << " size " << size;
    }
  }
}

TEST(MinHashGolden, MethodSignaturesOfTextsDoNotDrift) {
  const Method method = *Method::FromPreset(kMinHashMethod);
  auto pipeline = Pipeline::Create(method.pipeline);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  const MinHasher hasher(method.minhash.num_perm);
  const struct {
    const char* text;
    size_t features;
    const char* digest;
  } cases[] = {
      {"近似重复检测是搜索引擎和数据清洗中的常见任务，SimHash把文档压缩成指纹。", 35,
       "5337be3afc76a988"},
      {"The quick brown fox jumps over the lazy dog.", 32, "d62dec7a1b4243f6"},
      {"一二", 1, "0cd46a23a0ab43b5"},
  };
  for (const auto& c : cases) {
    std::vector<uint32_t> sig(hasher.num_perm());
    std::vector<uint64_t> set;
    EXPECT_EQ((*pipeline)->MinHashSignature(hasher, c.text, "", sig.data(), &set), c.features)
        << c.text;
    EXPECT_EQ(Digest(sig), c.digest) << c.text;
    EXPECT_TRUE(std::is_sorted(set.begin(), set.end()));
    EXPECT_EQ(std::adjacent_find(set.begin(), set.end()), set.end());
  }
  std::vector<uint32_t> sig(hasher.num_perm());
  EXPECT_EQ((*pipeline)->MinHashSignature(hasher, "", "", sig.data()), 0u);
  EXPECT_EQ(sig, std::vector<uint32_t>(128, 0xFFFFFFFFu));
}

TEST(MinHash, FeatureSetsAreDistinctCharacterNgrams) {
  const Method method = *Method::FromPreset(kMinHashMethod);
  auto pipeline = Pipeline::Create(method.pipeline);
  ASSERT_TRUE(pipeline.ok());
  std::vector<uint64_t> set;
  (*pipeline)->FeatureSet("一二三四", "", &set);
  EXPECT_EQ(set.size(), 2u);
  (*pipeline)->FeatureSet("一二三一二三", "", &set);
  EXPECT_EQ(set.size(), 3u);  // 一二三 二三一 三一二
  (*pipeline)->FeatureSet("一二", "", &set);
  EXPECT_EQ(set.size(), 1u);  // shorter than n: the whole text
  (*pipeline)->FeatureSet("", "", &set);
  EXPECT_TRUE(set.empty());
}

TEST(MinHash, EstimateWithinToleranceOfExactJaccard) {
  std::mt19937_64 rng(99);
  const MinHasher hasher(256);
  double sum_error = 0;
  for (int trial = 0; trial < 60; ++trial) {
    // Two random sets with a random overlap.
    const size_t common = rng() % 600, only_a = rng() % 600, only_b = rng() % 600;
    std::vector<uint64_t> a, b;
    for (size_t i = 0; i < common; ++i) {
      const uint64_t x = rng();
      a.push_back(x);
      b.push_back(x);
    }
    for (size_t i = 0; i < only_a; ++i) a.push_back(rng());
    for (size_t i = 0; i < only_b; ++i) b.push_back(rng());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    const double exact = ExactJaccard(a, b);
    const double expected = static_cast<double>(common) / (common + only_a + only_b);
    ASSERT_NEAR(exact, expected, 1e-12);
    // sd = sqrt(J(1-J)/256) <= 0.032; 0.12 is over 3.7 sd.
    const double estimate = EstimatedJaccard(hasher.Signature(a), hasher.Signature(b));
    EXPECT_NEAR(estimate, exact, 0.12) << "trial " << trial;
    sum_error += estimate - exact;
  }
  // Unbiased: the mean error of 60 trials is within ~4 standard errors.
  EXPECT_NEAR(sum_error / 60, 0, 0.02);
}

TEST(MinHash, StructuredHashesAreMixed) {
  // Consecutive small integers (a poor hash) must still estimate well.
  const MinHasher hasher(256);
  std::vector<uint64_t> a, b;
  for (uint64_t i = 0; i < 1000; ++i) a.push_back(i);
  for (uint64_t i = 500; i < 1500; ++i) b.push_back(i);
  EXPECT_NEAR(EstimatedJaccard(hasher.Signature(a), hasher.Signature(b)), 1.0 / 3, 0.1);
}

TEST(MinHash, BandKeysFollowTheBands) {
  std::vector<uint32_t> a(32), b(32);
  for (uint32_t i = 0; i < 32; ++i) a[i] = b[i] = i * 7919;
  b[20] = 1;  // band 2 of 4 rows x 8
  for (int band = 0; band < 4; ++band) {
    EXPECT_EQ(MinHashBandKey(a, band, 8) == MinHashBandKey(b, band, 8), band != 2) << band;
  }
  EXPECT_NE(MinHashBandKey(a, 0, 8), MinHashBandKey(a, 1, 8));
  EXPECT_EQ(MinHashBandKey(a, 0, 8), XXH3_64bits(a.data(), 8 * sizeof(uint32_t)));
}

// The areas by the midpoint rule at a much finer step: an oracle independent
// of the library's Simpson rule.
double Area(double lo, double hi, int b, int r, bool positive) {
  constexpr int kSteps = 2000;
  const double h = (hi - lo) / kSteps;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double s = lo + (i + 0.5) * h;
    const double p = 1 - std::pow(1 - std::pow(s, r), b);
    sum += positive ? p : 1 - p;
  }
  return sum * h;
}

TEST(MinHash, CandidateProbabilityIsTheBandFormula) {
  EXPECT_DOUBLE_EQ(MinHashCandidateProbability(1.0, 16, 8), 1.0);
  EXPECT_DOUBLE_EQ(MinHashCandidateProbability(0.0, 16, 8), 0.0);
  EXPECT_NEAR(MinHashCandidateProbability(0.5, 20, 5), 1 - std::pow(1 - 1.0 / 32, 20), 1e-15);
}

TEST(MinHash, OptimalBandsRowsMinimisesTheWeightedAreas) {
  for (const auto& [t, n] : {std::pair{0.5, 128}, {0.8, 128}, {0.7, 100}, {0.9, 64}, {0.3, 32}}) {
    const BandsRows got = OptimalBandsRows(t, n);
    ASSERT_GE(got.bands, 1);
    ASSERT_GE(got.rows, 1);
    ASSERT_LE(got.bands * got.rows, n);
    const auto error = [&](int b, int r) {
      return 0.5 * Area(0, t, b, r, true) + 0.5 * Area(t, 1, b, r, false);
    };
    const double mine = error(got.bands, got.rows);
    for (int b = 1; b <= n; ++b) {
      for (int r = 1; r <= n / b; ++r) {
        EXPECT_GE(error(b, r), mine - 1e-6) << "t " << t << " n " << n << ": " << b << "x" << r
                                            << " beats " << got.bands << "x" << got.rows;
      }
    }
  }
}

TEST(MinHash, BandsRowsForRecallMeetsTheRecall) {
  for (const auto& [t, n, recall] :
       {std::tuple{0.5, 128, 0.99}, {0.8, 128, 0.95}, {0.7, 64, 0.999}}) {
    auto got = BandsRowsForRecall(t, n, recall);
    ASSERT_TRUE(got.ok());
    EXPECT_GE(MinHashCandidateProbability(t, got->bands, got->rows), recall);
    EXPECT_LE(got->bands * got->rows, n);
    const double mine = Area(0, t, got->bands, got->rows, true);
    for (int b = 1; b <= n; ++b) {
      for (int r = 1; r <= n / b; ++r) {
        if (MinHashCandidateProbability(t, b, r) < recall) continue;
        EXPECT_GE(Area(0, t, b, r, true), mine - 1e-6) << b << "x" << r;
      }
    }
  }
  EXPECT_TRUE(BandsRowsForRecall(0.5, 128, 1.0).status().IsInvalidArgument());
  EXPECT_TRUE(BandsRowsForRecall(0.0, 128, 0.9).status().IsInvalidArgument());
}

}  // namespace
}  // namespace neardup
