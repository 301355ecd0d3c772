// Copyright 2026 The neardup Authors.
//
// Verified pairs (DedupOptions::sketches): the Jaccard sketch against exact
// Jaccard, templates of different content within k that are not reported,
// lightly edited short copies that still are, and every reported pair and
// record at or above its threshold in every mode.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dedup/stages.h"
#include "neardup/dedup.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "util/random.h"

namespace neardup {
namespace {

double ExactJaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  const size_t either = a.size() + b.size() - both.size();
  return either == 0 ? 0 : static_cast<double>(both.size()) / static_cast<double>(either);
}

// Two random sets of about `size` elements with Jaccard about j.
void SetsWithJaccard(std::mt19937_64* rng, size_t size, double j, std::vector<uint64_t>* a,
                     std::vector<uint64_t>* b) {
  // |A| = |B| = size, |A n B| = s: J = s / (2 size - s), s = 2 j size / (1 + j).
  const auto shared = static_cast<size_t>(std::lround(2 * j * size / (1 + j)));
  a->clear();
  b->clear();
  for (size_t i = 0; i < shared; ++i) {
    const uint64_t x = (*rng)();
    a->push_back(x);
    b->push_back(x);
  }
  for (size_t i = shared; i < size; ++i) {
    a->push_back((*rng)());
    b->push_back((*rng)());
  }
  std::sort(a->begin(), a->end());
  std::sort(b->begin(), b->end());
}

TEST(JaccardSketchTest, EstimatesJaccardWithinItsStatedError) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> a, b;
  for (const size_t size : {size_t{5}, size_t{40}, size_t{300}, size_t{3000}}) {
    double sum_error = 0;
    double worst = 0;
    int trials = 0;
    for (const double j : {0.1, 0.3, 0.5, 0.7, 0.9}) {
      for (int t = 0; t < 40; ++t) {
        SetsWithJaccard(&rng, size, j, &a, &b);
        const double exact = ExactJaccard(a, b);
        const double est = SketchJaccard(MakeJaccardSketch(a), MakeJaccardSketch(b));
        sum_error += std::abs(est - exact);
        worst = std::max(worst, std::abs(est - exact));
        ++trials;
      }
    }
    SCOPED_TRACE("size " + std::to_string(size));
    // Standard error sqrt(J (1 - J) / 128) <= 0.045 for full sketches:
    // mean absolute error about 0.8 of it, no estimate beyond 5 of it.
    EXPECT_LT(sum_error / trials, 0.045);
    EXPECT_LT(worst, 0.23);
  }
  SetsWithJaccard(&rng, 500, 1.0, &a, &b);
  EXPECT_EQ(SketchJaccard(MakeJaccardSketch(a), MakeJaccardSketch(a)), 1.0);
  EXPECT_EQ(SketchJaccard(MakeJaccardSketch(a), MakeJaccardSketch({})), 0.0);
  EXPECT_EQ(MakeJaccardSketch(a).features, 500u);
}

// MakeJaccardSketch's definition, straight from the header: slot = the top
// 7 bits of SplitMix64(h ^ seed), each slot the low 8 bits of the smallest
// low 32 bits (0xFF when empty), `empty` its unfilled slots.
JaccardSketch ReferenceSketch(const std::vector<uint64_t>& hashes) {
  JaccardSketch s;
  std::vector<uint32_t> low(kSketchSlots, UINT32_MAX);
  for (const uint64_t h : hashes) {
    const uint64_t x = SplitMix64(h ^ 0x736b65746368ULL);
    const size_t slot = static_cast<size_t>(x >> 57);
    low[slot] = std::min(low[slot], static_cast<uint32_t>(x));
    s.empty[slot / 64] &= ~(uint64_t{1} << (slot % 64));
  }
  for (size_t i = 0; i < low.size(); ++i) s.slot[i] = static_cast<uint8_t>(low[i]);
  s.features = static_cast<uint32_t>(hashes.size());
  return s;
}

