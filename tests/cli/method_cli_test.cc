// Copyright 2026 The neardup Authors.
//
// The method an index stores is the one its queries use: every setting
// (entropy threshold, marker words, IDF table) and from any working directory.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::MakeTempDir;
using testing::ParseJsonLines;
using testing::RunCli;
using testing::WriteFile;

// 50 distinct Chinese documents made of sentences drawn in a fixed pattern.
std::string Corpus() {
  const char* sentences[] = {
      "北京大学的研究人员发表了关于气候变化的新论文。",
      "上海的房价在过去一年里上涨了百分之五。",
      "这家公司计划明年在深圳建立新的研发中心。",
      "足球比赛在周末吸引了数万名观众。",
      "新的高速铁路将把两座城市的距离缩短到一小时。",
      "科学家在深海发现了一种新的鱼类。",
      "政府宣布了支持中小企业发展的多项措施。",
      "这部电影讲述了一个普通家庭的故事。",
      "医院引进了先进的诊断设备来提高效率。",
      "学生们在暑假参加了志愿服务活动。",
      "股市今天早盘低开，午后逐渐回升。",
      "博物馆展出了一批珍贵的古代文物。",
  };
  std::string out;
  for (int d = 0; d < 50; ++d) {
    std::string text;
    for (int s = 0; s < 5; ++s) text += sentences[(d * 7 + s * (d % 5 + 1)) % 12];
    text += "编号" + std::to_string(d * 7919) + "。";
    out += nlohmann::json({{"id", "d" + std::to_string(d)}, {"text", text}}).dump() + "\n";
  }
  return out;
}

// How many documents find themselves at distance 0.
int SelfMatches(const std::string& query_out) {
  int n = 0;
  for (const nlohmann::json& line : ParseJsonLines(query_out)) {
    for (const nlohmann::json& m : line["matches"]) {
      if (m["id"] == line["id"] && m["distance"] == 0) ++n;
    }
  }
  return n;
}

TEST(MethodCliTest, IndexKeepsEverySettingOfItsMethod) {
  const std::string dir = MakeTempDir("method_cli_entropy");
  WriteFile(dir + "/docs.jsonl", Corpus());
  // Before the method was stored whole, the entropy threshold was lost and
  // only 29 of 50 documents found themselves.
  auto built = RunCli({"index", "build", dir + "/docs.jsonl", "-o", dir + "/e.idx", "--method",
                       "esimhash", "--entropy-threshold", "5", "-q"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  auto query = RunCli({"index", "query", dir + "/e.idx", dir + "/docs.jsonl", "-k", "0", "-q"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(SelfMatches(query.out), 50);
  auto stats = RunCli({"index", "stats", dir + "/e.idx", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const std::string method = nlohmann::json::parse(stats.out)["method"];
  EXPECT_NE(method.find("entropy_threshold=5"), std::string::npos) << method;
  std::filesystem::remove_all(dir);
}

TEST(MethodCliTest, RelativeIdfWorksFromAnyDirectory) {
  const std::string dir = MakeTempDir("method_cli_idf");
  WriteFile(dir + "/docs.jsonl", Corpus());
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto idf = RunCli({"idf", "build", "docs.jsonl", "-o", "my_idf.txt", "-q"});
  ASSERT_EQ(idf.exit_code, 0) << idf.err;
  auto built = RunCli({"index", "build", "docs.jsonl", "-o", "t.idx", "--method", "tfidf", "--idf",
                       "my_idf.txt", "-q"});
  std::filesystem::current_path("/");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  auto query = RunCli({"index", "query", dir + "/t.idx", dir + "/docs.jsonl", "-k", "0", "-q"});
  EXPECT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(SelfMatches(query.out), 50);
  // A changed IDF table would give other fingerprints: refused, with the reason.
  WriteFile(dir + "/my_idf.txt", "北京 1.0\n");
  auto changed = RunCli({"index", "query", dir + "/t.idx", dir + "/docs.jsonl", "-q"});
  std::filesystem::current_path(before);
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_NE(changed.err.find("has changed"), std::string::npos) << changed.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neardup
