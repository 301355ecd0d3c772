// Copyright 2026 The neardup Authors.
//
// VerifyBandBucket is BandJoin's rule for one bucket: on a join of one band
// whose only bucket of two or more is `members`, it gives BandJoin's pairs
// and counts (small and large buckets, all pairs and components only).

#include "neardup/band_bucket.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "neardup/band_join.h"

namespace neardup {
namespace {

// A deterministic, irregular test: about one pair in three passes.
int Score(size_t i, size_t j) {
  const size_t h = (i * 2654435761u) ^ (j * 40503u + 7);
  return h % 3 == 0 ? static_cast<int>(h % 11) : -1;
}

std::vector<std::tuple<uint64_t, uint64_t, int>> Sorted(const std::vector<IdPair>& pairs) {
  std::vector<std::tuple<uint64_t, uint64_t, int>> out;
  for (const IdPair& p : pairs) out.emplace_back(p.a, p.b, p.distance);
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectSameAsBandJoin(size_t max_bucket, size_t max_reps, bool components_only) {
  SCOPED_TRACE(testing::Message() << "max_bucket " << max_bucket << " components_only "
                                  << components_only);
  // 120 documents; the multiples of 3 share band 0's key, the others have
  // keys of their own.
  const size_t n = 120;
  std::vector<uint64_t> members;
  for (size_t i = 0; i < n; i += 3) members.push_back(i);
  const BandKeyFunction keys = [](int, size_t begin, size_t end, uint64_t* out) {
    for (size_t i = begin; i < end; ++i) out[i - begin] = i % 3 == 0 ? 0 : 1000 + i;
  };
  BandJoinOptions options;
  options.bands = 1;
  options.threads = 2;
  options.max_bucket = max_bucket;
  options.max_representatives = max_reps;
  options.components_only = components_only;
  std::vector<IdPair> want;
  BandJoinStats want_stats;
  ASSERT_TRUE(BandJoin(n, keys, Score, options, &want, &want_stats).ok());

  std::vector<IdPair> got;
  BandJoinStats got_stats;
  VerifyBandBucket(members, Score, options, &got, &got_stats);
  EXPECT_FALSE(got.empty());
  if (components_only) {
    // BandJoin keeps a spanning forest of the band's pairs (sorted, the
    // pairs that join two components): the bucket's pairs, folded alike.
    std::sort(got.begin(), got.end(), [](const IdPair& x, const IdPair& y) {
      return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    });
    std::vector<uint64_t> up(n);
    std::iota(up.begin(), up.end(), uint64_t{0});
    const auto root = [&up](uint64_t x) {
      while (up[x] != x) x = up[x] = up[up[x]];
      return x;
    };
    std::vector<IdPair> forest;
    for (const IdPair& p : got) {
      const uint64_t ra = root(p.a), rb = root(p.b);
      if (ra == rb) continue;
      up[std::max(ra, rb)] = std::min(ra, rb);
      forest.push_back(p);
    }
    got.swap(forest);
  }
  EXPECT_EQ(Sorted(got), Sorted(want));
  EXPECT_EQ(got_stats.candidates, want_stats.candidates);
  EXPECT_EQ(got_stats.tested, want_stats.tested);
  EXPECT_EQ(got_stats.large_buckets, want_stats.large_buckets);
  EXPECT_EQ(got_stats.largest_bucket, want_stats.largest_bucket);
  EXPECT_EQ(got_stats.largest_bucket, members.size());
}

TEST(VerifyBandBucketTest, SmallBucketGivesBandJoinsPairs) {
  ExpectSameAsBandJoin(2048, 64, false);
  ExpectSameAsBandJoin(2048, 64, true);
}

TEST(VerifyBandBucketTest, LargeBucketIsJoinedAgainstRepresentativesAsBandJoinDoes) {
  ExpectSameAsBandJoin(8, 3, false);
  ExpectSameAsBandJoin(8, 3, true);
}

TEST(VerifyBandBucketTest, FewerThanTwoMembersAddNothing) {
  std::vector<IdPair> pairs;
  BandJoinStats stats;
  const std::vector<uint64_t> one = {5};
  VerifyBandBucket(one, Score, BandJoinOptions(), &pairs, &stats);
  EXPECT_TRUE(pairs.empty());
  EXPECT_EQ(stats.candidates, 0u);
}

}  // namespace
}  // namespace neardup
