// Copyright 2026 The neardup Authors.

#include "index/search_combiner.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include "index/table_index.h"

namespace neardup::index_internal {

namespace {

// The state words a leader wakes after releasing the lock (reused: no
// allocation a batch).
std::vector<std::atomic<uint32_t>*>& WakeList() {
  thread_local std::vector<std::atomic<uint32_t>*> list;
  return list;
}

int DefaultLeaders() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::max(1, static_cast<int>(hw / 2));
}

}  // namespace

size_t AloneQueries(const IndexFileV2& file) {
  const TablesSpec& spec = file.meta().spec;
  return spec.kind == TablesKind::kProbe ? TableIndex::BatchChunk(spec) : kSearchAloneQueries;
}

FileSearchCombiner::FileSearchCombiner(int max_leaders)
    : max_leaders_(max_leaders > 0 ? max_leaders : DefaultLeaders()) {}

FileSearchCombiner::Counts FileSearchCombiner::counts() const {
  // Without mu_: stats and /metrics do not wait on the searches' lock.
  Counts c;
  c.calls = calls_.load(std::memory_order_relaxed);
  c.batches = batches_.load(std::memory_order_relaxed);
  return c;
}

void FileSearchCombiner::Search(const IndexFileV2& file, std::span<const Fingerprint> queries,
                                int k, std::vector<std::vector<Neighbor>>* out,
                                std::vector<std::vector<Neighbor>>* delta_out, DeltaMark* mark) {
  if (queries.empty()) return;
  Request request;
  request.file = &file;
  request.queries = queries;
  request.k = k;
  request.out = out;
  if (delta_out != nullptr) {
    request.delta_out = delta_out;
    request.mark = mark;
  }
  if (queries.size() >= AloneQueries(file)) {
    // A batch already: searched at once, on this thread (two large calls
    // use two cores, not one after the other).
    calls_.fetch_add(1, std::memory_order_relaxed);
    batches_.fetch_add(1, std::memory_order_relaxed);
    Request* const alone = &request;
    Run(std::span<Request* const>(&alone, 1));
    return;
  }
  calls_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock lock(mu_);
  pending_.push_back(&request);
  if (gather_target_ != 0 && pending_.size() == gather_target_) arrived_.notify_one();
  bool lead = leaders_ < max_leaders_;
  if (lead) ++leaders_;
  for (;;) {
    if (lead) {
      Lead(lock);  // releases the lock
    } else {
      lock.unlock();
    }
    // Asleep until a leader completes this request or hands it the lead
    // (a leader's own request is complete here already).
    if (Await(request) == kDone) break;
    lock.lock();
    // Offered the lead; a leader that took this request meanwhile has
    // completed it (and given up the place counted for it).
    if (request.state.load(std::memory_order_relaxed) == kDone) {
      lock.unlock();
      break;
    }
    request.state.store(kWaiting, std::memory_order_relaxed);
    request.reserved = false;
    lead = true;
  }
  if (request.error) std::rethrow_exception(request.error);
}

namespace {

#if defined(__linux__)
// The futex of a state word: sleeps while it holds `value`; wakes one
// sleeper.
void FutexWait(std::atomic<uint32_t>* word, uint32_t value) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr,
          0);
}
void FutexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
              std::atomic<uint32_t>::is_always_lock_free);
#endif

}  // namespace

uint32_t FileSearchCombiner::Await(Request& r) {
  uint32_t state = r.state.load(std::memory_order_acquire);
  while ((state & ~kSleeping) == kWaiting) {
    // Announced first, so that the leader that changes the state knows to
    // wake this caller (and, when it changed it meanwhile, no sleep).
    if (state == kWaiting &&
        !r.state.compare_exchange_weak(state, kWaiting | kSleeping, std::memory_order_acquire)) {
      continue;
    }
#if defined(__linux__)
    FutexWait(&r.state, kWaiting | kSleeping);  // returns at once if changed
#else
    r.state.wait(kWaiting | kSleeping, std::memory_order_acquire);
#endif
    state = r.state.load(std::memory_order_acquire);
  }
  return state & ~kSleeping;
}

std::atomic<uint32_t>* FileSearchCombiner::Publish(Request& r, uint32_t to) {
  const uint32_t was = r.state.exchange(to, std::memory_order_acq_rel);
  return (was & kSleeping) != 0 ? &r.state : nullptr;
}

void FileSearchCombiner::Wake(std::atomic<uint32_t>* state) {
#if defined(__linux__)
  FutexWake(state);
#else
  state->notify_one();
#endif
}

FileSearchCombiner::Request* FileSearchCombiner::HandOffLocked() {
  if (leaders_ >= max_leaders_) return nullptr;
  for (Request* r : pending_) {
    if (!r->reserved) {
      r->reserved = true;
      ++leaders_;
      return r;
    }
  }
  return nullptr;
}

std::chrono::nanoseconds FileSearchCombiner::GatherWindowLocked() const {
  using std::chrono::nanoseconds;
  // Alone (no call queued while the last batch ran, and it held one): at
  // once.
  if (last_batch_ < 2 && !queued_after_) return nanoseconds(0);
  if (gather_for_testing_.count() >= 0) return gather_for_testing_;
  const nanoseconds window = std::min<nanoseconds>(search_time_ / 2, std::chrono::milliseconds(1));
  return window >= std::chrono::microseconds(20) ? window : nanoseconds(0);
}

