// Copyright 2026 The neardup Authors.

#include "neardup/dedup.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "tests/testing/hamming_oracle.h"

namespace neardup {
namespace {

using testing::FlipBits;
using testing::RandomFingerprint;
using testing::SlowDistance;

Fingerprint Flip(const Fingerprint& fp, std::initializer_list<int> bits) {
  uint64_t lo = fp.lo();
  for (int b : bits) lo ^= uint64_t{1} << b;
  return Fingerprint::From64(lo);
}

// A(0) -2- B(1) -3- C(2), A -0- F(5); D(3) unrelated; E(4) empty.
// d(A, C) = 5 > k = 3: C joins A's cluster only through B.
std::vector<DedupDocument> HandMade() {
  const Fingerprint a = Fingerprint::From64(0x0123456789abcdefULL);
  const Fingerprint b = Flip(a, {0, 1});
  const Fingerprint c = Flip(b, {2, 3, 4});
  std::vector<DedupDocument> docs(6);
  docs[0] = {a, false, 10, 1.0};
  docs[1] = {b, false, 50, std::nullopt};
  docs[2] = {c, false, 50, 7.0};
  docs[3] = {Fingerprint::From64(~a.lo()), false, 99, 100.0};
  docs[4] = {Fingerprint::From64(a.lo()), true, 0, 1000.0};  // empty: never matched
  docs[5] = {a, false, 5, 7.0};
  return docs;
}

TEST(DedupClusterTest, KeepFirst) {
  const auto docs = HandMade();
  DedupOptions opt;
  opt.cluster_rule = ClusterRule::kComponents;  // the rule under test
  opt.k = 3;                                    // 64-bit fingerprints: the tfidf method's threshold
  opt.collect_pairs = true;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& rec = r->records;
  ASSERT_EQ(rec.size(), 6u);
  for (size_t i : {0u, 1u, 2u, 5u}) EXPECT_EQ(rec[i].cluster, 0u);
  EXPECT_EQ(rec[3].cluster, 3u);
  EXPECT_EQ(rec[4].cluster, 4u);
  EXPECT_FALSE(rec[0].duplicate);
  EXPECT_EQ(rec[0].nearest, 0u);
  EXPECT_EQ(rec[0].distance, 0);
  EXPECT_TRUE(rec[1].duplicate);
  EXPECT_EQ(rec[1].nearest, 0u);
  EXPECT_EQ(rec[1].distance, 2);
  EXPECT_EQ(rec[1].nearest_within_k, 0u);
  EXPECT_TRUE(rec[2].duplicate);
  EXPECT_EQ(rec[2].nearest, 0u);
  EXPECT_EQ(rec[2].distance, 5);  // transitive: farther than k
  EXPECT_FALSE(rec[2].nearest_within_k.has_value());
  EXPECT_EQ(rec[2].distance_within_k, -1);
  EXPECT_FALSE(rec[3].duplicate);
  EXPECT_TRUE(rec[4].empty);
  EXPECT_FALSE(rec[4].duplicate);
  EXPECT_TRUE(rec[5].duplicate);
  EXPECT_EQ(rec[5].distance, 0);
  EXPECT_EQ(r->pairs, (std::vector<DedupPair>{{0, 1, 2}, {0, 5, 0}, {1, 2, 3}, {1, 5, 2}}));
  const DedupSummary& s = r->summary;
  EXPECT_EQ(s.documents, 6u);
  EXPECT_EQ(s.empty, 1u);
  EXPECT_EQ(s.duplicates, 3u);
  EXPECT_EQ(s.kept, 3u);
  EXPECT_EQ(s.clusters, 3u);
  EXPECT_EQ(s.clusters_with_duplicates, 1u);
}

TEST(DedupClusterTest, KeepLongest) {
  const auto docs = HandMade();
  DedupOptions opt;
  opt.k = 3;  // 64-bit fingerprints: the tfidf method's threshold
  opt.keep = KeepPolicy::kLongest;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok());
  // B and C are both 50 long: the earlier, B, wins.
  EXPECT_FALSE(r->records[1].duplicate);
  for (size_t i : {0u, 2u, 5u}) {
    EXPECT_TRUE(r->records[i].duplicate);
    EXPECT_EQ(r->records[i].nearest, 1u);
    EXPECT_EQ(r->records[i].cluster, 0u);  // cluster id is still the first member
  }
  EXPECT_EQ(r->records[2].distance, 3);
  EXPECT_EQ(r->records[2].nearest_within_k, 1u);
  EXPECT_TRUE(r->pairs.empty());  // not collected
}

TEST(DedupClusterTest, ClusterMembersListsClustersOfTwoOrMore) {
  // HandMade's cluster {A, B, C, F}, and D with a copy G(6); the empty E and
  // nothing else are singletons.
  std::vector<DedupDocument> docs = HandMade();
  docs.push_back({docs[3].fingerprint, false, 1, std::nullopt});
  for (const KeepPolicy keep : {KeepPolicy::kFirst, KeepPolicy::kLongest}) {
    DedupOptions options;
    options.cluster_rule = ClusterRule::kComponents;  // the rule under test
    options.k = 3;  // 64-bit fingerprints: the tfidf method's threshold
    options.keep = keep;
    const Result<DedupResult> result = Dedup(docs, options);
    ASSERT_TRUE(result.ok());
    const ClusterRows rows = ClusterMembers(*result);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows.ids, (std::vector<size_t>{0, 3}));
    // Longest: B (50 bytes, before C) and D (99).
    EXPECT_EQ(rows.kept, (std::vector<size_t>{keep == KeepPolicy::kFirst ? 0u : 1u, 3u}));
    EXPECT_EQ(rows.offsets, (std::vector<size_t>{0, 4, 6}));
    EXPECT_EQ(rows.members, (std::vector<size_t>{0, 1, 2, 5, 3, 6}));
    EXPECT_EQ(rows.Members(1).size(), 2u);
    EXPECT_EQ(rows.Members(1)[1], 6u);
  }
  EXPECT_EQ(ClusterMembers(DedupResult()).size(), 0u);
}

