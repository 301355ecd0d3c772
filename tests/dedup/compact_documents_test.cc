// Copyright 2026 The neardup Authors.
//
// dedup_internal::CompactDocuments (what DedupJob::Run holds instead of
// DedupDocuments): every document reads back as it was pushed, and Dedup
// over the compact columns gives what Dedup over the DedupDocuments gives,
// for every keep policy, cluster rule, join, stream mode and verified pairs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dedup/documents.h"
#include "neardup/dedup.h"
#include "tests/testing/hamming_oracle.h"

namespace neardup {
namespace {

using dedup_internal::CompactDocuments;
using testing::FlipBits;
using testing::RandomFingerprint;

// Variants around a few bases (clusters, chains, identical copies), empty
// documents, lengths and scores with ties, some documents without a score.
std::vector<DedupDocument> Corpus(uint64_t seed, int bits, int k) {
  std::mt19937_64 rng(seed);
  std::vector<DedupDocument> docs;
  for (int b = 0; b < 10; ++b) {
    const Fingerprint base = RandomFingerprint(bits, rng);
    Fingerprint walk = base;
    for (int v = 0; v < 30; ++v) {
      DedupDocument d;
      walk = FlipBits(walk, static_cast<int>(rng() % (k + 1)), rng);
      d.fingerprint = rng() % 4 == 0 ? base : walk;
      d.length = rng() % 5;
      if (rng() % 3 != 0) d.score = static_cast<double>(rng() % 4) - 1.5;
      d.empty = rng() % 30 == 0;
      docs.push_back(d);
    }
  }
  std::shuffle(docs.begin(), docs.end(), rng);
  return docs;
}

CompactDocuments Compact(const std::vector<DedupDocument>& docs, bool keep_lengths = true) {
  CompactDocuments c(keep_lengths);
  c.reserve(docs.size());
  for (const DedupDocument& d : docs) c.push_back(d);
  return c;
}

void ExpectSameDocument(const DedupDocument& a, const DedupDocument& b) {
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.fingerprint.bits(), b.fingerprint.bits());
  EXPECT_EQ(a.empty, b.empty);
  EXPECT_EQ(a.length, b.length);
  ASSERT_EQ(a.score.has_value(), b.score.has_value());
  if (a.score.has_value()) {
    EXPECT_EQ(std::isnan(*a.score), std::isnan(*b.score));
    if (!std::isnan(*a.score)) {
      EXPECT_EQ(*a.score, *b.score);
    }
  }
}

void ExpectSameResult(const DedupResult& a, const DedupResult& b) {
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    SCOPED_TRACE(i);
    const DedupRecord& x = a.records[i];
    const DedupRecord& y = b.records[i];
    EXPECT_EQ(x.cluster, y.cluster);
    EXPECT_EQ(x.empty, y.empty);
    EXPECT_EQ(x.duplicate, y.duplicate);
    EXPECT_EQ(x.nearest, y.nearest);
    EXPECT_EQ(x.distance, y.distance);
    EXPECT_EQ(x.nearest_within_k, y.nearest_within_k);
    EXPECT_EQ(x.distance_within_k, y.distance_within_k);
    EXPECT_EQ(x.jaccard, y.jaccard);
  }
  EXPECT_EQ(a.pairs, b.pairs);
  EXPECT_EQ(a.summary.duplicates, b.summary.duplicates);
  EXPECT_EQ(a.summary.clusters, b.summary.clusters);
  EXPECT_EQ(a.summary.largest_cluster, b.summary.largest_cluster);
  EXPECT_EQ(a.join.confirmed, b.join.confirmed);
}

