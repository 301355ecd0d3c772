// Copyright 2026 The neardup Authors.
//
// End-to-end runs of `neardup eval docs` and `neardup eval pairs` on slices of
// the shared data (skipped when it is absent).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "neardup/eval.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

using ::neardup::testing::Sanitized;

// The first `n` lines of `path`, plus the header line when `header`.
std::string Head(const std::string& path, size_t n) {
  std::ifstream in(path);
  std::string line, out;
  for (size_t i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

std::vector<std::vector<std::string>> ReadCsv(const std::string& text, std::string* header) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, *header);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cols.push_back(c);
    if (!line.empty() && line.back() == ',') cols.emplace_back();
    rows.push_back(cols);
  }
  return rows;
}

TEST(EvalCli, DocsOnThucNewsSlice) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  const std::string dir = MakeTempDir("eval_docs");
  WriteFile(dir + "/slice.jsonl", Head(path, Sanitized() ? 24 : 60));
  const std::string methods =
      Sanitized() ? "exact,minhash,chargram" : "exact,minhash,chargram,classic";
  const auto r = RunCli({"eval", "docs", "--corpus", dir + "/slice.jsonl", "--edits", "10",
                         "--methods", methods, "--bits", "64", "--seed", "3", "--threads", "2",
                         "--report", dir + "/report", "--write-dataset", dir + "/dataset"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(dir + "/report/report.md"));
  EXPECT_NE(ReadFile(dir + "/report/report.md").find("## T = 10 %"), std::string::npos);
  std::string header;
  const auto rows = ReadCsv(ReadFile(dir + "/report/results.csv"), &header);
  EXPECT_EQ(header, kResultsCsvHeader);
  // exact 1 + minhash 9 + 17 per SimHash method at 64 bits.
  const size_t simhash_methods = Sanitized() ? 1 : 2;
  ASSERT_EQ(rows.size(), 10 + 17 * simhash_methods);
  std::map<std::string, double> best_f1;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 9u);
    EXPECT_EQ(row[3], "0.10");
    for (int c : {4, 5, 6, 7}) {
      const double v = std::stod(row[c]);
      EXPECT_GE(v, 0.0);
      EXPECT_LE(v, 1.0);
    }
    EXPECT_GT(std::stod(row[8]), 0.0);
    if (row[0] == "exact") {
      EXPECT_EQ(row[1], "");
      EXPECT_EQ(row[2], "");
      EXPECT_EQ(std::stod(row[5]), 0.0);  // no variant is an exact copy
    } else if (row[0] != "minhash") {
      EXPECT_EQ(row[1], "64");
    }
    best_f1[row[0]] = std::max(best_f1[row[0]], std::stod(row[6]));
  }
  // 10 % edits of news articles: the shingle baseline and character SimHash find them.
  EXPECT_GT(best_f1["minhash"], 0.9);
  EXPECT_GT(best_f1["chargram"], 0.8);
  // The dataset can be inspected: one variant line per labelled variant.
  const std::string labels = ReadFile(dir + "/dataset/labels.csv");
  const std::string variants = ReadFile(dir + "/dataset/variants_T10.jsonl");
  EXPECT_EQ(std::count(labels.begin(), labels.end(), '\n') - 1,
            std::count(variants.begin(), variants.end(), '\n'));
  // The same seed gives the same dataset.
  const auto again = RunCli({"eval", "docs", "--corpus", dir + "/slice.jsonl", "--edits", "10",
                             "--methods", "exact", "--bits", "64", "--seed", "3", "--report",
                             dir + "/report2", "--write-dataset", dir + "/dataset2", "--no-plots"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(dir + "/dataset2/variants_T10.jsonl"), variants);
}

TEST(EvalCli, PairsOnPawsxSlice) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_pairs/pawsx_zh_test_2k.tsv");
  const std::string dir = MakeTempDir("eval_pairs_cli");
  WriteFile(dir + "/slice.tsv", Head(path, Sanitized() ? 60 : 301));
  const auto r = RunCli({"eval", "pairs", dir + "/slice.tsv", "--methods", "minhash,chargram",
                         "--bits", "64,128", "--report", dir + "/report"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = ReadFile(dir + "/report/report.md");
  EXPECT_NE(md.find("ROC AUC"), std::string::npos);
  std::string header;
  const auto rows = ReadCsv(ReadFile(dir + "/report/results.csv"), &header);
  EXPECT_EQ(header, kResultsCsvHeader);
  ASSERT_EQ(rows.size(), 9u + 17u + 33u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 9u);
    EXPECT_EQ(row[3], "");  // no edit ratio
    EXPECT_EQ(row[7], "");  // no dedup rate
    EXPECT_GE(std::stod(row[4]), 0.0);
    EXPECT_LE(std::stod(row[5]), 1.0);
  }
  // Recall never falls as k grows.
  double last = -1;
  for (const auto& row : rows) {
    if (row[0] != "chargram" || row[1] != "128") continue;
    EXPECT_GE(std::stod(row[5]), last);
    last = std::stod(row[5]);
  }
  EXPECT_NE(RunCli({"eval", "pairs", dir + "/missing.tsv", "--report", dir + "/x"}).exit_code, 0);
  EXPECT_NE(RunCli({"eval", "docs", "--corpus", dir + "/slice.tsv", "--methods", "nosuch",
                    "--report", dir + "/x"})
                .exit_code,
            0);
}

// The CLI, not the library, runs gnuplot: on the script the library wrote, in
// the report directory; without gnuplot report.md says it has tables only.
TEST(EvalCli, RunsGnuplotOnTheLibrarysScripts) {
  const std::string dir = MakeTempDir("eval_gnuplot_cli");
  WriteFile(dir + "/pairs.tsv",
            "sentence1\tsentence2\tlabel\n今天天气很好\t今天天气很好啊\t1\n"
            "我喜欢吃苹果\t他在北京工作\t0\n");
  std::filesystem::create_directories(dir + "/bin");
  WriteFile(dir + "/bin/gnuplot", "#!/bin/sh\necho \"$(pwd -P) $*\" >> '" + dir + "/log'\n");
  std::filesystem::permissions(dir + "/bin/gnuplot", std::filesystem::perms::owner_all);
  const char* old = std::getenv("PATH");
  const std::string old_path = old ? old : "";
  const std::vector<std::string> args = {
      "eval", "pairs", dir + "/pairs.tsv", "--methods",    "chargram", "--bits",
      "64",   "-q",    "--report",         dir + "/report"};

  setenv("PATH", (dir + "/bin:" + old_path).c_str(), 1);
  const auto drawn = RunCli(args);
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  const std::string one_run = std::filesystem::canonical(dir + "/report").string() + " plots.gp\n";
  EXPECT_EQ(ReadFile(dir + "/log"), one_run);
  EXPECT_EQ(ReadFile(dir + "/report/report.md").find("gnuplot is not installed"),
            std::string::npos);

  setenv("PATH", (dir + "/empty").c_str(), 1);  // no gnuplot
  const auto tables_only = RunCli(args);
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_EQ(tables_only.exit_code, 0) << tables_only.err;
  EXPECT_NE(ReadFile(dir + "/report/report.md").find("gnuplot is not installed"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir + "/report/plots.gp"));
  EXPECT_EQ(ReadFile(dir + "/log"), one_run);  // not run again
}

}  // namespace
}  // namespace neardup