TEST(JaccardSketchTest, EqualsTheDefinition) {
  std::mt19937_64 rng(11);
  for (const size_t size : {0, 1, 5, 7, 8, 9, 17, 60, 127, 128, 255, 256, 257, 300, 2000}) {
    for (int t = 0; t < 20; ++t) {
      std::vector<uint64_t> hashes(size);
      for (uint64_t& h : hashes) h = rng() % (2 * size + 1);  // repeats too
      const JaccardSketch got = MakeJaccardSketch(hashes);
      const JaccardSketch want = ReferenceSketch(hashes);
      EXPECT_EQ(got.slot, want.slot) << size;
      EXPECT_EQ(got.empty, want.empty) << size;
      EXPECT_EQ(got.features, want.features) << size;
    }
  }
}

// The default method's documents, fingerprints and sketches.
struct Corpus {
  std::vector<DedupDocument> docs;
  std::vector<JaccardSketch> sketches;
  std::vector<std::vector<uint64_t>> sets;
};

Corpus Fingerprint(const std::vector<std::string>& texts) {
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  EXPECT_TRUE(pipeline.ok());
  Corpus c;
  for (const std::string& t : texts) {
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(t);
    DedupDocument d;
    d.fingerprint = fp.fingerprint;
    d.empty = fp.empty();
    c.docs.push_back(d);
    c.sets.emplace_back();
    (*pipeline)->FeatureSet(t, "", &c.sets.back());
    c.sketches.push_back(MakeJaccardSketch(c.sets.back()));
  }
  return c;
}

// Dividend notices of different companies: one template, different names
// and numbers (the shape of issue 24's wire items, from
// scripts/make_templated_set.py): two pairs within k = 28 at Jaccard ~0.35.
std::vector<std::string> DividendNotices() {
  return {"Viraal Holdings\nAnnual div 2 cts vs 2 cts prior\nPay December 19\nRecord June 11",
          "Trazen Energy\nSemi-annual div 52 cts vs 52 cts prior\nPay December 11\nRecord June 24",
          "Sabel Group\nSemi-annual div 51 cts vs 51 cts prior\nPay July 9\nRecord June 16",
          "Aler Bancorp\nSemi-annual div 24 cts vs 24 cts prior\nPay July 9\nRecord September 10"};
}

TEST(VerifiedPairsTest, TemplatesOfDifferentCompaniesAreNotReported) {
  const Corpus c = Fingerprint(DividendNotices());
  DedupOptions opt;
  opt.collect_pairs = true;
  opt.threads = 1;
  // Without verification, the template puts some of them within k.
  auto plain = Dedup(c.docs, opt);
  ASSERT_TRUE(plain.ok());
  ASSERT_FALSE(plain->pairs.empty()) << "the template no longer falls within k";
  for (const DedupPair& p : plain->pairs) EXPECT_LT(ExactJaccard(c.sets[p.i], c.sets[p.j]), 0.5);
  // Verified: none of them.
  opt.sketches = c.sketches;
  auto verified = Dedup(c.docs, opt);
  ASSERT_TRUE(verified.ok());
  EXPECT_TRUE(verified->pairs.empty());
  EXPECT_EQ(verified->summary.duplicates, 0u);
  EXPECT_EQ(verified->join.rejected, plain->pairs.size());
}

TEST(VerifiedPairsTest, LightlyEditedShortCopiesAreFound) {
  std::vector<std::string> texts = DividendNotices();
  const size_t n = texts.size();
  // A copy of each notice with one word changed ("div" -> "dividend", "Pay"
  // -> "Payable").
  for (size_t i = 0; i < n; ++i) {
    std::string copy = texts[i];
    if (i % 2 == 0) {
      copy.replace(copy.find(" div "), 5, " dividend ");
    } else {
      copy.replace(copy.find("\nPay "), 5, "\nPayable ");
    }
    texts.push_back(copy);
  }
  const Corpus c = Fingerprint(texts);
  DedupOptions opt;
  opt.collect_pairs = true;
  opt.threads = 1;
  opt.sketches = c.sketches;
  auto result = Dedup(c.docs, opt);
  ASSERT_TRUE(result.ok());
  size_t found = 0;
  for (const DedupPair& p : result->pairs) {
    EXPECT_EQ(p.j, p.i + n) << "a pair of different companies: " << p.i << " " << p.j;
    found += p.j == p.i + n;
  }
  EXPECT_EQ(found, n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(result->records[i + n].duplicate) << i;
    EXPECT_EQ(result->records[i + n].nearest, i);
  }
}

