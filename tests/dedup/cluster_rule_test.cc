// Copyright 2026 The neardup Authors.
//
// ClusterRule::kCenter against a brute-force oracle: the same greedy rule
// (documents in keep order; an unassigned one becomes a centre and takes
// every unassigned document within k) over all pairs of documents; and the
// pairs of groups freed by AssembleClusters' pairs_done.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "dedup/cluster.h"
#include "neardup/dedup.h"
#include "tests/testing/hamming_oracle.h"

namespace neardup {
namespace {

using testing::FlipBits;
using testing::RandomFingerprint;
using testing::SlowDistance;

// Per document its centre by brute force (SIZE_MAX: empty).
std::vector<size_t> OracleCenters(const std::vector<DedupDocument>& docs, int k, KeepPolicy keep) {
  std::vector<size_t> order;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i].empty) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (keep == KeepPolicy::kLongest && docs[a].length != docs[b].length) {
      return docs[a].length > docs[b].length;
    }
    return a < b;
  });
  std::vector<size_t> center(docs.size(), SIZE_MAX);
  for (size_t c : order) {
    if (center[c] != SIZE_MAX) continue;
    center[c] = c;
    for (size_t j : order) {
      if (center[j] == SIZE_MAX && SlowDistance(docs[c].fingerprint, docs[j].fingerprint) <= k) {
        center[j] = c;
      }
    }
  }
  return center;
}

// Clusters of variants around random bases; bases near each other so that
// components chain; some identical copies and some empty documents.
std::vector<DedupDocument> Corpus(uint64_t seed, int bits, int k) {
  std::mt19937_64 rng(seed);
  std::vector<DedupDocument> docs;
  for (int b = 0; b < 12; ++b) {
    const Fingerprint base = RandomFingerprint(bits, rng);
    Fingerprint walk = base;
    for (int v = 0; v < 25; ++v) {
      DedupDocument d;
      const int step = static_cast<int>(rng() % (k + 1));
      walk = FlipBits(walk, step, rng);  // a random walk: chains
      d.fingerprint = rng() % 5 == 0 ? base : walk;
      d.length = rng() % 4;  // ties for kLongest
      d.empty = rng() % 40 == 0;
      docs.push_back(d);
    }
  }
  std::shuffle(docs.begin(), docs.end(), rng);
  return docs;
}

void ExpectMatchesOracle(const std::vector<DedupDocument>& docs, int k, KeepPolicy keep) {
  DedupOptions opt;
  opt.k = k;
  opt.keep = keep;
  opt.join = DedupJoin::kExact;
  opt.cluster_rule = ClusterRule::kCenter;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<size_t> center = OracleCenters(docs, k, keep);
  std::vector<size_t> first(docs.size(), SIZE_MAX);
  for (size_t i = 0; i < docs.size(); ++i) {
    const size_t c = center[i] == SIZE_MAX ? i : center[i];
    first[c] = std::min(first[c], i);
  }
  size_t duplicates = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    SCOPED_TRACE(i);
    const DedupRecord& rec = r->records[i];
    const size_t c = center[i] == SIZE_MAX ? i : center[i];
    EXPECT_EQ(rec.nearest, c);
    EXPECT_EQ(rec.duplicate, c != i);
    EXPECT_EQ(rec.cluster, first[c]);
    if (rec.duplicate) {
      ++duplicates;
      const int d = SlowDistance(docs[i].fingerprint, docs[c].fingerprint);
      EXPECT_EQ(rec.distance, d);
      EXPECT_LE(d, k);  // no chaining
      EXPECT_EQ(rec.nearest_within_k, c);
    }
  }
  EXPECT_EQ(r->summary.duplicates, duplicates);
  EXPECT_GT(duplicates, 0u);
  // Kept documents are more than k apart.
  for (size_t a = 0; a < docs.size(); ++a) {
    for (size_t b = a + 1; b < docs.size(); ++b) {
      if (docs[a].empty || docs[b].empty || r->records[a].duplicate || r->records[b].duplicate) {
        continue;
      }
      EXPECT_GT(SlowDistance(docs[a].fingerprint, docs[b].fingerprint), k) << a << " " << b;
    }
  }
}

TEST(ClusterRuleTest, CenterMatchesBruteForce) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    for (int bits : {64, 128}) {
      const int k = bits == 64 ? 6 : 12;
      const auto docs = Corpus(seed, bits, k);
      ExpectMatchesOracle(docs, k, KeepPolicy::kFirst);
      ExpectMatchesOracle(docs, k, KeepPolicy::kLongest);
    }
  }
}

TEST(ClusterRuleTest, DefaultDoesNotChainComponentsDo) {
  // A(0) -2- B(1) -3- C(2): d(A, C) = 5 > k = 3.
  const Fingerprint a = Fingerprint::From64(0x0123456789abcdefULL);
  const Fingerprint b = Fingerprint::From64(a.lo() ^ 0x3);
  const Fingerprint c = Fingerprint::From64(b.lo() ^ 0x1c);
  std::vector<DedupDocument> docs(3);
  docs[0].fingerprint = a;
  docs[1].fingerprint = b;
  docs[2].fingerprint = c;
  DedupOptions opt;
  opt.k = 3;
  // The default rule: centres.
  auto center = Dedup(docs, opt);
  ASSERT_TRUE(center.ok());
  EXPECT_EQ(center->records[1].nearest, 0u);
  EXPECT_TRUE(center->records[1].duplicate);
  EXPECT_FALSE(center->records[2].duplicate);
  EXPECT_EQ(center->records[2].cluster, 2u);
  EXPECT_EQ(center->summary.clusters_with_duplicates, 1u);
  EXPECT_EQ(center->summary.largest_cluster, 2u);
  opt.cluster_rule = ClusterRule::kComponents;
  auto components = Dedup(docs, opt);
  ASSERT_TRUE(components.ok());
  EXPECT_EQ(components->records[2].cluster, 0u);
  EXPECT_EQ(components->records[2].distance, 5);
  EXPECT_EQ(components->summary.largest_cluster, 3u);
}

