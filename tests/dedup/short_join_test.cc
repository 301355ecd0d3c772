// Copyright 2026 The neardup Authors.
//
// The routed join (dedup/short_join.h): short records joined in the sketch
// space give the exact join's pairs and clusters, and the bound it rests on
// (a pair that passes verification shares t max(a, b) sketch tokens) holds.

#include "dedup/short_join.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/dedup.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"

namespace neardup {
namespace {

struct Corpus {
  std::vector<DedupDocument> docs;
  std::vector<JaccardSketch> sketches;
};

Corpus Fingerprint(const std::vector<std::string>& texts) {
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  EXPECT_TRUE(pipeline.ok());
  Corpus c;
  std::vector<uint64_t> set;
  for (const std::string& t : texts) {
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(t);
    DedupDocument d;
    d.fingerprint = fp.fingerprint;
    d.empty = fp.empty();
    c.docs.push_back(d);
    set.clear();
    (*pipeline)->FeatureSet(t, "", &set);
    c.sketches.push_back(MakeJaccardSketch(set));
  }
  return c;
}

// The banded join of `c` with verified pairs (Jaccard >= 0.5), every pair
// collected, on two threads.
DedupOptions BandedOptions(const Corpus& c) {
  DedupOptions opt;
  opt.sketches = c.sketches;
  opt.verify_jaccard = 0.5;
  opt.collect_pairs = true;
  opt.threads = 2;
  opt.join = DedupJoin::kBanded;
  return opt;
}

// Issue 27's records `<word> <word> <number>`, with identical copies (the
// numbers repeat), one-character edits, and some longer records (up to about
// 30 tokens: every document takes part in the sketch join).
std::vector<std::string> ShortRecords(uint64_t seed, size_t n) {
  const std::vector<std::string> words = {"市场", "经济", "北京", "中国",   "发展", "公司",
                                          "the",  "of",   "and",  "market", "news", "data"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> texts;
  while (texts.size() < n) {
    std::string t = words[rng() % words.size()] + " " + words[rng() % words.size()];
    if (rng() % 4 == 0) t += " " + words[rng() % words.size()] + " " + words[rng() % words.size()];
    t += " " + std::to_string(rng() % 5000);
    texts.push_back(t);
    if (rng() % 3 == 0) {  // a near copy: one character changed or appended
      std::string copy = t;
      if (rng() % 2 == 0) {
        copy.back() = static_cast<char>('0' + rng() % 10);
      } else {
        copy += static_cast<char>('a' + rng() % 26);
      }
      texts.push_back(copy);
    }
  }
  texts.resize(n);
  return texts;
}

void ExpectSameResult(const DedupResult& routed, const DedupResult& exact) {
  ASSERT_EQ(routed.pairs.size(), exact.pairs.size());
  for (size_t p = 0; p < exact.pairs.size(); ++p) {
    EXPECT_EQ(routed.pairs[p].i, exact.pairs[p].i) << p;
    EXPECT_EQ(routed.pairs[p].j, exact.pairs[p].j) << p;
    EXPECT_EQ(routed.pairs[p].distance, exact.pairs[p].distance) << p;
  }
  ASSERT_EQ(routed.records.size(), exact.records.size());
  for (size_t i = 0; i < exact.records.size(); ++i) {
    EXPECT_EQ(routed.records[i].cluster, exact.records[i].cluster) << i;
    EXPECT_EQ(routed.records[i].duplicate, exact.records[i].duplicate) << i;
    EXPECT_EQ(routed.records[i].nearest, exact.records[i].nearest) << i;
  }
  EXPECT_EQ(routed.summary.duplicates, exact.summary.duplicates);
}

TEST(ShortJoinTest, RoutedJoinEqualsTheExactJoinOnShortRecords) {
  for (const uint64_t seed : {1u, 2u}) {
    const Corpus c = Fingerprint(ShortRecords(seed, 3000));
    for (const ClusterRule rule : {ClusterRule::kCenter, ClusterRule::kComponents}) {
      for (const double t : {0.5, 0.4}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", t " + std::to_string(t));
        DedupOptions opt;
        opt.sketches = c.sketches;
        opt.verify_jaccard = 0.6;
        opt.verify_short_features = 12;
        opt.verify_short_jaccard = t;
        opt.cluster_rule = rule;
        opt.collect_pairs = true;
        opt.threads = 2;
        opt.join = DedupJoin::kBanded;
        auto routed = Dedup(c.docs, opt);
        ASSERT_TRUE(routed.ok()) << routed.status().ToString();
        ASSERT_TRUE(routed->join.banded);
        ASSERT_TRUE(routed->join.short_join.used);
        EXPECT_GT(routed->join.short_join.short_groups, 1000u);
        EXPECT_EQ(routed->join.short_join.short_groups + routed->join.short_join.medium_groups,
                  routed->join.distinct);
        opt.join = DedupJoin::kExact;
        auto exact = Dedup(c.docs, opt);
        ASSERT_TRUE(exact.ok());
        ASSERT_FALSE(exact->join.short_join.used);
        ASSERT_GT(exact->pairs.size(), 500u);
        ExpectSameResult(*routed, *exact);
        // The cost follows the pairs: far fewer tests than pairs of records.
        EXPECT_LT(routed->join.short_join.tested, 50 * exact->join.confirmed);
      }
    }
  }
}

// The keys are made in passes (by ranges of their first token, a token with
// more keys than a pass split by hash): passes of a few keys find the same
// buckets, pairs and clusters as one pass, and the passes are many.
TEST(ShortJoinTest, KeyPassesOfAnySizeGiveTheSameJoin) {
  const Corpus c = Fingerprint(ShortRecords(3, 3000));
  DedupOptions opt = BandedOptions(c);
  size_t passes = 0;
  opt.progress = [&passes](std::string_view phase, size_t, size_t total) {
    if (phase == "short join") passes = total;
  };
  auto one = Dedup(c.docs, opt);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(one->join.short_join.used);
  ASSERT_EQ(passes, 1u);
  ASSERT_GT(one->pairs.size(), 500u);
  for (const size_t keys : {size_t{1}, size_t{40}, size_t{1000}}) {
    SCOPED_TRACE("keys per pass " + std::to_string(keys));
    dedup_internal::SetShortJoinKeysPerPass(keys);
    auto many = Dedup(c.docs, opt);
    dedup_internal::SetShortJoinKeysPerPass(0);
    ASSERT_TRUE(many.ok()) << many.status().ToString();
    EXPECT_GT(passes, one->join.short_join.keys / std::max<size_t>(keys, 100));
    ExpectSameResult(*many, *one);
    const auto& a = many->join.short_join;
    const auto& b = one->join.short_join;
    EXPECT_EQ(a.keys, b.keys);
    EXPECT_EQ(a.candidates, b.candidates);
    EXPECT_EQ(a.tested, b.tested);
    EXPECT_EQ(a.confirmed, b.confirmed);
    EXPECT_EQ(a.largest_bucket, b.largest_bucket);
  }
}

// Issue 27's benchmark records with seven-digit numbers (as at 10M): most
// pairs of records that share the words and the leading digits share about
// half their sketch tokens, pass the bound (*) and fail verification. The
// pair overlap (PairOverlap) keeps them out of the buckets' tests: far fewer
// pairs looked at, the same result as the exact join.
TEST(ShortJoinTest, SevenDigitRecordsCostFollowThePairs) {
  const std::vector<std::string> words = {"市场", "经济", "北京", "中国",   "发展", "公司",
                                          "the",  "of",   "and",  "market", "news", "data"};
  std::mt19937_64 rng(5);
  std::vector<std::string> texts;
  for (int i = 0; i < 20000; ++i) {
    texts.push_back(words[rng() % words.size()] + " " + words[rng() % words.size()] + " " +
                    std::to_string(1000000 + i));
  }
  const Corpus c = Fingerprint(texts);
  DedupOptions opt = BandedOptions(c);
  auto routed = Dedup(c.docs, opt);
  ASSERT_TRUE(routed.ok()) << routed.status().ToString();
  ASSERT_TRUE(routed->join.short_join.used);
  opt.join = DedupJoin::kExact;
  auto exact = Dedup(c.docs, opt);
  ASSERT_TRUE(exact.ok());
  ASSERT_GT(exact->summary.duplicates, 5000u);
  ExpectSameResult(*routed, *exact);
  // One threshold: the sketch join holds only the pairs whose estimate
  // passes it, the exact join's verified pairs (with (*) alone, about twice
  // as many), and counts the others as rejected.
  EXPECT_EQ(routed->join.short_join.confirmed, exact->join.confirmed - exact->join.rejected);
  EXPECT_GT(routed->join.short_join.confirmed, 5000u);
  EXPECT_GT(routed->join.rejected, 0u);
  // With (*) alone: about 170 pairs looked at and 140 tested per record.
  EXPECT_LT(routed->join.short_join.candidates, 100 * texts.size());
  EXPECT_LT(routed->join.short_join.tested, 50 * texts.size());
}

// With the sketch short rule, the routed join also gives the rule's pairs
// more than k apart from its own candidates (SimHashJoinRouted's beyond_k):
// every pair of distinct records with a short member (at most kShortSlots
// non-empty slots) that passes the rule's test (the smaller under
// short_features, sizes within the ratio, SketchJaccard >= short_jaccard)
// is reported, and every reported pair beyond k passes that test. The
// rule's bands alone miss some of them (tiny sketches: a band of four
// slots rarely holds two values; 0.955 of the exact rule's pairs on 100,000
// short records).
TEST(ShortJoinTest, RoutedJoinGivesTheSketchRulesPairsWithAShortMember) {
  std::vector<std::string> texts = ShortRecords(4, 4000);
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  const Corpus c = Fingerprint(texts);
  DedupOptions opt = BandedOptions(c);
  opt.k = Method::Default().default_k;
  opt.cluster_rule = ClusterRule::kComponents;
  opt.short_features = 300;
  opt.short_jaccard = 0.5;
  opt.short_rule = ShortRule::kSketch;
  ASSERT_TRUE(dedup_internal::ShortRuleBeyondK(opt));
  auto r = Dedup(c.docs, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->join.short_join.used);
  ASSERT_EQ(r->join.distinct, c.docs.size()) << "one record a fingerprint";
  std::set<std::pair<size_t, size_t>> got;
  for (const DedupPair& p : r->pairs) got.insert({std::min(p.i, p.j), std::max(p.i, p.j)});
  const auto passes = [&](size_t a, size_t b) {
    const double fa = c.sketches[a].features, fb = c.sketches[b].features;
    return std::min(fa, fb) > 0 && std::min(fa, fb) < 300 &&
           std::max(fa, fb) <= std::min(fa, fb) / 0.5 + 1e-9 &&
           SketchJaccard(c.sketches[a], c.sketches[b]) >= 0.5;
  };
  const auto slots = [&](size_t a) {
    return kSketchSlots - std::popcount(c.sketches[a].empty[0]) -
           std::popcount(c.sketches[a].empty[1]);
  };
  size_t expected = 0, missed = 0;
  for (size_t a = 0; a < c.docs.size(); ++a) {
    for (size_t b = a + 1; b < c.docs.size(); ++b) {
      if (HammingDistance(c.docs[a].fingerprint, c.docs[b].fingerprint) <= opt.k) continue;
      if (std::min(slots(a), slots(b)) > dedup_internal::kShortSlots || !passes(a, b)) continue;
      ++expected;
      if (!got.count({a, b})) {
        ++missed;
        if (missed <= 5) ADD_FAILURE() << "missing: " << texts[a] << " | " << texts[b];
      }
    }
  }
  EXPECT_EQ(missed, 0u) << "of " << expected;
  EXPECT_GT(expected, 200u) << "the rule must matter here";
  for (const DedupPair& p : r->pairs) {
    if (p.distance > opt.k) {
      EXPECT_TRUE(passes(p.i, p.j)) << texts[p.i] << " | " << texts[p.j];
    }
  }
}

// With the routed join, dedup runs the rule's LSH (ShortSketchPairs) over
// the groups of more than kShortSlots non-empty slots alone: the pairs with
// a short member come from the routed join (exactly, above). Short records
// mixed with longer texts (20-45 CJK characters, 16-41 features: more than
// kShortSlots slots) and their edited copies: the pairs beyond k are the
// union of (a) every pair with a short member that passes the rule's test,
// and (b) the LSH's pairs over all participants whose two members are
// longer, and nothing else; against the exact rule (feature sets) as
// oracle, every exact pair whose sketches pass is found when it has a short
// member.
TEST(ShortJoinTest, SketchRuleBandsOnlyTheLongerGroupsWhenRouted) {
  std::vector<std::string> texts = ShortRecords(5, 3000);
  std::mt19937_64 rng(5);
  const auto ch = [&rng] {
    const char32_t c = 0x4E00 + static_cast<char32_t>(rng() % 300);
    return std::string{static_cast<char>(0xE0 | (c >> 12)),
                       static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                       static_cast<char>(0x80 | (c & 0x3F))};
  };
  for (int b = 0; b < 300; ++b) {
    std::vector<std::string> chars(20 + rng() % 26);
    for (auto& c : chars) c = ch();
    for (int v = 0, copies = 1 + static_cast<int>(rng() % 3); v <= copies; ++v) {
      std::vector<std::string> copy = chars;
      for (int e = 0, edits = v == 0 ? 0 : 1 + static_cast<int>(rng() % 5); e < edits; ++e) {
        copy[rng() % copy.size()] = ch();
      }
      std::string text;
      for (const auto& c : copy) text += c;
      texts.push_back(text);
    }
  }
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  ASSERT_TRUE(pipeline.ok());
  std::vector<std::vector<uint64_t>> sets(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) (*pipeline)->FeatureSet(texts[i], "", &sets[i]);
  const Corpus c = Fingerprint(texts);
  DedupOptions opt = BandedOptions(c);
  opt.k = Method::Default().default_k;
  opt.cluster_rule = ClusterRule::kComponents;
  opt.short_features = 300;
  opt.short_jaccard = 0.5;
  opt.short_rule = ShortRule::kSketch;
  ASSERT_TRUE(dedup_internal::ShortRuleBeyondK(opt));
  auto r = Dedup(c.docs, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->join.short_join.used);
  ASSERT_EQ(r->join.distinct, c.docs.size()) << "one text a fingerprint";
  const auto slots = [&](size_t a) {
    return kSketchSlots - std::popcount(c.sketches[a].empty[0]) -
           std::popcount(c.sketches[a].empty[1]);
  };
  const auto passes = [&](size_t a, size_t b) {
    const double fa = c.sketches[a].features, fb = c.sketches[b].features;
    return std::min(fa, fb) > 0 && std::min(fa, fb) < 300 &&
           std::max(fa, fb) <= std::min(fa, fb) / 0.5 + 1e-9 &&
           SketchJaccard(c.sketches[a], c.sketches[b]) >= 0.5;
  };
  const auto beyond = [&](size_t a, size_t b) {
    return HammingDistance(c.docs[a].fingerprint, c.docs[b].fingerprint) > opt.k;
  };
  std::set<std::pair<size_t, size_t>> expected;
  size_t with_short = 0, both_longer = 0;
  for (size_t a = 0; a < c.docs.size(); ++a) {
    for (size_t b = a + 1; b < c.docs.size(); ++b) {
      if (beyond(a, b) && std::min(slots(a), slots(b)) <= dedup_internal::kShortSlots &&
          passes(a, b)) {
        expected.insert({a, b});
        ++with_short;
      }
    }
  }
  std::vector<size_t> all(c.docs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto lsh = dedup_internal::ShortSketchPairs(c.sketches, all, 300, 0.5, 2);
  ASSERT_TRUE(lsh.ok()) << lsh.status().ToString();
  for (const auto& [a, b] : *lsh) {
    if (beyond(a, b) && std::min(slots(a), slots(b)) > dedup_internal::kShortSlots) {
      expected.insert({a, b});
      ++both_longer;
    }
  }
  EXPECT_GT(with_short, 200u) << "the routed join's part must matter here";
  EXPECT_GT(both_longer, 50u) << "the LSH's part must matter here";
  std::set<std::pair<size_t, size_t>> got;
  for (const DedupPair& p : r->pairs) {
    if (p.distance > opt.k) got.insert({std::min(p.i, p.j), std::max(p.i, p.j)});
  }
  // Every expected pair is found; a pair more is one of two longer members
  // that the routed join met as well (medium groups take part in both) and
  // that passes the rule's test.
  for (const auto& p : expected) EXPECT_TRUE(got.count(p)) << p.first << " " << p.second;
  size_t more = 0;
  for (const auto& [a, b] : got) {
    if (expected.count({a, b})) continue;
    ++more;
    EXPECT_GT(std::min(slots(a), slots(b)), dedup_internal::kShortSlots)
        << texts[a] << " | " << texts[b];
    EXPECT_TRUE(passes(a, b)) << texts[a] << " | " << texts[b];
  }
  EXPECT_LE(more, both_longer / 20) << "the LSH gives the longer groups' pairs";
  EXPECT_EQ(r->join.short_pairs, got.size());
  // The exact rule as oracle: its pairs beyond k with a short member whose
  // sketches pass are all found.
  auto exact = ShortDocumentPairs(sets, 300, 0.5, 2);
  ASSERT_TRUE(exact.ok());
  size_t oracle = 0, missed = 0;
  for (const JaccardPair& p : *exact) {
    if (!beyond(p.a, p.b) || std::min(slots(p.a), slots(p.b)) > dedup_internal::kShortSlots ||
        SketchJaccard(c.sketches[p.a], c.sketches[p.b]) < 0.5) {
      continue;
    }
    ++oracle;
    missed += !got.count({p.a, p.b});
  }
  std::printf(
      "%zu texts: %zu rule pairs with a short member, %zu of two longer from the LSH, %zu more "
      "from the routed join; exact rule's pairs with a short member: %zu, missed %zu\n",
      texts.size(), with_short, both_longer, more, oracle, missed);
  EXPECT_GT(oracle, 100u);
  EXPECT_EQ(missed, 0u) << "of " << oracle;
}

TEST(ShortJoinTest, NotRoutedWithoutVerification) {
  const Corpus c = Fingerprint(ShortRecords(3, 500));
  DedupOptions opt;
  opt.join = DedupJoin::kBanded;
  opt.threads = 1;
  auto plain = Dedup(c.docs, opt);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->join.short_join.used);
  opt.sketches = c.sketches;
  opt.verify_jaccard = 0.3;  // below 0.4: the prefixes would grow long
  auto low = Dedup(c.docs, opt);
  ASSERT_TRUE(low.ok());
  EXPECT_FALSE(low->join.short_join.used);
}

// The bound (*) of short_join.h: SketchJaccard >= t implies at least
// t max(a, b) equal non-empty slots. Random small sets with much overlap.
TEST(ShortJoinTest, VerifiedPairsShareEnoughSketchTokens) {
  std::mt19937_64 rng(11);
  size_t passing = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint64_t> x, y;
    const size_t shared = rng() % 20, only_x = rng() % 6, only_y = rng() % 6;
    for (size_t i = 0; i < shared; ++i) {
      x.push_back(rng());
      y.push_back(x.back());
    }
    for (size_t i = 0; i < only_x; ++i) x.push_back(rng());
    for (size_t i = 0; i < only_y; ++i) y.push_back(rng());
    const JaccardSketch a = MakeJaccardSketch(x), b = MakeJaccardSketch(y);
    int na = 0, nb = 0, matches = 0;
    for (int s = 0; s < kSketchSlots; ++s) {
      const bool ea = (a.empty[s / 64] >> (s % 64)) & 1, eb = (b.empty[s / 64] >> (s % 64)) & 1;
      na += !ea;
      nb += !eb;
      matches += !ea && !eb && a.slot[s] == b.slot[s];
    }
    for (const double t : {0.4, 0.5, 0.7}) {
      if (SketchJaccard(a, b) < t) continue;
      ++passing;
      EXPECT_GE(matches, t * std::max(na, nb) - 1e-9) << trial;
    }
  }
  EXPECT_GT(passing, 1000u);
}

// PairOverlap: a pair that passes verification with at most kSlotClashes
// slots non-empty in both but different has at least Need(a, b) equal
// slots; the need is never below (*) and is tighter where the sizes allow.
TEST(ShortJoinTest, PairOverlapIsABoundAndTighterThanStar) {
  using dedup_internal::kSlotClashes;
  using dedup_internal::PairOverlap;
  const PairOverlap p05(0.5, 40), p04(0.4, 40);
  EXPECT_EQ(p05.Need(6, 6), 4);  // (*): 3
  EXPECT_EQ(p05.Need(9, 9), 6);  // (*): 5
  EXPECT_EQ(p05.Need(2, 9), PairOverlap::kNever);
  for (int a = 1; a <= 40; ++a) {
    for (int b = 1; b <= 40; ++b) {
      EXPECT_GE(p05.Need(a, b), static_cast<int>(std::ceil(0.5 * std::max(a, b) - 1e-9)));
      EXPECT_GE(p04.Need(a, b), static_cast<int>(std::ceil(0.4 * std::max(a, b) - 1e-9)));
      EXPECT_EQ(p05.Need(a, b), p05.Need(b, a));
    }
    EXPECT_LE(p05.Any(a), p05.Longer(a));
  }
  std::mt19937_64 rng(12);
  size_t passing = 0, clashing = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint64_t> x, y;
    const size_t shared = rng() % 20, only_x = rng() % 8, only_y = rng() % 8;
    for (size_t i = 0; i < shared; ++i) {
      x.push_back(rng());
      y.push_back(x.back());
    }
    for (size_t i = 0; i < only_x; ++i) x.push_back(rng());
    for (size_t i = 0; i < only_y; ++i) y.push_back(rng());
    const JaccardSketch a = MakeJaccardSketch(x), b = MakeJaccardSketch(y);
    int na = 0, nb = 0, both = 0, matches = 0;
    for (int s = 0; s < kSketchSlots; ++s) {
      const bool ea = (a.empty[s / 64] >> (s % 64)) & 1, eb = (b.empty[s / 64] >> (s % 64)) & 1;
      na += !ea;
      nb += !eb;
      both += !ea && !eb;
      matches += !ea && !eb && a.slot[s] == b.slot[s];
    }
    if (na == 0 || nb == 0 || na > 40 || nb > 40) continue;
    clashing += both > matches;
    if (both - matches > kSlotClashes) continue;
    for (const auto& [t, p] : {std::pair{0.5, &p05}, std::pair{0.4, &p04}}) {
      if (SketchJaccard(a, b) < t) continue;
      ++passing;
      EXPECT_GE(matches, p->Need(na, nb)) << trial;
    }
  }
  EXPECT_GT(passing, 1000u);
  EXPECT_GT(clashing, 1000u);
}

}  // namespace
}  // namespace neardup