TEST(DedupClusterTest, KeepField) {
  const auto docs = HandMade();
  DedupOptions opt;
  opt.cluster_rule = ClusterRule::kComponents;  // the rule under test
  opt.k = 3;                                    // 64-bit fingerprints: the tfidf method's threshold
  opt.keep = KeepPolicy::kField;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok());
  // C and F both score 7: the earlier, C, wins; B has no score.
  EXPECT_FALSE(r->records[2].duplicate);
  EXPECT_EQ(r->records[0].nearest, 2u);
  EXPECT_EQ(r->records[0].distance, 5);
  EXPECT_FALSE(r->records[0].nearest_within_k.has_value());
  EXPECT_EQ(r->records[1].nearest, 2u);
  EXPECT_EQ(r->records[1].nearest_within_k, 2u);
  EXPECT_EQ(r->records[5].nearest, 2u);
  // The empty document's large score does not matter: it is alone.
  EXPECT_FALSE(r->records[4].duplicate);
}

TEST(DedupStreamTest, KeepsOnlyWhenNoKeptWithinK) {
  const auto docs = HandMade();
  DedupOptions opt;
  opt.k = 3;  // 64-bit fingerprints: the tfidf method's threshold
  opt.mode = DedupMode::kStream;
  opt.collect_pairs = true;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok());
  const auto& rec = r->records;
  EXPECT_FALSE(rec[0].duplicate);
  EXPECT_TRUE(rec[1].duplicate);
  EXPECT_EQ(rec[1].nearest, 0u);
  EXPECT_EQ(rec[1].cluster, 0u);
  // C is 3 from B, but B is not kept; A is 5 away: C is kept.
  EXPECT_FALSE(rec[2].duplicate);
  EXPECT_EQ(rec[2].cluster, 2u);
  EXPECT_FALSE(rec[3].duplicate);
  EXPECT_FALSE(rec[4].duplicate);
  EXPECT_TRUE(rec[4].empty);
  EXPECT_TRUE(rec[5].duplicate);
  EXPECT_EQ(rec[5].nearest, 0u);
  EXPECT_EQ(rec[5].distance, 0);
  EXPECT_EQ(r->pairs, (std::vector<DedupPair>{{0, 1, 2}, {0, 5, 0}}));
  EXPECT_EQ(r->summary.duplicates, 2u);
  EXPECT_EQ(r->summary.clusters, 4u);
  EXPECT_EQ(r->summary.clusters_with_duplicates, 1u);
}

TEST(DedupStreamTest, NearestIsClosestThenEarliest) {
  const Fingerprint x = Fingerprint::From64(0);
  std::vector<DedupDocument> docs(4);
  docs[0].fingerprint = Flip(x, {0, 1, 2, 3, 4, 5});                   // kept
  docs[1].fingerprint = Flip(x, {10, 11, 12, 13, 14, 15});             // 12 from doc 0: kept
  docs[2].fingerprint = Flip(x, {20, 21, 22, 23, 24, 25});             // kept
  docs[3].fingerprint = Flip(x, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14});  // 6 from 0 and 1
  DedupOptions opt;
  opt.mode = DedupMode::kStream;
  opt.k = 6;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->records[3].duplicate);
  EXPECT_EQ(r->records[3].nearest, 0u);
  EXPECT_EQ(r->records[3].distance, 6);
}

