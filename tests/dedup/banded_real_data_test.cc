// Copyright 2026 The neardup Authors.
//
// The banded join against the exact one on real news (../shared/data) with the
// evaluation harness's variants: every document plus variants at 5, 10, 15
// and 20 % edits (eval.h's Perturber), default-method fingerprints (chars5,
// 128 bits, k = 24). The clusters of the banded dedup must equal the exact
// dedup's on >= 99.5 % of the documents (a document counts when its cluster
// has the same members in both).

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "neardup/dedup.h"
#include "neardup/eval.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::Sanitized;

// Share of documents whose cluster has the same members in a and b.
double SameClusters(const DedupResult& a, const DedupResult& b) {
  const ClusterRows ra = ClusterMembers(a), rb = ClusterMembers(b);
  // Per document: its cluster's members (empty: a singleton).
  auto members = [](const DedupResult& r, const ClusterRows& rows) {
    std::vector<std::vector<size_t>> of(r.records.size());
    for (size_t c = 0; c < rows.size(); ++c) {
      const auto m = rows.Members(c);
      for (size_t x : m) of[x].assign(m.begin(), m.end());
    }
    return of;
  };
  const auto ma = members(a, ra), mb = members(b, rb);
  size_t same = 0;
  for (size_t i = 0; i < ma.size(); ++i) same += ma[i] == mb[i];
  return static_cast<double>(same) / static_cast<double>(ma.size());
}

void CheckCorpus(const std::string& path) {
  std::vector<std::string> originals;
  std::ifstream in(path);
  std::string line;
  // 400 originals (2,000 documents: the variants' edit ratios cost an LCS each)
  // keep the test to seconds; 60 under
  // sanitizers.
  const size_t limit = Sanitized() ? 60 : 400;
  while (std::getline(in, line) && originals.size() < limit) {
    originals.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
  }
  ASSERT_EQ(originals.size(), limit) << path << " has fewer documents than the test needs";
  const Perturber perturber(originals, {});
  std::vector<std::string> texts = originals;
  for (size_t i = 0; i < originals.size(); ++i) {
    for (double ratio : {0.05, 0.10, 0.15, 0.20}) {
      texts.push_back(perturber.Perturb(i, ratio, 17).text);
    }
  }
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  std::vector<DedupDocument> docs(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(texts[i]);
    docs[i].fingerprint = fp.fingerprint;
    docs[i].empty = fp.empty();
  }
  DedupOptions opt;
  opt.k = Method::Default().default_k;
  opt.join = DedupJoin::kExact;
  auto exact = Dedup(docs, opt);
  ASSERT_TRUE(exact.ok());
  opt.join = DedupJoin::kBanded;
  auto banded = Dedup(docs, opt);
  ASSERT_TRUE(banded.ok());
  ASSERT_TRUE(banded->join.banded);
  EXPECT_LE(banded->join.confirmed, exact->join.confirmed);
  const double same = SameClusters(*exact, *banded);
  EXPECT_GE(same, 0.995);
  std::printf(
      "%s: %zu documents, exact %zu pairs / %zu duplicates, banded %zu pairs / %zu "
      "duplicates (r = %d, L = %d); same clusters on %.4f of documents\n",
      path.c_str(), docs.size(), exact->join.confirmed, exact->summary.duplicates,
      banded->join.confirmed, banded->summary.duplicates, banded->join.bands.band_bits,
      banded->join.bands.bands, same);
}

TEST(BandedRealDataTest, ThucNewsClustersEqualTheExactOnes) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  CheckCorpus(path);
}

TEST(BandedRealDataTest, BbcClustersEqualTheExactOnes) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "en_bbc2225.jsonl");
  CheckCorpus(path);
}

}  // namespace
}  // namespace neardup
