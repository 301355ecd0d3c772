// Copyright 2026 The neardup Authors.
//
// End-to-end checks of the weighting schemes' CLI: --method improved |
// esimhash | sentence, --title-first-line, idf build and explain.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

std::vector<nlohmann::json> ParseLines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(WeightsCliTest, NewMethodsFingerprint) {
  const std::string doc =
      "{\"id\": \"d\", \"title\": \"数学之美\", \"text\": "
      "\"因此学生学习数学，学生喜欢数学。老师喜欢音乐！\"}\n";
  struct Case {
    const char* method;
    size_t hex_digits;
    int features;
  };
  // sentence: 因此学生学习数学， is not a sentence end; two sentences.
  for (const Case& c :
       {Case{"improved", 16, 7}, Case{"esimhash", 32, 7}, Case{"sentence", 16, 2}}) {
    const auto r = RunCli({"fingerprint", "-q", "--method", c.method, "-"}, doc);
    ASSERT_EQ(r.exit_code, 0) << c.method << ": " << r.err;
    const auto lines = ParseLines(r.out);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["fingerprint"].get<std::string>().size(), c.hex_digits) << c.method;
    EXPECT_EQ(lines[0]["features"], c.features) << c.method;
  }
  // The title matters to improved weights: the same text without it differs.
  const std::string untitled =
      "{\"id\": \"d\", \"text\": \"因此学生学习数学，学生喜欢数学。老师喜欢音乐！\"}\n";
  const auto with = RunCli({"fingerprint", "-q", "--method", "improved", "-"}, doc);
  const auto without = RunCli({"fingerprint", "-q", "--method", "improved", "-"}, untitled);
  EXPECT_NE(ParseLines(with.out)[0]["fingerprint"], ParseLines(without.out)[0]["fingerprint"]);
  // ... and not to tfidf.
  const auto t1 = RunCli({"fingerprint", "-q", "--method", "tfidf", "-"}, doc);
  const auto t2 = RunCli({"fingerprint", "-q", "--method", "tfidf", "-"}, untitled);
  EXPECT_EQ(ParseLines(t1.out)[0]["fingerprint"], ParseLines(t2.out)[0]["fingerprint"]);
  // Bad combinations and a missing lexicon are clear errors.
  const auto bad =
      RunCli({"fingerprint", "-q", "--features", "chars:3", "--weights", "entropy", "-"}, doc);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("word features"), std::string::npos) << bad.err;
  const std::string empty_dir = MakeTempDir("no_data");
  const auto missing =
      RunCli({"fingerprint", "-q", "--method", "improved", "--data-dir", empty_dir, "-"}, doc);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("marker_words.txt"), std::string::npos) << missing.err;
}

TEST(WeightsCliTest, TitleFirstLine) {
  const std::string dir = MakeTempDir("title_first_line");
  WriteFile(dir + "/a.txt", "数学之美\n因此学生学习数学，学生喜欢数学。老师喜欢音乐！\n");
  WriteFile(dir + "/b.jsonl",
            "{\"id\": \"b\", \"title\": \"数学之美\", \"text\": "
            "\"数学之美\\n因此学生学习数学，学生喜欢数学。老师喜欢音乐！\\n\"}\n");
  const auto plain = RunCli({"fingerprint", "-q", "--method", "improved", dir + "/a.txt"});
  const auto titled =
      RunCli({"fingerprint", "-q", "--method", "improved", "--title-first-line", dir + "/a.txt"});
  const auto json = RunCli({"fingerprint", "-q", "--method", "improved", dir + "/b.jsonl"});
  ASSERT_EQ(titled.exit_code, 0) << titled.err;
  // The first line as title == the JSONL title; without the flag: no title.
  EXPECT_EQ(ParseLines(titled.out)[0]["fingerprint"], ParseLines(json.out)[0]["fingerprint"]);
  EXPECT_NE(ParseLines(titled.out)[0]["fingerprint"], ParseLines(plain.out)[0]["fingerprint"]);
}

