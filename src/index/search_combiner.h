// Copyright 2026 The neardup Authors.
//
// Internal: the searches of an index file by concurrent callers (the checks
// in flight in `neardup serve`), combined into batches.
//
// At the default method the index file is searched by a scan of every row
// (issue 26: the exact scan, or the two-level filter whose first level
// scans every row's low word): one query streams the rows from memory
// (bound by memory bandwidth), while a batch compares each block of rows
// with every query while it is in cache (bound by arithmetic). So queries
// that arrive together cost about half as much CPU searched as one batch
// as one by one.
//
// Flat combining: a caller queues its queries; if fewer than max_leaders
// callers are searching, it becomes a leader, takes every queued request
// and searches them as one batch per (file, k), then hands each caller its
// rows. Other callers wait, each on its own request: a leader that is done
// wakes the callers of its batch alone, and only those asleep (a check in
// `neardup serve` that waits costs one sleep and one wake-up, not one for
// every batch that ends meanwhile; a leader's own call none), and hands its place to the first
// caller still queued, which leads the next batch with every request queued by then. A caller alone
// (no load) leads at once with its own queries: no added wait. Under load
// (the last batch held several calls, or calls queued while it ran) a
// leader first waits, at most half a batch's measured search time and 1
// ms, for one more call than the last batch held: a search that is bound
// by reading the file costs little more for a few queries than for one, so
// larger batches cost less CPU a query (never for searches under 40 us,
// such as the 64-bit exact tables'). A call of AloneQueries(file) queries
// or more is a batch already: it is searched at once on its own thread,
// never queued. That is kSearchAloneQueries for a scan or banded tables
// (whose batch gains end with the scan's tile), and the pipeline's whole
// chunk (4,096) for the probe tables (the default method at 1M and more):
// their sorted path reads each table once a batch, so that it costs less a
// query the larger the batch (at 1M ~43 us a query in batches of 256, ~25
// in batches of 1,000: doc/benchmarks.md), and `neardup serve`'s requests
// of 32 or 256 fingerprints are combined into one batch as those of one.
//
// Thread-safe. The answers are those of TableIndex::SearchFileBatchChunked
// for each caller's queries alone (the batch pipeline answers each query
// independently of the others).

#ifndef NEARDUP_INDEX_SEARCH_COMBINER_H_
#define NEARDUP_INDEX_SEARCH_COMBINER_H_

#include <atomic>
#include <chrono>
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

// The queries from which a call on `file` is searched alone, not combined
// (see above).
size_t AloneQueries(const IndexFileV2& file);

// Where a combined search found the delta (SetDeltaSearch): the index's
// epoch and the delta's size when it was searched.
struct DeltaMark {
  uint64_t epoch = 0;
  size_t end = 0;
};

class FileSearchCombiner {
 public:
  // The search of the in-memory delta that follows the file's in a
  // combined batch: appends to (*out)[j] the delta's rows for queries[j]
  // and sets *mark (the owner takes its own lock inside). The delta's
  // tables (probe tables at the default method) also cost less a query in
  // a larger batch.
  using DeltaSearch = std::function<void(std::span<const Fingerprint> queries, int k,
                                         std::vector<std::vector<Neighbor>>* out, DeltaMark* mark)>;

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
  //
  // With delta_out (and mark) not null, the batch's queries are also run
  // through the delta search set by SetDeltaSearch, once for the batch:
  // appends queries[j]'s delta rows to (*delta_out)[j] and sets *mark to
  // where it searched. REQUIRES then: SetDeltaSearch was called,
  // delta_out->size() >= queries.size().
  void Search(const IndexFileV2& file, std::span<const Fingerprint> queries, int k,
              std::vector<std::vector<Neighbor>>* out,
              std::vector<std::vector<Neighbor>>* delta_out = nullptr, DeltaMark* mark = nullptr);
  // Sets the delta search (before any Search).
  void SetDeltaSearch(DeltaSearch fn) { delta_ = std::move(fn); }

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
  // Tests: the longest a leader under load waits for more calls, instead
  // of half the measured search time (zero: never). Set before any Search.
  void SetGatherWindowForTesting(std::chrono::nanoseconds window) { gather_for_testing_ = window; }

