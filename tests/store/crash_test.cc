// Copyright 2026 The neardup Authors.
//
// Process-level safety of the store: `neardup store add` killed before each
// of its write steps in turn (deterministic, util/fault.h), killed at random
// moments, and two writers on one store at once.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "neardup/store.h"
#include "store/sha256.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // the child's standard output
};

// Starts the CLI with `args`; stdout is a pipe, stderr goes to /dev/null.
// `kill_at` > 0 sets NEARDUP_FAULT_KILL_AT in the child only (util/fault.h).
Child Spawn(const std::vector<std::string>& args, int kill_at = 0) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    close(fds[0]);
    close(fds[1]);
    if (kill_at > 0) {
      setenv("NEARDUP_FAULT_KILL_AT", std::to_string(kill_at).c_str(), 1);
    } else {
      unsetenv("NEARDUP_FAULT_KILL_AT");
    }
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

std::string Hex(const std::string& bytes) {
  return store_internal::DigestHex(store_internal::Sha256(bytes));
}

// Copies the store's database (and its WAL, when one is left) to `to`.
void CopyStore(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(to + suffix);
  for (const char* suffix : {"", "-wal"}) {
    if (fs::exists(from + suffix)) fs::copy_file(from + suffix, to + suffix);
  }
}

// What one `store add` run under test starts from and adds.
struct Scenario {
  std::string name;
  bool fresh_store = false;             // the store does not exist before the run
  std::vector<std::string> extra_args;  // e.g. --no-sync, --chunker
};

// After the child died, `store_path` must open (or not exist, when the
// scenario creates it and the child died first), verify clean, hold every
// acknowledged version byte for byte (SHA-256 equal to the original) and hold
// each file of the interrupted run either whole (old or new version) or not
// at all.
void CheckStore(const std::string& store_path, const std::string& where,
                const std::map<std::string, std::string>& acknowledged,
                const std::map<std::string, std::string>& before,
                const std::map<std::string, std::string>& attempted) {
  StoreOptions options;
  options.create_if_missing = false;
  auto store = Store::Open(store_path, options);
  if (!store.ok() && store.status().IsNotFound() && before.empty() && acknowledged.empty()) return;
  ASSERT_TRUE(store.ok()) << where << ": " << store.status().ToString();
  auto problems = (*store)->Verify();
  ASSERT_TRUE(problems.ok()) << where << ": " << problems.status().ToString();
  for (const auto& p : *problems) ADD_FAILURE() << where << ": " << p.name << ": " << p.reason;
  auto list = (*store)->List();
  ASSERT_TRUE(list.ok()) << where << ": " << list.status().ToString();
  std::map<std::string, std::string> listed;  // name -> recorded SHA-256
  for (const StoredFileInfo& f : *list) listed[f.name] = f.sha256_hex;
  for (const auto& [name, text] : acknowledged) {
    Result<std::string> got = (*store)->Get(name);
    ASSERT_TRUE(got.ok()) << where << ": acknowledged " << name
                          << " lost: " << got.status().ToString();
    const auto old = before.find(name);
    EXPECT_EQ(Hex(*got), Hex(text))
        << where << ": " << name
        << (old != before.end() && *got == old->second ? " is back to its previous version" : "");
    EXPECT_EQ(listed[name], Hex(text)) << where << ": " << name;
  }
  for (const auto& [name, text] : attempted) {
    if (acknowledged.count(name)) continue;
    Result<std::string> got = (*store)->Get(name);
    const auto old = before.find(name);
    if (!got.ok()) {
      EXPECT_TRUE(got.status().IsNotFound()) << where << ": " << got.status().ToString();
      EXPECT_TRUE(old == before.end()) << where << ": the old version of " << name << " is lost";
      continue;
    }
    const bool is_new = *got == text;
    const bool is_old = old != before.end() && *got == old->second;
    EXPECT_TRUE(is_new || is_old) << where << ": " << name << " is neither version";
  }
}

