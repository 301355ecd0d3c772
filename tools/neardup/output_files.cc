// Copyright 2026 The neardup Authors.

#include "output_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "commands.h"
#include "common.h"

namespace neardup::cli {
namespace {

// The registry, in fixed storage the signal handler may read.
constexpr int kMaxPending = 64;
constexpr size_t kMaxPath = 4096;
struct Pending {
  char temp[kMaxPath];
  std::string final_path;  // read by the main thread only
};
Pending pending[kMaxPending];
std::atomic<int> pending_count{0};
// 1: pending[i].temp exists and must go on failure.
std::atomic<int> pending_live[kMaxPending];
std::atomic<bool> progress_shown{false};
bool run_failed = false;
int temp_serial = 0;

void WriteAll(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void RemovePending() {
  const int n = pending_count.load();
  for (int i = 0; i < n; ++i) {
    if (pending_live[i].exchange(0) == 1) ::unlink(pending[i].temp);
  }
}

extern "C" void OnSignal(int sig) {
  RemovePending();
  if (progress_shown.load()) WriteAll("\r\033[K");
  WriteAll(sig == SIGINT ? "neardup: interrupted (SIGINT); no output was put in place\n"
                         : "neardup: terminated (SIGTERM); no output was put in place\n");
  ::_exit(128 + sig);
}

}  // namespace

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGXFSZ, SIG_IGN);
}

Result<std::string> BeginOutputFile(const std::string& path) {
  const int i = pending_count.load();
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string temp =
      (p.parent_path() / ("." + p.filename().string() + ".neardup-" + std::to_string(::getpid()) +
                          "-" + std::to_string(temp_serial++) + ".tmp"))
          .string();
  if (i >= kMaxPending || temp.size() >= kMaxPath) {
    return Status::InvalidArgument("cannot write " + path +
                                   ": too many outputs or too long a path");
  }
  std::memcpy(pending[i].temp, temp.c_str(), temp.size() + 1);
  pending[i].final_path = path;
  pending_live[i].store(1);
  pending_count.store(i + 1);
  return temp;
}

int FinishOutputs(int exit_code) {
  const bool commit = exit_code == kExitOk || (exit_code == kExitBadInput && !run_failed);
  const int n = pending_count.load();
  for (int i = 0; commit && i < n; ++i) {
    if (pending_live[i].load() != 1) continue;
    if (std::rename(pending[i].temp, pending[i].final_path.c_str()) != 0) {
      const int err = errno;
      PrintErrorLine("neardup: error: cannot put " + pending[i].final_path +
                     " in place: " + std::strerror(err));
      RemovePending();
      return kExitError;
    }
    pending_live[i].store(0);
  }
  RemovePending();
  return exit_code;
}

void MarkRunFailed() { run_failed = true; }

void SetProgressShown(bool shown) { progress_shown.store(shown); }

}  // namespace neardup::cli
