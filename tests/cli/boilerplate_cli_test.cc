// Copyright 2026 The neardup Authors.
//
// `neardup dedup --boilerplate`: a shared footer no longer makes different
// pages near-duplicates, the summary counts what was left out, standard input
// and files give the same records, and bad flags are usage errors.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "neardup/boilerplate.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

// 20 pages: a random body of their own and one long shared footer; page 20
// is page 0 with one character changed.
std::string Corpus() {
  static const char* kChars[] = {"的", "文", "件", "目", "录", "显", "示", "输", "出", "行",
                                 "选", "项", "参", "数", "列", "表", "名", "称", "用", "法"};
  std::mt19937_64 rng(7);
  std::string footer;
  for (int i = 0; i < 12; ++i) {
    footer += "\\n本页面中文版由中文 man 手册页计划提供。第 " + std::to_string(i) + " 行";
  }
  std::string corpus, first;
  for (int i = 0; i < 20; ++i) {
    std::string body;
    for (int c = 0; c < 60; ++c) body += kChars[rng() % 20];
    if (i == 0) first = body;
    corpus += "{\"id\": \"p" + std::to_string(i) + "\", \"text\": \"" + body + footer + "\"}\n";
  }
  first.replace(0, 3, "名");
  corpus += "{\"id\": \"copy\", \"text\": \"" + first + footer + "\"}\n";
  return corpus;
}

int Duplicates(const std::vector<nlohmann::json>& records) {
  int n = 0;
  for (const auto& r : records) n += r["duplicate"].get<bool>();
  return n;
}

TEST(BoilerplateCliTest, FooterNoLongerMakesDuplicates) {
  const auto off = RunCli({"dedup", "-", "--boilerplate", "off"}, Corpus());
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_GE(Duplicates(ParseJsonLines(off.out)), 10);  // the footer chains the pages
  EXPECT_EQ(off.err.find("boilerplate:"), std::string::npos) << off.err;

  const std::string dir = MakeTempDir("boilerplate_cli");
  const auto lines = RunCli({"dedup", "-", "--boilerplate", "lines", "--boilerplate-min-docs", "5",
                             "--boilerplate-stats-out", dir + "/lines.bin"},
                            Corpus());
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  const auto records = ParseJsonLines(lines.out);
  ASSERT_EQ(records.size(), 21u);
  EXPECT_EQ(Duplicates(records), 1);
  EXPECT_EQ(records[20]["duplicate"], true);
  EXPECT_EQ(records[20]["nearest"], "p0");
  // 12 footer lines in all 21 pages.
  EXPECT_NE(lines.err.find("boilerplate: 12 distinct lines in >= 5 of 21 documents, 252 line "
                           "occurrences left out"),
            std::string::npos)
      << lines.err;
  auto stats = LineStats::Load(dir + "/lines.bin");
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->documents(), 21u);
  EXPECT_EQ(stats->LinesAtLeast(21), 12u);

  // Read from a file (counted, then read again): the same records.
  WriteFile(dir + "/corpus.jsonl", Corpus());
  const auto file = RunCli({"dedup", dir + "/corpus.jsonl", "--boilerplate", "lines", "-q"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const auto from_file = ParseJsonLines(file.out);
  ASSERT_EQ(from_file.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(from_file[i]["fingerprint"], records[i]["fingerprint"]) << i;
    EXPECT_EQ(from_file[i]["duplicate"], records[i]["duplicate"]) << i;
  }
  // The method's key does the same as the flag.
  const auto method =
      RunCli({"dedup", dir + "/corpus.jsonl", "--method", "chars5,boilerplate=lines", "-q"});
  ASSERT_EQ(method.exit_code, 0) << method.err;
  EXPECT_EQ(ParseJsonLines(method.out), from_file);
}

TEST(BoilerplateCliTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(RunCli({"dedup", "-", "--boilerplate", "pages"}, "").exit_code, 2);
  EXPECT_EQ(RunCli({"dedup", "-", "--boilerplate-min-docs", "1"}, "").exit_code, 2);
  const auto stats_off =
      RunCli({"dedup", "-", "--boilerplate", "off", "--boilerplate-stats-out", "/tmp/x.bin"}, "");
  EXPECT_EQ(stats_off.exit_code, 2);
  EXPECT_NE(stats_off.err.find("--boilerplate-stats-out needs --boilerplate lines"),
            std::string::npos)
      << stats_off.err;
  EXPECT_EQ(RunCli({"dedup", "-", "--method", "chars5,boilerplate_min_docs=0"}, "").exit_code, 2);
}

}  // namespace
}  // namespace neardup
