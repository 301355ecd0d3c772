// Copyright 2026 The neardup Authors.
//
// The sketch short rule (ShortRule::kSketch, dedup/short_join.h) against the
// exact one: of the pairs the exact rule keeps after verification (exact
// Jaccard >= t, the smaller set under short_features, SketchJaccard >= t),
// the LSH join over the sketches finds the share its model states, within 4
// standard deviations, on random sets and on short real news with edited
// copies; every pair it reports passes the checks it states.
//
// The model of one pair, from its two sketches: A slots agree (equal values,
// or empty in both), E of them empty in both; a band of 4 slots drawn at
// random agrees with probability p = (C(A, 4) - C(E, 4) - C(E, 3) (A - E)
// (1 - n)) / C(128, 4): no value in both gives no key, and one value needs,
// when both sketches are sparse (kSparseValues), the next two slots with a
// value to agree too (n = (A - E) (A - E - 1) / ((128 - E) (127 - E))), else
// gives no key (n = 0); the 64
// bands are taken as independent: P(found) = 1 - (1 - p)^64.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dedup/short_join.h"
#include "neardup/dedup.h"
#include "neardup/eval.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"
#include "util/utf8.h"

namespace neardup {
namespace {

constexpr size_t kShortFeatures = 300;
constexpr double kT = 0.5;

double Choose4(int n) {
  return n < 4 ? 0.0 : static_cast<double>(n) * (n - 1) * (n - 2) * (n - 3) / 24.0;
}

// The model's probability that the pair is found (file comment).
double FoundProbability(const JaccardSketch& a, const JaccardSketch& b) {
  int agree = 0, both_empty = 0;
  for (int i = 0; i < kSketchSlots; ++i) {
    const bool ea = (a.empty[static_cast<size_t>(i / 64)] >> (i % 64)) & 1;
    const bool eb = (b.empty[static_cast<size_t>(i / 64)] >> (i % 64)) & 1;
    if (ea && eb) {
      ++agree;
      ++both_empty;
    } else if (!ea && !eb && a.slot[static_cast<size_t>(i)] == b.slot[static_cast<size_t>(i)]) {
      ++agree;
    }
  }
  const double e3 = both_empty < 3 ? 0.0
                                   : static_cast<double>(both_empty) * (both_empty - 1) *
                                         (both_empty - 2) / 6.0 * (agree - both_empty);
  // A band of one value agrees when the next slot holding a value in either
  // holds the same in both: (A - E) of the 128 - E such slots.
  const auto values = [](const JaccardSketch& s) {
    return kSketchSlots - std::popcount(s.empty[0]) - std::popcount(s.empty[1]);
  };
  const bool sparse =
      values(a) <= dedup_internal::kSparseValues && values(b) <= dedup_internal::kSparseValues;
  const double held = agree - both_empty, any = kSketchSlots - both_empty;
  const double next = sparse && any > 1 ? held / any * std::max(held - 1, 0.0) / (any - 1) : 0.0;
  const double p = (Choose4(agree) - Choose4(both_empty) - e3 + e3 * next) / Choose4(kSketchSlots);
  return 1 - std::pow(1 - p, dedup_internal::kShortBands);
}

// Checks ShortSketchPairs over `sets` against the exact rule and the model.
void CheckAgainstExact(const std::vector<std::vector<uint64_t>>& sets, const char* what) {
  std::vector<JaccardSketch> sketches;
  for (const auto& s : sets) sketches.push_back(MakeJaccardSketch(s));
  std::vector<size_t> who(sets.size());
  for (size_t i = 0; i < who.size(); ++i) who[i] = i;
  auto exact = ShortDocumentPairs(sets, kShortFeatures, kT, 2);
  ASSERT_TRUE(exact.ok());
  auto found = dedup_internal::ShortSketchPairs(sketches, who, kShortFeatures, kT, 2);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  const std::set<std::pair<uint32_t, uint32_t>> got(found->begin(), found->end());
  ASSERT_EQ(got.size(), found->size()) << "pairs reported twice";
  for (const auto& [a, b] : *found) {
    ASSERT_LT(a, b);
    EXPECT_GE(SketchJaccard(sketches[a], sketches[b]), kT);
    EXPECT_LT(std::min(sets[a].size(), sets[b].size()), kShortFeatures);
  }
  double expected = 0, variance = 0;
  size_t verified = 0, hit = 0;
  for (const JaccardPair& p : *exact) {
    if (SketchJaccard(sketches[p.a], sketches[p.b]) < kT) continue;  // verification drops it
    ++verified;
    const double q = FoundProbability(sketches[p.a], sketches[p.b]);
    expected += q;
    variance += q * (1 - q);
    hit += got.count({static_cast<uint32_t>(p.a), static_cast<uint32_t>(p.b)});
  }
  ASSERT_GT(verified, 200u) << what << ": too few pairs to measure";
  const double sigma = std::sqrt(variance);
  std::printf(
      "%s: %zu sets, %zu exact pairs, %zu verified; found %zu (recall %.4f), model %.1f "
      "(%.4f) +- %.2f; %zu reported pairs below the exact threshold\n",
      what, sets.size(), exact->size(), verified, hit,
      static_cast<double>(hit) / static_cast<double>(verified), expected,
      expected / static_cast<double>(verified), sigma, got.size() - hit);
  EXPECT_LE(std::abs(static_cast<double>(hit) - expected), 4 * sigma + 1) << what;
}

TEST(ShortSketchRuleTest, RandomSetsMatchTheModel) {
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint64_t>> sets;
  // Originals of 6 to 590 elements, each with 1 to 3 copies at a Jaccard
  // drawn in [0.4, 0.95] (elements replaced by new ones), and templates: 40
  // families of 10 sharing 24 of their 40 elements.
  for (int o = 0; o < 1500; ++o) {
    const size_t n = 6 + rng() % 585;
    std::vector<uint64_t> base(n);
    for (auto& x : base) x = rng();
    sets.push_back(base);
    const int copies = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < copies; ++c) {
      const double j = 0.4 + 0.55 * static_cast<double>(rng() % 1000) / 1000.0;
      // (n - x) / (n + x) = j.
      const auto x = static_cast<size_t>(std::lround(static_cast<double>(n) * (1 - j) / (1 + j)));
      std::vector<uint64_t> copy = base;
      for (size_t r = 0; r < x && r < n; ++r) copy[rng() % n] = rng();
      sets.push_back(copy);
    }
  }
  for (int f = 0; f < 40; ++f) {
    std::vector<uint64_t> shared(24);
    for (auto& x : shared) x = rng();
    for (int m = 0; m < 10; ++m) {
      std::vector<uint64_t> s = shared;
      for (int r = 0; r < 16; ++r) s.push_back(rng());
      sets.push_back(s);
    }
  }
  // One family of 400 (30 shared elements, 4 own): large buckets, under
  // kShortBucketCap (a cut bucket is outside the model).
  std::vector<uint64_t> shared(30);
  for (auto& x : shared) x = rng();
  for (int m = 0; m < 400; ++m) {
    std::vector<uint64_t> s = shared;
    for (int r = 0; r < 4; ++r) s.push_back(rng());
    sets.push_back(s);
  }
  for (auto& s : sets) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  CheckAgainstExact(sets, "random sets");
}

TEST(ShortSketchRuleTest, ShortNewsWithEditedCopiesMatchTheModel) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  std::vector<std::string> originals;
  std::ifstream in(path);
  std::string line;
  std::mt19937_64 rng(3);
  while (std::getline(in, line) && originals.size() < 600) {
    const std::string text = nlohmann::json::parse(line)["text"].get<std::string>();
    // A prefix of 20 to 260 characters: short texts, as the rule is for.
    size_t end = 0;
    for (size_t c = 20 + rng() % 241; c > 0 && end < text.size(); --c) {
      end += std::max<size_t>(utf8::SequenceLength(text, end), 1);
    }
    originals.push_back(text.substr(0, end));
  }
  ASSERT_EQ(originals.size(), 600u);
  const Perturber perturber(originals, {});
  std::vector<std::string> texts = originals;
  for (size_t i = 0; i < originals.size(); ++i) {
    for (double ratio : {0.05, 0.10, 0.20}) texts.push_back(perturber.Perturb(i, ratio, 5).text);
  }
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  std::vector<std::vector<uint64_t>> sets(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) (*pipeline)->FeatureSet(texts[i], "", &sets[i]);
  CheckAgainstExact(sets, "short THUCNews texts and edited copies");
}