 private:
  // A queued call, on its caller's stack. Its state is written under mu_
  // (by the leader that completes it or hands it the lead) and read by its
  // caller without it. A caller that finds its state unchanged sleeps on the
  // state word itself (a futex on Linux: one FUTEX_WAIT, and one FUTEX_WAKE
  // by the leader only when the caller did sleep; a leader's own call and a
  // call completed before its caller slept cost no system call). The leader
  // writes the request's fields before it publishes kDone, and after that
  // touches only the state word's address (a wake-up of an address whose
  // caller has returned wakes nobody, or a waiter that tests its own state
  // again). std::atomic::wait spins through sched_yield first (~5 % of the
  // server's CPU, measured): used only where there is no futex.
  enum State : uint32_t { kWaiting = 0, kOffered = 1, kDone = 2, kSleeping = 4 };
  struct Request {
    const IndexFileV2* file = nullptr;
    std::span<const Fingerprint> queries;
    int k = 0;
    std::vector<std::vector<Neighbor>>* out = nullptr;
    std::vector<std::vector<Neighbor>>* delta_out = nullptr;  // null: the file alone
    DeltaMark* mark = nullptr;
    // kWaiting, kOffered (the lead was handed to it) or kDone, with
    // kSleeping or'ed in while its caller sleeps (or is about to).
    std::atomic<uint32_t> state{kWaiting};
    bool reserved = false;     // a leader's place is counted for it (kOffered); guarded by mu_
    std::exception_ptr error;  // the batch's search threw; written before kDone
  };
  // Sleeps until r's state is no longer kWaiting; returns it (kOffered or
  // kDone, without kSleeping).
  static uint32_t Await(Request& r);
  // Sets r's state to `to` (kOffered or kDone; requires mu_); returns the
  // state word to wake once mu_ is released (nullptr: its caller is awake).
  static std::atomic<uint32_t>* Publish(Request& r, uint32_t to);
  // Wakes the caller sleeping on `state` (an address Publish returned).
  static void Wake(std::atomic<uint32_t>* state);
  // Leads one batch: every queued request. Called with `lock` held and
  // this caller's place counted in leaders_; returns with it released and
  // the place given up (or handed on).
  void Lead(std::unique_lock<std::mutex>& lock);
  // A place is free and a request queued: the first queued caller not
  // offered the lead yet, its place counted (the caller publishes kOffered);
  // nullptr when none. Requires mu_.
  Request* HandOffLocked();
  // How long a new leader waits for more calls (zero: not at all), from
  // the last batch. Requires mu_.
  std::chrono::nanoseconds GatherWindowLocked() const;
  // Searches `batch`, one pipeline per (file, k), then the delta for the
  // requests that ask for it. Called without mu_.
  void Run(std::span<Request* const> batch);
  // The delta search of the requests of `group` that ask for it; `queries`
  // holds every request's queries in group order.
  void RunDelta(std::span<Request* const> group, std::span<const Fingerprint> queries, int k);

  const int max_leaders_;
  std::mutex mu_;
  std::vector<Request*> pending_;  // guarded by mu_
  // A batch's vector once searched, whose capacity the next leader gives
  // pending_ (no allocation a call in the steady state); guarded by mu_.
  std::vector<Request*> spare_;
  int leaders_ = 0;  // guarded by mu_
  // Gathering: a leader waits on arrived_ until gather_target_ calls are
  // queued (0: none waits). The last batch's calls, whether calls queued
  // while it ran, and a batch's search time (a moving average).
  std::condition_variable arrived_;
  size_t gather_target_ = 0;                 // guarded by mu_
  size_t last_batch_ = 0;                    // guarded by mu_
  bool queued_after_ = false;                // guarded by mu_
  std::chrono::nanoseconds search_time_{0};  // guarded by mu_
  std::chrono::nanoseconds gather_for_testing_{-1};
  std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> batches_{0};
  std::function<void()> on_lead_;
  DeltaSearch delta_;
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_SEARCH_COMBINER_H_
