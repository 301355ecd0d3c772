// Copyright 2026 The neardup Authors.
//
// Properties of real fingerprints on the THUCNews sample (../shared/data):
// identical text gives distance 0, a 1 % edit of a long document a small
// distance, and unrelated documents sit near f/2. The distributions are
// printed so they can be reported (doc/pipeline.md, "Measured distance
// distributions"; the format itself: doc/fingerprint.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

std::vector<std::string> LoadTexts(const std::string& path, size_t min_bytes) {
  std::vector<std::string> texts;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::string text = nlohmann::json::parse(line)["text"];
    if (text.size() >= min_bytes) texts.push_back(std::move(text));
  }
  return texts;
}

// Splits UTF-8 text into code points.
std::vector<std::string> CodePoints(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    out.push_back(s.substr(i, len));
    i += len;
  }
  return out;
}

// Edits `share` of the characters: each edit replaces, deletes or inserts one
// character (drawn from the text itself), at random positions.
std::string Edit(const std::string& text, double share, std::mt19937_64* rng) {
  std::vector<std::string> chars = CodePoints(text);
  const size_t edits = std::max<size_t>(1, static_cast<size_t>(chars.size() * share));
  for (size_t e = 0; e < edits && !chars.empty(); ++e) {
    const size_t pos = (*rng)() % chars.size();
    const std::string donor = chars[(*rng)() % chars.size()];
    switch ((*rng)() % 3) {
      case 0:
        chars[pos] = donor;
        break;
      case 1:
        chars.erase(chars.begin() + static_cast<std::ptrdiff_t>(pos));
        break;
      default:
        chars.insert(chars.begin() + static_cast<std::ptrdiff_t>(pos), donor);
        break;
    }
  }
  std::string out;
  for (const std::string& c : chars) out += c;
  return out;
}

struct Summary {
  double mean = 0;
  int p50 = 0, p90 = 0, p99 = 0, max = 0;
};

Summary Summarize(std::vector<int> d) {
  std::sort(d.begin(), d.end());
  Summary s;
  for (int x : d) s.mean += x;
  s.mean /= static_cast<double>(d.size());
  s.p50 = d[d.size() / 2];
  s.p90 = d[d.size() * 9 / 10];
  s.p99 = d[d.size() * 99 / 100];
  s.max = d.back();
  return s;
}

void Print(const char* what, const PipelineOptions& o, const Summary& s) {
  std::printf("%-28s f=%-3d %-6s %-7s mean %.2f  p50 %d  p90 %d  p99 %d  max %d\n", what, o.bits,
              FeatureKindName(o.features).c_str(),
              std::string(WeightSchemeName(o.features.weights)).c_str(), s.mean, s.p50, s.p90,
              s.p99, s.max);
}

class PropertiesTest : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {
};

TEST_P(PropertiesTest, IdenticalEditedUnrelated) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  // Long documents: >= 800 characters (~2400 bytes), as seed 003.
  std::vector<std::string> texts = LoadTexts(path, 2400);
  const size_t limit = std::getenv("NEARDUP_SANITIZED") ? 60 : texts.size();
  if (texts.size() > limit) texts.resize(limit);
  ASSERT_GE(texts.size(), 50u);

  PipelineOptions options;
  options.bits = std::get<0>(GetParam());
  ASSERT_TRUE(ParseFeatureKind(std::get<1>(GetParam()), &options.features).ok());
  options.features.weights = *ParseWeightScheme(std::get<2>(GetParam()));
  options.features.top_k = options.features.weights == WeightScheme::kTfidf ? 20 : 0;
  auto pipeline = Pipeline::Create(options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().ToString();

  std::mt19937_64 rng(20261121);
  std::vector<Fingerprint> fps;
  std::vector<int> edited;
  for (const std::string& text : texts) {
    const Fingerprint a = (*pipeline)->Fingerprint(text).fingerprint;
    EXPECT_EQ(HammingDistance(a, (*pipeline)->Fingerprint(text).fingerprint), 0);
    edited.push_back(
        HammingDistance(a, (*pipeline)->Fingerprint(Edit(text, 0.01, &rng)).fingerprint));
    fps.push_back(a);
  }
  std::vector<int> unrelated;
  for (size_t i = 0; i + 1 < fps.size(); ++i) {
    for (size_t j = i + 1; j < std::min(fps.size(), i + 20); ++j) {
      unrelated.push_back(HammingDistance(fps[i], fps[j]));
    }
  }
  const Summary e = Summarize(edited), u = Summarize(unrelated);
  Print("1% edit (distance)", options, e);
  Print("unrelated pairs (distance)", options, u);
  const double f = options.bits;
  // A 1 % edit moves a fingerprint far less than an unrelated document does.
  EXPECT_LE(e.p50, f / 8);
  EXPECT_LT(e.p90, u.p50 / 2);
  if (options.features.kind == FeatureKind::kWords &&
      options.features.weights != WeightScheme::kTfidf) {
    // Raw counts of all words are dominated by function words (的, 了, 在)
    // that every Chinese text shares, so unrelated texts look alike: measured
    // mean 19 of 64 bits. This is why tfidf (or chars) is the default.
    EXPECT_GT(u.mean, f / 4);
  } else {
    // Unrelated documents: close to f/2 on average (within 15 %).
    EXPECT_GT(u.mean, f / 2 * 0.85);
    EXPECT_LT(u.mean, f / 2 * 1.15);
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, PropertiesTest,
                         ::testing::Values(std::make_tuple(64, "words", "tfidf"),
                                           std::make_tuple(128, "words", "tfidf"),
                                           std::make_tuple(64, "words", "tf"),
                                           std::make_tuple(64, "chars:3", "tf"),
                                           std::make_tuple(128, "chars:3", "uniform")));

}  // namespace
}  // namespace neardup
