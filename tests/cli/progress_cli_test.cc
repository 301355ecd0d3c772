// Copyright 2026 The neardup Authors.
//
// Progress when stderr is not a terminal: plain lines, one per interval
// ($NEARDUP_PROGRESS_INTERVAL here 0: every update), for every phase of
// dedup, each with its rate.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

std::string Corpus(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const int j = i % (n / 2);
    out += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(j) +
           "篇 近似重复检测需要稳定的指纹\\n" + std::to_string(j * 7919) + "\"}\n";
  }
  return out;
}

// The "neardup: progress: " lines of `err` that start with `phase`.
std::vector<std::string> Lines(const std::string& err, const std::string& phase) {
  std::vector<std::string> out;
  const std::string prefix = "neardup: progress: " + phase;
  size_t at = 0;
  while ((at = err.find(prefix, at)) != std::string::npos) {
    const size_t end = err.find('\n', at);
    out.push_back(err.substr(at, end - at));
    at = end;
  }
  return out;
}

TEST(ProgressCliTest, PlainLinesForEveryPhaseWithARate) {
  const std::string dir = MakeTempDir("cli_progress");
  WriteFile(dir + "/in.jsonl", Corpus(3000));
  setenv("NEARDUP_PROGRESS_INTERVAL", "0", 1);
  const auto r = RunCli({"dedup", dir + "/in.jsonl", "-o", dir + "/out.jsonl"});
  const auto off = RunCli({"dedup", "--progress", "off", dir + "/in.jsonl", "-o", "/dev/null"});
  const auto quiet = RunCli({"dedup", "-q", dir + "/in.jsonl", "-o", "/dev/null"});
  unsetenv("NEARDUP_PROGRESS_INTERVAL");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::pair<std::string, std::string>> phases = {
      {"counting lines (boilerplate) ", " MB/s)"},
      {"reading + fingerprints ", " MB/s)"},
      {"exact join", " s)"},
      {"cluster ", " documents/s)"},
      {"output ", " records/s)"},
  };
  for (const auto& [phase, rate] : phases) {
    const auto lines = Lines(r.err, phase);
    ASSERT_FALSE(lines.empty()) << phase << "\n" << r.err;
    for (const std::string& line : lines) {
      EXPECT_NE(line.find(rate), std::string::npos) << line;
    }
  }
  // A percentage where the total is known (a plain file).
  EXPECT_NE(Lines(r.err, "reading + fingerprints ")[0].find("% ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);  // no terminal redraws in a log
  EXPECT_EQ(off.exit_code, 0);
  EXPECT_EQ(off.err.find("progress:"), std::string::npos) << off.err;
  EXPECT_EQ(quiet.err.find("progress:"), std::string::npos) << quiet.err;
  // Without the variable, a short run prints no progress (one line per 10 s).
  const auto plain = RunCli({"dedup", dir + "/in.jsonl", "-o", "/dev/null"});
  EXPECT_EQ(plain.err.find("progress:"), std::string::npos) << plain.err;
}

}  // namespace
}  // namespace neardup
