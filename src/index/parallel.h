// Copyright 2026 The neardup Authors.
//
// Internal: a minimal parallel-for over std::thread.

#ifndef NEARDUP_INDEX_PARALLEL_H_
#define NEARDUP_INDEX_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace neardup::index_internal {

// 0 -> hardware threads (at least 1); otherwise `threads` (at least 1).
inline int ResolveThreads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// Calls fn(task, worker) for every task in [0, num_tasks), tasks handed out
// dynamically to min(threads, num_tasks) workers; worker 0 is the caller.
// When the system refuses a thread (std::system_error: a memory or process
// limit), the workers started so far share the tasks: fewer threads, same
// result; with none, the caller does every task.
template <typename Fn>
void ParallelFor(size_t num_tasks, int threads, Fn&& fn) {
  const int workers =
      static_cast<int>(std::min<size_t>(static_cast<size_t>(ResolveThreads(threads)), num_tasks));
  if (workers <= 1) {
    for (size_t t = 0; t < num_tasks; ++t) fn(t, 0);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&](int worker) {
    for (size_t t = next.fetch_add(1); t < num_tasks; t = next.fetch_add(1)) fn(t, worker);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(work, w);
    } catch (const std::system_error&) {
      break;
    }
  }
  work(0);
  for (auto& th : pool) th.join();
}

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_PARALLEL_H_
