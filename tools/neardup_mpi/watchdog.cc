// Copyright 2026 The neardup Authors.

#include "watchdog.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "common.h"

namespace neardup::mpi {

double Watchdog::Interval(double timeout) { return std::clamp(timeout / 5, 0.2, 10.0); }

Watchdog::Watchdog(Options options) : o_(std::move(options)) {
  if (o_.timeout <= 0) return;
  std::error_code ec;
  std::filesystem::create_directories(o_.dir, ec);
  Beat(std::to_string(o_.run) + " 0\n");
  try {
    thread_ = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {
    // Out of memory or threads (a thread's stack under RLIMIT_AS): the job
    // goes on unwatched on this rank, and says so.
    cli::PrintErrorLine("neardup-mpi: " + o_.where(o_.rank) +
                        ": warning: no stall watchdog here: cannot start its thread (" + e.what() +
                        ")");
  }
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  Beat(std::to_string(o_.run) + " done\n");
}

std::string Watchdog::Path(int rank) const {
  char name[32];
  std::snprintf(name, sizeof name, "/rank-%04d", rank);
  return o_.dir + name;
}

// The whole text at offset 0 and the file cut to it: one write, no rename
// (a torn read only looks like a change: progress, never a false stall).
void Watchdog::Beat(const std::string& text) const {
  const int fd = ::open(Path(o_.rank).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) {
    (void)::ftruncate(fd, static_cast<off_t>(text.size()));
  }
  ::close(fd);
}

void Watchdog::Loop() {
  using Clock = std::chrono::steady_clock;
  const int watched = (o_.rank + 1) % o_.size;
  const bool watch = watched != o_.rank;
  const std::string prefix = std::to_string(o_.run) + " ";
  const auto interval = std::chrono::duration<double>(Interval(o_.timeout));
  std::string last;
  Clock::time_point changed = Clock::now();
  bool watching = watch;
  for (uint64_t beat = 1;; ++beat) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_for(lock, interval, [this] { return stop_; })) return;
    }
    Beat(prefix + std::to_string(beat) + "\n");
    if (!watching) continue;
    std::string now;
    if (const int fd = ::open(Path(watched).c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
      char buffer[64];
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) now.assign(buffer, static_cast<size_t>(n));
      ::close(fd);
    }
    // Another run's file (or none yet) is no beat of this run.
    if (!now.starts_with(prefix)) now.clear();
    if (now == prefix + "done\n") {
      watching = false;  // finished: nothing more to watch
      continue;
    }
    if (!now.empty() && now != last) {
      last = now;
      changed = Clock::now();
      continue;
    }
    const double silent = std::chrono::duration<double>(Clock::now() - changed).count();
    if (silent < o_.timeout) continue;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.0f", silent);
    cli::PrintErrorLine("neardup-mpi: " + o_.where(o_.rank) + ": " + o_.where(watched) +
                        " has not progressed for " + seconds + " s (its heartbeat " +
                        Path(watched) + (last.empty() ? " never came" : " stopped") +
                        ": the process is stopped or hung, or its node was lost); aborting the job "
                        "(--stall-timeout " +
                        std::to_string(static_cast<long long>(o_.timeout)) + ")");
    // This process ends as on SIGTERM (its temporary outputs removed); mpirun
    // then ends the others.
    std::raise(SIGTERM);
    return;
  }
}

}  // namespace neardup::mpi