TEST(DedupTest, RejectsBadOptions) {
  auto docs = HandMade();
  DedupOptions opt;
  opt.mode = DedupMode::kStream;
  opt.keep = KeepPolicy::kLongest;
  EXPECT_TRUE(Dedup(docs, opt).status().IsInvalidArgument());
  opt = DedupOptions{};
  opt.k = 17;
  EXPECT_TRUE(Dedup(docs, opt).status().IsInvalidArgument());
  opt.k = -1;
  EXPECT_TRUE(Dedup(docs, opt).status().IsInvalidArgument());
  docs[3].fingerprint = Fingerprint::From128(1, 2);
  EXPECT_TRUE(Dedup(docs, DedupOptions{.k = 3}).status().IsInvalidArgument());
  // An empty document's width does not matter.
  docs[3].empty = true;
  EXPECT_TRUE(Dedup(docs, DedupOptions{.k = 3}).ok());
}

TEST(DedupTest, NoDocumentsAndOnlyEmpty) {
  auto r = Dedup({}, DedupOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->summary.documents, 0u);
  std::vector<DedupDocument> docs(3);
  for (auto& d : docs) d.empty = true;
  for (DedupMode mode : {DedupMode::kCluster, DedupMode::kStream}) {
    DedupOptions opt;
    opt.k = 3;  // 64-bit fingerprints: the tfidf method's threshold
    opt.mode = mode;
    auto e = Dedup(docs, opt);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->summary.empty, 3u);
    EXPECT_EQ(e->summary.clusters, 3u);
    EXPECT_EQ(e->summary.duplicates, 0u);
  }
}

TEST(DedupTest, ReportsProgress) {
  const auto docs = HandMade();
  for (DedupMode mode : {DedupMode::kCluster, DedupMode::kStream}) {
    DedupOptions opt;
    opt.k = 3;  // 64-bit fingerprints: the tfidf method's threshold
    opt.mode = mode;
    std::vector<std::string> seen;
    size_t last_done = 0, last_total = 0;
    opt.progress = [&](std::string_view phase, size_t done, size_t total) {
      seen.emplace_back(phase);
      last_done = done;
      last_total = total;
    };
    ASSERT_TRUE(Dedup(docs, opt).ok());
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), mode == DedupMode::kCluster ? "cluster" : "stream");
    EXPECT_EQ(last_done, docs.size());
    EXPECT_EQ(last_total, docs.size());
    if (mode == DedupMode::kCluster) {
      EXPECT_EQ(seen,
                (std::vector<std::string>{"index", "index", "join", "join", "cluster", "cluster"}));
    }
  }
}

