// Copyright 2026 The neardup Authors.
//
// End-to-end checks of `neardup dedup` and `neardup index`.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

const char* kBase =
    "近似重复检测是搜索引擎和数据清洗中的常见任务。SimHash把一篇文档压缩成六十四位的指纹，"
    "两篇文档的指纹越接近，内容就越相似。网页爬虫用它判断新抓取的页面是否已经见过，"
    "语料清洗用它删除转载和镜像造成的重复文本。";

std::string Corpus() {
  std::string near = kBase;
  near += "本文还讨论了索引。";
  return "{\"id\": \"a\", \"text\": \"" + std::string(kBase) + "\", \"score\": 1}\n" +
         "{\"id\": \"b\", \"text\": "
         "\"今天下午北京天气晴朗，气温二十五摄氏度，适合外出散步和骑自行车。\", "
         "\"score\": 5}\n" +
         "{\"id\": \"c\", \"text\": \"" + near + "\", \"score\": 9}\n" +
         "{\"id\": \"d\", \"text\": \"\"}\n" + "{\"id\": \"e\", \"text\": \"" + kBase + "\"}\n";
}

TEST(DedupCliTest, ClusterModeRecordsAndOutputs) {
  const std::string dir = MakeTempDir("dedup_cli");
  const auto r =
      RunCli({"dedup", "--method", "tfidf", "-", "-k", "6", "--unique-out", dir + "/unique.jsonl",
              "--pairs-out", dir + "/pairs.jsonl", "--clusters-out", dir + "/clusters.jsonl"},
             Corpus());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = ParseJsonLines(r.out);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0]["duplicate"], false);
  EXPECT_EQ(records[0]["nearest"], nullptr);
  EXPECT_EQ(records[4]["duplicate"], true);
  EXPECT_EQ(records[4]["nearest"], "a");
  EXPECT_EQ(records[4]["distance"], 0);
  EXPECT_EQ(records[2]["duplicate"], true) << records[2].dump();
  EXPECT_EQ(records[2]["cluster"], records[0]["cluster"]);
  EXPECT_EQ(records[1]["duplicate"], false);
  EXPECT_EQ(records[3]["empty"], true);
  EXPECT_EQ(records[3]["duplicate"], false);
  const auto unique = ParseJsonLines(ReadFile(dir + "/unique.jsonl"));
  ASSERT_EQ(unique.size(), 3u);
  EXPECT_EQ(unique[0]["id"], "a");
  EXPECT_EQ(unique[1]["id"], "b");
  EXPECT_EQ(unique[2]["id"], "d");
  EXPECT_EQ(ParseJsonLines(ReadFile(dir + "/pairs.jsonl")).size(), 3u);
  const auto clusters = ParseJsonLines(ReadFile(dir + "/clusters.jsonl"));
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0]["size"], 3);
  EXPECT_NE(r.err.find("5 documents: 3 kept, 2 near-duplicates in 1 clusters"), std::string::npos)
      << r.err;
}

