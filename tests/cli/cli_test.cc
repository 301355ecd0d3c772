// Copyright 2026 The neardup Authors.
//
// End-to-end checks of the neardup tool: outputs, exit codes, bad input.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

using ::neardup::testing::Sanitized;

TEST(CliTest, HelpForEverySubcommand) {
  for (const char* cmd : {"segment", "keywords", "fingerprint", "compare"}) {
    const auto r = RunCli({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd;
  }
  EXPECT_EQ(RunCli({"--version"}).exit_code, 0);
  EXPECT_NE(RunCli({"fingerprint", "--no-such-option"}).exit_code, 0);
  EXPECT_NE(RunCli({}).exit_code, 0);
}

TEST(CliTest, SegmentMatchesJiebaOnAClassicSentence) {
  const auto r = RunCli({"segment", "-", "--quiet"}, "我来到北京清华大学\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["id"], "-");
  EXPECT_EQ(lines[0]["tokens"], nlohmann::json({"我", "来到", "北京", "清华大学", "\n"}));
  const auto pos = RunCli({"segment", "--pos", "--quiet", "-"}, "我来到北京清华大学");
  ASSERT_EQ(pos.exit_code, 0) << pos.err;
  EXPECT_EQ(ParseJsonLines(pos.out)[0]["tokens"][3], nlohmann::json({"清华大学", "nt"}));
}

TEST(CliTest, KeywordsAndFingerprintShapes) {
  const std::string doc =
      "{\"id\": \"d1\", \"text\": "
      "\"SimHash是一种局部敏感哈希算法，SimHash常用于网页去重和文本去重。\"}\n";
  const auto k = RunCli({"keywords", "--topk", "3", "--quiet", "-"}, doc);
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const auto kw = ParseJsonLines(k.out);
  ASSERT_EQ(kw.size(), 1u);
  EXPECT_EQ(kw[0]["id"], "d1");
  ASSERT_EQ(kw[0]["keywords"].size(), 3u);
  EXPECT_EQ(kw[0]["keywords"][0][0], "SimHash");
  EXPECT_GT(kw[0]["keywords"][0][1].get<double>(), 0.0);

  for (const char* bits : {"64", "128"}) {
    const auto f = RunCli({"fingerprint", "--bits", bits, "--quiet", "-"}, doc);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const auto fp = ParseJsonLines(f.out);
    ASSERT_EQ(fp.size(), 1u);
    EXPECT_EQ(fp[0]["fingerprint"].get<std::string>().size(), std::stoul(bits) / 4);
    EXPECT_GT(fp[0]["features"].get<int>(), 0);
  }
}

TEST(CliTest, BadInputIsReportedCountedAndStrictFails) {
  const std::string dir = MakeTempDir("cli_bad");
  WriteFile(dir + "/docs.jsonl",
            "{\"id\": \"ok\", \"text\": \"正常的文档\"}\n"
            "{\"id\": \"broken\", \"text\": \n"
            "{\"id\": \"other\", \"text\": \"另一篇正常的文档\"}\n"
            "{\"id\": \"empty\", \"text\": \"\"}\n");
  WriteFile(dir + "/binary.txt", std::string("abc\0def\xff", 8));
  const std::vector<std::string> args = {"fingerprint", dir + "/docs.jsonl", dir + "/binary.txt"};
  const auto r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("docs.jsonl:2: malformed JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NUL byte"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid UTF-8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 empty document"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("read 4 documents from 2 files"), std::string::npos) << r.err;
  const auto lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2]["id"], "empty");
  EXPECT_EQ(lines[2]["empty"], true);

  std::vector<std::string> strict = args;
  strict.push_back("--strict");
  EXPECT_EQ(RunCli(strict).exit_code, 3);
}

TEST(CliTest, OutputOrderDoesNotDependOnThreads) {
  std::string input;
  for (int i = 0; i < 2000; ++i) {
    input += "{\"id\": " + std::to_string(i) + ", \"text\": \"第" + std::to_string(i) +
             "篇文档讲述了近似重复检测与指纹索引的第" + std::to_string(i % 37) + "个例子\"}\n";
  }
  const auto one = RunCli({"fingerprint", "--threads", "1", "--quiet", "-"}, input);
  const auto four = RunCli({"fingerprint", "--threads", "4", "--quiet", "-"}, input);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, four.out);
  const auto lines = ParseJsonLines(one.out);
  ASSERT_EQ(lines.size(), 2000u);
  EXPECT_EQ(lines[1999]["id"], "1999");
}

TEST(CliTest, HugeSingleLineIsProcessed) {
  // 50 MB on one line (5 MB under the sanitizers, which are ~10x slower).
  const size_t target = Sanitized() ? (5u << 20) : (50u << 20);
  const std::string sentence = "近似重复文档检测需要稳定的指纹，";
  std::string text;
  text.reserve(target + sentence.size());
  for (int i = 0; text.size() < target; ++i) text += sentence + std::to_string(i);
  const std::string dir = MakeTempDir("cli_huge");
  WriteFile(dir + "/huge.jsonl", "{\"id\": \"huge\", \"text\": \"" + text + "\"}\n");
  const auto r = RunCli({"fingerprint", "--method", "tfidf", dir + "/huge.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["features"], 20);
}

TEST(CliTest, CompareIdenticalNearAndUnrelated) {
  const std::string a = "近似重复检测是搜索引擎和数据清洗中的常见任务，SimHash把文档压缩成指纹。";
  const auto same = RunCli({"compare", "--json", "--text", a, a});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const auto j = nlohmann::json::parse(same.out);
  EXPECT_EQ(j["distance"], 0);
  EXPECT_EQ(j["similarity"], 1.0);
  const auto unrelated =
      RunCli({"compare", "--json", "--text", a, "今天下午北京天气晴朗，适合外出骑自行车。"});
  ASSERT_EQ(unrelated.exit_code, 0);
  EXPECT_GT(nlohmann::json::parse(unrelated.out)["distance"].get<int>(), 10);
  const std::string dir = MakeTempDir("cli_compare");
  WriteFile(dir + "/a.txt", a);
  WriteFile(dir + "/b.txt", a);
  const auto files = RunCli({"compare", "--method", "tfidf", dir + "/a.txt", dir + "/b.txt"});
  ASSERT_EQ(files.exit_code, 0) << files.err;
  EXPECT_NE(files.out.find("distance: 0 of 64 bits"), std::string::npos) << files.out;
  EXPECT_NE(RunCli({"compare", dir + "/a.txt", dir + "/nope.txt"}).exit_code, 0);
}

TEST(CliTest, TraditionalAndSimplifiedAgreeWithT2s) {
  const std::string simplified = "列出目录内容，并按照名称排序显示文件信息。";
  const std::string traditional = "列出目錄內容，並按照名稱排序顯示檔案資訊。";
  const auto r = RunCli({"compare", "--json", "--t2s", "--text", simplified, traditional});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto without = RunCli({"compare", "--json", "--text", simplified, traditional});
  EXPECT_LT(nlohmann::json::parse(r.out)["distance"].get<int>(),
            nlohmann::json::parse(without.out)["distance"].get<int>());
}

TEST(CliTest, MissingDictionaryIsOneClearError) {
  const auto r = RunCli({"segment", "--jieba-dir", "/nonexistent/jieba", "-"}, "文本");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("python3-jieba"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neardup