// Kills `neardup store add` before each of its write steps in turn (every
// SQLite write, fsync, truncate, delete and commit, counted by util/fault.h),
// from the first step until a run completes, and checks the store after each.
TEST(StoreCrashTest, KilledAtEveryWriteStep) {
  const std::string dir = testing::MakeTempDir("faults");
  std::mt19937_64 rng(20261122);
  const std::vector<Scenario> scenarios = {
      {"new store", true, {}},
      {"replace, fsync", false, {}},
      {"replace, no-sync, cdc", false, {"--no-sync", "--chunker", "cdc:256"}},
  };
  for (const Scenario& sc : scenarios) {
    SCOPED_TRACE(sc.name);
    const std::string base = dir + "/base.db";
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(base + suffix);
    // Versions acknowledged before the run: written by a completed add.
    std::map<std::string, std::string> before;
    if (!sc.fresh_store) {
      StoreOptions options;
      auto chunker = ParseChunkerSpec(sc.extra_args.size() == 3 ? sc.extra_args[2] : "simhash");
      ASSERT_TRUE(chunker.ok());
      options.chunker = *chunker;
      auto store = Store::Open(base, options);
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      for (int f = 0; f < 3; ++f) {
        const std::string name = dir + "/old" + std::to_string(f) + ".txt";
        before[name] = VersionText(rng, f, 0);
        ASSERT_TRUE((*store)->Add(name, before[name]).ok());
      }
    }
    // The run: replaces old0 (when there is one), adds two new files that
    // share paragraphs with the old ones.
    std::map<std::string, std::string> attempted;
    std::vector<std::string> args = {"store", "add", "--store", dir + "/s.db"};
    args.insert(args.end(), sc.extra_args.begin(), sc.extra_args.end());
    for (int f = 0; f < 3; ++f) {
      const std::string name =
          f == 0 && !sc.fresh_store ? dir + "/old0.txt" : dir + "/new" + std::to_string(f) + ".txt";
      attempted[name] = VersionText(rng, f, 1);
      testing::WriteFile(name, attempted[name]);
      args.push_back(name);
    }

    int steps = 0;
    int partial = 0;  // kills after the first file was acknowledged, before the last
    for (int n = 1;; ++n) {
      ASSERT_LT(n, 100000) << "the run never completes";
      if (sc.fresh_store) {
        for (const char* suffix : {"", "-wal", "-shm"}) {
          std::filesystem::remove(dir + "/s.db" + suffix);
        }
      } else {
        CopyStore(base, dir + "/s.db");
      }
      Child child = Spawn(args, n);
      ASSERT_GT(child.pid, 0);
      const std::string out = Drain(child.out_fd);
      int status = 0;
      waitpid(child.pid, &status, 0);
      const std::set<std::string> added = AddedNames(out);
      // Acknowledged: what the run did not touch, and what it reported added.
      // A file it was adding when it died may hold either version.
      std::map<std::string, std::string> acknowledged = before;
      for (const auto& entry : attempted) acknowledged.erase(entry.first);
      for (const std::string& name : added) acknowledged[name] = attempted.at(name);
      CheckStore(dir + "/s.db", sc.name + ", killed at step " + std::to_string(n), acknowledged,
                 before, attempted);
      if (WIFEXITED(status)) {
        ASSERT_EQ(WEXITSTATUS(status), 0) << "step " << n;
        EXPECT_EQ(added.size(), attempted.size());
        steps = n - 1;
        break;
      }
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "step " << n;
      if (!added.empty() && added.size() < attempted.size()) ++partial;
      if (HasFailure()) return;  // one store state is enough to debug
    }
    std::cout << sc.name << ": killed at each of " << steps << " write steps, " << partial
              << " after some files were acknowledged\n";
    // Deterministic: three commits, each with several writes.
    EXPECT_GE(steps, 6);
    EXPECT_GE(partial, 2);
  }
}

// An extra, not a replacement for the test above: ~20 kills after random
// delays, which also land between write steps (in the chunker, in SQLite's
// reads). Timing decides where they land, so nothing is asserted about how
// many hit a run in the middle; only the store's integrity is.
TEST(StoreCrashTest, KilledAtRandomMoments) {
  const std::string dir = testing::MakeTempDir("crash");
  const std::string store_path = dir + "/s.db";
  std::mt19937_64 rng(20260421);
  std::map<std::string, std::string> committed;  // reported added before a kill
  std::map<std::string, std::string> before;     // in the store before the round

  // Kill delays are drawn over the duration of a whole uninterrupted add of
  // the same size, measured here.
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

  constexpr int kRounds = 20;
  int killed = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> args = {"store", "add", "--store", store_path};
    if (round % 4 == 3) args.insert(args.end(), {"--chunker", "cdc:256"});
    if (round % 2 == 1) args.push_back("--no-sync");
    std::map<std::string, std::string> attempted;
    for (int f = 0; f < 12; ++f) {
      // Reuse names across rounds now and then: a replaced file is rewritten.
      const std::string name = dir + "/f" + std::to_string((round * 12 + f) % 200) + ".txt";
      const std::string text = VersionText(rng, f, round);
      testing::WriteFile(name, text);
      attempted[name] = text;
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
    for (const auto& entry : attempted) committed.erase(entry.first);
    for (const std::string& name : AddedNames(out)) committed[name] = attempted.at(name);
    CheckStore(store_path, "round " + std::to_string(round), committed, before, attempted);
    if (HasFatalFailure()) return;
    // What the next round may find: whatever this one left.
    StoreOptions options;
    options.create_if_missing = false;
    if (auto store = Store::Open(store_path, options); store.ok()) {
      for (const auto& [name, text] : attempted) {
        Result<std::string> got = (*store)->Get(name);
        if (got.ok()) {
          before[name] = *got;
        } else {
          before.erase(name);
        }
      }
    }
  }
  std::cout << killed << " kills, " << committed.size() << " files acknowledged\n";
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
