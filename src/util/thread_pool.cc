// Copyright 2026 The neardup Authors.

#include "util/thread_pool.h"

#include <system_error>

namespace neardup {

int ResolveThreadCount(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool::ThreadPool(int threads) : requested_(ResolveThreadCount(threads)) {
  workers_.reserve(static_cast<size_t>(requested_ - 1));
  for (int w = 1; w < requested_; ++w) {
    try {
      workers_.emplace_back(&ThreadPool::WorkerLoop, this, w);
    } catch (const std::system_error& e) {
      start_error_ = e.what();
      // Every thread's stack took address space the work will need: give
      // half of them back.
      const size_t keep = workers_.size() / 2;
      {
        std::lock_guard<std::mutex> lock(mu_);
        max_worker_ = static_cast<int>(keep);
      }
      wake_.notify_all();
      while (workers_.size() > keep) {
        workers_.back().join();
        workers_.pop_back();
      }
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunTasks(int worker) {
  for (size_t t = next_.fetch_add(1); t < num_tasks_; t = next_.fetch_add(1)) {
    try {
      (*fn_)(t, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      next_.store(num_tasks_);  // skip the tasks not yet started
    }
  }
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || worker > max_worker_ || job_ != seen; });
      if (stop_ || worker > max_worker_) return;
      seen = job_;
    }
    RunTasks(worker);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_ == 0) idle_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(size_t num_tasks, const std::function<void(size_t, int)>& fn) {
  if (num_tasks == 0) return;
  if (workers_.empty() || num_tasks == 1) {
    for (size_t t = 0; t < num_tasks; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    num_tasks_ = num_tasks;
    next_.store(0);
    error_ = nullptr;
    busy_ = static_cast<int>(workers_.size());
    ++job_;
  }
  wake_.notify_all();
  RunTasks(0);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace neardup
