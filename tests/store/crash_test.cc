// Copyright 2026 The neardup Authors.
//
// Process-level safety of the store: `neardup store add` killed at random
// moments, and two writers on one store at once.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "neardup/store.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // the child's standard output
};

// Starts the CLI with `args`; stdout is a pipe, stderr goes to /dev/null.
Child Spawn(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    close(fds[0]);
    close(fds[1]);
    std::vector<std::string> copy = args;
    std::string path = NEARDUP_CLI_PATH;
    std::vector<char*> argv{path.data()};
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(path.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Everything the child wrote to stdout, until it exits or is killed.
std::string Drain(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// The names on "added NAME (...)" lines.
std::set<std::string> AddedNames(const std::string& out) {
  std::set<std::string> names;
  size_t pos = 0;
  while ((pos = out.find("added ", pos)) != std::string::npos) {
    const size_t end = out.find(" (", pos);
    const size_t eol = out.find('\n', pos);
    if (end == std::string::npos || eol == std::string::npos || end > eol) break;
    names.insert(out.substr(pos + 6, end - pos - 6));
    pos = eol;
  }
  return names;
}

std::string VersionText(std::mt19937_64& rng, int doc, int version) {
  std::string text;
  const int paragraphs = 30 + static_cast<int>(rng() % 60);
  for (int p = 0; p < paragraphs; ++p) {
    const int sentences = 1 + static_cast<int>(rng() % 10);
    for (int s = 0; s < sentences; ++s) {
      text += "文档" + std::to_string(doc) + "段" + std::to_string(p) + "句" + std::to_string(s);
      if (rng() % 10 == 0) text += "版本" + std::to_string(version);
      text += (s % 3 == 2) ? "！" : "。";
    }
    text += (p % 7 == 0) ? "\r\n" : "\n";
  }
  return text;
}

TEST(StoreCrashTest, KilledAddLeavesAConsistentStore) {
  const std::string dir = testing::MakeTempDir("crash");
  const std::string store_path = dir + "/s.db";
  std::mt19937_64 rng(20260421);
  std::map<std::string, std::string> contents;  // every input file, by name
  std::set<std::string> committed;              // reported added before a kill

  // Kill delays are drawn over the duration of a whole uninterrupted add of
  // the same size, measured here, so they land mid-run on a fast build and
  // under the sanitizers (several times slower) alike.
  int64_t full_run_us = 0;
  {
    std::vector<std::string> args = {"store", "add", "--store", dir + "/calibrate.db"};
    for (int f = 0; f < 12; ++f) {
      const std::string name = dir + "/calibrate" + std::to_string(f) + ".txt";
      testing::WriteFile(name, VersionText(rng, f, 0));
      args.push_back(name);
    }
    const auto start = std::chrono::steady_clock::now();
    Child child = Spawn(args);
    ASSERT_GT(child.pid, 0);
    Drain(child.out_fd);
    int status = 0;
    waitpid(child.pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    full_run_us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  }
  const uint64_t max_delay_us = static_cast<uint64_t>(std::max<int64_t>(1000, full_run_us));

  constexpr int kRounds = 24;
  int killed = 0;
  int partial = 0;  // rounds killed after some files were committed, before all
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> args = {"store", "add", "--store", store_path};
    if (round % 4 == 3) args.insert(args.end(), {"--chunker", "cdc:256"});
    // Without fsync per commit a killed process must lose nothing either.
    if (round % 2 == 1) args.push_back("--no-sync");
    for (int f = 0; f < 12; ++f) {
      // Reuse names across rounds now and then: a replaced file is rewritten.
      const std::string name = dir + "/f" + std::to_string((round * 12 + f) % 200) + ".txt";
      const std::string text = VersionText(rng, f, round);
      testing::WriteFile(name, text);
      if (contents.count(name) && contents[name] != text) committed.erase(name);
      contents[name] = text;
      args.push_back(name);
    }
    Child child = Spawn(args);
    ASSERT_GT(child.pid, 0);
    std::string out;
    std::thread reader([&] { out = Drain(child.out_fd); });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % max_delay_us));
    if (kill(child.pid, SIGKILL) == 0) ++killed;
    int status = 0;
    waitpid(child.pid, &status, 0);
    reader.join();
    const std::set<std::string> added = AddedNames(out);
    if (!added.empty() && added.size() < 12) ++partial;
    for (const std::string& name : added) committed.insert(name);

    StoreOptions options;
    options.create_if_missing = false;
    auto store = Store::Open(store_path, options);
    if (!store.ok() && store.status().IsNotFound()) continue;  // killed before creating it
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto problems = (*store)->Verify();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    for (const auto& p : *problems) ADD_FAILURE() << "round " << round << ": " << p.reason;
    for (const std::string& name : committed) {
      Result<std::string> got = (*store)->Get(name);
      ASSERT_TRUE(got.ok()) << "round " << round << ": " << got.status().ToString();
      EXPECT_TRUE(*got == contents[name]) << name;
    }
  }
  EXPECT_GE(killed, 20);
  // The random delays must hit adds in the middle, not only before or after.
  EXPECT_GE(partial, 3);
  std::cout << killed << " kills, " << partial << " in the middle of a run, " << committed.size()
            << " files committed\n";
  EXPECT_FALSE(committed.empty());
}

TEST(StoreCrashTest, TwoWritersAtOnce) {
  const std::string dir = testing::MakeTempDir("writers");
  const std::string store_path = dir + "/s.db";
  std::mt19937_64 rng(5);
  std::map<std::string, std::string> contents;
  std::vector<std::string> args[2];
  for (int w = 0; w < 2; ++w) {
    args[w] = {"store", "add", "--store", store_path};
    for (int f = 0; f < 15; ++f) {
      const std::string name = dir + "/w" + std::to_string(w) + "_" + std::to_string(f) + ".txt";
      // Both writers share most paragraphs, so they race on the same chunks.
      contents[name] = VersionText(rng, f, w);
      testing::WriteFile(name, contents[name]);
      args[w].push_back(name);
    }
  }
  Child a = Spawn(args[0]);
  Child b = Spawn(args[1]);
  std::string out_a, out_b;
  std::thread ta([&] { out_a = Drain(a.out_fd); });
  std::thread tb([&] { out_b = Drain(b.out_fd); });
  int status_a = 0, status_b = 0;
  waitpid(a.pid, &status_a, 0);
  waitpid(b.pid, &status_b, 0);
  ta.join();
  tb.join();
  EXPECT_TRUE(WIFEXITED(status_a) && WEXITSTATUS(status_a) == 0);
  EXPECT_TRUE(WIFEXITED(status_b) && WEXITSTATUS(status_b) == 0);
  EXPECT_EQ(AddedNames(out_a).size() + AddedNames(out_b).size(), contents.size());

  auto store = Store::Open(store_path);
  ASSERT_TRUE(store.ok());
  auto problems = (*store)->Verify();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
  for (const auto& [name, text] : contents) {
    Result<std::string> got = (*store)->Get(name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == text) << name;
  }
  const testing::CommandResult verify = testing::RunCli({"store", "verify", "--store", store_path});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
}

}  // namespace
}  // namespace neardup
