// Copyright 2026 The neardup Authors.
//
// Fingerprints are stored by users, so they must not drift between versions.
// tests/data/golden_fingerprints.jsonl was made by scripts/make_golden.sh from
// tests/data/golden_input.jsonl; this test recomputes every one through the
// library and compares.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

std::map<std::string, std::string> LoadInputs() {
  std::map<std::string, std::string> texts;
  std::ifstream in(testing::SourceDir() + "/tests/data/golden_input.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    texts[j["id"]] = j["text"];
  }
  return texts;
}

// The config column: "method=NAME" (a preset's own settings), or
// "key=value ..." overriding the tfidf preset, both read as a Method.
PipelineOptions ParseConfig(const std::string& config) {
  std::string text = "tfidf";
  if (config.starts_with("method=")) {
    text = config.substr(7);
  } else {
    std::istringstream in(config);
    std::string item;
    while (in >> item) text += "," + item;
  }
  auto method = Method::Parse(text);
  EXPECT_TRUE(method.ok()) << config << ": " << method.status().ToString();
  return method.ok() ? method->pipeline : PipelineOptions();
}

TEST(GoldenTest, FingerprintsDoNotDrift) {
  const std::map<std::string, std::string> texts = LoadInputs();
  ASSERT_FALSE(texts.empty());
  std::ifstream in(testing::SourceDir() + "/tests/data/golden_fingerprints.jsonl");
  ASSERT_TRUE(in) << "missing tests/data/golden_fingerprints.jsonl";
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines;
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    const nlohmann::json g = nlohmann::json::parse(line);
    const std::string config = g["config"];
    auto& pipeline = pipelines[config];
    if (!pipeline) {
      auto created = Pipeline::Create(ParseConfig(config));
      ASSERT_TRUE(created.ok()) << created.status().ToString();
      pipeline = std::move(*created);
    }
    const DocumentFingerprint fp = pipeline->Fingerprint(texts.at(g["id"]));
    EXPECT_EQ(fp.fingerprint.ToHex(), g["fingerprint"]) << config << " id=" << g["id"];
    EXPECT_EQ(fp.features, g["features"].get<size_t>()) << config << " id=" << g["id"];
    ++checked;
  }
  // 24 option combinations and the 3 method presets improved, esimhash, sentence.
  EXPECT_EQ(checked, (24 + 3) * static_cast<int>(texts.size()));
}

}  // namespace
}  // namespace neardup