// Dedup with ShortRule::kSketch: every pair it reports is within k or a
// short pair whose estimate passes, every pair within k that passes
// verification is there, and of the short pairs beyond k that the exact
// rule reports (after verification) it finds what the model says (here:
// all). Without sketches it is refused.
TEST(ShortSketchRuleTest, DedupAddsTheSketchPairsBeyondK) {
  std::mt19937_64 rng(11);
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  ASSERT_TRUE(pipeline.ok());
  // Short texts of 8-40 CJK characters, each with 1-3 copies with 1-4
  // characters changed.
  std::vector<std::string> texts;
  const auto ch = [&rng] {
    const char32_t c = 0x4E00 + static_cast<char32_t>(rng() % 400);
    return std::string{static_cast<char>(0xE0 | (c >> 12)),
                       static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                       static_cast<char>(0x80 | (c & 0x3F))};
  };
  for (int b = 0; b < 150; ++b) {
    std::vector<std::string> chars(8 + rng() % 33);
    for (auto& c : chars) c = ch();
    for (int v = 0, copies = 1 + static_cast<int>(rng() % 3); v <= copies; ++v) {
      std::vector<std::string> copy = chars;
      for (int e = 0, edits = v == 0 ? 0 : 1 + static_cast<int>(rng() % 4); e < edits; ++e) {
        copy[rng() % copy.size()] = ch();
      }
      std::string text;
      for (const auto& c : copy) text += c;
      texts.push_back(text);
    }
  }
  const size_t n = texts.size();
  std::vector<DedupDocument> docs(n);
  std::vector<std::vector<uint64_t>> sets(n);
  std::vector<JaccardSketch> sketches(n);
  for (size_t i = 0; i < n; ++i) {
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(texts[i]);
    docs[i].fingerprint = fp.fingerprint;
    docs[i].empty = fp.empty();
    (*pipeline)->FeatureSet(texts[i], "", &sets[i]);
    sketches[i] = MakeJaccardSketch(sets[i]);
  }
  DedupOptions opt;
  opt.cluster_rule = ClusterRule::kComponents;
  opt.k = Method::Default().default_k;
  opt.threads = 2;
  opt.collect_pairs = true;
  opt.short_features = kShortFeatures;
  opt.short_jaccard = kT;
  opt.short_rule = ShortRule::kSketch;
  auto refused = Dedup(docs, opt);
  EXPECT_FALSE(refused.ok()) << "the sketch rule needs the sketches";
  opt.sketches = sketches;
  auto sketch = Dedup(docs, opt);
  ASSERT_TRUE(sketch.ok()) << sketch.status().ToString();
  opt.short_rule = ShortRule::kExact;
  opt.short_sets = sets;
  auto exact = Dedup(docs, opt);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  std::set<std::pair<size_t, size_t>> got;
  size_t beyond_k = 0;
  for (const DedupPair& p : sketch->pairs) {
    got.insert({p.i, p.j});
    const double est = SketchJaccard(sketches[p.i], sketches[p.j]);
    EXPECT_GE(est, kT) << p.i << " " << p.j;
    if (p.distance > opt.k) {
      ++beyond_k;
      EXPECT_LT(std::min(sets[p.i].size(), sets[p.j].size()), kShortFeatures);
    }
  }
  EXPECT_GT(beyond_k, 20u) << "the rule must matter here";
  EXPECT_GT(sketch->join.short_pairs, 0u);
  double expected = 0, variance = 0;
  size_t hit = 0, exact_beyond = 0;
  for (const DedupPair& p : exact->pairs) {
    if (p.distance <= opt.k) {
      EXPECT_TRUE(got.count({p.i, p.j})) << "within k: " << p.i << " " << p.j;
      continue;
    }
    ++exact_beyond;
    const double q = FoundProbability(sketches[p.i], sketches[p.j]);
    expected += q;
    variance += q * (1 - q);
    hit += got.count({p.i, p.j});
  }
  ASSERT_GT(exact_beyond, 20u);
  EXPECT_LE(std::abs(static_cast<double>(hit) - expected), 4 * std::sqrt(variance) + 1)
      << hit << " of " << exact_beyond << ", model " << expected;
}

