// Copyright 2026 The neardup Authors.
//
// FeatureExtractor::SimHashOf (chars:N with uniform or tf weights counts
// n-grams in a flat table and adds them to a UnitSimHasher without building
// the features) against the scalar SimHash oracle over what Extract() gives:
// same fingerprint, same number of features. Seeded random texts over a small
// alphabet (so that n-grams repeat) with CJK, ASCII, punctuation, combining
// marks and supplementary-plane characters; then the THUCNews sample.
// FeatureExtractor::FeatureHashes (the set MinHash samples; chars:N hashes
// n-grams without their strings and sorts by buckets) against the hashes of
// what Extract() gives, sorted and made unique by std::sort.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "neardup/features.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "tests/testing/simhash_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

std::string RandomText(std::mt19937_64& rng) {
  static const char* const kPieces[] = {"近", "似", "重", "复", "检", "测", "a",  "B",       "7",
                                        " ",  "，", "。", "\n", "é",  "😀",  "𠀀", "\xcc\x81"};
  constexpr size_t kCount = sizeof(kPieces) / sizeof(kPieces[0]);
  // Few distinct pieces make repeats likely; sometimes every piece.
  const size_t alphabet = 2 + rng() % (kCount - 1);
  const size_t length = rng() % 120;
  std::string text;
  for (size_t i = 0; i < length; ++i) text += kPieces[rng() % alphabet];
  return text;
}

void ExpectSameAsOracle(const FeatureExtractor& extractor, std::string_view text, int bits) {
  std::vector<WeightedFeature> features;
  extractor.Extract(text, &features);
  size_t count = 12345;
  const Fingerprint fp = extractor.SimHashOf(text, {}, bits, FeatureHashAlgorithm::kXxh3, &count);
  ASSERT_EQ(count, features.size()) << "text '" << text << "'";
  ASSERT_EQ(fp, testing::ScalarSimHash(features, bits)) << "text '" << text << "'";
  ASSERT_EQ(fp.bits(), bits);
}

TEST(CharGramSimHashTest, MatchesExtractAndScalarSimHash) {
  std::mt19937_64 rng(15);
  for (WeightScheme weights : {WeightScheme::kTf, WeightScheme::kUniform}) {
    for (int n : {1, 2, 3, 5, 8}) {
      FeatureOptions options{
          .kind = FeatureKind::kCharNgrams, .ngram = n, .weights = weights, .top_k = 0};
      auto extractor = FeatureExtractor::Create(options, nullptr, nullptr);
      ASSERT_TRUE(extractor.ok()) << extractor.status().ToString();
      for (int round = 0; round < 300; ++round) {
        const std::string text = RandomText(rng);
        ExpectSameAsOracle(**extractor, text, 64);
        ExpectSameAsOracle(**extractor, text, 128);
      }
      // No content, fewer characters than n, exactly n.
      for (const char* text : {"", " ，。 ", "近似", "近似重复检", "近似重复检测"}) {
        ExpectSameAsOracle(**extractor, text, 128);
      }
    }
  }
}

TEST(CharGramSimHashTest, OtherSchemesTakeTheGeneralPath) {
  // top_k, MD5 and tfidf are not counted by the fast path; SimHashOf must
  // still equal SimHash over Extract().
  IdfTable idf = IdfTable::FromEntries({{"近似重", 3.0}, {"似重复", 1.0}});
  std::mt19937_64 rng(16);
  for (const FeatureOptions& options :
       {FeatureOptions{
            .kind = FeatureKind::kCharNgrams, .ngram = 3, .weights = WeightScheme::kTf, .top_k = 4},
        FeatureOptions{.kind = FeatureKind::kCharNgrams,
        .ngram = 3,
        .weights = WeightScheme::kTfidf,
        .top_k = 0}}) {
    auto extractor = FeatureExtractor::Create(options, nullptr, &idf);
    ASSERT_TRUE(extractor.ok()) << extractor.status().ToString();
    for (int round = 0; round < 100; ++round) {
      const std::string text = RandomText(rng);
      ExpectSameAsOracle(**extractor, text, 64);
      std::vector<WeightedFeature> features;
      (*extractor)->Extract(text, &features);
      size_t count = 0;
      EXPECT_EQ((*extractor)->SimHashOf(text, {}, 64, FeatureHashAlgorithm::kMd5, &count),
                testing::ScalarSimHash(features, 64, FeatureHashAlgorithm::kMd5));
    }
  }
}