// Random texts over few letters (many pairs near k), with edited copies.
std::vector<std::string> RandomTexts(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> texts;
  for (int b = 0; b < 80; ++b) {
    const size_t len = b % 5 == 0 ? 300 + rng() % 900 : 20 + rng() % 120;
    std::string base;
    for (size_t i = 0; i < len; ++i) base += static_cast<char>('a' + rng() % 6);
    const int copies = 1 + static_cast<int>(rng() % 4);
    for (int v = 0; v < copies; ++v) {
      std::string copy = base;
      const size_t edits = v == 0 ? 0 : 1 + rng() % (len / 8);
      for (size_t e = 0; e < edits; ++e) copy[rng() % len] = static_cast<char>('a' + rng() % 6);
      texts.push_back(copy);
    }
  }
  std::shuffle(texts.begin(), texts.end(), rng);
  return texts;
}

TEST(VerifiedPairsTest, EveryReportedPairAndRecordMeetsItsThreshold) {
  const Corpus c = Fingerprint(RandomTexts(3));
  const size_t n = c.docs.size();
  struct Mode {
    DedupMode mode;
    ClusterRule rule;
    DedupJoin join;
  };
  for (const Mode m : {Mode{DedupMode::kCluster, ClusterRule::kCenter, DedupJoin::kExact},
                       Mode{DedupMode::kCluster, ClusterRule::kComponents, DedupJoin::kExact},
                       Mode{DedupMode::kCluster, ClusterRule::kCenter, DedupJoin::kBanded},
                       Mode{DedupMode::kStream, ClusterRule::kCenter, DedupJoin::kExact},
                       Mode{DedupMode::kStream, ClusterRule::kCenter, DedupJoin::kBanded}}) {
    for (const size_t short_features : {size_t{0}, size_t{60}}) {
      DedupOptions opt;
      opt.mode = m.mode;
      opt.cluster_rule = m.rule;
      opt.join = m.join;
      opt.threads = 2;
      opt.collect_pairs = true;
      opt.sketches = c.sketches;
      opt.verify_jaccard = 0.6;
      opt.verify_short_features = short_features;
      opt.verify_short_jaccard = 0.4;
      SCOPED_TRACE("mode " + std::to_string(static_cast<int>(m.mode)) + " rule " +
                   ClusterRuleName(m.rule) + " join " + std::to_string(static_cast<int>(m.join)) +
                   " short " + std::to_string(short_features));
      auto result = Dedup(c.docs, opt);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      ASSERT_FALSE(result->pairs.empty());
      for (const DedupPair& p : result->pairs) {
        const double j = SketchJaccard(c.sketches[p.i], c.sketches[p.j]);
        EXPECT_EQ(p.jaccard, j);
        const size_t f = std::min(c.sets[p.i].size(), c.sets[p.j].size());
        EXPECT_GE(j, VerifyThreshold(opt, f)) << p.i << " " << p.j;
        EXPECT_GE(j, short_features == 0 ? 0.6 : 0.4);
      }
      for (size_t i = 0; i < n; ++i) {
        const DedupRecord& r = result->records[i];
        // Components chain: a duplicate's kept document may be far from it.
        if (m.rule == ClusterRule::kComponents) continue;
        if (!r.duplicate) {
          EXPECT_EQ(r.jaccard, -1);
          continue;
        }
        EXPECT_EQ(r.jaccard, SketchJaccard(c.sketches[i], c.sketches[r.nearest]));
        const size_t f = std::min(c.sets[i].size(), c.sets[r.nearest].size());
        EXPECT_GE(r.jaccard, VerifyThreshold(opt, f)) << i;
      }
      // Verification drops pairs here: the threshold is high for the data.
      opt.verify_jaccard = 0;
      auto plain = Dedup(c.docs, opt);
      ASSERT_TRUE(plain.ok());
      EXPECT_GT(plain->pairs.size(), result->pairs.size());
      for (const DedupPair& p : plain->pairs) EXPECT_EQ(p.jaccard, -1);
    }
  }
}

