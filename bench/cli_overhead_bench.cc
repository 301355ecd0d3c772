// Copyright 2026 The neardup Authors.
//
// `neardup fingerprint` on JSONL against the library doing the same work:
// Pipeline::Create and Pipeline::Fingerprint of every document's text (held
// in memory) on one thread, vs the CLI (--threads 1) reading, parsing,
// fingerprinting and writing its JSON lines to /dev/null. With --command
// dedup: `neardup dedup --boilerplate off` (the kept lines to /dev/null)
// against the same fingerprints plus neardup::Dedup at the preset's k. Interleaved rounds
// (the side that goes first alternates); the library side is this thread's
// CPU time, the CLI side the child's user + system time; the ratio is the
// median of per-round ratios (CLI / library; the issue-15 target is <= 1.15).
// The corpus (THUCNews, 1,000 documents) is repeated --repeat times into a
// temporary JSONL file so that start-up does not dominate.
//
//   neardup_cli_overhead_bench --cli build/neardup [--corpus FILE] [--rounds 5]
//                              [--repeat 10] [--method chars5] [--command dedup]

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "neardup/dedup.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"

extern char** environ;

namespace {

const char* Arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
}

double ThreadCpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The CLI's user + system seconds, or a negative number when it failed.
double RunCli(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return -1;
  }
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cli = Arg(argc, argv, "--cli", "");
  const std::string corpus = Arg(argc, argv, "--corpus", "");
  const int rounds = std::atoi(Arg(argc, argv, "--rounds", "5"));
  const int repeat = std::atoi(Arg(argc, argv, "--repeat", "10"));
  const std::string method = Arg(argc, argv, "--method", "chars5");
  const std::string command = Arg(argc, argv, "--command", "fingerprint");
  const bool dedup = command == "dedup";
  if (cli.empty() || corpus.empty() || rounds < 1 || repeat < 1 ||
      (!dedup && command != "fingerprint")) {
    std::fprintf(stderr,
                 "usage: %s --cli PATH --corpus FILE [--rounds N] [--repeat N] [--method M] "
                 "[--command fingerprint|dedup]\n",
                 argv[0]);
    return 2;
  }
  std::ifstream in(corpus, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cli_overhead: %s is absent; nothing to measure\n", corpus.c_str());
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> docs;  // (text, title)
  std::string lines, line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    docs.emplace_back(j.at("text"), j.value("title", ""));
    lines += line;
    lines += '\n';
  }
  char path[] = "/tmp/neardup_cli_overhead_XXXXXX.jsonl";
  const int fd = mkstemps(path, 6);
  if (fd < 0) {
    std::perror("mkstemps");
    return 1;
  }
  size_t bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    if (write(fd, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) {
      std::perror("write");
      return 1;
    }
    for (const auto& d : docs) bytes += d.first.size();
  }
  close(fd);
  auto preset = neardup::FindPreset(method);
  if (!preset.ok()) {
    std::fprintf(stderr, "%s\n", preset.status().ToString().c_str());
    return 2;
  }
  std::vector<std::string> args = {cli, command, "--method", method, "--threads", "1", "--quiet"};
  if (dedup) {
    args.push_back("--boilerplate");
    args.push_back("off");
  }
  args.push_back(path);
  neardup::DedupOptions dedup_options;
  dedup_options.k = preset->default_k;
  dedup_options.threads = 1;
  std::vector<neardup::DedupDocument> fingerprints;
  std::vector<double> lib, lib_create, ours, ratio;
  uint64_t x = 0;
  for (int round = 0; round < rounds; ++round) {
    double cli_seconds = 0;
    if (round % 2 != 0) cli_seconds = RunCli(args);
    const double t0 = ThreadCpu();
    auto pipeline = neardup::Pipeline::Create(preset->pipeline);
    if (!pipeline.ok()) {
      std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str());
      return 1;
    }
    const double t1 = ThreadCpu();
    fingerprints.clear();
    for (int r = 0; r < repeat; ++r) {
      for (const auto& [text, title] : docs) {
        const neardup::DocumentFingerprint f = (*pipeline)->Fingerprint(text, title);
        x ^= f.fingerprint.lo();
        if (dedup) fingerprints.push_back({f.fingerprint, f.empty(), 0, std::nullopt});
      }
    }
    if (dedup) {
      auto result = neardup::Dedup(fingerprints, dedup_options);
      if (!result.ok()) {
        std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
        return 1;
      }
      x ^= result->summary.duplicates;
    }
    const double t2 = ThreadCpu();
    if (round % 2 == 0) cli_seconds = RunCli(args);
    if (cli_seconds < 0) {
      std::fprintf(stderr, "cli_overhead: %s failed\n", cli.c_str());
      unlink(path);
      return 1;
    }
    lib.push_back(t2 - t0);
    lib_create.push_back(t1 - t0);
    ours.push_back(cli_seconds);
    ratio.push_back(cli_seconds / (t2 - t0));
  }
  unlink(path);
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf(
      "method %s: %zu documents x %d = %.1f MB of text, %d interleaved rounds, one thread\n",
      method.c_str(), docs.size(), repeat, mb, rounds);
  std::printf("library (Create + Fingerprint%s)  %7.3f s CPU  %6.1f MB/s  (Create %.3f s)\n",
              dedup ? " + Dedup" : "", Median(lib), mb / Median(lib), Median(lib_create));
  std::printf("CLI %s --threads 1     %7.3f s CPU  %6.1f MB/s\n", command.c_str(), Median(ours),
              mb / Median(ours));
  std::printf("CLI / library: %.2fx (median of per-round ratios)   [%llx]\n", Median(ratio),
              static_cast<unsigned long long>(x & 0xF));
  return 0;
}
