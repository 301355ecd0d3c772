// Copyright 2026 The neardup Authors.
//
// The tool under hostile settings: out-of-range numbers, parser errors,
// thread limits, broken IDF files, and standard output that cannot be
// written. Every case exits 0-3 with one clear message.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

using ::neardup::testing::Sanitized;

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

// Runs `prefix; neardup args... > stdout_path 2> <temp>` in a shell; returns
// the exit status, and standard error in *err.
int RunShell(const std::string& prefix, const std::vector<std::string>& args,
             const std::string& stdout_path, std::string* err) {
  const std::string err_path = MakeTempDir("cli_shell") + "/err.txt";
  std::string cmd = prefix + "; exec " + ShellQuote(NEARDUP_CLI_PATH);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  cmd += " > " + ShellQuote(stdout_path) + " 2> " + ShellQuote(err_path) + " < /dev/null";
  const int status = std::system(("/bin/sh -c " + ShellQuote(cmd)).c_str());
  *err = ReadFile(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(CliUsageTest, ParserErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"fingerprint", "--no-such-option"},
      {"dedup", "-k"},  // missing value
      {"dedup", "-k", "abc"},
      {"no-such-command"},
      {},  // no subcommand
      {"compare", "--text", "a"},
  };
  for (const auto& args : cases) {
    const auto r = RunCli(args, "");
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << joined;
  }
  EXPECT_EQ(RunCli({"dedup", "--help"}).exit_code, 0);
  EXPECT_EQ(RunCli({"--version"}).exit_code, 0);
}

TEST(CliUsageTest, NegativeAndHugeNumbersAreUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"dedup", "-k", "-1"},
      {"dedup", "-k", "33"},
      {"dedup", "--topk", "-5"},
      {"fingerprint", "--topk", "-5"},
      {"keywords", "--topk", "-5"},
      {"fingerprint", "--threads", "-1"},
      {"fingerprint", "--threads", "5000"},
      {"dedup", "--threads", "-1"},
      {"index", "build", "--max-k", "-1", "-o", "/nonexistent/x.ndx"},
      {"index", "query", "-k", "-1", "/nonexistent/x.ndx"},
      {"eval", "docs", "--corpus", "x", "--report", "y", "--threads", "-3"},
      {"eval", "docs", "--corpus", "x", "--report", "y", "--share", "1.5"},
      // Negative limits wrapped to huge ones (limits off) before.
      {"serve", "--index", "/nonexistent/x.ndx", "--max-body-bytes", "-1"},
      {"serve", "--index", "/nonexistent/x.ndx", "--max-batch", "-5"},
      {"serve", "--index", "/nonexistent/x.ndx", "--threads", "-2"},
  };
  for (const auto& args : cases) {
    const auto r = RunCli(args, "文本\n");
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << joined;
  }
  // The bounds themselves are accepted.
  EXPECT_EQ(RunCli({"fingerprint", "--threads", "1024", "-q"}, "文本\n").exit_code, 0);
  EXPECT_EQ(RunCli({"dedup", "-k", "0", "-q"}, "文本\n").exit_code, 0);
}

// Under an address-space limit most of 1000 threads' stacks cannot be
// mapped: the tool goes on with the threads it got and prints the same
// output as with one thread.
TEST(CliThreadsTest, RefusedThreadsAreNotFatal) {
  if (Sanitized()) GTEST_SKIP() << "address-space limits and sanitizers do not mix";
  const std::string dir = MakeTempDir("cli_threads");
  std::string input;
  for (int i = 0; i < 3000; ++i) {
    input += "第" + std::to_string(i % 700) + "行：近似重复检测把文档压缩成指纹。\n";
  }
  WriteFile(dir + "/in.txt", input);
  std::string err;
  ASSERT_EQ(RunShell("true",
                     {"dedup", "--input-format", "lines", "-q", "--threads", "1", dir + "/in.txt"},
                     dir + "/one.jsonl", &err),
            0)
      << err;
  // 1000 stacks of 8 MiB do not fit in 2 GiB.
  const int rc =
      RunShell("ulimit -v 2097152",
               {"dedup", "--input-format", "lines", "-q", "--threads", "1000", dir + "/in.txt"},
               dir + "/many.jsonl", &err);
  EXPECT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("worker threads"), std::string::npos) << err;
  EXPECT_EQ(ReadFile(dir + "/many.jsonl"), ReadFile(dir + "/one.jsonl"));
}

TEST(CliIdfTest, NanInIdfFileIsAnErrorNamingTheLine) {
  const std::string dir = MakeTempDir("cli_idf_nan");
  WriteFile(dir + "/idf.txt", "文档 3.5\n指纹 nan\n");
  const auto r = RunCli({"dedup", "--method", "tfidf", "--idf", dir + "/idf.txt", "-q"},
                        "近似重复检测把文档压缩成指纹。\n");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(dir + "/idf.txt:2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("finite"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliWriteErrorTest, FullStandardOutputExitsOne) {
  const std::string dir = MakeTempDir("cli_dev_full");
  WriteFile(dir + "/a.txt", "近似重复检测是搜索引擎和数据清洗中的常见任务。\n");
  const std::string store = dir + "/s.db";
  const auto added = RunCli({"store", "add", "--store", store, dir + "/a.txt"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const std::vector<std::vector<std::string>> cases = {
      {"compare", "--text", "近似重复", "近似重复检测"},
      {"compare", "--json", "--text", "近似重复", "近似重复检测"},
      {"explain", "--text", "近似重复", "近似重复检测"},
      {"store", "ls", "--store", store},
      {"store", "stats", "--store", store},
      {"store", "verify", "--store", store},
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    std::string err;
    EXPECT_EQ(RunShell("true", args, "/dev/full", &err), 1) << joined << "\n" << err;
    EXPECT_NE(err.find("neardup: error: write to standard output failed: "), std::string::npos)
        << joined << "\n"
        << err;
  }
}

// Every file an index owns is an output of `index build`: naming one as
// the input is refused before anything is written, and the user's file is
// kept (IDX.log was deleted as a stale log, IDX.tmp replaced by the commit).
TEST(CliOutputIsInputTest, NoFileOfTheIndexIsReadAsInput) {
  const std::string dir = MakeTempDir("owned");
  const std::string doc = "{\"id\":\"a\",\"text\":\"近重复检测的测试文本\"}\n";
  for (const char* suffix : {".log", ".tmp", ".lock", ".ids", ".lines", ".ids.00112233445566ff",
                             ".log.0011223344556677"}) {
    const std::string input = dir + "/c" + suffix;
    WriteFile(input, doc);
    const auto r = RunCli({"index", "build", input, "-o", dir + "/c", "-q"});
    EXPECT_EQ(r.exit_code, 2) << suffix << "\n" << r.err;
    EXPECT_NE(r.err.find(input), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(input), doc) << suffix;
    std::remove(input.c_str());
  }
  // Through a relative path and into an existing index: add and check too.
  WriteFile(dir + "/d.jsonl", doc);
  ASSERT_EQ(RunCli({"index", "build", dir + "/d.jsonl", "-o", dir + "/d", "-q"}).exit_code, 0);
  WriteFile(dir + "/d.lines", doc);
  const std::string dotted = dir + "/./d.lines";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"index", "add", "--index", dir + "/d", dotted, "-q"},
        std::vector<std::string>{"index", "check", "--index", dir + "/d", dotted, "-q"}}) {
    const auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << "\n" << r.err;
  }
  EXPECT_EQ(ReadFile(dir + "/d.lines"), doc);
}

}  // namespace
}  // namespace neardup