// DedupOptions::release_sketches: cluster mode calls it once, and reads no
// sketch after it (they are overwritten there), so the records and pairs
// are those of a run without it; the in-place FinishSimHash keeps the pairs
// that pass and gives the span form's records.
TEST(VerifiedPairsTest, SketchesAreReleasedOnceAfterTheirLastRead) {
  const Corpus c = Fingerprint(RandomTexts(3));
  for (const ClusterRule rule : {ClusterRule::kCenter, ClusterRule::kComponents}) {
    for (const DedupJoin join : {DedupJoin::kExact, DedupJoin::kBanded}) {
      SCOPED_TRACE(std::string(ClusterRuleName(rule)) + " join " +
                   std::to_string(static_cast<int>(join)));
      DedupOptions opt;
      opt.cluster_rule = rule;
      opt.join = join;
      opt.threads = 2;
      opt.collect_pairs = true;
      opt.sketches = c.sketches;
      opt.verify_jaccard = 0.6;
      auto want = Dedup(c.docs, opt);
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      ASSERT_GT(want->summary.duplicates, 0u);
      ASSERT_GT(want->join.rejected, 0u);

      std::vector<JaccardSketch> owned = c.sketches;
      int calls = 0;
      opt.sketches = owned;
      opt.release_sketches = [&] {
        ++calls;
        for (JaccardSketch& s : owned) s = JaccardSketch{};  // estimates 0 from here on
      };
      auto got = Dedup(c.docs, opt);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(calls, 1);
      ASSERT_EQ(got->records.size(), want->records.size());
      for (size_t i = 0; i < got->records.size(); ++i) {
        EXPECT_EQ(got->records[i].cluster, want->records[i].cluster) << i;
        EXPECT_EQ(got->records[i].nearest, want->records[i].nearest) << i;
        EXPECT_EQ(got->records[i].distance, want->records[i].distance) << i;
        EXPECT_EQ(got->records[i].jaccard, want->records[i].jaccard) << i;
      }
      ASSERT_EQ(got->pairs.size(), want->pairs.size());
      for (size_t p = 0; p < got->pairs.size(); ++p) {
        EXPECT_EQ(got->pairs[p].i, want->pairs[p].i);
        EXPECT_EQ(got->pairs[p].j, want->pairs[p].j);
        EXPECT_EQ(got->pairs[p].jaccard, want->pairs[p].jaccard);
      }
      EXPECT_EQ(got->join.rejected, want->join.rejected);
    }
  }
}

TEST(VerifiedPairsTest, FinishSimHashVerifiesInPlaceAsTheSpanFormDoes) {
  const Corpus c = Fingerprint(RandomTexts(3));
  DedupOptions opt;
  opt.join = DedupJoin::kExact;
  opt.sketches = c.sketches;
  opt.verify_jaccard = 0.6;
  auto plan = dedup_internal::PlanSimHash(c.docs, opt);
  ASSERT_TRUE(plan.ok());
  std::vector<IdPair> pairs;
  ASSERT_TRUE(dedup_internal::SimHashJoinExact(*plan, opt, &pairs).ok());
  DedupResult from_span, in_place;
  dedup_internal::FinishSimHash(c.docs, *plan, std::span<const IdPair>(pairs), opt, &from_span);
  const size_t before = pairs.size();
  dedup_internal::FinishSimHash(c.docs, *plan, &pairs, opt, &in_place);
  ASSERT_GT(from_span.join.rejected, 0u);
  EXPECT_EQ(in_place.join.rejected, from_span.join.rejected);
  EXPECT_EQ(pairs.size(), before - from_span.join.rejected);
  for (const IdPair& p : pairs) {
    EXPECT_TRUE(dedup_internal::PassesVerification(opt, plan->groups.Members(p.a).front(),
                                                   plan->groups.Members(p.b).front()));
  }
  ASSERT_EQ(in_place.records.size(), from_span.records.size());
  for (size_t i = 0; i < in_place.records.size(); ++i) {
    EXPECT_EQ(in_place.records[i].nearest, from_span.records[i].nearest) << i;
    EXPECT_EQ(in_place.records[i].jaccard, from_span.records[i].jaccard) << i;
  }
}

TEST(VerifiedPairsTest, RejectsSketchesOfAnotherCount) {
  const Corpus c = Fingerprint({"one document here", "another document"});
  DedupOptions opt;
  opt.sketches = std::span<const JaccardSketch>(c.sketches).subspan(1);
  EXPECT_FALSE(Dedup(c.docs, opt).ok());
  opt.sketches = c.sketches;
  opt.verify_jaccard = 1.5;
  EXPECT_FALSE(Dedup(c.docs, opt).ok());
}

}  // namespace
}  // namespace neardup
