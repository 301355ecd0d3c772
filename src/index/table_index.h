// Copyright 2026 The neardup Authors.
//
// Internal: the HammingIndex of a DocumentIndex. A base (a version 2 index
// file used in place, index_file_v2.h; or none) plus an in-memory delta of
// the entries added since the base was written, with tombstones for removed
// base rows. The delta is indexed in levels, each with tables of the base's
// masks over a run of consecutive entries (oldest and largest first; a
// level is merged into the one before it while that one is less than 8
// times its size, so there are at most log8(delta / tail cap) + 1 of them,
// one or two between a server's compactions, and an entry is rebuilt
// about 9 times for each of them), plus an unsorted tail scanned linearly. Its cap is what a level
// costs a query: 64 entries a probe; for the probe tables 10 ns a probe over the scan's measured
// cost a row by kernel (~61,000 AVX-512, ~14,000 AVX2), their levels' directories narrowed to
// their sizes (LevelDirBits). Few probes keep a short tail, many a long one; a spec without
// tables (the scan) keeps no levels, the whole delta is its tail. The answers are those of a
// freshly written file: the mapped index answers exactly as the in-memory
// one.
//
// Thread safety: const methods may run concurrently with each other (the
// delta's tables are built lazily under an internal mutex); a non-const
// method needs exclusive access. SearchFile on a held base_file() needs no
// lock at all.

#ifndef NEARDUP_INDEX_TABLE_INDEX_H_
#define NEARDUP_INDEX_TABLE_INDEX_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "neardup/index.h"

namespace neardup::index_internal {

class TableIndex : public HammingIndex {
 public:
  // An empty index whose tables are chosen for `expected` entries.
  static Result<std::unique_ptr<TableIndex>> Create(int bits, int max_k, const TablesPolicy& policy,
                                                    size_t expected);
  // The index of a version 2 file, used in place.
  static std::unique_ptr<TableIndex> FromFile(std::shared_ptr<const IndexFileV2> file);

  IndexType type() const override { return IndexType::kTables; }
  int bits() const override { return spec_.bits; }
  int max_k() const override { return spec_.max_k; }
  size_t size() const override { return live_; }
  size_t MemoryBytes() const override;
  Status Add(uint64_t id, const Fingerprint& fp) override;
  Status AddBatch(std::span<const uint64_t> ids, std::span<const Fingerprint> fps) override;
  // AddBatch, leaving the delta's tables to be built by the first call that
  // needs them (Search, MemoryBytes; or the next AddBatch): a bulk load that
  // is written to a file and replaced by it never builds them.
  Status AddBatchDeferTables(std::span<const uint64_t> ids, std::span<const Fingerprint> fps);
  size_t Remove(uint64_t id) override;
  size_t RemoveBatch(std::span<const uint64_t> ids) override;
  Status Search(const Fingerprint& query, int k, std::vector<Neighbor>* out) const override;
  // Search for every query, through the tables' batch pipeline
  // (SearchFileBatch, then SearchDeltaBatch), on `threads` threads: the
  // answer to queries[j] is exactly Search(queries[j])'s. Where the spec is
  // the scan (kind kScan: ChooseTables found it cheaper than any tables),
  // Search scans the rows one query at a time and SearchBatch tiles the scan
  // over each chunk of 256 queries: both exact, so again the same answers
  // (kind kFilter: both the two-level scan, the same rows too).
  Status SearchBatch(std::span<const Fingerprint> queries, int k, int threads,
                     SearchResults* out) const override;
  // SearchBatch on the calling thread, into one vector per query.
  Status SearchEach(std::span<const Fingerprint> queries, int k,
                    std::vector<std::vector<Neighbor>>* out) const;
  Status SelfJoin(int k, int threads, std::vector<IdPair>* out) const override;
  // Live entries: the base's rows in file order, then the delta's.
  std::vector<IndexEntry> Entries() const override;
  Status Save(const std::string& path) const override;

