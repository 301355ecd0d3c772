// Copyright 2026 The neardup Authors.
//
// `neardup dedup --method minhash`: the output shape (jaccard where SimHash
// has distance), and the commands that do not support minhash.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;

const char* kBase =
    "近似重复检测是搜索引擎和数据清洗中的常见任务。SimHash把一篇文档压缩成六十四位的指纹，"
    "两篇文档的指纹越接近，内容就越相似。网页爬虫用它判断新抓取的页面是否已经见过，"
    "语料清洗用它删除转载和镜像造成的重复文本。";

std::string Corpus() {
  const std::string base = kBase;
  return "{\"id\": \"a\", \"text\": \"" + base + "\"}\n" +
         "{\"id\": \"b\", \"text\": "
         "\"今天下午北京天气晴朗，气温二十五摄氏度，适合外出散步和骑自行车。\"}\n" +
         "{\"id\": \"c\", \"text\": \"" + base + "本文还讨论了索引。\"}\n" +
         "{\"id\": \"d\", \"text\": \"\"}\n" + "{\"id\": \"e\", \"text\": \"" + base + "\"}\n";
}

TEST(MinHashCliTest, DedupRecordsPairsAndClusters) {
  const std::string dir = MakeTempDir("minhash_cli");
  const auto r = RunCli(
      {"dedup", "--method", "minhash,threshold=0.7", "-", "--pairs-out", dir + "/pairs.jsonl",
       "--clusters-out", dir + "/clusters.jsonl", "--unique-out", dir + "/unique.jsonl"},
      Corpus());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = ParseJsonLines(r.out);
  ASSERT_EQ(records.size(), 5u);
  for (const auto& rec : records) {
    EXPECT_FALSE(rec.contains("fingerprint")) << rec.dump();
    EXPECT_FALSE(rec.contains("distance")) << rec.dump();
    EXPECT_TRUE(rec.contains("jaccard")) << rec.dump();
  }
  EXPECT_EQ(records[0]["duplicate"], false);
  EXPECT_EQ(records[0]["jaccard"], nullptr);
  EXPECT_EQ(records[4]["duplicate"], true);
  EXPECT_EQ(records[4]["nearest"], "a");
  EXPECT_EQ(records[4]["jaccard"], 1.0);
  EXPECT_EQ(records[2]["duplicate"], true) << records[2].dump();
  EXPECT_EQ(records[2]["nearest"], "a");
  EXPECT_GE(records[2]["jaccard"].get<double>(), 0.7);
  EXPECT_LT(records[2]["jaccard"].get<double>(), 1.0);
  EXPECT_EQ(records[1]["duplicate"], false);
  EXPECT_EQ(records[3]["empty"], true);

  const auto pairs = ParseJsonLines(ReadFile(dir + "/pairs.jsonl"));
  ASSERT_EQ(pairs.size(), 3u);  // a-c, a-e, c-e
  for (const auto& p : pairs) {
    EXPECT_GE(p["jaccard"].get<double>(), 0.7) << p.dump();
    EXPECT_FALSE(p.contains("distance"));
  }
  const auto clusters = ParseJsonLines(ReadFile(dir + "/clusters.jsonl"));
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0]["size"], 3);
  EXPECT_EQ(clusters[0]["kept"], "a");
  EXPECT_EQ(ParseJsonLines(ReadFile(dir + "/unique.jsonl")).size(), 3u);
  // The summary states the bands and the recall at the threshold; so does
  // --summary-json.
  const auto j = RunCli({"dedup", "--method", "minhash,threshold=0.7", "-", "-o", "/dev/null",
                         "--summary-json", dir + "/summary.json"},
                        Corpus());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto summary = nlohmann::json::parse(ReadFile(dir + "/summary.json"));
  EXPECT_EQ(summary["duplicates"], 2);
  EXPECT_EQ(summary["join"]["algorithm"], "minhash bands");
  EXPECT_EQ(summary["join"]["threshold"], 0.7);
  EXPECT_GT(summary["join"]["recall_at_threshold"].get<double>(), 0.4);
  EXPECT_FALSE(summary.contains("k"));
  EXPECT_NE(r.err.find("bands x"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("recall at the threshold"), std::string::npos) << r.err;
}

TEST(MinHashCliTest, ExactVerificationAndUsageErrors) {
  auto r = RunCli({"dedup", "--method", "minhash,verify=exact,threshold=0.7", "-"}, Corpus());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out)[2]["duplicate"], true);
  r = RunCli({"dedup", "--method", "minhash", "-k", "3", "-"}, Corpus());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-k does not apply to the minhash method"), std::string::npos) << r.err;
  r = RunCli({"dedup", "--method", "minhash", "--mode", "stream", "-"}, Corpus());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cluster only"), std::string::npos) << r.err;
  r = RunCli({"dedup", "--method", "minhash", "--exact", "-"}, Corpus());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("minhash,recall=R"), std::string::npos) << r.err;
  r = RunCli({"dedup", "--method", "minhash,bands=100,rows=100", "-"}, Corpus());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bands x rows <= num_perm"), std::string::npos) << r.err;
}

TEST(MinHashCliTest, IndexAndFingerprintSayNotSupported) {
  const std::string dir = MakeTempDir("minhash_cli_index");
  auto r = RunCli({"index", "build", "--method", "minhash", "-", "-o", dir + "/x.idx"}, Corpus());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("index: the minhash method is supported by dedup only"), std::string::npos)
      << r.err;
  r = RunCli({"fingerprint", "--method", "minhash", "-"}, Corpus());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("fingerprint: the minhash method is supported by dedup only"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace neardup
