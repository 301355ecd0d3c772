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
  std::lock_guard lock(mu_);
  return counts_;
}

void FileSearchCombiner::Search(const IndexFileV2& file, std::span<const Fingerprint> queries,
                                int k, std::vector<std::vector<Neighbor>>* out) {
  if (queries.empty()) return;
  if (queries.size() >= kSearchAloneQueries) {
    // A batch already: searched at once, on this thread (two large calls
    // use two cores, not one after the other).
    {
      std::lock_guard lock(mu_);
      ++counts_.calls;
      ++counts_.batches;
    }
    TableIndex::SearchFileBatchChunked(file, nullptr, queries, k, out);
    return;
  }
  Request request{&file, queries, k, out};
  std::unique_lock lock(mu_);
  ++counts_.calls;
  pending_.push_back(&request);
  while (!request.done) {
    // pending_ is empty when another leader took this request: wait for it.
    if (leaders_ >= max_leaders_ || pending_.empty()) {
      done_.wait(lock);
      continue;
    }
    ++leaders_;
    std::vector<Request*> batch;
    batch.swap(pending_);
    ++counts_.batches;
    lock.unlock();
    // An exception (out of memory) must not leave the batch's callers
    // waiting and the leader's place taken: each caller rethrows it.
    std::exception_ptr error;
    try {
      if (on_lead_) on_lead_();
      Run(batch);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    for (Request* r : batch) {
      r->error = error;
      r->done = true;
    }
    --leaders_;
    done_.notify_all();
  }
  if (request.error) {
    lock.unlock();
    std::rethrow_exception(request.error);
  }
}

void FileSearchCombiner::Run(std::span<Request* const> batch) {
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
        group.push_back(batch[i]);
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
