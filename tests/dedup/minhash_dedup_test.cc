// Copyright 2026 The neardup Authors.
//
// MinHashDedup (banded candidates through the band engine) against the
// all-pairs oracle on real news with planted near copies (the evaluation's
// perturbation protocol): no pair below the threshold, recall as the b/r
// formula says, the same output at every thread count.

#include "neardup/minhash_dedup.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "neardup/eval.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

struct Corpus {
  std::vector<std::string> texts;
  std::vector<DedupDocument> docs;
  std::vector<uint32_t> signatures;
  std::vector<std::vector<uint64_t>> sets;
};

// The first `limit` documents of a JSONL file, plus variants of 30 % of them
// at edit ratios 5..30 % (Perturber, seeded), signed with `method`.
Corpus Load(const std::string& path, size_t limit, const Method& method) {
  Corpus c;
  std::ifstream in(path);
  std::string line;
  while (c.texts.size() < limit && std::getline(in, line)) {
    c.texts.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
  }
  const size_t originals = c.texts.size();
  const Perturber perturber(c.texts, {});
  for (size_t i = 0; i < originals; i += 3) {
    const double ratio = 0.05 * static_cast<double>(1 + (i / 3) % 6);
    c.texts.push_back(perturber.Perturb(i, ratio, 1234 + i).text);
  }
  auto pipeline = Pipeline::Create(method.pipeline);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  const MinHasher hasher(method.minhash.num_perm);
  const auto perm = static_cast<size_t>(method.minhash.num_perm);
  c.signatures.resize(c.texts.size() * perm);
  c.sets.resize(c.texts.size());
  c.docs.resize(c.texts.size());
  for (size_t i = 0; i < c.texts.size(); ++i) {
    const size_t n = (*pipeline)->MinHashSignature(hasher, c.texts[i], "",
                                                   c.signatures.data() + i * perm, &c.sets[i]);
    c.docs[i].empty = n == 0;
    c.docs[i].length = c.texts[i].size();
  }
  return c;
}

std::set<std::pair<size_t, size_t>> PairSet(const DedupResult& r) {
  std::set<std::pair<size_t, size_t>> out;
  for (const DedupPair& p : r.pairs) out.emplace(p.i, p.j);
  return out;
}

void CheckAgainstOracle(const std::string& file, size_t limit) {
  NEARDUP_REQUIRE_SHARED_DATA(path, file);
  // Threshold 0.5 at datasketch's 25 bands x 5 rows: P(0.5) = 0.55, so recall
  // is far from 1 and the formula is really tested.
  auto method = Method::Parse("minhash,threshold=0.5,bands=25,rows=5");
  ASSERT_TRUE(method.ok());
  const MinHashOptions& mh = method->minhash;
  const Corpus c = Load(path, limit, *method);
  const size_t n = c.docs.size();
  const auto perm = static_cast<size_t>(mh.num_perm);
  const auto sig = [&](size_t i) {
    return std::span<const uint32_t>(c.signatures).subspan(i * perm, perm);
  };

  DedupOptions options;
  options.collect_pairs = true;
  options.threads = 2;
  auto result = MinHashDedup(c.docs, c.signatures, {}, mh, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const auto found = PairSet(*result);

  // Every reported pair is at estimated Jaccard >= threshold, with its value.
  for (const DedupPair& p : result->pairs) {
    const double est = EstimatedJaccard(sig(p.i), sig(p.j));
    ASSERT_GE(est, mh.threshold) << p.i << " " << p.j;
    EXPECT_EQ(p.distance, MinHashDistance(est));
  }
  // The oracle: all pairs by estimated Jaccard. Expected recall: each pair is
  // a candidate with probability P(s) at its set's exact Jaccard s.
  size_t truth = 0, hit = 0;
  double expected = 0, variance = 0;
  size_t near_truth = 0, near_hit = 0;  // pairs at s in [t, t + 0.15)
  double near_expected = 0, near_variance = 0;
  for (size_t i = 0; i < n; ++i) {
    if (c.docs[i].empty) continue;
    for (size_t j = i + 1; j < n; ++j) {
      if (c.docs[j].empty || EstimatedJaccard(sig(i), sig(j)) < mh.threshold) continue;
      const bool got = found.count({i, j}) > 0;
      const double s = ExactJaccard(c.sets[i], c.sets[j]);
      const double p = MinHashCandidateProbability(s, mh.bands, mh.rows);
      ++truth;
      hit += got;
      expected += p;
      variance += p * (1 - p);
      if (s < mh.threshold + 0.15) {
        ++near_truth;
        near_hit += got;
        near_expected += p;
        near_variance += p * (1 - p);
      }
    }
  }
  EXPECT_EQ(found.size(), hit) << "a reported pair the oracle does not have";
  ASSERT_GT(truth, 50u);
  ASSERT_GT(near_truth, 10u);
  // Band collisions of different pairs are not independent (shared
  // documents), hence 4 sd and a small slack.
  EXPECT_NEAR(static_cast<double>(hit), expected, 4 * std::sqrt(variance) + 0.01 * truth)
      << file << ": " << hit << " of " << truth << " found";
  EXPECT_NEAR(static_cast<double>(near_hit), near_expected,
              4 * std::sqrt(near_variance) + 0.02 * near_truth)
      << file << ": at the threshold " << near_hit << " of " << near_truth << " found";
  std::printf(
      "%s: %zu of %zu pairs found (expected %.1f); near the threshold %zu of %zu "
      "(expected %.1f)\n",
      file.c_str(), hit, truth, expected, near_hit, near_truth, near_expected);

  // Exact verification: every reported pair at exact Jaccard >= threshold.
  MinHashOptions exact = mh;
  exact.exact = true;
  auto exact_result = MinHashDedup(c.docs, c.signatures, c.sets, exact, options);
  ASSERT_TRUE(exact_result.ok());
  ASSERT_FALSE(exact_result->pairs.empty());
  for (const DedupPair& p : exact_result->pairs) {
    ASSERT_GE(ExactJaccard(c.sets[p.i], c.sets[p.j]), mh.threshold) << p.i << " " << p.j;
  }

  // The same records and pairs at every thread count.
  for (int threads : {1, 3}) {
    DedupOptions o = options;
    o.threads = threads;
    auto again = MinHashDedup(c.docs, c.signatures, {}, mh, o);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->pairs, result->pairs) << threads;
    ASSERT_EQ(again->records.size(), result->records.size());
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(again->records[i].cluster, result->records[i].cluster) << i;
      EXPECT_EQ(again->records[i].duplicate, result->records[i].duplicate) << i;
      EXPECT_EQ(again->records[i].nearest, result->records[i].nearest) << i;
    }
  }
}

