// Copyright 2026 The neardup Authors.
//
// Natural duplicates: the prefix-filter Jaccard join against brute force,
// the shingle sets, and EvaluateNatural's counts against a direct
// computation.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "neardup/eval.h"
#include "neardup/minhash.h"

namespace neardup {
namespace {

std::vector<JaccardPair> BruteForce(const std::vector<std::vector<uint64_t>>& sets, double t) {
  std::vector<JaccardPair> out;
  for (size_t a = 0; a < sets.size(); ++a) {
    for (size_t b = a + 1; b < sets.size(); ++b) {
      if (sets[a].empty() || sets[b].empty()) continue;
      std::vector<uint64_t> both;
      std::set_intersection(sets[a].begin(), sets[a].end(), sets[b].begin(), sets[b].end(),
                            std::back_inserter(both));
      const double j = static_cast<double>(both.size()) /
                       static_cast<double>(sets[a].size() + sets[b].size() - both.size());
      if (j >= t) out.push_back({a, b, j});
    }
  }
  return out;
}

// Families of sets: a random base and mutations of it (elements dropped and
// added), so that every Jaccard from 0 to 1 occurs; some empty sets.
std::vector<std::vector<uint64_t>> RandomSets(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint64_t>> sets;
  for (int f = 0; f < 15; ++f) {
    std::set<uint64_t> base;
    const size_t size = 1 + rng() % 60;
    while (base.size() < size) base.insert(rng() % 400);  // small universe: overlaps
    for (int m = 0; m < 8; ++m) {
      std::set<uint64_t> s;
      const double keep = (rng() % 101) / 100.0;
      for (uint64_t e : base) {
        if ((rng() % 1000) / 1000.0 < keep) s.insert(e);
      }
      const size_t add = rng() % 10;
      for (size_t i = 0; i < add; ++i) s.insert(rng() % 400);
      sets.emplace_back(s.begin(), s.end());
    }
  }
  sets.emplace_back();
  sets.insert(sets.begin() + 7, std::vector<uint64_t>());
  std::shuffle(sets.begin(), sets.end(), rng);
  return sets;
}

TEST(JaccardJoinTest, MatchesBruteForce) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const auto sets = RandomSets(seed);
    for (double t : {0.1, 0.3, 0.5, 0.8, 0.95, 1.0}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " t " << t);
      auto got = JaccardJoin(sets, t);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      const auto want = BruteForce(sets, t);
      ASSERT_EQ(got->size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ((*got)[i].a, want[i].a);
        EXPECT_EQ((*got)[i].b, want[i].b);
        EXPECT_DOUBLE_EQ((*got)[i].jaccard, want[i].jaccard);
      }
      if (t <= 0.5) {
        EXPECT_FALSE(want.empty());
      }
    }
  }
}

// The probes run in parallel over chunks of 512 sets: more sets than one
// chunk, every thread count gives brute force's pairs.
TEST(JaccardJoinTest, ThreadsGiveTheSamePairs) {
  std::vector<std::vector<uint64_t>> sets;
  for (uint64_t seed = 11; sets.size() < 1500; ++seed) {
    const auto more = RandomSets(seed);
    sets.insert(sets.end(), more.begin(), more.end());
  }
  const auto want = BruteForce(sets, 0.5);
  ASSERT_GT(want.size(), 100u);
  for (int threads : {1, 2, 3, 0}) {
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    auto got = JaccardJoin(sets, 0.5, threads);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, want);
  }
}

// Elements are counted in blocks of the value range (their top bits, one
// more bit per doubling above 2^20 elements): sets of hashed elements spread
// over the whole 64-bit range, more than 2^21 elements in all (four blocks),
// give brute force's pairs at every thread count.
TEST(JaccardJoinTest, ElementsAcrossBlocksGiveTheSamePairs) {
  // 12 families of 8 sets of ~25,000 hashed elements: a base and mutations
  // (elements dropped and added), Jaccard from ~0.3 to 1 within a family;
  // families share parts of their universes.
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint64_t>> sets;
  size_t total = 0;
  for (int f = 0; f < 12; ++f) {
    std::set<uint64_t> base;
    const size_t size = 32000 + rng() % 4000;
    while (base.size() < size) base.insert(rng() % 80000 + 40000 * static_cast<uint64_t>(f % 8));
    for (int m = 0; m < 8; ++m) {
      std::vector<uint64_t> s;
      const double keep = 0.5 + (rng() % 51) / 100.0;
      for (uint64_t e : base) {
        if ((rng() % 1000) / 1000.0 < keep) s.push_back(e * 0x9e3779b97f4a7c15ULL);
      }
      for (size_t i = rng() % 500; i > 0; --i) {
        s.push_back((rng() % 800000) * 0x9e3779b97f4a7c15ULL);
      }
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      total += s.size();
      sets.push_back(std::move(s));
    }
  }
  ASSERT_GT(total, size_t{1} << 21);  // four blocks
  const auto want = BruteForce(sets, 0.5);
  ASSERT_GT(want.size(), 100u);
  for (int threads : {1, 2, 0}) {
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    auto got = JaccardJoin(sets, 0.5, threads);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, want);
  }
}