  const TablesSpec& spec() const { return spec_; }
  const TablesPolicy& policy() const { return policy_; }
  const IndexFileV2* base() const { return base_.get(); }
  size_t delta_size() const { return d_ids_.size(); }
  // The entries of each of the delta's levels, oldest first (the tail not
  // included; levels deferred by AddBatchDeferTables built first).
  std::vector<size_t> DeltaLevelSizes() const;
  // The version 2 file used in place (null for an index without one). It
  // never changes: queries of it need no lock once the pointer is held.
  std::shared_ptr<const IndexFileV2> base_file() const { return base_; }
  // Appends to *out every row of `file` within distance k of `query` found
  // by its tables (numeric ids; rows removed since included, unless `dead`
  // marks them). Needs no lock. REQUIRES: k and the width valid.
  static void SearchFile(const IndexFileV2& file, const std::vector<bool>* dead,
                         const Fingerprint& query, int k, std::vector<Neighbor>* out);
  // SearchFile for a batch of queries, through one probing pipeline
  // (QueryTablesBatch): appends query j's rows to (*out)[j]. Same results
  // as SearchFile query by query. REQUIRES: out->size() >= queries.size(),
  // k and the widths valid.
  static void SearchFileBatch(const IndexFileV2& file, const std::vector<bool>* dead,
                              std::span<const Fingerprint> queries, int k,
                              std::vector<std::vector<Neighbor>>* out);
  // SearchFileBatch over any number of queries (in chunks of BatchChunk).
  static void SearchFileBatchChunked(const IndexFileV2& file, const std::vector<bool>* dead,
                                     std::span<const Fingerprint> queries, int k,
                                     std::vector<std::vector<Neighbor>>* out);
  // The queries the batch pipeline of `spec` takes at once: 256 (a tiled
  // scan's tile, or the tables' pipeline scratch), or 4,096 for the probe
  // tables, whose sorted path costs less a query the larger the batch (it
  // reads each table once a batch).
  static size_t BatchChunk(const TablesSpec& spec);
  // SearchDeltaBatch over any number of queries (in chunks of BatchChunk).
  void SearchDeltaBatchChunked(std::span<const Fingerprint> queries, int k,
                               std::vector<std::vector<Neighbor>>* out) const;
  // SearchDelta for a batch of queries (the levels' tables through one
  // pipeline each, the tail by the tiled SIMD scan): appends query j's
  // entries to (*out)[j], unsorted. REQUIRES: as SearchFileBatch.
  void SearchDeltaBatch(std::span<const Fingerprint> queries, int k,
                        std::vector<std::vector<Neighbor>>* out) const;
  // Appends to *out every live delta entry within distance k (its tables and
  // its tail), unsorted. REQUIRES: k and the width valid.
  void SearchDelta(const Fingerprint& query, int k, std::vector<Neighbor>* out) const;
  // Appends to *out every live delta entry at position >= `from` (in
  // insertion order: the entries added since delta_size() was `from`) within
  // distance k of `query`, by a linear scan (exact; with a spec of kind
  // kFilter, the two-level scan, as the file's rows). REQUIRES: k and the
  // query's width valid (as checked by Search).
  void SearchDeltaSince(size_t from, const Fingerprint& query, int k,
                        std::vector<Neighbor>* out) const;
  // True when base row `row` was removed.
  bool BaseRemoved(size_t row) const { return row < base_dead_.size() && base_dead_[row]; }
  // k within [0, max_k()] and every query as wide as the index, or the
  // error Search, SearchBatch and SearchEach answer with.
  Status CheckQueries(std::span<const Fingerprint> queries, int k) const;

 private:
  // Tables over the delta entries [begin, end), with a view that reads
  // their fingerprints from position `begin` (rows are relative to it).
  struct DeltaLevel {
    size_t begin = 0, end = 0;
    std::vector<OwnedTable> tables;
    TablesView view;
  };

  TableIndex() = default;
  // The tail's RowsView::lo_filter: the spec's threshold for kind kFilter
  // (so that the delta answers as the file written from it), else -1.
  int LoFilter() const { return spec_.kind == TablesKind::kFilter ? spec_.radius : -1; }
  // Whether the tables of the spec find delta entry `pos` for the query
  // (kind kProbe: ProbeFinds, so that the tail answers as the file written
  // from it; every other kind: true, its tail is exact or lo_filter's).
  bool FoundByTables(size_t pos, uint64_t q_hi, uint64_t q_lo) const;
  // Sets the tail's cap from spec_ (after spec_ is set).
  void SetTailCap();
  // Makes the tail a level and merges levels of like size.
  void IndexTail();
  DeltaLevel BuildLevel(size_t begin, size_t end) const;
  // Points the levels' views at the delta's vectors (which may have moved).
  void PointViews();
  Status Append(std::span<const uint64_t> ids, std::span<const Fingerprint> fps, bool defer);
  // Builds the delta's tables when AddBatchDeferTables left them out of
  // date. Safe from concurrent const calls (the readers' side of a
  // DocumentIndex's lock): one builds, the others wait for it.
  void EnsureTables() const;

  TablesSpec spec_;
  TablesPolicy policy_;
  std::shared_ptr<const IndexFileV2> base_;
  std::vector<bool> base_dead_;  // by base row; empty until the first removal
  size_t live_ = 0;
  // The delta: entries in insertion order.
  std::vector<uint64_t> d_ids_, d_lo_, d_hi_;
  std::vector<bool> d_dead_;
  std::unordered_map<uint64_t, std::vector<size_t>> d_pos_;  // id -> delta positions
  std::vector<DeltaLevel> d_levels_;                         // covering [0, d_built_), oldest first
  size_t d_built_ = 0;
  size_t tail_cap_ = 0;
  mutable std::mutex lazy_mu_;
  mutable std::atomic<bool> tables_current_{true};
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_TABLE_INDEX_H_
