// Copyright 2026 The neardup Authors.
//
// Internal: an ordered parallel map on the one thread pool of neardup
// (neardup/parallel.h, public: the tools and the Python module use it too).
//
//   ThreadPool pool(threads);                  // 0 = all cores; once per run
//   OrderedParallelMap(&pool, limits, next, cost, process, emit);
//
// The engine's reading passes (neardup/document_pass.h) are the public face
// of OrderedParallelMap over documents.
//
// Thread safety: OrderedParallelMap may be called by one thread at a time on
// a pool (not from inside a task of the same pool).

#ifndef NEARDUP_UTIL_THREAD_POOL_H_
#define NEARDUP_UTIL_THREAD_POOL_H_

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

#include "neardup/parallel.h"

namespace neardup {

// Limits of one batch of OrderedParallelMap: the items in flight.
struct BatchLimits {
  size_t max_items = 512;
  size_t max_cost = size_t{8} << 20;  // e.g. bytes of text
  // Read the next batch while this one is processed: reading becomes a task
  // of the batch's ParallelFor (the first handed out), so that with two or
  // more threads the input is not a serial stage between batches. Up to two
  // batches are then held, and next and cost run on any of the pool's threads
  // (one call at a time, concurrently with process).
  bool read_ahead = false;
};

// Reads items with next(Item*) until it returns false, computes
// process(const Item&) -> Out on the pool's threads and calls
// emit(Item&, Out&) on the calling thread, in input order. At most
// limits.max_items items, and no more items once their summed cost(const
// Item&) reaches limits.max_cost, are held at a time (at least one; twice
// that with limits.read_ahead). `process` must be safe to call concurrently;
// emit runs only on the calling thread, and so do next and cost unless
// limits.read_ahead (see BatchLimits).
template <typename Item, typename Out, typename NextFn, typename CostFn, typename ProcessFn,
          typename EmitFn>
void OrderedParallelMap(ThreadPool* pool, const BatchLimits& limits, NextFn&& next, CostFn&& cost,
                        ProcessFn&& process, EmitFn&& emit) {
  std::vector<Item> batch;
  std::vector<Out> results;
  bool more = true;
  if (limits.read_ahead && pool->threads() > 1) {
    // Fills *b; false once next() has said the input ended.
    const auto read = [&](std::vector<Item>* b) {
      b->clear();
      size_t batch_cost = 0;
      while (b->empty() || (b->size() < limits.max_items && batch_cost < limits.max_cost)) {
        Item item;
        if (!next(&item)) return false;
        batch_cost += cost(item);
        b->push_back(std::move(item));
      }
      return true;
    };
    std::vector<Item> ahead;
    more = read(&batch);
    while (!batch.empty()) {
      results.assign(batch.size(), Out());
      ahead.clear();
      bool ahead_more = false;
      const size_t first = more ? 1 : 0;  // task 0 reads the next batch
      pool->ParallelFor(batch.size() + first, [&](size_t i, int) {
        if (i < first) {
          ahead_more = read(&ahead);
        } else {
          results[i - first] = process(batch[i - first]);
        }
      });
      for (size_t i = 0; i < batch.size(); ++i) emit(batch[i], results[i]);
      batch.swap(ahead);  // empty when the input had ended
      more = ahead_more;
    }
    return;
  }
  while (more) {
    batch.clear();
    size_t batch_cost = 0;
    while (batch.empty() || (batch.size() < limits.max_items && batch_cost < limits.max_cost)) {
      Item item;
      if (!next(&item)) {
        more = false;
        break;
      }
      batch_cost += cost(item);
      batch.push_back(std::move(item));
    }
    results.assign(batch.size(), Out());
    pool->ParallelFor(batch.size(), [&](size_t i, int) { results[i] = process(batch[i]); });
    for (size_t i = 0; i < batch.size(); ++i) emit(batch[i], results[i]);
  }
}

}  // namespace neardup

#endif  // NEARDUP_UTIL_THREAD_POOL_H_