TEST(JaccardJoinTest, RejectsBadThreshold) {
  const std::vector<std::vector<uint64_t>> sets = {{1, 2}, {1, 2}};
  EXPECT_FALSE(JaccardJoin(sets, 0).ok());
  EXPECT_FALSE(JaccardJoin(sets, 1.5).ok());
}

// The truth is computed on every character of the text as the methods see
// it: punctuation and spaces count (until 2026-11-26 only letters and digits
// did, and two tables differing in their numbers' commas were one set), white
// space runs are one space, and --t2s makes a zh_TW text its zh_CN version.
TEST(ShingleSetsTest, AllCharactersAfterTheMethodsNormalization) {
  auto s = ShingleSets::Create(5);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->Of("net 510,917 vs 423,000"), s->Of("net 510917 vs 423000"));
  EXPECT_NE(s->Of("qtly div 19 cts"), s->Of("qtly div 1-9 cts"));
  EXPECT_EQ(s->Of("a  b\n\tc d e"), s->Of("a b c d e"));
  EXPECT_EQ(s->Of(" abcde "), s->Of("abcde"));
  const std::string cn = "页面由中文手册页计划提供";
  const std::string tw = "頁面由中文手冊頁計劃提供";
  EXPECT_NE(s->Of(cn), s->Of(tw));
  auto t2s = ShingleSets::Create(5, "tw2sp2");
  ASSERT_TRUE(t2s.ok()) << t2s.status().ToString();
  EXPECT_EQ(t2s->Of(cn), t2s->Of(tw));
  EXPECT_FALSE(ShingleSets::Create(5, "no-such-conversion").ok());
}

TEST(ShingleSetsTest, NormalizedCharacterGrams) {
  auto s = ShingleSets::Create(5);
  ASSERT_TRUE(s.ok());
  const auto a = s->Of("abcdefg");
  EXPECT_EQ(a.size(), 3u);  // abcde bcdef cdefg
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(s->Of("ABCDEFG"), a);             // case folding
  EXPECT_EQ(s->Of("abcdeabcde").size(), 5u);  // distinct
  EXPECT_FALSE(ShingleSets::Create(0).ok());
}

// Random Chinese text of `n` characters.
std::string RandomText(std::mt19937_64& rng, size_t n) {
  std::u32string t;
  for (size_t i = 0; i < n; ++i) t.push_back(U'一' + static_cast<char32_t>(rng() % 2000));
  return EncodeUtf8(t);
}