// The join's mechanics against its definition (short_join.h): with no
// bucket over the cap, a pair that passes the size filter and the estimate
// is reported exactly when some band's keys agree: the band's 4 slots (in
// the layout's order) have the same empty marks and values and hold a
// value, and, when they hold one value only, both sketches are sparse and
// the next two slots holding a value (distance and value) agree as well.
// (The implementation mixes those two into 24 bits, so a few pairs more may
// meet by chance.) The same pairs at 1, 2 and 3 threads: the buckets' bound
// on the estimate, the workers' tables of recent pairs and the radix-sorted
// bands change no pair.
bool BandsAgree(const JaccardSketch& a, const JaccardSketch& b, int band) {
  constexpr int kPerLayout = kSketchSlots / dedup_internal::kShortBandSlots;
  const auto& order = dedup_internal::ShortBandOrder(band / kPerLayout);
  const int first = (band % kPerLayout) * dedup_internal::kShortBandSlots;
  const auto held = [&order](const JaccardSketch& s, int pos) {
    const int slot = order[static_cast<size_t>(pos)];
    return ((s.empty[static_cast<size_t>(slot / 64)] >> (slot % 64)) & 1) == 0;
  };
  const auto value = [&order](const JaccardSketch& s, int pos) {
    return s.slot[order[static_cast<size_t>(pos)]];
  };
  int n = 0;
  for (int p = first; p < first + dedup_internal::kShortBandSlots; ++p) {
    if (held(a, p) != held(b, p)) return false;
    if (held(a, p) && value(a, p) != value(b, p)) return false;
    n += held(a, p);
  }
  if (n == 0) return false;
  if (n >= 2) return true;
  const auto values = [](const JaccardSketch& s) {
    return kSketchSlots - std::popcount(s.empty[0]) - std::popcount(s.empty[1]);
  };
  if (values(a) > dedup_internal::kSparseValues || values(b) > dedup_internal::kSparseValues) {
    return false;
  }
  const auto next_two = [&](const JaccardSketch& s) {
    std::vector<std::pair<int, int>> out;  // (distance, value)
    for (int d = dedup_internal::kShortBandSlots; d < kSketchSlots && out.size() < 2; ++d) {
      const int p = (first + d) % kSketchSlots;
      if (held(s, p)) out.emplace_back(d, value(s, p));
    }
    return out;
  };
  return next_two(a) == next_two(b);
}