// A chain of 71 documents, each 2 bits from the one before (k = 3; the shape
// of 71 dividend notices of different companies): components make one
// cluster of 71 whose ends are 116 bits apart; by default every member is
// within k of its kept document.
TEST(ClusterRuleTest, DefaultKeepsAChainApart) {
  std::vector<DedupDocument> docs(71);
  Fingerprint f = Fingerprint::From128(0, 0);
  for (size_t i = 0; i < docs.size(); ++i) {
    docs[i].fingerprint = f;
    const size_t bit = 2 * (i % 64);  // flips bits bit and bit + 1
    const uint64_t mask = uint64_t{3} << (bit % 64);
    f = Fingerprint::From128(f.hi() ^ (bit >= 64 ? mask : 0), f.lo() ^ (bit < 64 ? mask : 0));
  }
  DedupOptions opt;
  opt.k = 3;
  auto by_default = Dedup(docs, opt);
  ASSERT_TRUE(by_default.ok());
  EXPECT_LE(by_default->summary.largest_cluster, 2u);
  for (size_t i = 0; i < docs.size(); ++i) {
    const size_t kept = by_default->records[i].nearest;
    EXPECT_LE(SlowDistance(docs[kept].fingerprint, docs[i].fingerprint), 3) << i;
  }
  opt.cluster_rule = ClusterRule::kComponents;
  auto components = Dedup(docs, opt);
  ASSERT_TRUE(components.ok());
  EXPECT_EQ(components->summary.largest_cluster, 71u);
}

// AssembleClusters frees the pairs of groups through pairs_done as soon as
// the clusters no longer read them (the centre rule: once the groups'
// adjacency is built). Poisoning them in the callback must change nothing:
// records, summary and document pairs equal those of a run that keeps
// them, and the document pairs equal the pairs within k by brute force.
TEST(ClusterRuleTest, PairsFreedAfterTheirLastReadChangeNothing) {
  const int k = 12;
  const std::vector<DedupDocument> docs = Corpus(7, 128, k);
  const dedup_internal::Groups groups = dedup_internal::GroupIdentical(docs);
  std::vector<IdPair> group_pairs;
  for (size_t a = 0; a < groups.size(); ++a) {
    for (size_t b = a + 1; b < groups.size(); ++b) {
      const int d = SlowDistance(docs[groups.Members(a).front()].fingerprint,
                                 docs[groups.Members(b).front()].fingerprint);
      if (d <= k) group_pairs.push_back({a, b, d});
    }
  }
  ASSERT_GT(group_pairs.size(), 100u);
  std::vector<DedupPair> brute;
  for (size_t i = 0; i < docs.size(); ++i) {
    for (size_t j = i + 1; j < docs.size(); ++j) {
      if (docs[i].empty || docs[j].empty) continue;
      const int d = SlowDistance(docs[i].fingerprint, docs[j].fingerprint);
      if (d <= k) brute.push_back({i, j, d});
    }
  }
  for (const ClusterRule rule : {ClusterRule::kCenter, ClusterRule::kComponents}) {
    for (const bool pairs : {false, true}) {
      SCOPED_TRACE(std::string(ClusterRuleName(rule)) + (pairs ? " with pairs" : ""));
      dedup_internal::AssembleOptions a;
      a.rule = rule;
      a.max_distance = k;
      a.collect_pairs = pairs;
      a.distance = [&](size_t i, size_t kept) {
        return SlowDistance(docs[i].fingerprint, docs[kept].fingerprint);
      };
      DedupResult kept_pairs;
      dedup_internal::AssembleClusters(docs, groups, group_pairs, a, &kept_pairs);
      std::vector<IdPair> owned = group_pairs;
      int calls = 0;
      a.pairs_done = [&] {
        ++calls;
        for (IdPair& p : owned) p = {0, 1, 99};  // any later read shows
      };
      DedupResult freed;
      dedup_internal::AssembleClusters(docs, groups, owned, a, &freed);
      EXPECT_EQ(calls, 1);
      ASSERT_EQ(freed.records.size(), kept_pairs.records.size());
      for (size_t i = 0; i < docs.size(); ++i) {
        EXPECT_EQ(freed.records[i].cluster, kept_pairs.records[i].cluster) << i;
        EXPECT_EQ(freed.records[i].nearest, kept_pairs.records[i].nearest) << i;
        EXPECT_EQ(freed.records[i].distance, kept_pairs.records[i].distance) << i;
      }
      EXPECT_EQ(freed.summary.duplicates, kept_pairs.summary.duplicates);
      EXPECT_GT(freed.summary.duplicates, 0u);
      ASSERT_EQ(freed.pairs.size(), pairs ? brute.size() : 0u);
      for (size_t p = 0; p < freed.pairs.size(); ++p) {
        EXPECT_EQ(freed.pairs[p].i, brute[p].i) << p;
        EXPECT_EQ(freed.pairs[p].j, brute[p].j) << p;
        EXPECT_EQ(freed.pairs[p].distance, brute[p].distance) << p;
      }
    }
  }
}

TEST(ClusterRuleTest, ParseNames) {
  EXPECT_EQ(*ParseClusterRule("center"), ClusterRule::kCenter);
  EXPECT_EQ(*ParseClusterRule("components"), ClusterRule::kComponents);
  EXPECT_FALSE(ParseClusterRule("chain").ok());
  EXPECT_STREQ(ClusterRuleName(ClusterRule::kCenter), "center");
}

}  // namespace
}  // namespace neardup