// Random documents in tight groups; cluster mode against brute-force
// connected components, for every policy, 64 and 128 bits.
class DedupPropertyTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DedupPropertyTest, ClusterModeEqualsBruteForceComponents) {
  const auto [bits, k] = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(bits + k));
  std::vector<DedupDocument> docs;
  std::vector<Fingerprint> seeds;
  for (int i = 0; i < 900; ++i) {
    DedupDocument d;
    if (!seeds.empty() && rng() % 3 != 0) {
      d.fingerprint = FlipBits(seeds[rng() % seeds.size()], static_cast<int>(rng() % (k + 3)), rng);
    } else {
      d.fingerprint = RandomFingerprint(bits, rng);
      seeds.push_back(d.fingerprint);
    }
    d.empty = rng() % 20 == 0;
    d.length = rng() % 5;
    if (rng() % 4 != 0) d.score = static_cast<double>(rng() % 4);
    docs.push_back(d);
  }
  const size_t n = docs.size();
  // Brute force: adjacency by bit-by-bit distance, components by flood fill.
  std::vector<std::vector<size_t>> adj(n);
  std::vector<DedupPair> want_pairs;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (docs[i].empty || docs[j].empty) continue;
      const int d = SlowDistance(docs[i].fingerprint, docs[j].fingerprint);
      if (d > k) continue;
      adj[i].push_back(j);
      adj[j].push_back(i);
      want_pairs.push_back({i, j, d});
    }
  }
  std::vector<size_t> comp(n, SIZE_MAX);
  for (size_t s = 0; s < n; ++s) {
    if (comp[s] != SIZE_MAX) continue;
    std::vector<size_t> stack = {s};
    comp[s] = s;  // s is the smallest position of its component
    while (!stack.empty()) {
      const size_t u = stack.back();
      stack.pop_back();
      for (size_t v : adj[u]) {
        if (comp[v] == SIZE_MAX) {
          comp[v] = s;
          stack.push_back(v);
        }
      }
    }
  }
  EXPECT_GT(want_pairs.size(), 100u);

  for (KeepPolicy policy : {KeepPolicy::kFirst, KeepPolicy::kLongest, KeepPolicy::kField}) {
    // Expected kept document per component.
    std::vector<size_t> keep(n, SIZE_MAX);
    for (size_t i = 0; i < n; ++i) {
      size_t& cur = keep[comp[i]];
      if (cur == SIZE_MAX) {
        cur = i;
        continue;
      }
      const DedupDocument& a = docs[i];
      const DedupDocument& b = docs[cur];
      bool better = false;
      if (policy == KeepPolicy::kLongest) better = a.length > b.length;
      if (policy == KeepPolicy::kField) {
        const double sa = a.score.value_or(-1e300), sb = b.score.value_or(-1e300);
        better = sa > sb;
      }
      if (better) cur = i;
    }
    DedupOptions opt;
    opt.cluster_rule = ClusterRule::kComponents;  // the rule under test
    opt.k = k;
    opt.keep = policy;
    opt.collect_pairs = true;
    opt.threads = 1;
    auto r1 = Dedup(docs, opt);
    opt.threads = 2;
    auto r2 = Dedup(docs, opt);
    ASSERT_TRUE(r1.ok() && r2.ok());
    EXPECT_EQ(r1->pairs, want_pairs);
    EXPECT_EQ(r2->pairs, want_pairs);
    size_t dups = 0;
    for (size_t i = 0; i < n; ++i) {
      const DedupRecord& rec = r1->records[i];
      ASSERT_EQ(rec.cluster, comp[i]) << i;
      ASSERT_EQ(rec.nearest, keep[comp[i]]) << i;
      ASSERT_EQ(rec.duplicate, keep[comp[i]] != i);
      ASSERT_EQ(rec.empty, docs[i].empty);
      if (rec.duplicate) {
        ++dups;
        ASSERT_EQ(rec.distance, SlowDistance(docs[i].fingerprint, docs[rec.nearest].fingerprint));
        if (rec.distance <= k) {
          ASSERT_EQ(rec.nearest_within_k, rec.nearest);
        }
        if (rec.nearest_within_k) {
          ASSERT_FALSE(r1->records[*rec.nearest_within_k].duplicate);
          ASSERT_LE(rec.distance_within_k, k);
        }
      }
      ASSERT_EQ(r2->records[i].cluster, rec.cluster);
      ASSERT_EQ(r2->records[i].nearest, rec.nearest);
    }
    EXPECT_EQ(r1->summary.duplicates, dups);
    EXPECT_GT(dups, 0u);
  }
}

TEST_P(DedupPropertyTest, StreamModeEqualsBruteForce) {
  const auto [bits, k] = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(bits * 3 + k));
  std::vector<DedupDocument> docs;
  std::vector<Fingerprint> seeds;
  // Enough documents that the index flushes its insert buffer into segments.
  for (int i = 0; i < 5000; ++i) {
    DedupDocument d;
    if (!seeds.empty() && rng() % 2 == 0) {
      d.fingerprint = FlipBits(seeds[rng() % seeds.size()], static_cast<int>(rng() % (k + 3)), rng);
    } else {
      d.fingerprint = RandomFingerprint(bits, rng);
      seeds.push_back(d.fingerprint);
    }
    d.empty = rng() % 50 == 0;
    docs.push_back(d);
  }
  DedupOptions opt;
  opt.k = k;
  opt.mode = DedupMode::kStream;
  auto r = Dedup(docs, opt);
  ASSERT_TRUE(r.ok());
  std::vector<size_t> kept;
  size_t dups = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    const DedupRecord& rec = r->records[i];
    if (docs[i].empty) {
      ASSERT_FALSE(rec.duplicate);
      continue;
    }
    int best = k + 1;
    size_t best_pos = 0;
    for (size_t c : kept) {
      const int d = HammingDistance(docs[i].fingerprint, docs[c].fingerprint);
      if (d < best) {
        best = d;
        best_pos = c;
      }
    }
    if (best > k) {
      ASSERT_FALSE(rec.duplicate) << i;
      kept.push_back(i);
    } else {
      ++dups;
      ASSERT_TRUE(rec.duplicate) << i;
      ASSERT_EQ(rec.nearest, best_pos) << i;
      ASSERT_EQ(rec.distance, best);
    }
  }
  EXPECT_EQ(r->summary.duplicates, dups);
  EXPECT_GT(dups, 100u);
}

INSTANTIATE_TEST_SUITE_P(All, DedupPropertyTest,
                         ::testing::Values(std::make_tuple(64, 0), std::make_tuple(64, 3),
                                           std::make_tuple(64, 6), std::make_tuple(128, 3),
                                           std::make_tuple(128, 10)));

}  // namespace
}  // namespace neardup
