// Copyright 2026 The neardup Authors.

#include "index/search_combiner.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include "index/table_index.h"

namespace neardup::index_internal {

namespace {

int DefaultLeaders() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::max(1, static_cast<int>(hw / 2));
}

}  // namespace

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
                                int k, std::vector<std::vector<Neighbor>>* out) {
  if (queries.empty()) return;
  if (queries.size() >= kSearchAloneQueries) {
    // A batch already: searched at once, on this thread (two large calls
    // use two cores, not one after the other).
    calls_.fetch_add(1, std::memory_order_relaxed);
    batches_.fetch_add(1, std::memory_order_relaxed);
    TableIndex::SearchFileBatchChunked(file, nullptr, queries, k, out);
    return;
  }
  auto request = std::make_shared<Request>();
  request->file = &file;
  request->queries = queries;
  request->k = k;
  request->out = out;
  calls_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock lock(mu_);
  pending_.push_back(request);
  if (gather_target_ != 0 && pending_.size() == gather_target_) arrived_.notify_one();
  bool lead = leaders_ < max_leaders_;
  if (lead) ++leaders_;
  for (;;) {
    if (lead) {
      Lead(lock);  // releases the lock
    } else {
      lock.unlock();
    }
    // Asleep until a leader completes this request or hands it the lead.
    int state;
    if ((state = request->state.load(std::memory_order_acquire)) == kWaiting) {
      std::unique_lock sleep(request->wake_mu);
      request->wake.wait(sleep, [&] {
        return (state = request->state.load(std::memory_order_acquire)) != kWaiting;
      });
    }
    if (state == kDone) break;
    lock.lock();
    // Offered the lead; a leader that took this request meanwhile has
    // completed it (and given up the place counted for it).
    if (request->state.load(std::memory_order_relaxed) == kDone) {
      lock.unlock();
      break;
    }
    request->state.store(kWaiting, std::memory_order_relaxed);
    request->reserved = false;
    lead = true;
  }
  if (request->error) std::rethrow_exception(request->error);
}

void FileSearchCombiner::Wake(Request& r) {
  // The caller tests its state holding wake_mu: taken here after the
  // change, the wake-up cannot fall between its test and its sleep.
  { std::lock_guard order(r.wake_mu); }
  r.wake.notify_one();
}

FileSearchCombiner::RequestPtr FileSearchCombiner::HandOffLocked() {
  if (leaders_ >= max_leaders_) return nullptr;
  for (const RequestPtr& r : pending_) {
    if (!r->reserved) {
      r->reserved = true;
      r->state.store(kOffered, std::memory_order_release);
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
  std::vector<RequestPtr> batch;
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
  for (const RequestPtr& r : batch) {
    r->error = error;
    if (r->reserved) {  // offered the lead, but searched here: its place is free
      r->reserved = false;
      --leaders_;
    }
    r->state.store(kDone, std::memory_order_release);
  }
  --leaders_;
  // Every place free now (this one, and those of offered requests searched
  // here) to a queued caller, woken at once (queued, it stays alive while
  // mu_ is held; nothing here allocates, so no caller is left unwoken).
  while (RequestPtr r = HandOffLocked()) Wake(*r);
  lock.unlock();
  // Each caller of the batch woken (the references held here keep their
  // states alive while they are).
  for (const RequestPtr& r : batch) Wake(*r);
}

void FileSearchCombiner::Run(std::span<const RequestPtr> batch) {
  std::vector<bool> taken(batch.size(), false);
  std::vector<Fingerprint> queries;
  std::vector<std::vector<Neighbor>> rows;
  for (size_t first = 0; first < batch.size(); ++first) {
    if (taken[first]) continue;
    const IndexFileV2* file = batch[first]->file;
    const int k = batch[first]->k;
    // Every request of this (file, k), in arrival order.
    std::vector<Request*> group;
    for (size_t i = first; i < batch.size(); ++i) {
      if (!taken[i] && batch[i]->file == file && batch[i]->k == k) {
        taken[i] = true;
        group.push_back(batch[i].get());
      }
    }
    if (group.size() == 1) {
      Request& r = *group[0];
      TableIndex::SearchFileBatchChunked(*file, nullptr, r.queries, k, r.out);
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
        to.insert(to.end(), rows[at].begin(), rows[at].end());
      }
    }
  }
}

}  // namespace neardup::index_internal
