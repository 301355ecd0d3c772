// Copyright 2026 The neardup Authors.
//
// The short-document rule (DedupOptions::short_features) against a
// brute-force oracle: over all pairs of documents, a pair is near when its
// Hamming distance is <= k, or when the smaller feature set has fewer than
// short_features elements and the exact Jaccard of the two sets (std::set
// intersection) is >= short_jaccard; clusters are the connected components.

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "neardup/dedup.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "util/union_find.h"

namespace neardup {
namespace {

double SlowJaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  const std::set<uint64_t> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  std::vector<uint64_t> both, either;
  std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(both));
  std::set_union(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(either));
  return either.empty() ? 0 : static_cast<double>(both.size()) / static_cast<double>(either.size());
}

// Random texts over 300 CJK characters, 4 to 400 characters long, each with
// a few copies that have 1 to 3 characters changed; some empty.
std::vector<std::string> Texts(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto ch = [&rng] {
    const char32_t c = 0x4E00 + static_cast<char32_t>(rng() % 300);
    std::string s;
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
    return s;
  };
  std::vector<std::string> texts;
  for (int b = 0; b < 60; ++b) {
    const size_t len = b % 10 == 0 ? 200 + rng() % 200 : 4 + rng() % 60;
    std::vector<std::string> chars(len);
    for (auto& c : chars) c = ch();
    const int copies = static_cast<int>(rng() % 4);
    for (int v = 0; v <= copies; ++v) {
      std::vector<std::string> copy = chars;
      const int edits = v == 0 ? 0 : 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) copy[rng() % copy.size()] = ch();
      std::string text;
      for (const auto& c : copy) text += c;
      texts.push_back(text);
    }
    if (b % 15 == 0) texts.emplace_back();
  }
  std::shuffle(texts.begin(), texts.end(), rng);
  return texts;
}

TEST(ShortDocumentRuleTest, MatchesBruteForce) {
  auto method = Method::Parse("chars5");
  ASSERT_TRUE(method.ok());
  auto pipeline = Pipeline::Create(method->pipeline);
  ASSERT_TRUE(pipeline.ok());
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<std::string> texts = Texts(seed);
    const size_t n = texts.size();
    for (const size_t short_features : {size_t{8}, size_t{30}, size_t{64}}) {
      for (const double jaccard : {0.3, 0.5, 0.8}) {
        const int k = 24;
        std::vector<DedupDocument> docs(n);
        std::vector<std::vector<uint64_t>> all(n), sets(n);
        for (size_t i = 0; i < n; ++i) {
          const DocumentFingerprint fp = (*pipeline)->Fingerprint(texts[i]);
          docs[i].fingerprint = fp.fingerprint;
          docs[i].empty = fp.empty();
          (*pipeline)->FeatureSet(texts[i], "", &all[i]);
          if (static_cast<double>(all[i].size()) < static_cast<double>(short_features) / jaccard) {
            sets[i] = all[i];
          }
        }
        DedupOptions opt;
        opt.cluster_rule = ClusterRule::kComponents;  // the rule under test
        opt.k = k;
        opt.threads = 2;
        opt.collect_pairs = true;
        opt.short_features = short_features;
        opt.short_jaccard = jaccard;
        opt.short_sets = sets;
        auto result = Dedup(docs, opt);
        ASSERT_TRUE(result.ok()) << result.status().ToString();

        std::vector<DedupPair> want;
        UnionFind uf(n);
        size_t short_only = 0;
        for (size_t i = 0; i < n; ++i) {
          for (size_t j = i + 1; j < n; ++j) {
            if (docs[i].empty || docs[j].empty) continue;
            const int d = HammingDistance(docs[i].fingerprint, docs[j].fingerprint);
            const bool short_pair = std::min(all[i].size(), all[j].size()) < short_features &&
                                    SlowJaccard(all[i], all[j]) >= jaccard;
            if (d <= k || short_pair) {
              want.push_back({i, j, d});
              uf.Union(i, j);
              if (d > k) ++short_only;
            }
          }
        }
        SCOPED_TRACE("seed " + std::to_string(seed) + " M " + std::to_string(short_features) +
                     " J " + std::to_string(jaccard));
        EXPECT_EQ(result->pairs, want);
        for (size_t i = 0; i < n; ++i) {
          size_t first = i;
          for (size_t j = 0; j < i; ++j) {
            if (uf.Find(j) == uf.Find(i)) {
              first = j;
              break;
            }
          }
          EXPECT_EQ(result->records[i].cluster, first) << i;
          EXPECT_EQ(result->records[i].duplicate, first != i) << i;
        }
        // The rule must matter in this corpus for the larger M.
        if (short_features == 64 && jaccard == 0.5) {
          EXPECT_GT(short_only, 0u);
        }
        EXPECT_EQ(result->join.short_pairs > 0, short_only > 0);
        // Without the rule: the pairs within k only.
        opt.short_features = 0;
        auto plain = Dedup(docs, opt);
        ASSERT_TRUE(plain.ok());
        EXPECT_EQ(plain->pairs.size(), want.size() - short_only);
      }
    }
  }
}

TEST(ShortDocumentRuleTest, ShortDocumentPairsKeepsPairsWithAShortSet) {
  const std::vector<std::vector<uint64_t>> sets = {
      {1, 2, 3}, {1, 2, 3, 4}, {10, 11, 12, 13, 14, 15}, {10, 11, 12, 13, 14, 16}, {}, {1, 2, 3}};
  auto pairs = ShortDocumentPairs(sets, 4, 0.5);
  ASSERT_TRUE(pairs.ok());
  // {0,1} (3 < 4, J 0.75), {0,5} and {1,5}; not {2,3}: both have 6 >= 4.
  const std::vector<JaccardPair> want = {{0, 1, 0.75}, {0, 5, 1.0}, {1, 5, 0.75}};
  EXPECT_EQ(*pairs, want);
}

TEST(ShortDocumentRuleTest, RejectsBadOptions) {
  std::vector<DedupDocument> docs(2);
  docs[0].fingerprint = Fingerprint::From128(1, 2);
  docs[1].fingerprint = Fingerprint::From128(3, 4);
  DedupOptions opt;
  opt.short_features = 10;
  EXPECT_FALSE(Dedup(docs, opt).ok());  // no sets
  const std::vector<std::vector<uint64_t>> sets(2);
  opt.short_sets = sets;
  EXPECT_TRUE(Dedup(docs, opt).ok());
  opt.short_jaccard = 0;
  EXPECT_FALSE(Dedup(docs, opt).ok());
  opt.short_jaccard = 0.5;
  opt.mode = DedupMode::kStream;
  EXPECT_FALSE(Dedup(docs, opt).ok());
}

}  // namespace
}  // namespace neardup
