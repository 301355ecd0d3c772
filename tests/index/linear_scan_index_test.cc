// Copyright 2026 The neardup Authors.
//
// LinearScanIndex against the bit-by-bit oracle in tests/testing.

#include <gtest/gtest.h>

#include <random>

#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"

namespace neardup {
namespace {

using testing::FlipBits;
using testing::OraclePairs;
using testing::OracleSearch;
using testing::RandomFingerprint;

class LinearScanTest : public ::testing::TestWithParam<int> {};

TEST_P(LinearScanTest, SearchAndSelfJoinMatchOracle) {
  const int bits = GetParam();
  std::mt19937_64 rng(bits);
  std::vector<IndexEntry> entries;
  for (uint64_t i = 0; i < 300; ++i) {
    // Every 3rd entry is a near copy of an earlier one, so pairs exist.
    const Fingerprint fp =
        (i % 3 == 2) ? FlipBits(entries[i - 1].fingerprint, static_cast<int>(rng() % 6), rng)
                     : RandomFingerprint(bits, rng);
    entries.push_back({i * 7 + 1, fp});
  }
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (const auto& e : entries) {
    ids.push_back(e.id);
    fps.push_back(e.fingerprint);
  }
  auto index = LinearScanIndex::Build(bits, ids, fps);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->size(), entries.size());
  EXPECT_EQ((*index)->max_k(), bits);

  std::vector<Fingerprint> queries;
  for (int i = 0; i < 50; ++i) {
    queries.push_back(FlipBits(entries[rng() % entries.size()].fingerprint, i % 8, rng));
  }
  for (int k : {0, 2, 5, bits / 4}) {
    SearchResults batch;
    ASSERT_TRUE((*index)->SearchBatch(queries, k, 2, &batch).ok());
    ASSERT_EQ(batch.num_queries(), queries.size());
    for (size_t q = 0; q < queries.size(); ++q) {
      std::vector<Neighbor> got;
      ASSERT_TRUE((*index)->Search(queries[q], k, &got).ok());
      EXPECT_EQ(got, OracleSearch(entries, queries[q], k));
      EXPECT_EQ(std::vector<Neighbor>(batch[q].begin(), batch[q].end()), got);
    }
    std::vector<IdPair> pairs;
    ASSERT_TRUE((*index)->SelfJoin(k, 2, &pairs).ok());
    EXPECT_EQ(pairs, OraclePairs(entries, k));
  }
}

TEST_P(LinearScanTest, RemoveAndReinsert) {
  const int bits = GetParam();
  std::mt19937_64 rng(99);
  auto index = LinearScanIndex::Create(bits);
  ASSERT_TRUE(index.ok());
  const Fingerprint a = RandomFingerprint(bits, rng);
  ASSERT_TRUE((*index)->Add(1, a).ok());
  ASSERT_TRUE((*index)->Add(2, FlipBits(a, 1, rng)).ok());
  EXPECT_EQ((*index)->Remove(1), 1u);
  EXPECT_EQ((*index)->Remove(1), 0u);
  std::vector<Neighbor> got;
  ASSERT_TRUE((*index)->Search(a, 3, &got).ok());
  EXPECT_EQ(got, (std::vector<Neighbor>{{2, 1}}));
  ASSERT_TRUE((*index)->Add(1, a).ok());
  ASSERT_TRUE((*index)->Search(a, 3, &got).ok());
  EXPECT_EQ(got, (std::vector<Neighbor>{{1, 0}, {2, 1}}));
}

TEST_P(LinearScanTest, RejectsBadArguments) {
  const int bits = GetParam();
  auto index = LinearScanIndex::Create(bits);
  ASSERT_TRUE(index.ok());
  const Fingerprint other = bits == 64 ? Fingerprint::From128(0, 0) : Fingerprint::From64(0);
  EXPECT_TRUE((*index)->Add(1, other).IsInvalidArgument());
  std::vector<Neighbor> got;
  EXPECT_TRUE((*index)->Search(other, 1, &got).IsInvalidArgument());
  const Fingerprint ok = bits == 64 ? Fingerprint::From64(0) : Fingerprint::From128(0, 0);
  EXPECT_TRUE((*index)->Search(ok, -1, &got).IsInvalidArgument());
  EXPECT_TRUE((*index)->Search(ok, bits + 1, &got).IsInvalidArgument());
  const uint64_t ids[2] = {1, 2};
  EXPECT_TRUE((*index)->AddBatch(ids, std::span<const Fingerprint>(&ok, 1)).IsInvalidArgument());
  EXPECT_EQ((*index)->size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Widths, LinearScanTest, ::testing::Values(64, 128));

TEST(LinearScanCreateTest, RejectsOddWidth) {
  EXPECT_TRUE(LinearScanIndex::Create(32).status().IsInvalidArgument());
}

}  // namespace
}  // namespace neardup