// Ids 5 and "5" are one id: dedup warns (it said nothing while `index build`
// refused the same input) and still handles both documents.
TEST(DedupCliTest, RepeatedIdsAreWarnedAbout) {
  const std::string text = "近重复检测的测试文本，这是同一段内容，用来检验重复的编号。";
  const std::string input = "{\"id\":5,\"text\":\"" + text + "\"}\n{\"id\":\"5\",\"text\":\"" +
                            text + "\"}\n{\"id\":\"6\",\"text\":\"另一段不同的文字。\"}\n";
  auto r = RunCli({"dedup", "-", "-q"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 1 document(s) repeat an earlier document's id (first: \"5\", "
                       "documents 1 and 2"),
            std::string::npos)
      << r.err;
  const auto records = ParseJsonLines(r.out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_TRUE(records[1]["duplicate"].get<bool>());
  // Unique ids: no warning.
  r = RunCli({"dedup", "-", "-q"}, "{\"id\":\"a\",\"text\":\"" + text +
                                       "\"}\n{\"id\":\"b\",\"text\":\"" + text + "\"}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("repeat an earlier"), std::string::npos) << r.err;
}

TEST(DedupCliTest, KeepPolicies) {
  const auto by_field = RunCli(
      {"dedup", "--method", "tfidf", "-", "-k", "6", "--keep", "field:score", "-q"}, Corpus());
  ASSERT_EQ(by_field.exit_code, 0) << by_field.err;
  const auto records = ParseJsonLines(by_field.out);
  EXPECT_EQ(records[2]["duplicate"], false);  // c has the highest score of its cluster
  EXPECT_EQ(records[0]["nearest"], "c");
  const auto longest =
      RunCli({"dedup", "--method", "tfidf", "-", "-k", "6", "--keep", "longest", "-q"}, Corpus());
  EXPECT_EQ(ParseJsonLines(longest.out)[2]["duplicate"], false);
  const auto stream =
      RunCli({"dedup", "--method", "tfidf", "-", "-k", "6", "--mode", "stream", "-q"}, Corpus());
  ASSERT_EQ(stream.exit_code, 0) << stream.err;
  EXPECT_EQ(ParseJsonLines(stream.out)[4]["nearest"], "a");
  EXPECT_NE(RunCli({"dedup", "--method", "tfidf", "-", "--keep", "biggest"}, Corpus()).exit_code,
            0);
  EXPECT_NE(RunCli({"dedup", "--method", "tfidf", "-", "-k", "17"}, Corpus()).exit_code, 0);
}

// --cluster center: every duplicate within k of the document it is
// attributed to, which is kept; an unknown rule is a usage error.
TEST(DedupCliTest, ClusterCenter) {
  const auto r =
      RunCli({"dedup", "--method", "tfidf", "-", "-k", "6", "--cluster", "center", "-q"}, Corpus());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = ParseJsonLines(r.out);
  ASSERT_EQ(records.size(), 5u);
  std::map<std::string, bool> duplicate;
  for (const auto& rec : records) duplicate[rec["id"]] = rec["duplicate"];
  size_t duplicates = 0;
  for (const auto& rec : records) {
    if (!rec["duplicate"]) continue;
    ++duplicates;
    EXPECT_LE(rec["distance"].get<int>(), 6) << rec.dump();
    EXPECT_FALSE(duplicate[rec["nearest"]]) << rec.dump();
  }
  EXPECT_EQ(duplicates, 2u);  // c and e, of a
  EXPECT_EQ(records[4]["nearest"], "a");
  EXPECT_EQ(RunCli({"dedup", "--method", "tfidf", "-", "--cluster", "chain"}, Corpus()).exit_code,
            2);
}

TEST(IndexCliTest, BuildQueryAddRemoveStats) {
  const std::string dir = MakeTempDir("index_cli");
  const std::string idx = dir + "/corpus.idx";
  WriteFile(dir + "/corpus.jsonl", Corpus());
  auto r = RunCli(
      {"index", "build", "--method", "tfidf", dir + "/corpus.jsonl", "-o", idx, "--max-k", "6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string query = "{\"id\": \"q\", \"text\": \"" + std::string(kBase) + "\"}\n";
  r = RunCli({"index", "query", idx, "-", "-k", "6", "-q"}, query);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["id"], "q");
  ASSERT_EQ(lines[0]["matches"].size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["matches"][0]["distance"], 0);

  r = RunCli({"index", "remove", idx, "a", "e", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli({"index", "query", idx, "-", "-k", "6", "-q"}, query);
  lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines[0]["matches"].size(), 1u) << r.out;
  EXPECT_EQ(lines[0]["matches"][0]["id"], "c");

  r = RunCli({"index", "add", idx, "-", "-q"}, query);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli({"index", "stats", idx, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  EXPECT_EQ(stats["documents"], 3);  // b, c, q (d is empty and never indexed)
  EXPECT_EQ(stats["max_k"], 6);

  EXPECT_NE(RunCli({"index", "query", idx, "-", "-k", "7"}, query).exit_code, 0);
  WriteFile(dir + "/corrupt.idx", "NDUPIDX1 not really");
  WriteFile(dir + "/corrupt.idx.ids", "{}\n");
  r = RunCli({"index", "stats", dir + "/corrupt.idx"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("corrupt.idx"), std::string::npos) << r.err;
}

TEST(IndexCliTest, FromFingerprintJsonl) {
  const std::string dir = MakeTempDir("index_fp");
  WriteFile(dir + "/fp.jsonl",
            "{\"id\": \"x\", \"fingerprint\": \"00000000000000ff\"}\n"
            "{\"id\": \"y\", \"fingerprint\": \"00000000000000fe\"}\n"
            "{\"id\": \"bad\", \"fingerprint\": \"xyz\"}\n");
  auto r = RunCli({"index", "build", "--method", "tfidf", "--fingerprints", dir + "/fp.jsonl", "-o",
                   dir + "/i.idx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("fp.jsonl:3"), std::string::npos) << r.err;
  r = RunCli({"index", "query", dir + "/i.idx", "--fingerprints", "-", "-k", "1", "-q"},
             "{\"id\": \"q\", \"fingerprint\": \"00000000000000ff\"}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out)[0]["matches"].size(), 2u);
}

// index check --add-new: a document is added only when nothing within k is
// indexed, earlier documents of the run included; without --add-new it is a
// query that also says "added": false.
TEST(IndexCliTest, CheckAddsNewDocumentsOnly) {
  const std::string dir = MakeTempDir("index_check");
  WriteFile(dir + "/fp.jsonl", "{\"id\": \"x\", \"fingerprint\": \"00000000000000ff\"}\n");
  auto r = RunCli({"index", "build", "--method", "tfidf", "--fingerprints", dir + "/fp.jsonl", "-o",
                   dir + "/i.idx", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string input =
      "{\"id\": \"near-x\", \"fingerprint\": \"00000000000000fe\"}\n"
      "{\"id\": \"new\", \"fingerprint\": \"f0f0f0f0f0f0f0f0\"}\n"
      "{\"id\": \"near-new\", \"fingerprint\": \"f0f0f0f0f0f0f0f1\"}\n";
  r = RunCli({"index", "check", dir + "/i.idx", "--fingerprints", "-", "-k", "2"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = ParseJsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["matches"][0]["id"], "x");
  EXPECT_EQ(lines[1]["added"], false);
  EXPECT_TRUE(lines[2]["matches"].empty());  // nothing added: "new" is not indexed

  r = RunCli({"index", "check", dir + "/i.idx", "--fingerprints", "-", "-k", "2", "--add-new"},
             input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = ParseJsonLines(r.out);
  EXPECT_EQ(lines[0]["added"], false);
  EXPECT_EQ(lines[1]["added"], true);
  EXPECT_EQ(lines[2]["added"], false);
  EXPECT_EQ(lines[2]["matches"][0]["id"], "new");
  r = RunCli({"index", "stats", dir + "/i.idx", "--json"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["documents"], 2);

  // An id already indexed is a usage error unless --replace.
  r = RunCli({"index", "check", dir + "/i.idx", "--fingerprints", "-", "--add-new"},
             "{\"id\": \"x\", \"fingerprint\": \"0f0f0f0f0f0f0f0f\"}\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--replace"), std::string::npos) << r.err;
  r = RunCli({"index", "check", dir + "/i.idx", "--fingerprints", "-", "--add-new", "--replace"},
             "{\"id\": \"x\", \"fingerprint\": \"0f0f0f0f0f0f0f0f\"}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out)[0]["added"], true);

  // The CLI defects of issue 12: -o of add is refused, build -o - is refused.
  r = RunCli({"index", "add", dir + "/i.idx", "--fingerprints", "-", "-o", dir + "/out"}, input);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunCli({"index", "build", "--fingerprints", dir + "/fp.jsonl", "-o", "-"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunCli({"index", "build", "--help"});
  EXPECT_NE(r.out.find("not -"), std::string::npos) << r.out;
}

// The summary states the rule and the largest cluster, and warns when it has
// more than 1,000 members (kLargeClusterWarning).
TEST(DedupCliTest, SummaryStatesTheLargestClusterAndWarnsAboveAThousand) {
  const std::string dir = MakeTempDir("dedup_largest");
  std::string copies;
  for (int i = 0; i < 1001; ++i) copies += "the same notice of one company, copied\n";
  copies += "another text altogether, with nothing in common\n";
  const auto r = RunCli({"dedup", "-", "--input-format", "lines", "--summary-json",
                         dir + "/summary.json", "-o", dir + "/records.jsonl"},
                        copies);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("center; largest cluster 1001)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: the largest cluster has 1001 documents"), std::string::npos)
      << r.err;
  const auto summary = nlohmann::json::parse(ReadFile(dir + "/summary.json"));
  EXPECT_EQ(summary["largest_cluster"], 1001);
  EXPECT_EQ(summary["cluster_rule"], "center");
  copies.erase(0, 39 * 2);  // 999 copies (39 bytes a line): no warning
  const auto small =
      RunCli({"dedup", "-", "--input-format", "lines", "-o", dir + "/small.jsonl"}, copies);
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_NE(small.err.find("largest cluster 999)"), std::string::npos) << small.err;
  EXPECT_EQ(small.err.find("warning"), std::string::npos) << small.err;
}

// The short-document rule the job ran (the default resolved by the
// library, ResolveShortRule) is in the summary line and --summary-json: on
// by the sketch rule over every document at 0.52 for chars5u in cluster mode, off with its reason
// for a 64-bit method or stream mode, as given when given; a bad value is a usage error.
TEST(DedupCliTest, SummaryNamesTheShortRuleThatRan) {
  const std::string dir = MakeTempDir("dedup_short_rule");
  const auto rule_of = [&](std::vector<std::string> args, const std::string& words) {
    std::vector<std::string> argv = {"dedup",        "-", "-o", dir + "/r.jsonl", "--summary-json",
                                     dir + "/s.json"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = RunCli(argv, Corpus());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    return nlohmann::json::parse(ReadFile(dir + "/s.json"))["short_rule"];
  };
  EXPECT_EQ(
      rule_of({}, "; short-document rule sketch, every document, Jaccard >= 0.52 (default): "),
      nlohmann::json(
          {{"rule", "sketch"}, {"features", 1000000}, {"jaccard", 0.52}, {"default", true}}));
  EXPECT_EQ(
      rule_of({"--method", "tfidf", "-k", "3"},
              "; short-document rule off (default: 64-bit fingerprints);"),
      nlohmann::json({{"rule", "off"}, {"default", true}, {"off_because", "64-bit fingerprints"}}));
  EXPECT_EQ(rule_of({"-k", "20"},
                    "short-document rule off (default: k below the method's 28)")["off_because"],
            "k below the method's 28");
  EXPECT_EQ(rule_of({"--mode", "stream"}, "neardup: ")["off_because"], "stream mode");
  EXPECT_EQ(rule_of({"--short-features", "0"}, "; short-document rule off;"),
            nlohmann::json({{"rule", "off"}, {"default", false}}));
  EXPECT_EQ(
      rule_of({"--short-features", "200"}, "short-document rule exact, < 200 features: "),
      nlohmann::json({{"rule", "exact"}, {"features", 200}, {"jaccard", 0.5}, {"default", false}}));
  // A threshold given is taken as given, 0.5 too (not the default's 0.52).
  EXPECT_EQ(rule_of({"--short-jaccard", "0.5"},
                    "; short-document rule sketch, every document (default): "),
            nlohmann::json(
                {{"rule", "sketch"}, {"features", 1000000}, {"jaccard", 0.5}, {"default", true}}));
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--short-features", "many"},
                                              {"--short-rule", "fast"},
                                              {"--mode", "stream", "--short-features", "300"}}) {
    std::vector<std::string> argv = {"dedup", "-"};
    argv.insert(argv.end(), bad.begin(), bad.end());
    EXPECT_EQ(RunCli(argv, Corpus()).exit_code, 2) << bad[1];
  }
}

// Verified pairs (issue 24): dividend notices of different companies, one
// short template with different names and numbers (Jaccard ~0.3), fall
// within k of each other; each pair is checked against its feature sets'
// estimated Jaccard, so they are not reported, while a lightly edited copy
// is, with its "jaccard" beside its "distance".
TEST(DedupCliTest, VerifiedPairsDropTemplatesOfDifferentContent) {
  const char* texts[] = {
      "Viraal Holdings\\nAnnual div 2 cts vs 2 cts prior\\nPay December 19\\nRecord June 11",
      "Trazen Energy\\nSemi-annual div 52 cts vs 52 cts prior\\nPay December 11\\nRecord June 24",
      "Sabel Group\\nSemi-annual div 51 cts vs 51 cts prior\\nPay July 9\\nRecord June 16",
      "Aler Bancorp\\nSemi-annual div 24 cts vs 24 cts prior\\nPay July 9\\nRecord September 10"};
  std::string input;
  int n = 0;
  for (const char* text : texts) {
    input += "{\"id\": \"d" + std::to_string(n++) + "\", \"text\": \"" + text + "\"}\n";
  }
  // Without verification: pairs of different companies.
  const std::string dir = MakeTempDir("dedup_verify_cli");
  auto off = RunCli(
      {"dedup", "-", "-q", "--verify-jaccard", "0", "--pairs-out", dir + "/off.jsonl"}, input);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const auto off_pairs = ParseJsonLines(ReadFile(dir + "/off.jsonl"));
  ASSERT_FALSE(off_pairs.empty()) << "the template no longer falls within k";
  EXPECT_FALSE(off_pairs[0].contains("jaccard"));
  // A lightly edited copy of the first notice ("div" -> "dividend").
  input +=
      "{\"id\": \"copy\", \"text\": \"Viraal Holdings\\nAnnual dividend 2 cts vs 2 cts "
      "prior\\nPay December 19\\nRecord June 11\"}\n";
  auto on = RunCli({"dedup", "-", "-q", "--pairs-out", dir + "/on.jsonl"}, input);
  ASSERT_EQ(on.exit_code, 0) << on.err;
  const auto pairs = ParseJsonLines(ReadFile(dir + "/on.jsonl"));
  ASSERT_EQ(pairs.size(), 1u) << ReadFile(dir + "/on.jsonl");
  EXPECT_EQ(pairs[0]["a"], "d0");
  EXPECT_EQ(pairs[0]["b"], "copy");
  EXPECT_GE(pairs[0]["jaccard"].get<double>(), 0.5);
  const auto records = ParseJsonLines(on.out);
  ASSERT_EQ(records.size(), static_cast<size_t>(n + 1));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(records[static_cast<size_t>(i)]["duplicate"], false) << i;
    EXPECT_EQ(records[static_cast<size_t>(i)]["jaccard"], nullptr) << i;
  }
  EXPECT_EQ(records.back()["nearest"], "d0");
  EXPECT_EQ(records.back()["jaccard"], pairs[0]["jaccard"]);
}

}  // namespace
}  // namespace neardup
