// Copyright 2026 The neardup Authors.
//
// No half-written output under a final name: outputs are put in place only
// when the run succeeds; SIGINT / SIGTERM and a file size limit leave either
// nothing or complete files, and no temporary file.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;
using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

std::string Corpus(int n) {
  std::string out;
  out.reserve(static_cast<size_t>(n) * 120);
  const int distinct = n / 3 + 1;  // clusters of about three
  for (int i = 0; i < n; ++i) {
    const int j = i % distinct;
    out += "{\"id\":\"d" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(j) +
           "篇 近似重复检测需要稳定的指纹 " + std::to_string(j * 7919) + " 与 " +
           std::to_string(j * 31 % 977) + "\"}\n";
  }
  return out;
}

const std::vector<std::string> kOutputs = {"records.jsonl", "pairs.jsonl", "clusters.jsonl",
                                           "unique.jsonl", "summary.json"};

std::vector<std::string> DedupArgs(const std::string& input, const std::string& dir) {
  return {"dedup",
          "-q",
          input,
          "-o",
          dir + "/records.jsonl",
          "--pairs-out",
          dir + "/pairs.jsonl",
          "--clusters-out",
          dir + "/clusters.jsonl",
          "--unique-out",
          dir + "/unique.jsonl",
          "--summary-json",
          dir + "/summary.json",
          "--threads",
          "2"};
}

// Files in `dir` whose names start with '.' (temporary outputs).
std::vector<std::string> Hidden(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(".")) out.push_back(e.path().string());
  }
  return out;
}

// Runs the tool with `args`, sends `sig` after `delay`, returns the exit
// status (or 1000 + the signal that killed it).
int RunAndSignal(const std::vector<std::string>& args, std::chrono::microseconds delay, int sig) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    ::neardup::testing::ExecCli(args);
  }
  std::this_thread::sleep_for(delay);
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

TEST(OutputCliTest, SignalsLeaveNoOutputOrCompleteOutputs) {
  const std::string dir = MakeTempDir("cli_signal");
  const int n = ::neardup::testing::Sanitized() ? 10000 : 60000;
  WriteFile(dir + "/in.jsonl", Corpus(n));
  fs::create_directories(dir + "/ref");
  const auto start = std::chrono::steady_clock::now();
  const auto ref = RunCli(DedupArgs(dir + "/in.jsonl", dir + "/ref"));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  std::random_device device;
  const unsigned seed = device();
  std::mt19937 rng(seed);
  const auto span =
      std::chrono::duration_cast<std::chrono::microseconds>(took + std::chrono::milliseconds(50));
  for (int run = 0; run < 6; ++run) {
    const std::string out = dir + "/run" + std::to_string(run);
    fs::create_directories(out);
    const auto delay =
        std::chrono::microseconds(std::uniform_int_distribution<int64_t>(0, span.count())(rng));
    const int sig = run % 2 == 0 ? SIGINT : SIGTERM;
    const int status = RunAndSignal(DedupArgs(dir + "/in.jsonl", out), delay, sig);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", run " + std::to_string(run) + ", after " +
                 std::to_string(delay.count()) + " us, status " + std::to_string(status));
    // Done before the signal, or stopped by it with 128 + the signal (a
    // signal before the handlers are installed kills the process).
    EXPECT_TRUE(status == 0 || status == 128 + sig || status == 1000 + sig);
    EXPECT_EQ(Hidden(out), std::vector<std::string>());
    for (const std::string& name : kOutputs) {
      const std::string path = out + "/" + name;
      // The summary is put in place last: it marks a finished run.
      if (status == 0 || fs::exists(out + "/summary.json")) {
        EXPECT_TRUE(fs::exists(path)) << name;
      }
      if (!fs::exists(path)) continue;
      if (name != "summary.json") {
        const std::string got = ReadFile(path), want = ReadFile(dir + "/ref/" + name);
        EXPECT_TRUE(got == want) << name << ": " << got.size() << " bytes, a complete run's "
                                 << want.size();
        continue;
      }
      // Complete JSON, equal but for the seconds it took.
      auto got = nlohmann::json::parse(ReadFile(path));
      auto want = nlohmann::json::parse(ReadFile(dir + "/ref/" + name));
      got.erase("seconds");
      want.erase("seconds");
      EXPECT_EQ(got, want);
    }
  }
}