TEST(CompactDocumentsTest, ReadsBackWhatWasPushed) {
  for (const int bits : {64, 128}) {
    std::vector<DedupDocument> docs = Corpus(7, bits, 6);
    // The extremes: the longest length, a NaN score (kept as a score, as
    // DedupDocument keeps it), no score at all.
    docs[0].length = std::numeric_limits<uint64_t>::max();
    docs[1].score = std::nan("");
    docs[2].score.reset();
    const CompactDocuments c = Compact(docs);
    const CompactDocuments without_lengths = Compact(docs, false);
    ASSERT_EQ(c.size(), docs.size());
    ASSERT_EQ(without_lengths.size(), docs.size());
    for (size_t i = 0; i < docs.size(); ++i) {
      SCOPED_TRACE(i);
      ExpectSameDocument(c[i], docs[i]);
      DedupDocument no_length = docs[i];
      no_length.length = 0;
      ExpectSameDocument(without_lengths[i], no_length);
    }
  }
  // Scores start only when a document has one: the earlier ones read none.
  CompactDocuments c;
  DedupDocument d;
  c.push_back(d);
  d.score = 2.5;
  c.push_back(d);
  d.score.reset();
  c.push_back(d);
  EXPECT_FALSE(c[0].score.has_value());
  EXPECT_EQ(c[1].score, 2.5);
  EXPECT_FALSE(c[2].score.has_value());
}

TEST(CompactDocumentsTest, DedupGivesTheSameResult) {
  for (const int bits : {64, 128}) {
    const int k = bits / 16;
    const std::vector<DedupDocument> docs = Corpus(11 + static_cast<uint64_t>(bits), bits, k);
    const CompactDocuments compact = Compact(docs);
    const CompactDocuments without_lengths = Compact(docs, false);
    for (const DedupMode mode : {DedupMode::kCluster, DedupMode::kStream}) {
      for (const KeepPolicy keep : {KeepPolicy::kFirst, KeepPolicy::kLongest, KeepPolicy::kField}) {
        if (mode == DedupMode::kStream && keep != KeepPolicy::kFirst) continue;
        for (const ClusterRule rule : {ClusterRule::kCenter, ClusterRule::kComponents}) {
          for (const DedupJoin join : {DedupJoin::kExact, DedupJoin::kBanded}) {
            SCOPED_TRACE(::testing::Message()
                         << bits << " bits, mode " << static_cast<int>(mode) << ", keep "
                         << static_cast<int>(keep) << ", rule " << static_cast<int>(rule)
                         << ", join " << static_cast<int>(join));
            DedupOptions opt;
            opt.k = k;
            opt.mode = mode;
            opt.keep = keep;
            opt.cluster_rule = rule;
            opt.join = join;
            opt.collect_pairs = true;
            opt.threads = 2;
            const auto full = Dedup(docs, opt);
            const auto small = dedup_internal::DedupDocuments(compact, opt);
            ASSERT_TRUE(full.ok()) << full.status().ToString();
            ASSERT_TRUE(small.ok()) << small.status().ToString();
            ExpectSameResult(*full, *small);
            if (keep == KeepPolicy::kLongest) continue;
            // The other policies read no length: the columns without them.
            const auto no_lengths = dedup_internal::DedupDocuments(without_lengths, opt);
            ASSERT_TRUE(no_lengths.ok()) << no_lengths.status().ToString();
            ExpectSameResult(*full, *no_lengths);
          }
        }
      }
    }
  }
}

TEST(CompactDocumentsTest, VerifiedPairsGiveTheSameResult) {
  // Sketches of overlapping sets: the records carry their estimates.
  const std::vector<DedupDocument> docs = Corpus(29, 128, 8);
  std::vector<JaccardSketch> sketches;
  std::mt19937_64 rng(3);
  for (size_t i = 0; i < docs.size(); ++i) {
    std::vector<uint64_t> set;
    for (int e = 0; e < 40; ++e) set.push_back(rng() % 60);
    sketches.push_back(MakeJaccardSketch(set));
  }
  DedupOptions opt;
  opt.k = 8;
  opt.sketches = sketches;
  opt.verify_jaccard = 0.3;
  opt.collect_pairs = true;
  const auto full = Dedup(docs, opt);
  const auto small = dedup_internal::DedupDocuments(Compact(docs), opt);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  ExpectSameResult(*full, *small);
  EXPECT_GT(full->summary.duplicates, 0u);
}

TEST(CompactDocumentsTest, MixedWidthsAreRejectedAsBefore) {
  std::vector<DedupDocument> docs(2);
  docs[0].fingerprint = Fingerprint::From64(1);
  docs[1].fingerprint = Fingerprint::From128(1, 2);
  DedupOptions opt;
  opt.k = 3;
  const auto small = dedup_internal::DedupDocuments(Compact(docs), opt);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(), Dedup(docs, opt).status().message());
}

}  // namespace
}  // namespace neardup
