// Copyright 2026 The neardup Authors.

#include "util/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace neardup {
namespace {

TEST(ThreadPoolTest, ResolveThreadCount) {
  EXPECT_EQ(ResolveThreadCount(3), 3);
  EXPECT_GE(ResolveThreadCount(0), 1);
  EXPECT_GE(ResolveThreadCount(-1), 1);
}

TEST(ThreadPoolTest, EveryTaskExactlyOnceWithValidWorkerIds) {
  for (int threads : {1, 2, 4, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.requested(), threads);
    EXPECT_LE(pool.threads(), threads);
    for (size_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<bool> bad_worker{false};
      pool.ParallelFor(n, [&](size_t i, int worker) {
        if (worker < 0 || worker >= pool.threads()) bad_worker = true;
        hits[i].fetch_add(1);
      });
      EXPECT_FALSE(bad_worker);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[i].load(), 1) << threads << " " << n << " " << i;
    }
  }
}

TEST(ThreadPoolTest, PoolIsReusedForManyJobs) {
  ThreadPool pool(4);
  std::atomic<size_t> sum{0};
  for (int job = 0; job < 500; ++job) {
    pool.ParallelFor(10, [&](size_t i, int) { sum += i; });
  }
  EXPECT_EQ(sum.load(), 500u * 45u);
}

TEST(ThreadPoolTest, FreeParallelForPerWorkerState) {
  // Per-worker accumulators, sized by the resolved thread count, as the
  // evaluation harness does.
  for (int threads : {1, 3}) {
    std::vector<long> part(static_cast<size_t>(ResolveThreadCount(threads)), 0);
    ParallelFor(1000, threads,
                [&](size_t i, int w) { part[static_cast<size_t>(w)] += static_cast<long>(i); });
    long total = 0;
    for (long p : part) total += p;
    EXPECT_EQ(total, 999L * 1000L / 2);
  }
}

TEST(ThreadPoolTest, ExceptionIsRethrownOnTheCaller) {
  for (int threads : {1, 4}) {
    ThreadPool pool(threads);
    EXPECT_THROW(pool.ParallelFor(100,
                                  [](size_t i, int) {
                                    if (i == 37) throw std::runtime_error("task 37");
                                  }),
                 std::runtime_error);
    // The pool is still usable afterwards, and without an exception nothing
    // is thrown.
    std::atomic<int> count{0};
    EXPECT_NO_THROW(pool.ParallelFor(50, [&](size_t, int) { ++count; }));
    EXPECT_EQ(count.load(), 50);
  }
}

std::vector<std::string> RunMap(int threads, size_t items, const BatchLimits& limits) {
  ThreadPool pool(threads);
  size_t produced = 0;
  size_t in_flight = 0, max_in_flight = 0;
  std::vector<std::string> emitted;
  OrderedParallelMap<size_t, std::string>(
      &pool, limits,
      [&](size_t* item) {
        if (produced == items) return false;
        *item = produced++;
        max_in_flight = std::max(max_in_flight, ++in_flight);
        return true;
      },
      [](const size_t& item) { return item % 3 + 1; },
      [](const size_t& item) { return std::to_string(item * item); },
      [&](size_t& item, std::string& out) {
        EXPECT_EQ(item, emitted.size());
        --in_flight;
        emitted.push_back(out);
      });
  EXPECT_LE(max_in_flight, std::max<size_t>(limits.max_items, 1) * (limits.read_ahead ? 2 : 1));
  return emitted;
}

TEST(OrderedParallelMapTest, InputOrderAndSameResultForOneAndManyThreads) {
  const BatchLimits limits{.max_items = 16, .max_cost = 20};
  const std::vector<std::string> one = RunMap(1, 1000, limits);
  ASSERT_EQ(one.size(), 1000u);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i], std::to_string(i * i));
  EXPECT_EQ(RunMap(4, 1000, limits), one);
  EXPECT_EQ(RunMap(8, 1000, BatchLimits{}), one);
  EXPECT_TRUE(RunMap(4, 0, limits).empty());
  EXPECT_EQ(RunMap(4, 1, BatchLimits{.max_items = 0, .max_cost = 0}).size(), 1u);
  // Reading ahead (next() as a task beside process()): the same output.
  for (int threads : {1, 2, 4}) {
    const BatchLimits ahead{.max_items = 16, .max_cost = 20, .read_ahead = true};
    EXPECT_EQ(RunMap(threads, 1000, ahead), one) << threads;
    EXPECT_TRUE(RunMap(threads, 0, ahead).empty()) << threads;
    EXPECT_EQ(RunMap(threads, 1, BatchLimits{.max_items = 0, .max_cost = 0, .read_ahead = true}),
              std::vector<std::string>{"0"})
        << threads;
    EXPECT_EQ(RunMap(threads, 16, ahead).size(), 16u) << threads;  // exactly one full batch
  }
}

}  // namespace
}  // namespace neardup
