// Copyright 2026 The neardup Authors.
//
// Banded stream mode (dedup/stream_bands.h) against oracles: a linear scan
// that applies the banded rule exactly (a kept document is visible to a later
// one when they share a band key or a batch), the planted pairs of a seeded
// random corpus whose measured recall is compared with the computed
// guarantee, the exact stream mode and centre clustering.

#include "dedup/stream_bands.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "neardup/dedup.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using dedup_internal::kStreamBatch;
using testing::FlipBits;
using testing::RandomFingerprint;
using testing::SlowDistance;

DedupOptions StreamOptions(int k, DedupJoin join, int threads) {
  DedupOptions opt;
  opt.k = k;
  opt.mode = DedupMode::kStream;
  opt.join = join;
  opt.threads = threads;
  opt.collect_pairs = true;
  return opt;
}

// Clusters of near copies (0..k + 3 bits from a random seed) among random
// documents, some empty.
std::vector<DedupDocument> Clustered(int bits, int k, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<DedupDocument> docs;
  std::vector<Fingerprint> seeds;
  for (size_t i = 0; i < n; ++i) {
    DedupDocument d;
    if (!seeds.empty() && rng() % 2 == 0) {
      d.fingerprint = FlipBits(seeds[rng() % seeds.size()], static_cast<int>(rng() % (k + 4)), rng);
    } else {
      d.fingerprint = RandomFingerprint(bits, rng);
      seeds.push_back(d.fingerprint);
    }
    d.empty = rng() % 50 == 0;
    docs.push_back(d);
  }
  return docs;
}

// The banded rule by linear scan: document i is a duplicate of the closest
// (then earliest) kept document j < i within k that is visible to it (shares
// a band key, or lies in the same batch of kStreamBatch non-empty documents).
// The banded run must agree record for record.
TEST(BandedStreamTest, EqualsTheLinearScanOfItsRule) {
  for (const auto& [bits, k] : {std::make_pair(128, 24), std::make_pair(64, 12)}) {
    const std::vector<DedupDocument> docs = Clustered(bits, k, 2 * kStreamBatch + 500, 7 + bits);
    DedupOptions opt = StreamOptions(k, DedupJoin::kBanded, 2);
    auto r = Dedup(docs, opt);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->join.banded);
    const SimHashBands& layout = r->join.bands;
    EXPECT_GE(layout.recall_at_k, 0.99);
    const auto masks = SimHashBandMasks(layout);
    const auto shares_band = [&](const Fingerprint& a, const Fingerprint& b) {
      for (const auto& [mhi, mlo] : masks) {
        if (((a.hi() ^ b.hi()) & mhi) == 0 && ((a.lo() ^ b.lo()) & mlo) == 0) return true;
      }
      return false;
    };
    std::vector<size_t> kept;
    std::vector<size_t> batch_of(docs.size(), 0);
    size_t nonempty = 0, duplicates = 0, missed = 0;
    for (size_t i = 0; i < docs.size(); ++i) {
      const DedupRecord& rec = r->records[i];
      if (docs[i].empty) {
        ASSERT_FALSE(rec.duplicate);
        continue;
      }
      batch_of[i] = nonempty++ / kStreamBatch;
      int best = k + 1, any = k + 1;
      size_t best_pos = 0;
      const Fingerprint& f = docs[i].fingerprint;
      for (size_t c : kept) {
        const Fingerprint& g = docs[c].fingerprint;
        if (std::popcount(f.hi() ^ g.hi()) + std::popcount(f.lo() ^ g.lo()) > k) continue;
        const int d = SlowDistance(f, g);
        any = std::min(any, d);
        if (batch_of[c] != batch_of[i] && !shares_band(docs[i].fingerprint, docs[c].fingerprint)) {
          continue;
        }
        if (d < best) best = d, best_pos = c;
      }
      if (best > k) {
        ASSERT_FALSE(rec.duplicate) << i;
        kept.push_back(i);
        if (any <= k) ++missed;  // a kept document within k that no band showed
        continue;
      }
      ++duplicates;
      ASSERT_TRUE(rec.duplicate) << i;
      ASSERT_EQ(rec.nearest, best_pos) << i;
      ASSERT_EQ(rec.distance, best) << i;
      ASSERT_EQ(rec.nearest_within_k, best_pos);
    }
    EXPECT_GT(duplicates, docs.size() / 4);
    EXPECT_EQ(r->pairs.size(), duplicates);
    // Misses are rare: about (1 - recall) of the pairs at k, far fewer closer.
    EXPECT_LT(missed, duplicates / 100 + 1) << bits;
    std::printf("f=%d k=%d: r=%d L=%d, %zu duplicates, %zu kept although within k\n", bits, k,
                layout.band_bits, layout.bands, duplicates, missed);
  }
}

