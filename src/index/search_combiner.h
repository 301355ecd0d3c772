// Copyright 2026 The neardup Authors.
//
// Internal: the searches of an index file by concurrent callers (the checks
// in flight in `neardup serve`), combined into batches.
//
// At the default method the index file is searched by the exact scan (issue
// 26): one query streams every row from memory (16 bytes a row: bound by
// memory bandwidth, ~0.43 ns a row), while a batch compares each block of
// rows with every query while it is in cache (bound by arithmetic, ~0.20 ns
// a row and query). So queries that arrive together cost half as much CPU
// searched as one batch as one by one.
//
// Flat combining: a caller queues its queries; if fewer than max_leaders
// callers are searching, it becomes a leader, takes every queued request
// and searches them as one batch per (file, k), then hands each caller its
// rows. Other callers wait; when a leader is done, a waiting caller whose
// request was not taken leads the next batch. A caller alone (no load)
// leads at once with its own queries: no added wait. A call of
// kSearchAloneQueries queries or more is a batch already: it is searched at
// once on its own thread, never queued.
//
// Thread-safe. The answers are those of TableIndex::SearchFileBatchChunked
// for each caller's queries alone (the batch pipeline answers each query
// independently of the others).

#ifndef NEARDUP_INDEX_SEARCH_COMBINER_H_
#define NEARDUP_INDEX_SEARCH_COMBINER_H_

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "index/index_file_v2.h"
#include "neardup/fingerprint.h"
#include "neardup/index.h"

namespace neardup::index_internal {

// Calls with at least this many queries are not combined (the tiled scan's
// batch, kMinTiledBatch).
inline constexpr size_t kSearchAloneQueries = 64;

class FileSearchCombiner {
 public:
  // max_leaders: batches searched at once (at least 1); 0 picks half of
  // the hardware threads (at least 1), leaving the others to the callers'
  // own work (in serve: HTTP, JSON, fingerprinting, the writer's half).
  explicit FileSearchCombiner(int max_leaders = 0);
  FileSearchCombiner(const FileSearchCombiner&) = delete;
  FileSearchCombiner& operator=(const FileSearchCombiner&) = delete;

  // Appends to (*out)[j] every row of `file` within distance k of
  // queries[j] (numeric ids, rows removed since included), as
  // TableIndex::SearchFileBatchChunked(file, nullptr, queries, k, out).
  // An exception thrown by the search of a batch (std::bad_alloc) is
  // rethrown in each of its callers (their rows then incomplete); the
  // combiner goes on serving others. REQUIRES: out->size() >=
  // queries.size(); k and the widths valid; `file` outlives the call.
  void Search(const IndexFileV2& file, std::span<const Fingerprint> queries, int k,
              std::vector<std::vector<Neighbor>>* out);

  int max_leaders() const { return max_leaders_; }
  // Calls of Search, and batches taken by leaders (fewer when calls were
  // combined).
  struct Counts {
    uint64_t calls = 0;
    uint64_t batches = 0;
  };
  Counts counts() const;

  // Tests: called by each leader after it took its batch, before the
  // search, without the lock (a test holds the first leader there until
  // other calls are queued, or throws). Set before any Search.
  void SetOnLeadForTesting(std::function<void()> fn) { on_lead_ = std::move(fn); }

 private:
  struct Request {
    const IndexFileV2* file;
    std::span<const Fingerprint> queries;
    int k;
    std::vector<std::vector<Neighbor>>* out;
    bool done = false;         // guarded by mu_
    std::exception_ptr error;  // the batch's search threw; guarded by mu_
  };
  // Searches `batch`, one pipeline per (file, k). Called without mu_.
  static void Run(std::span<Request* const> batch);

  const int max_leaders_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::vector<Request*> pending_;  // guarded by mu_
  int leaders_ = 0;                // guarded by mu_
  Counts counts_;                  // guarded by mu_
  std::function<void()> on_lead_;
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_SEARCH_COMBINER_H_