TEST(MinHashDedup, ChineseNewsAgainstAllPairs) { CheckAgainstOracle("zh_thucnews1000.jsonl", 600); }

TEST(MinHashDedup, EnglishNewsAgainstAllPairs) { CheckAgainstOracle("en_bbc2225.jsonl", 600); }

TEST(MinHashDedup, ClustersAndValidation) {
  // Three documents: 0 and 2 identical, 1 different, 3 empty.
  const size_t perm = 16;
  std::vector<uint32_t> sigs(4 * perm);
  for (size_t k = 0; k < perm; ++k) {
    sigs[k] = sigs[2 * perm + k] = static_cast<uint32_t>(k);
    sigs[perm + k] = static_cast<uint32_t>(100 + k);
    sigs[3 * perm + k] = 0xFFFFFFFFu;
  }
  std::vector<DedupDocument> docs(4);
  docs[3].empty = true;
  MinHashOptions mh;
  mh.num_perm = 16;
  mh.bands = 4;
  mh.rows = 4;
  DedupOptions options;
  options.collect_pairs = true;
  auto r = MinHashDedup(docs, sigs, {}, mh, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pairs, (std::vector<DedupPair>{{0, 2, 0}}));
  EXPECT_TRUE(r->records[2].duplicate);
  EXPECT_EQ(r->records[2].nearest, 0u);
  EXPECT_EQ(JaccardOfDistance(r->records[2].distance), 1.0);
  EXPECT_FALSE(r->records[1].duplicate);
  EXPECT_TRUE(r->records[3].empty);
  EXPECT_EQ(r->summary.duplicates, 1u);

  const auto fails = [&](MinHashOptions o, DedupOptions d, size_t values) {
    std::vector<uint32_t> s(values);
    return MinHashDedup(docs, s, {}, o, d).status().IsInvalidArgument();
  };
  EXPECT_TRUE(fails(mh, options, 10));  // wrong number of values
  MinHashOptions bad = mh;
  bad.bands = 5;  // 5 x 4 > 16
  EXPECT_TRUE(fails(bad, options, 64));
  bad = mh;
  bad.exact = true;  // no sets
  EXPECT_TRUE(fails(bad, options, 64));
  DedupOptions stream = options;
  stream.mode = DedupMode::kStream;
  EXPECT_TRUE(fails(mh, stream, 64));
}

}  // namespace
}  // namespace neardup