TEST(OutputCliTest, FileSizeLimitLeavesNoFinalNamedFileAndExitsOne) {
  const std::string dir = MakeTempDir("cli_fsize");
  WriteFile(dir + "/in.jsonl", Corpus(3000));
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 64 * 1024;  // the records need more
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto r = RunCli({"dedup", "-q", dir + "/in.jsonl", "-o", dir + "/out.jsonl",
                         "--summary-json", dir + "/summary.json"});
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write " + dir + "/out.jsonl: File too large"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out.jsonl"));
  EXPECT_FALSE(fs::exists(dir + "/summary.json"));
  EXPECT_EQ(Hidden(dir), std::vector<std::string>());
}

TEST(OutputCliTest, FailedRunPutsNothingInPlaceAndKeepsTheOldFile) {
  const std::string dir = MakeTempDir("cli_failed_out");
  WriteFile(dir + "/in.jsonl", "{\"body\":\"x\"}\n");
  WriteFile(dir + "/out.jsonl", "an earlier result\n");
  const auto r = RunCli(
      {"dedup", dir + "/in.jsonl", "-o", dir + "/out.jsonl", "--pairs-out", dir + "/pairs.jsonl"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(ReadFile(dir + "/out.jsonl"), "an earlier result\n");
  EXPECT_FALSE(fs::exists(dir + "/pairs.jsonl"));
  EXPECT_EQ(Hidden(dir), std::vector<std::string>());
  // A device is written directly, never replaced.
  const auto null = RunCli({"dedup", "-q", "-o", "/dev/null", "-"}, Corpus(10));
  EXPECT_EQ(null.exit_code, 0) << null.err;
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(OutputCliTest, SymbolicLinkOutputReplacesItsTargetAndStaysALink) {
  const std::string dir = MakeTempDir("cli_link_out");
  fs::create_directory(dir + "/results");
  WriteFile(dir + "/in.jsonl", Corpus(30));
  WriteFile(dir + "/results/records.jsonl", "an earlier result\n");
  // A relative link to an existing file, and a dangling one (its target is
  // created).
  fs::create_symlink("results/records.jsonl", dir + "/records.jsonl");
  fs::create_symlink(dir + "/results/summary.json", dir + "/summary.json");
  const auto r = RunCli({"dedup", "-q", dir + "/in.jsonl", "-o", dir + "/records.jsonl",
                         "--summary-json", dir + "/summary.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto plain = RunCli({"dedup", "-q", dir + "/in.jsonl"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (const std::string name : {"records.jsonl", "summary.json"}) {
    EXPECT_TRUE(fs::is_symlink(dir + "/" + name)) << name;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir + "/results/" + name))) << name;
  }
  EXPECT_EQ(ReadFile(dir + "/results/records.jsonl"), plain.out);
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/results/summary.json"))["documents"], 30)
      << ReadFile(dir + "/results/summary.json");
  EXPECT_EQ(Hidden(dir), std::vector<std::string>());
  EXPECT_EQ(Hidden(dir + "/results"), std::vector<std::string>());

  // A link into a directory that does not exist: a clear error, nothing made.
  fs::create_symlink("nosuch/out.jsonl", dir + "/lost.jsonl");
  const auto lost = RunCli({"dedup", "-q", dir + "/in.jsonl", "-o", dir + "/lost.jsonl"});
  EXPECT_EQ(lost.exit_code, 1) << lost.err;
  EXPECT_NE(lost.err.find("cannot write " + dir + "/lost.jsonl: it is a symbolic link to " + dir +
                          "/nosuch/out.jsonl, whose directory " + dir + "/nosuch does not exist"),
            std::string::npos)
      << lost.err;
  EXPECT_TRUE(fs::is_symlink(dir + "/lost.jsonl"));
  EXPECT_FALSE(fs::exists(dir + "/nosuch"));
}

}  // namespace
}  // namespace neardup