// Planted pairs: a random seed document early, its copy at distance d
// (0..k + 4) later, in another batch. Measured recall at k against the
// guarantee (binomial: four standard deviations), d <= k - 4 all found (the
// guarantee is 0.9999), no copy beyond k ever a duplicate.
TEST(BandedStreamTest, MeasuredRecallMatchesTheGuarantee) {
  const int bits = 128, k = 24;
  const size_t at_k = testing::Sanitized() ? 1000 : 3000;
  const size_t other = 200;
  std::mt19937_64 rng(11);
  std::vector<DedupDocument> docs;
  std::vector<int> copies;  // per seed document (the first ones): its copy's distance
  for (int d = 0; d <= k + 4; ++d) copies.insert(copies.end(), d == k ? at_k : other, d);
  docs.resize(copies.size());
  for (DedupDocument& doc : docs) doc.fingerprint = RandomFingerprint(bits, rng);
  const size_t seeds = docs.size();
  std::shuffle(copies.begin(), copies.end(), rng);
  for (size_t c = 0; c < copies.size(); ++c) {
    DedupDocument doc;
    doc.fingerprint = FlipBits(docs[c].fingerprint, copies[c], rng);
    docs.push_back(doc);
  }
  auto r = Dedup(docs, StreamOptions(k, DedupJoin::kBanded, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const SimHashBands& b = r->join.bands;
  std::vector<size_t> hits(k + 5, 0), count(k + 5, 0);
  for (size_t c = 0; c < copies.size(); ++c) {
    const size_t pos = seeds + c;
    const int d = copies[c];
    ++count[static_cast<size_t>(d)];
    ASSERT_FALSE(r->records[c].duplicate);  // random seeds are far apart
    const DedupRecord& rec = r->records[pos];
    if (!rec.duplicate) continue;
    ASSERT_LE(d, k);
    ASSERT_EQ(rec.nearest, c);
    ASSERT_EQ(rec.distance, d);
    ++hits[static_cast<size_t>(d)];
  }
  const double measured = static_cast<double>(hits[k]) / static_cast<double>(count[k]);
  const double sigma = std::sqrt(b.recall_at_k * (1 - b.recall_at_k) / count[k]);
  EXPECT_GE(b.recall_at_k, 0.99);
  EXPECT_GE(measured, b.recall_at_k - 4 * sigma) << "r=" << b.band_bits << " L=" << b.bands;
  EXPECT_LE(measured, std::min(1.0, b.recall_at_k + 4 * sigma + 0.001));
  for (int d = 0; d <= k - 4; ++d) EXPECT_EQ(hits[static_cast<size_t>(d)], count[d]) << d;
  std::printf("stream f=%d k=%d N=%zu: r=%d L=%d guarantee %.4f, measured %.4f at k\n", bits, k,
              docs.size(), b.band_bits, b.bands, b.recall_at_k, measured);
}

TEST(BandedStreamTest, DeterministicAcrossThreads) {
  const std::vector<DedupDocument> docs = Clustered(128, 24, 2 * kStreamBatch + 100, 3);
  auto one = Dedup(docs, StreamOptions(24, DedupJoin::kBanded, 1));
  ASSERT_TRUE(one.ok());
  for (int threads : {2, 3, 5}) {
    auto other = Dedup(docs, StreamOptions(24, DedupJoin::kBanded, threads));
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(other->pairs, one->pairs);
    for (size_t i = 0; i < docs.size(); ++i) {
      ASSERT_EQ(other->records[i].duplicate, one->records[i].duplicate) << i;
      ASSERT_EQ(other->records[i].nearest, one->records[i].nearest) << i;
    }
    EXPECT_EQ(other->join.candidates, one->join.candidates);
    EXPECT_EQ(other->join.tested, one->join.tested);
  }
}

// Where every near pair lies well inside k (d <= k - 8: recall 0.999999+),
// banded stream mode equals the exact stream mode, and its kept documents are
// the centres of centre clustering with keep first (both keep a document when
// no earlier kept one lies within k).
TEST(BandedStreamTest, EqualsTheExactStreamAndTheCentresWellInsideK) {
  const int k = 24;
  std::mt19937_64 rng(5);
  std::vector<DedupDocument> docs;
  std::vector<Fingerprint> seeds;
  for (size_t i = 0; i < 3 * kStreamBatch; ++i) {
    DedupDocument d;
    if (!seeds.empty() && rng() % 3 == 0) {
      d.fingerprint = FlipBits(seeds[rng() % seeds.size()], static_cast<int>(rng() % 9), rng);
    } else {
      d.fingerprint = RandomFingerprint(128, rng);
      seeds.push_back(d.fingerprint);
    }
    docs.push_back(d);
  }
  auto banded = Dedup(docs, StreamOptions(k, DedupJoin::kBanded, 2));
  auto exact = Dedup(docs, StreamOptions(k, DedupJoin::kExact, 2));
  DedupOptions centre;
  centre.k = k;
  centre.join = DedupJoin::kExact;
  centre.cluster_rule = ClusterRule::kCenter;
  auto centres = Dedup(docs, centre);
  ASSERT_TRUE(banded.ok() && exact.ok() && centres.ok());
  EXPECT_TRUE(banded->join.banded);
  EXPECT_FALSE(exact->join.banded);
  EXPECT_EQ(banded->pairs, exact->pairs);
  size_t dups = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    ASSERT_EQ(banded->records[i].duplicate, exact->records[i].duplicate) << i;
    ASSERT_EQ(banded->records[i].nearest, exact->records[i].nearest) << i;
    ASSERT_EQ(banded->records[i].duplicate, centres->records[i].duplicate) << i;
    dups += banded->records[i].duplicate;
  }
  EXPECT_GT(dups, docs.size() / 5);
}

TEST(BandedStreamTest, AutoKeepsSmallInputsExact) {
  const std::vector<DedupDocument> docs = Clustered(128, 24, 500, 9);
  auto r = Dedup(docs, StreamOptions(24, DedupJoin::kAuto, 2));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->join.banded);
}

}  // namespace
}  // namespace neardup