void FileSearchCombiner::Lead(std::unique_lock<std::mutex>& lock) {
  // Under load, a moment for one more call than the last batch held (the
  // callers queued since wake this leader when it has them).
  if (!pending_.empty()) {
    if (const std::chrono::nanoseconds window = GatherWindowLocked(); window.count() > 0) {
      gather_target_ = std::min<size_t>(last_batch_ + 1, kSearchAloneQueries);
      arrived_.wait_for(lock, window, [&] { return pending_.size() >= gather_target_; });
      gather_target_ = 0;
    }
  }
  // The queued requests; pending_ gets the last batch's vector (its
  // capacity) in their place.
  std::vector<Request*> batch;
  batch.swap(spare_);
  batch.clear();
  batch.swap(pending_);  // empty when another leader took this caller's request
  std::exception_ptr error;
  if (!batch.empty()) {
    batches_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    // An exception (out of memory) must not leave the batch's callers
    // waiting and the leader's place taken: each caller rethrows it.
    const auto start = std::chrono::steady_clock::now();
    try {
      if (on_lead_) on_lead_();
      Run(batch);
    } catch (...) {
      error = std::current_exception();
    }
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);
    lock.lock();
    search_time_ = search_time_.count() == 0 ? took : (search_time_ * 7 + took) / 8;
    last_batch_ = batch.size();
    queued_after_ = !pending_.empty();
  }
  // Each request completed; the callers asleep are woken once the lock is
  // released (their addresses kept in `batch`'s place: after kDone a
  // request may be gone, only its state word's address is used).
  std::vector<std::atomic<uint32_t>*>& wake = WakeList();
  wake.clear();
  for (Request* r : batch) {
    r->error = error;
    if (r->reserved) {  // offered the lead, but searched here: its place is free
      r->reserved = false;
      --leaders_;
    }
    if (std::atomic<uint32_t>* w = Publish(*r, kDone)) wake.push_back(w);
  }
  --leaders_;
  // Every place free now (this one, and those of offered requests searched
  // here) to a queued caller.
  while (Request* r = HandOffLocked()) {
    if (std::atomic<uint32_t>* w = Publish(*r, kOffered)) wake.push_back(w);
  }
  if (spare_.capacity() < batch.capacity()) spare_.swap(batch);
  lock.unlock();
  for (std::atomic<uint32_t>* w : wake) Wake(w);
}

void FileSearchCombiner::RunDelta(std::span<Request* const> group,
                                  std::span<const Fingerprint> queries, int k) {
  size_t wanted = 0, total = 0;
  for (const Request* r : group) {
    total += r->queries.size();
    if (r->delta_out != nullptr) wanted += r->queries.size();
  }
  if (wanted == 0) return;
  // Every request of the group (the common case): its queries as they are;
  // else those of the requests that ask.
  std::vector<Fingerprint> some;
  if (wanted < total) {
    for (const Request* r : group) {
      if (r->delta_out != nullptr) some.insert(some.end(), r->queries.begin(), r->queries.end());
    }
    queries = some;
  }
  DeltaMark mark;
  if (group.size() == 1) {
    delta_(queries, k, group[0]->delta_out, &mark);
    *group[0]->mark = mark;
    return;
  }
  std::vector<std::vector<Neighbor>> rows(queries.size());
  delta_(queries, k, &rows, &mark);
  size_t at = 0;
  for (Request* r : group) {
    if (r->delta_out == nullptr) continue;
    for (size_t j = 0; j < r->queries.size(); ++j, ++at) {
      auto& to = (*r->delta_out)[j];
      if (to.empty()) {
        to = std::move(rows[at]);
      } else {
        to.insert(to.end(), rows[at].begin(), rows[at].end());
      }
    }
    *r->mark = mark;
  }
}

void FileSearchCombiner::Run(std::span<Request* const> batch) {
  // One call (a caller alone): its own rows, searched in place.
  if (batch.size() == 1) {
    Request& r = *batch[0];
    TableIndex::SearchFileBatchChunked(*r.file, nullptr, r.queries, r.k, r.out);
    RunDelta(batch, r.queries, r.k);
    return;
  }
  std::vector<bool> taken(batch.size(), false);
  std::vector<Fingerprint> queries;
  std::vector<std::vector<Neighbor>> rows;
  std::vector<Request*> group;
  for (size_t first = 0; first < batch.size(); ++first) {
    if (taken[first]) continue;
    const IndexFileV2* file = batch[first]->file;
    const int k = batch[first]->k;
    // Every request of this (file, k), in arrival order.
    group.clear();
    for (size_t i = first; i < batch.size(); ++i) {
      if (!taken[i] && batch[i]->file == file && batch[i]->k == k) {
        taken[i] = true;
        group.push_back(batch[i]);
      }
    }
    if (group.size() == 1) {
      Request& r = *group[0];
      TableIndex::SearchFileBatchChunked(*file, nullptr, r.queries, k, r.out);
      RunDelta(group, r.queries, k);
      continue;
    }
    queries.clear();
    for (const Request* r : group)
      queries.insert(queries.end(), r->queries.begin(), r->queries.end());
    rows.assign(queries.size(), {});
    TableIndex::SearchFileBatchChunked(*file, nullptr, queries, k, &rows);
    size_t at = 0;
    for (Request* r : group) {
      for (size_t j = 0; j < r->queries.size(); ++j, ++at) {
        auto& to = (*r->out)[j];
        if (to.empty()) {
          to = std::move(rows[at]);
        } else {
          to.insert(to.end(), rows[at].begin(), rows[at].end());
        }
      }
    }
    RunDelta(group, queries, k);
  }
}

}  // namespace neardup::index_internal