std::vector<uint64_t> OracleHashSet(const FeatureExtractor& extractor, std::string_view text,
                                    FeatureHashAlgorithm algorithm) {
  std::vector<WeightedFeature> features;
  extractor.Extract(text, &features);
  std::vector<uint64_t> out;
  for (const WeightedFeature& f : features) out.push_back(HashFeature(f.text, 64, algorithm).lo);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TEST(CharGramFeatureHashesTest, MatchesExtractHashedAndSorted) {
  std::mt19937_64 rng(27);
  IdfTable idf = IdfTable::FromEntries({{"近似重", 3.0}, {"似重复", 1.0}});
  std::vector<uint64_t> got;
  for (WeightScheme weights : {WeightScheme::kTf, WeightScheme::kUniform, WeightScheme::kTfidf}) {
    for (int n : {1, 2, 3, 5, 8}) {
      for (int top_k : {0, 4}) {
        FeatureOptions options{
            .kind = FeatureKind::kCharNgrams, .ngram = n, .weights = weights, .top_k = top_k};
        auto extractor = FeatureExtractor::Create(options, nullptr, &idf);
        ASSERT_TRUE(extractor.ok()) << extractor.status().ToString();
        std::vector<std::string> texts = {"", " ，。 ", "近似", "近似重复检", "近似重复检测"};
        for (int round = 0; round < 100; ++round) texts.push_back(RandomText(rng));
        // Long texts: thousands of n-grams, few distinct ones (large buckets)
        // or many.
        for (int round = 0; round < 4; ++round) {
          std::string text;
          for (int i = 0; i < 40; ++i) text += RandomText(rng);
          texts.push_back(text);
        }
        for (const std::string& text : texts) {
          for (FeatureHashAlgorithm algorithm :
               {FeatureHashAlgorithm::kXxh3, FeatureHashAlgorithm::kMd5}) {
            (*extractor)->FeatureHashes(text, {}, algorithm, &got);
            ASSERT_EQ(got, OracleHashSet(**extractor, text, algorithm))
                << "n " << n << " top_k " << top_k << " text '" << text << "'";
          }
        }
      }
    }
  }
}

TEST(CharGramFeatureHashesTest, ThucNewsMinHashSets) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  for (std::string_view name : {kMinHashMethod, kDefaultMethod}) {
    auto method = Method::FromPreset(name);
    ASSERT_TRUE(method.ok()) << method.status().ToString();
    auto pipeline = Pipeline::Create(method->pipeline);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    std::ifstream in(path);
    std::string line;
    int checked = 0;
    std::vector<uint64_t> got;
    while (std::getline(in, line)) {
      const std::string text = nlohmann::json::parse(line).at("text");
      std::vector<WeightedFeature> features;
      (*pipeline)->Features(text, &features);
      std::vector<uint64_t> want;
      for (const WeightedFeature& f : features) want.push_back(HashFeature(f.text, 64).lo);
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      (*pipeline)->FeatureSet(text, "", &got);
      ASSERT_EQ(got, want) << name << " line " << checked + 1;
      ++checked;
    }
    EXPECT_EQ(checked, 1000);
  }
}

TEST(CharGramSimHashTest, ThucNewsChars5) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  auto pipeline = Pipeline::Create(PipelineOptions());  // chars5
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  std::ifstream in(path);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    const std::string text = nlohmann::json::parse(line).at("text");
    std::vector<WeightedFeature> features;
    (*pipeline)->Features(text, &features);
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(text);
    ASSERT_EQ(fp.features, features.size()) << "line " << checked + 1;
    ASSERT_EQ(fp.fingerprint, testing::ScalarSimHash(features, 128)) << "line " << checked + 1;
    ++checked;
  }
  EXPECT_EQ(checked, 1000);
}

}  // namespace
}  // namespace neardup
