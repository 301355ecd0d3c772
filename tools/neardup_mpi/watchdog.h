// Copyright 2026 The neardup Authors.
//
// The stall watchdog of neardup-mpi (--stall-timeout): MPI has no timeout of
// its own, so a rank that stops (SIGSTOP, a process hung in the kernel, a
// node lost without its TCP connections closing) leaves the other ranks
// waiting in their next exchange forever. Each rank runs a thread that
// writes a heartbeat (the run's number and a counter) to
// WORK/heartbeat/rank-R every `interval` seconds and reads its successor's
// (rank R + 1 mod P: every rank is watched by one other); when the
// successor's heartbeat has not changed for `timeout` seconds, by the
// watcher's own clock (no clock is compared across nodes), the watcher says
// so and ends its own process with SIGTERM (its temporary outputs removed,
// output_files.h), and mpirun aborts the job. A heartbeat is liveness, not
// progress: a rank busy computing a long stage beats on. The files are
// read whole on every check (open, read, close), so a network file system's
// close-to-open consistency shows the latest beat.
//
// The thread makes no MPI call (MPI_THREAD_FUNNELED).

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_WATCHDOG_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_WATCHDOG_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace neardup::mpi {

class Watchdog {
 public:
  struct Options {
    std::string dir;  // WORK/heartbeat
    int rank = 0;
    int size = 1;
    uint64_t run = 0;    // the run's number (stale files of other runs are ignored)
    double timeout = 0;  // seconds; 0: no watchdog
    // The text naming a rank in the message ("rank 3 (host node4)").
    std::function<std::string(int)> where;
  };

  // The heartbeat's period for a timeout: a fifth of it, between 0.2 and
  // 10 seconds.
  static double Interval(double timeout);

  explicit Watchdog(Options options);
  // Stops the thread; the heartbeat file then says "done" (its watcher
  // stops watching).
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void Loop();
  std::string Path(int rank) const;
  void Beat(const std::string& text) const;

  Options o_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_WATCHDOG_H_
