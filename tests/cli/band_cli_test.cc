// Copyright 2026 The neardup Authors.
//
// `neardup dedup`'s join options: --exact, --banded, --recall, --band-seed,
// --summary-json, and the quick start (scripts/demo.sh: Debian's Chinese man
// pages) giving the same clusters banded as exact.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;

using ::neardup::testing::Sanitized;

TEST(BandCliTest, SummaryJsonReportsTheJoinAndItsGuarantee) {
  const std::string dir = MakeTempDir("band_cli");
  std::string corpus;
  for (int i = 0; i < 40; ++i) {
    std::string text = "第" + std::to_string(i % 20) + "篇新闻：今天的天气预报说，" +
                       std::to_string(i % 20 * 7919) + "号地区有小雨，气温下降，市民出行请带伞。";
    corpus += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + text + "\"}\n";
  }
  const auto banded = RunCli({"dedup", "-", "--banded", "--recall", "0.999", "--band-seed", "5",
                              "--summary-json", dir + "/banded.json", "-o", dir + "/banded.jsonl"},
                             corpus);
  ASSERT_EQ(banded.exit_code, 0) << banded.err;
  EXPECT_NE(banded.err.find("banded join r = "), std::string::npos) << banded.err;
  const auto j = nlohmann::json::parse(ReadFile(dir + "/banded.json"));
  EXPECT_EQ(j["documents"], 40);
  EXPECT_EQ(j["join"]["algorithm"], "banded");
  EXPECT_EQ(j["join"]["band_seed"], 5);
  EXPECT_GE(j["join"]["recall_at_k"].get<double>(), 0.999);
  EXPECT_GE(j["join"]["recall_at_k_minus_4"].get<double>(), 0.99999);
  EXPECT_GT(j["join"]["bands"].get<int>(), 0);
  for (const char* phase : {"fingerprint", "join", "cluster", "total"}) {
    EXPECT_TRUE(j["seconds"].contains(phase)) << phase;
  }
  const auto exact = RunCli(
      {"dedup", "-", "--exact", "--summary-json", dir + "/exact.json", "-o", dir + "/exact.jsonl"},
      corpus);
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_NE(exact.err.find("exact join"), std::string::npos) << exact.err;
  const auto e = nlohmann::json::parse(ReadFile(dir + "/exact.json"));
  EXPECT_EQ(e["join"]["algorithm"], "exact");
  EXPECT_EQ(e["join"]["recall_at_k"], 1.0);
  // 20 texts twice each: both joins find the 20 pairs of identical copies.
  EXPECT_EQ(e["duplicates"], j["duplicates"]);
  EXPECT_EQ(ReadFile(dir + "/exact.jsonl"), ReadFile(dir + "/banded.jsonl"));
}

TEST(BandCliTest, BadJoinOptionsAreUsageErrors) {
  EXPECT_EQ(RunCli({"dedup", "-", "--exact", "--banded"}, "").exit_code, 2);
  EXPECT_EQ(RunCli({"dedup", "-", "--recall", "1"}, "").exit_code, 2);
  EXPECT_EQ(RunCli({"dedup", "-", "--recall", "x"}, "").exit_code, 2);
  const auto help = RunCli({"dedup", "--help"});
  for (const char* flag : {"--exact", "--banded", "--recall", "--band-seed", "--summary-json"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

// Cluster of each id, as the set of ids sharing it.
std::map<std::string, std::set<std::string>> Clusters(const std::string& records) {
  std::map<size_t, std::set<std::string>> by_cluster;
  std::map<std::string, size_t> cluster_of;
  for (const auto& r : ParseJsonLines(records)) {
    by_cluster[r["cluster"].get<size_t>()].insert(r["id"].get<std::string>());
    cluster_of[r["id"].get<std::string>()] = r["cluster"].get<size_t>();
  }
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [id, c] : cluster_of) out[id] = by_cluster[c];
  return out;
}

TEST(BandCliTest, QuickStartGivesTheSameClustersBandedAsExact) {
  const std::string cn = "/usr/share/man/zh_CN", tw = "/usr/share/man/zh_TW";
  if (!std::filesystem::exists(cn) || !std::filesystem::exists(tw)) {
    NEARDUP_SKIP_OUTSIDE_CI("manpages-zh is not installed (scripts/install-deps.sh)");
  }
  // Under sanitizers, section 1 only (the same command, fewer pages).
  const std::string a = Sanitized() ? cn + "/man1" : cn, b = Sanitized() ? tw + "/man1" : tw;
  const std::string dir = MakeTempDir("band_quick_start");
  const auto exact =
      RunCli({"dedup", a, b, "--t2s", "-k", "16", "--exact", "-o", dir + "/exact.jsonl"});
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  const auto banded = RunCli({"dedup", a, b, "--t2s", "-k", "16", "--banded", "--summary-json",
                              dir + "/banded.json", "-o", dir + "/banded.jsonl"});
  ASSERT_EQ(banded.exit_code, 0) << banded.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/banded.json"))["join"]["algorithm"], "banded");
  const auto ce = Clusters(ReadFile(dir + "/exact.jsonl"));
  const auto cb = Clusters(ReadFile(dir + "/banded.jsonl"));
  ASSERT_EQ(ce.size(), cb.size());
  ASSERT_GT(ce.size(), 100u);
  EXPECT_EQ(ce, cb);
}

}  // namespace
}  // namespace neardup
