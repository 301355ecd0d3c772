// Copyright 2026 The neardup Authors.
//
// The one thread pool of neardup, for the library and for its front ends
// (the command line, the Python module):
//
//   ThreadPool pool(threads);                  // 0 = all cores; once per run
//   pool.ParallelFor(n, [&](size_t i, int worker) { ... });
//   ParallelFor(n, threads, [&](size_t i, int worker) { ... });  // a pool for one call
//
// A pool of T threads is the caller plus T - 1 workers that wait between
// jobs, so a run that processes many batches starts its threads once. When the
// system refuses a thread (std::system_error: a memory or process limit), the
// pool keeps the workers started so far: fewer threads, same results;
// start_error() says why. With none, the caller does every task.
//
// Hand-written rather than TBB: a fixed worker count and worker ids
// (per-worker scratch state), the degrade-on-failure above, and no new
// dependency for the core layer (which links only xxhash and Threads).
//
// Thread safety: ParallelFor may be called by one thread at a time on a
// pool (not from inside a task of the same pool).

#ifndef NEARDUP_PARALLEL_H_
#define NEARDUP_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace neardup {

// 0 (or less) -> the hardware threads (at least 1); otherwise `threads`.
int ResolveThreadCount(int threads);

class ThreadPool {
 public:
  // Starts ResolveThreadCount(threads) - 1 workers. When the system refuses
  // one (out of threads or address space), it keeps half of those started,
  // so that the work itself still finds memory; see start_error().
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run tasks: the workers started plus the caller (>= 1).
  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Threads asked for (after ResolveThreadCount).
  int requested() const { return requested_; }
  // Why fewer than requested() threads run; empty when all started.
  const std::string& start_error() const { return start_error_; }

  // Calls fn(task, worker) once for every task in [0, num_tasks), tasks
  // handed out dynamically; worker is in [0, threads()) and no two calls with
  // the same worker overlap (worker 0 is the caller). Returns when every task
  // is done. If fn throws, the tasks not yet started are skipped and the first
  // exception is rethrown here once every thread has stopped.
  void ParallelFor(size_t num_tasks, const std::function<void(size_t, int)>& fn);

 private:
  void WorkerLoop(int worker);
  void RunTasks(int worker);

  int requested_;
  std::string start_error_;
  std::vector<std::thread> workers_;

  std::mutex mu_;
  std::condition_variable wake_;  // a new job or stop_
  std::condition_variable idle_;  // busy_ reached 0
  uint64_t job_ = 0;              // generation of the current job
  bool stop_ = false;
  int max_worker_ = INT_MAX;  // workers above it leave (after a refused start)
  int busy_ = 0;              // workers still inside the current job
  const std::function<void(size_t, int)>* fn_ = nullptr;
  size_t num_tasks_ = 0;
  std::atomic<size_t> next_{0};
  std::exception_ptr error_;  // first exception of the current job
};

// ParallelFor on a pool of min(ResolveThreadCount(threads), num_tasks)
// threads started for this call: for a few large jobs (index build and scans).
template <typename Fn>
void ParallelFor(size_t num_tasks, int threads, Fn&& fn) {
  const size_t n = std::min<size_t>(static_cast<size_t>(ResolveThreadCount(threads)), num_tasks);
  if (n <= 1) {
    for (size_t t = 0; t < num_tasks; ++t) fn(t, 0);
    return;
  }
  ThreadPool pool(static_cast<int>(n));
  pool.ParallelFor(num_tasks, fn);
}

}  // namespace neardup

#endif  // NEARDUP_PARALLEL_H_