TEST(WeightsCliTest, IdfBuildRoundTrip) {
  const std::string dir = MakeTempDir("idf_build");
  WriteFile(dir + "/corpus.jsonl",
            "{\"id\": 1, \"text\": \"学生喜欢数学，学生喜欢数学。\"}\n"
            "{\"id\": 2, \"text\": \"学生喜欢音乐\"}\n"
            "{\"id\": 3, \"text\": \"老师\"}\n");
  const auto r = RunCli(
      {"idf", "build", dir + "/corpus.jsonl", "-o", dir + "/idf.txt", "--formula", "seed000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 5 words from 3 documents"), std::string::npos) << r.err;
  // log(3/2 + 0.01) and log(3/1 + 0.01), shortest round-trip decimals.
  const std::string table = ReadFile(dir + "/idf.txt");
  std::istringstream in(table);
  std::map<std::string, double> idf;
  std::string word;
  double value;
  while (in >> word >> value) idf[word] = value;
  ASSERT_EQ(idf.size(), 5u);
  EXPECT_DOUBLE_EQ(idf["学生"], std::log(1.51));
  EXPECT_DOUBLE_EQ(idf["老师"], std::log(3.01));
  // --idf uses it: keywords' weights are tf * the trained idf.
  const auto k = RunCli({"keywords", "-q", "--idf", dir + "/idf.txt", "-"}, "老师老师学生\n");
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const auto kw = ParseLines(k.out)[0]["keywords"];
  ASSERT_EQ(kw.size(), 2u);
  EXPECT_EQ(kw[0][0], "老师");
  EXPECT_DOUBLE_EQ(kw[0][1].get<double>(), 2.0 / 3 * std::log(3.01));
  // seed003 is the default formula.
  ASSERT_EQ(
      RunCli({"idf", "build", "-q", dir + "/corpus.jsonl", "-o", dir + "/idf3.txt"}).exit_code, 0);
  EXPECT_NE(ReadFile(dir + "/idf3.txt").find("学生 0\n"), std::string::npos);  // log(3/3)
  // Errors: bad formula, no -o, a corrupt table named with its line.
  EXPECT_EQ(RunCli({"idf", "build", dir + "/corpus.jsonl", "-o", dir + "/x", "--formula", "bm25"})
                .exit_code,
            2);
  EXPECT_EQ(RunCli({"idf", "build", dir + "/corpus.jsonl"}).exit_code, 2);
  WriteFile(dir + "/bad.txt", "学生 1\n老师 x\n");
  const auto bad = RunCli(
      {"fingerprint", "--method", "tfidf", "-q", "--idf", dir + "/bad.txt", "-"}, "学生老师\n");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find(dir + "/bad.txt:2:"), std::string::npos) << bad.err;
}

TEST(WeightsCliTest, ExplainShowsWhatPushesFingerprintsApart) {
  const auto r = RunCli({"explain", "--method", "esimhash", "--json", "--text",
                         "能力比学历重要性高", "学历比能力重要性高"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "esimhash");
  EXPECT_EQ(j["bits"], 128);
  EXPECT_GT(j["distance"].get<int>(), 0);
  ASSERT_EQ(j["features"].size(), 3u);
  // 能力 and 学历 swapped positions; 重要性 kept its rank and pushes nothing.
  for (const auto& f : j["features"]) {
    if (f["feature"] == "重要性") {
      EXPECT_EQ(f["status"], "shared");
      EXPECT_DOUBLE_EQ(f["push"].get<double>(), 0.0);
    } else {
      EXPECT_EQ(f["status"], "shared, moved");
      EXPECT_GT(f["push"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(j["differing_bits"].size(), j["distance"].get<size_t>());
  // Every differing bit: V_a and V_b on opposite sides, deciders listed.
  for (const auto& b : j["differing_bits"]) {
    EXPECT_NE(b["a"], b["b"]);
    EXPECT_EQ(b["v_a"].get<double>() > 0, b["a"] == 1);
    EXPECT_FALSE(b["decided_by"].empty());
  }
  // tfidf: equal fingerprints.
  const auto same = RunCli({"explain", "--method", "tfidf", "--json", "--text",
                            "能力比学历重要性高", "学历比能力重要性高"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(nlohmann::json::parse(same.out)["distance"], 0);
  // Human-readable, files.
  const std::string dir = MakeTempDir("explain");
  WriteFile(dir + "/a.txt", "学生喜欢数学。老师喜欢音乐。");
  WriteFile(dir + "/b.txt", "学生喜欢物理。老师喜欢音乐。");
  const auto text = RunCli({"explain", "--method", "improved", dir + "/a.txt", dir + "/b.txt"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("only a"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("only b"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("数学"), std::string::npos);
  EXPECT_NE(text.out.find("pushing the fingerprints apart"), std::string::npos) << text.out;
  EXPECT_NE(RunCli({"explain", "--text", "一"}).exit_code, 0);  // CLI11: two operands
}

}  // namespace
}  // namespace neardup
