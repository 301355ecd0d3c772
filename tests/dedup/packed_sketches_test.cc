// Copyright 2026 The neardup Authors.
//
// dedup_internal::PackedSketches (what DedupJob::Run holds instead of a
// JaccardSketch per document): every sketch reads back byte for byte, its
// estimates equal SketchJaccard's bit for bit, a short record's sketch
// takes a fraction of 152 bytes, and Dedup over packed sketches gives what
// Dedup over the JaccardSketch array gives (routed join, banded and exact
// joins, stream mode, both cluster rules, the sketch short rule).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dedup/documents.h"
#include "dedup/sketch_store.h"
#include "neardup/dedup.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"

namespace neardup {
namespace {

using dedup_internal::PackedSketches;
using dedup_internal::SketchView;

// Sketches of random feature sets of every size class (empty, 1 to 40
// features, around the 16-slot switch of forms, hundreds, thousands), many
// sharing features, and hand-made ones: a default JaccardSketch (0 in empty
// slots) and random values in empty slots.
std::vector<JaccardSketch> RandomSketches(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> pool(3000);
  for (uint64_t& h : pool) h = rng();
  std::vector<JaccardSketch> out;
  std::vector<std::vector<uint64_t>> sets;
  for (size_t i = 0; i < n; ++i) {
    const size_t kind = rng() % 10;
    const size_t size = kind < 6   ? rng() % 41
                        : kind < 8 ? 10 + rng() % 20
                        : kind < 9 ? 100 + rng() % 400
                                   : 2000;
    std::vector<uint64_t> set;
    if (!sets.empty() && rng() % 2 == 0) {
      // A near copy of an earlier set (a few elements replaced): estimates
      // around any threshold.
      set = sets[rng() % sets.size()];
      for (uint64_t& h : set) {
        if (rng() % 8 == 0) h = rng();
      }
    } else {
      const size_t base = rng() % 2900;
      for (size_t f = 0; f < size; ++f) set.push_back(pool[(base + rng() % 60 + f) % pool.size()]);
    }
    sets.push_back(set);
    if (rng() % 5 == 0)
      set.insert(set.end(), set.begin(), set.begin() + set.size() / 2);  // repeats
    JaccardSketch s = MakeJaccardSketch(set);
    if (rng() % 7 == 0) s.features = static_cast<uint32_t>(rng() % 5);  // a caller's own count
    out.push_back(s);
  }
  out.push_back(JaccardSketch{});
  JaccardSketch odd = MakeJaccardSketch(std::vector<uint64_t>{1, 2, 3});
  for (size_t s = 0; s < kSketchSlots; ++s) {
    if ((odd.empty[s / 64] >> (s % 64) & 1) != 0) odd.slot[s] = static_cast<uint8_t>(rng());
  }
  out.push_back(odd);
  return out;
}

PackedSketches Pack(const std::vector<JaccardSketch>& sketches) {
  PackedSketches p;
  p.reserve(sketches.size());
  for (const JaccardSketch& s : sketches) p.push_back(s);
  return p;
}

TEST(PackedSketchesTest, EverySketchReadsBackAsPushed) {
  const std::vector<JaccardSketch> sketches = RandomSketches(1, 3000);
  const PackedSketches p = Pack(sketches);
  ASSERT_EQ(p.size(), sketches.size());
  for (size_t i = 0; i < sketches.size(); ++i) {
    const JaccardSketch& s = sketches[i];
    const JaccardSketch back = p[i];
    EXPECT_EQ(back.slot, s.slot) << i;
    EXPECT_EQ(back.empty, s.empty) << i;
    EXPECT_EQ(back.features, s.features) << i;
    EXPECT_EQ(p.features(i), s.features);
    const std::array<uint64_t, 2> full{~s.empty[0], ~s.empty[1]};
    EXPECT_EQ(p.Occupancy(i), full) << i;
    EXPECT_EQ(p.NonEmpty(i), std::popcount(full[0]) + std::popcount(full[1])) << i;
    // ForEachSlot: the non-empty slots by slot, with their values, through
    // both kinds of view alike.
    std::vector<std::pair<size_t, uint8_t>> packed_slots, dense_slots;
    SketchView(&p).ForEachSlot(i,
                               [&](size_t slot, uint8_t v) { packed_slots.emplace_back(slot, v); });
    SketchView(std::span<const JaccardSketch>(sketches))
        .ForEachSlot(i, [&](size_t slot, uint8_t v) { dense_slots.emplace_back(slot, v); });
    EXPECT_EQ(packed_slots, dense_slots) << i;
    ASSERT_EQ(static_cast<int>(packed_slots.size()), p.NonEmpty(i));
    for (size_t q = 1; q < packed_slots.size(); ++q) {
      EXPECT_LT(packed_slots[q - 1].first, packed_slots[q].first);
    }
  }
}

TEST(PackedSketchesTest, EstimatesEqualSketchJaccardBitForBit) {
  const std::vector<JaccardSketch> sketches = RandomSketches(2, 700);
  const PackedSketches p = Pack(sketches);
  const SketchView packed(&p), dense{std::span<const JaccardSketch>(sketches)};
  size_t high = 0;
  for (size_t i = 0; i < sketches.size(); ++i) {
    for (size_t j = 0; j < sketches.size(); ++j) {
      const double want = SketchJaccard(sketches[i], sketches[j]);
      const double got = p.Jaccard(i, j);
      ASSERT_EQ(std::memcmp(&want, &got, sizeof(double)), 0)
          << i << " " << j << ": " << want << " " << got;
      ASSERT_EQ(packed.Jaccard(i, j), dense.Jaccard(i, j));
      high += want >= 0.5 && i != j;
    }
  }
  EXPECT_GT(high, 1000u) << "the estimates must span the threshold";
}

TEST(PackedSketchesTest, AShortRecordTakesAFractionOf152Bytes) {
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  ASSERT_TRUE(pipeline.ok());
  const std::vector<std::string> words = {"市场", "经济", "北京", "the", "market", "news"};
  std::mt19937_64 rng(5);
  PackedSketches p;
  const size_t n = 20000;
  std::vector<uint64_t> set;
  for (size_t i = 0; i < n; ++i) {
    const std::string t = words[rng() % words.size()] + " " + words[rng() % words.size()] + " " +
                          std::to_string(1000000 + rng() % 9000000);
    set.clear();
    (*pipeline)->FeatureSet(t, "", &set);
    p.push_back(MakeJaccardSketch(set));
  }
  const double per = static_cast<double>(p.bytes()) / static_cast<double>(n);
  EXPECT_LT(per, 40.0) << "bytes a record";
  EXPECT_GT(per, 8.0);
  PackedSketches q = std::move(p);
  q.clear();
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.bytes(), 0u);
}

// Dedup over packed sketches equals Dedup over the array.
struct Corpus {
  std::vector<DedupDocument> docs;
  std::vector<JaccardSketch> sketches;
};

Corpus ShortCorpus(uint64_t seed, size_t n) {
  const std::vector<std::string> words = {"市场", "经济", "北京", "中国",   "发展", "公司",
                                          "the",  "of",   "and",  "market", "news", "data"};
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  EXPECT_TRUE(pipeline.ok());
  std::mt19937_64 rng(seed);
  Corpus c;
  std::vector<uint64_t> set;
  while (c.docs.size() < n) {
    std::string t = words[rng() % words.size()] + " " + words[rng() % words.size()];
    if (rng() % 4 == 0) t += " " + words[rng() % words.size()] + " " + words[rng() % words.size()];
    if (rng() % 50 == 0) {  // a long document (the bands' part of the routed join)
      for (int w = 0; w < 60; ++w) t += " " + words[rng() % words.size()] + std::to_string(w);
    }
    t += " " + std::to_string(rng() % 3000);
    if (rng() % 40 == 0) t.clear();  // empty
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(t);
    DedupDocument d;
    d.fingerprint = fp.fingerprint;
    d.empty = fp.empty();
    d.length = t.size();
    c.docs.push_back(d);
    set.clear();
    (*pipeline)->FeatureSet(t, "", &set);
    c.sketches.push_back(MakeJaccardSketch(set));
  }
  return c;
}

void ExpectSameDedup(const DedupResult& a, const DedupResult& b) {
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    const DedupRecord& x = a.records[i];
    const DedupRecord& y = b.records[i];
    EXPECT_EQ(x.cluster, y.cluster) << i;
    EXPECT_EQ(x.duplicate, y.duplicate) << i;
    EXPECT_EQ(x.nearest, y.nearest) << i;
    EXPECT_EQ(x.distance, y.distance) << i;
    EXPECT_EQ(x.empty, y.empty) << i;
    EXPECT_EQ(std::memcmp(&x.jaccard, &y.jaccard, sizeof(double)), 0) << i;
  }
  ASSERT_EQ(a.pairs.size(), b.pairs.size());
  for (size_t p = 0; p < a.pairs.size(); ++p) {
    EXPECT_EQ(a.pairs[p].i, b.pairs[p].i) << p;
    EXPECT_EQ(a.pairs[p].j, b.pairs[p].j) << p;
    EXPECT_EQ(a.pairs[p].distance, b.pairs[p].distance) << p;
    EXPECT_EQ(std::memcmp(&a.pairs[p].jaccard, &b.pairs[p].jaccard, sizeof(double)), 0) << p;
  }
  EXPECT_EQ(a.summary.duplicates, b.summary.duplicates);
  EXPECT_EQ(a.summary.clusters, b.summary.clusters);
  EXPECT_EQ(a.join.confirmed, b.join.confirmed);
  EXPECT_EQ(a.join.rejected, b.join.rejected);
  EXPECT_EQ(a.join.short_pairs, b.join.short_pairs);
  EXPECT_EQ(a.join.short_join.used, b.join.short_join.used);
  EXPECT_EQ(a.join.short_join.tested, b.join.short_join.tested);
  EXPECT_EQ(a.join.short_join.confirmed, b.join.short_join.confirmed);
}