TEST(EvaluateNaturalTest, CountsMatchDirectComputation) {
  std::mt19937_64 rng(3);
  std::vector<EvalDocument> corpus;
  for (int i = 0; i < 30; ++i) {
    const std::string text = RandomText(rng, 300 + rng() % 300);
    corpus.push_back({"d" + std::to_string(i), text});
    if (i % 3 == 0) {
      // A reprint with a few characters changed (a true pair), or with a
      // third of its text replaced (below the truth).
      std::u32string copy = DecodeUtf8(text);
      const size_t changes = i % 2 == 0 ? 2 : copy.size() / 3;
      for (size_t c = 0; c < changes; ++c) {
        copy[(c * 7919) % copy.size()] = U'一' + static_cast<char32_t>(rng() % 2000);
      }
      corpus.push_back({"c" + std::to_string(i), EncodeUtf8(copy)});
    }
  }
  NaturalEvalOptions options;
  options.methods = {"chars5", "chars5,k=0"};
  options.threads = 2;
  auto report = EvaluateNatural(corpus, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->documents, corpus.size());

  auto shingler = ShingleSets::Create(5);
  ASSERT_TRUE(shingler.ok());
  std::vector<std::vector<uint64_t>> sets;
  for (const auto& d : corpus) sets.push_back(shingler->Of(d.text));
  uint64_t truth = 0, natural = 0;
  for (const JaccardPair& p : BruteForce(sets, 0.5)) {
    ++natural;
    if (p.jaccard >= 0.8) ++truth;
  }
  EXPECT_EQ(report->truth_pairs, truth);
  EXPECT_EQ(report->natural_pairs, natural);
  EXPECT_GE(truth, 3u);

  ASSERT_EQ(report->rows.size(), 2u);
  const NaturalEvalRow& def = report->rows[0];
  EXPECT_EQ(def.reported, def.counts.true_positives + def.near + def.counts.false_positives);
  EXPECT_EQ(def.counts.true_positives + def.counts.false_negatives, truth);
  EXPECT_EQ(def.counts.false_positives, 0u);  // unrelated random texts
  // Strict: every reported pair below the truth is false; floor: only those
  // below 0.3.
  if (def.reported > 0) {
    EXPECT_DOUBLE_EQ(def.precision_strict,
                     static_cast<double>(def.counts.true_positives) / def.reported);
  }
  EXPECT_LE(def.f1_strict, def.f1);
  EXPECT_GE(def.f1_floor, def.f1);
  EXPECT_EQ(def.below_floor, 0u);
  EXPECT_DOUBLE_EQ(def.recall, 1.0);  // two characters of ~450 changed: within k = 24
  EXPECT_EQ(def.largest_cluster, 2u);
  EXPECT_DOUBLE_EQ(def.purity, 1.0);
  // k = 0 finds only identical fingerprints: none here.
  const NaturalEvalRow& zero = report->rows[1];
  EXPECT_EQ(zero.reported, 0u);
  EXPECT_DOUBLE_EQ(zero.precision, 1.0);
  EXPECT_DOUBLE_EQ(zero.recall, 0.0);
  EXPECT_EQ(zero.largest_cluster, 0u);
}

// A family of one template whose items differ only in their numbers (the
// templated set's central-bank notices): every item is a true near
// duplicate (Jaccard >= 0.8) of every other, so the truth itself is one
// cluster of all of them, and the default (centre clusters of verified
// pairs) keeps them together: a largest cluster above any fixed size is
// right there. Unrelated texts stay apart.
TEST(EvaluateNaturalTest, TruthLargestClusterOfATemplateFamily) {
  std::mt19937_64 rng(5);
  std::vector<EvalDocument> corpus;
  constexpr int kFamily = 15;
  for (int i = 0; i < kFamily; ++i) {
    const std::string amount = std::to_string(1 + rng() % 9) + "." + std::to_string(rng() % 10);
    const std::string rate = std::to_string(5 + rng() % 3) + "-" + std::to_string(1 + rng() % 15);
    corpus.push_back(
        {"repo" + std::to_string(i),
         "The Federal Reserve entered the U.S. government securities market to arrange " + amount +
             " billion dlrs of customer repurchase agreements, a Fed spokesman said.\n"
             "Dealers said Federal funds were trading at " +
             rate +
             "/16 pct when the Fed began its temporary and indirect supply of reserves to the "
             "banking system."});
    corpus.push_back({"other" + std::to_string(i), RandomText(rng, 200)});
  }
  NaturalEvalOptions options;
  options.threads = 2;
  auto report = EvaluateNatural(corpus, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->truth_pairs, static_cast<uint64_t>(kFamily * (kFamily - 1) / 2));
  EXPECT_EQ(report->truth_largest_cluster, static_cast<size_t>(kFamily));
  ASSERT_EQ(report->rows.size(), 1u);
  const NaturalEvalRow& def = report->rows[0];
  EXPECT_EQ(def.largest_cluster, report->truth_largest_cluster);
  EXPECT_EQ(def.clusters, 1u);
  EXPECT_DOUBLE_EQ(def.purity, 1.0);
  EXPECT_EQ(def.counts.false_positives, 0u);
}

// No true pair: every document is its own cluster of the truth.
TEST(EvaluateNaturalTest, TruthLargestClusterIsOneWithoutTruePairs) {
  std::mt19937_64 rng(6);
  std::vector<EvalDocument> corpus;
  for (int i = 0; i < 10; ++i) corpus.push_back({"d" + std::to_string(i), RandomText(rng, 100)});
  NaturalEvalOptions options;
  options.threads = 2;
  auto report = EvaluateNatural(corpus, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->truth_pairs, 0u);
  EXPECT_EQ(report->truth_largest_cluster, 1u);
}

}  // namespace
}  // namespace neardup