TEST(ShortSketchRuleTest, PairsAreThoseOfTheStatedBands) {
  std::mt19937_64 rng(5);
  std::vector<std::vector<uint64_t>> sets;
  // Originals of 3 to 200 elements (sparse sketches below ~25) with 1-3
  // copies at a Jaccard in [0.3, 0.95], and families sharing most of their
  // elements (buckets of tens).
  for (int o = 0; o < 700; ++o) {
    const size_t n = 3 + rng() % 198;
    std::vector<uint64_t> base(n);
    for (auto& x : base) x = rng();
    sets.push_back(base);
    for (int c = 0, copies = 1 + static_cast<int>(rng() % 3); c < copies; ++c) {
      const double j = 0.3 + 0.65 * static_cast<double>(rng() % 1000) / 1000.0;
      const auto x = static_cast<size_t>(std::lround(static_cast<double>(n) * (1 - j) / (1 + j)));
      std::vector<uint64_t> copy = base;
      for (size_t r = 0; r < x && r < n; ++r) copy[rng() % n] = rng();
      sets.push_back(copy);
    }
  }
  for (int f = 0; f < 10; ++f) {
    std::vector<uint64_t> shared(8 + rng() % 30);
    for (auto& x : shared) x = rng();
    for (int m = 0; m < 40; ++m) {
      std::vector<uint64_t> s = shared;
      for (int r = 0, own = 1 + static_cast<int>(rng() % 8); r < own; ++r) s.push_back(rng());
      sets.push_back(s);
    }
  }
  std::vector<JaccardSketch> sketches;
  for (auto& s : sets) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    sketches.push_back(MakeJaccardSketch(s));
  }
  std::vector<size_t> who(sets.size());
  for (size_t i = 0; i < who.size(); ++i) who[i] = i;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> runs;
  for (int threads : {1, 2, 3}) {
    auto found = dedup_internal::ShortSketchPairs(sketches, who, kShortFeatures, kT, threads);
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    runs.push_back(*found);
  }
  EXPECT_EQ(runs[0], runs[1]) << "1 and 2 threads";
  EXPECT_EQ(runs[0], runs[2]) << "1 and 3 threads";
  const std::set<std::pair<uint32_t, uint32_t>> got(runs[0].begin(), runs[0].end());
  size_t expected = 0, missed = 0, single = 0;
  for (uint32_t a = 0; a < sets.size(); ++a) {
    for (uint32_t b = a + 1; b < sets.size(); ++b) {
      const double fa = sketches[a].features, fb = sketches[b].features;
      if (std::min(fa, fb) >= kShortFeatures || std::max(fa, fb) > std::min(fa, fb) / kT + 1e-9) {
        EXPECT_FALSE(got.count({a, b})) << "outside the size filter: " << a << " " << b;
        continue;
      }
      const bool passes = SketchJaccard(sketches[a], sketches[b]) >= kT;
      if (!passes) {
        EXPECT_FALSE(got.count({a, b})) << "estimate below t: " << a << " " << b;
        continue;
      }
      bool agree = false;
      for (int band = 0; band < dedup_internal::kShortBands && !agree; ++band) {
        agree = BandsAgree(sketches[a], sketches[b], band);
      }
      if (!agree) continue;
      ++expected;
      single += std::min(fa, fb) <= dedup_internal::kSparseValues;
      if (!got.count({a, b})) {
        ++missed;
        ADD_FAILURE() << "a pair of the stated bands is missing: " << a << " " << b;
      }
    }
  }
  std::printf(
      "%zu sets: %zu pairs of the stated bands (%zu with a sparse member), %zu missed, "
      "%zu reported beyond them\n",
      sets.size(), expected, single, missed, got.size() - (expected - missed));
  ASSERT_GT(expected, 1000u);
  ASSERT_GT(single, 50u) << "the sparse bands must be exercised";
  // Beyond them only the 24-bit mix's chance meetings.
  EXPECT_LE(got.size() - (expected - missed), expected / 1000 + 2);
}

TEST(ShortSketchRuleTest, RefusesABadThreshold) {
  const std::vector<JaccardSketch> sketches(2);
  const std::vector<size_t> who = {0, 1};
  EXPECT_FALSE(dedup_internal::ShortSketchPairs(sketches, who, 300, 0, 1).ok());
  EXPECT_FALSE(dedup_internal::ShortSketchPairs(sketches, who, 300, 1.5, 1).ok());
}

}  // namespace
}  // namespace neardup