TEST(PackedSketchesTest, DedupOverPackedSketchesEqualsDedupOverTheArray) {
  const Corpus c = ShortCorpus(7, 3000);
  const PackedSketches packed = Pack(c.sketches);
  const dedup_internal::CompactDocuments compact = [&] {
    dedup_internal::CompactDocuments d;
    for (const DedupDocument& doc : c.docs) d.push_back(doc);
    return d;
  }();
  size_t routed = 0, released = 0;
  for (const DedupMode mode : {DedupMode::kCluster, DedupMode::kStream}) {
    for (const DedupJoin join : {DedupJoin::kBanded, DedupJoin::kExact}) {
      for (const ClusterRule rule : {ClusterRule::kComponents, ClusterRule::kCenter}) {
        for (const int short_rule : {0, 1}) {
          if (mode == DedupMode::kStream && (rule == ClusterRule::kCenter || short_rule)) continue;
          SCOPED_TRACE(std::to_string(static_cast<int>(mode)) + " " +
                       std::to_string(static_cast<int>(join)) + " " +
                       std::to_string(static_cast<int>(rule)) + " " + std::to_string(short_rule));
          DedupOptions opt;
          opt.mode = mode;
          opt.join = join;
          opt.cluster_rule = rule;
          opt.k = Method::Default().default_k;
          opt.verify_jaccard = 0.5;
          opt.collect_pairs = mode == DedupMode::kCluster;
          opt.threads = 2;
          if (short_rule) {
            opt.short_features = 300;
            opt.short_rule = ShortRule::kSketch;
          }
          DedupOptions dense = opt;
          dense.sketches = c.sketches;
          auto want = Dedup(c.docs, dense);
          ASSERT_TRUE(want.ok()) << want.status().ToString();
          opt.packed_sketches = &packed;
          opt.release_sketches = [&released] { ++released; };
          auto got = dedup_internal::DedupDocuments(compact, opt);
          ASSERT_TRUE(got.ok()) << got.status().ToString();
          ExpectSameDedup(*got, *want);
          routed += got->join.short_join.used;
          ASSERT_GT(want->summary.duplicates, 100u);
        }
      }
    }
  }
  EXPECT_GT(routed, 0u) << "the routed join must be among the cases";
  EXPECT_GT(released, 0u);
}

}  // namespace
}  // namespace neardup
