// Copyright 2026 The neardup Authors.

#include "index/table_index.h"

#include <algorithm>
#include <bit>

#include "index/hamming_scan.h"
#include "index/probe_tables.h"
#include "util/thread_pool.h"

namespace neardup::index_internal {
namespace {

constexpr size_t kMaxEntries = 0xfffffffeu;
// The delta's unsorted tail is scanned linearly up to the larger of these
// before it becomes a level with tables: a level costs a query one random
// read (~100-200 ns) a probe, a tail entry about 1-2 ns.
constexpr size_t kMinTail = 1024;
constexpr size_t kTailEntriesPerProbe = 64;
// For the probe tables (kind kProbe) the cap is where the tail's scan costs
// a query what a level of as many entries would, both measured
// (bench/index_scan_bench.cc, BM_Delta, doc/benchmarks.md): a small level
// (its directory narrowed to its size, LevelDirBits) costs ~10 ns a probe
// of the file's layout (7.5-10 us for 848 probes at 4,096-54,272 entries,
// batches of 128-250, on AVX-512 and on AVX2), a tail entry what the tiled
// scan takes a row in cache for the active kernel: 0.138 ns with AVX-512
// (54,272 rows 7.1-7.8 us a query), 0.6 with AVX2 (4,096-54,272 rows
// 2.7-39 us), so a cap of ~61,000 entries with AVX-512 and ~14,000 with AVX2.
constexpr double kLevelNsPerProbe = 10;

double TailScanNsPerRow() {
  switch (ActiveScanIsa()) {
    case ScanIsa::kAvx512:
      return 0.138;
    case ScanIsa::kAvx2:
      return 0.6;
    case ScanIsa::kScalar:
      break;
  }
  return 0.665;  // TiledScanNsPerRow(128): the scalar scan, measured at 1M rows
}
// A level is merged into the one before it while that one holds fewer than
// this many times its entries. A level costs a query about the same
// whatever its size in a batch of a few queries (its probes: at 1M, 848
// nearly empty buckets, 7-15 us; in batches of ~1,000, probed sorted,
// 3-8 us from 4,096 to 100,000 entries: SortProbes),
// while rebuilding one costs ~10-20 ns an entry and table, once: with a
// ratio of 2 a delta of 358,000 entries (a crawler's between compactions,
// doc/benchmarks.md) held 3-4 levels and its search cost more than the
// index file's; with 8 it holds one or two. Each entry is rebuilt about
// kLevelRatio + 1 times for each level it ends in (a level grows by at
// least 1/kLevelRatio a rebuild), and a rebuild holds the writer's lock.
constexpr size_t kLevelRatio = 8;
// Queries through one probing pipeline (or one tiled scan) at a time: the
// pipeline's scratch grows with it, and a scan's tile of 256 queries reads
// each block of rows once for all of them.
constexpr size_t kBatchChunk = 256;
// The probe tables (kind kProbe) sort a batch's probes by key and read each
// table in order once a batch: the more queries a batch, the more of each
// bucket's reads they share (at 1M rows and 15-bit keys a batch of 256
// queries probes about one bucket in four, one of 4,096 nearly all, each
// a few times; BM_ChosenEach, doc/benchmarks.md).
constexpr size_t kProbeBatchChunk = 4096;

bool ByDistanceThenId(const Neighbor& a, const Neighbor& b) {
  return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
}

}  // namespace

size_t TableIndex::BatchChunk(const TablesSpec& spec) {
  return spec.kind == TablesKind::kProbe ? kProbeBatchChunk : kBatchChunk;
}

Result<std::unique_ptr<TableIndex>> TableIndex::Create(int bits, int max_k,
                                                       const TablesPolicy& policy,
                                                       size_t expected) {
  if (bits != 64 && bits != 128) return Status::InvalidArgument("bits must be 64 or 128");
  if (max_k < 0 || max_k > bits / 4) {
    return Status::InvalidArgument("max_k must be in [0, " + std::to_string(bits / 4) + "], got " +
                                   std::to_string(max_k));
  }
  if (!(policy.recall > 0 && policy.recall < 1)) {
    return Status::InvalidArgument("recall must be in (0, 1)");
  }
  std::unique_ptr<TableIndex> index(new TableIndex());
  index->policy_ = policy;
  index->spec_ = ChooseTables(std::max<size_t>(expected, 1), bits, max_k, policy);
  index->SetTailCap();
  return index;
}

std::unique_ptr<TableIndex> TableIndex::FromFile(std::shared_ptr<const IndexFileV2> file) {
  std::unique_ptr<TableIndex> index(new TableIndex());
  index->spec_ = file->meta().spec;
  index->policy_ = file->meta().policy;
  index->live_ = file->rows();
  index->base_ = std::move(file);
  index->SetTailCap();
  return index;
}

void TableIndex::SetTailCap() {
  if (spec_.masks.empty()) {
    // The scan: no tables to build, the whole delta is scanned.
    tail_cap_ = kMaxEntries;
    return;
  }
  size_t probes = 0;
  for (const TableMask& m : spec_.masks) {
    // sum_{i <= radius} C(key bits, i) keys a table.
    const int bits = std::popcount(m.hi) + std::popcount(m.lo);
    size_t keys = 1, c = 1;
    for (int i = 1; i <= static_cast<int>(m.radius); ++i) {
      c = c * static_cast<size_t>(bits - i + 1) / static_cast<size_t>(i);
      keys += c;
    }
    probes += keys;
  }
  if (spec_.kind == TablesKind::kProbe) {
    tail_cap_ = std::max(kMinTail, static_cast<size_t>(static_cast<double>(probes) *
                                                       kLevelNsPerProbe / TailScanNsPerRow()));
    return;
  }
  tail_cap_ = std::max(kMinTail, probes * kTailEntriesPerProbe);
}

TableIndex::DeltaLevel TableIndex::BuildLevel(size_t begin, size_t end) const {
  DeltaLevel level;
  level.begin = begin;
  level.end = end;
  const size_t n = end - begin;
  level.view.bits = spec_.bits;
  level.view.n = n;
  level.view.masks = spec_.masks;
  const auto lo = std::span<const uint64_t>(d_lo_).subspan(begin, n);
  const auto hi = spec_.bits == 128 ? std::span<const uint64_t>(d_hi_).subspan(begin, n)
                                    : std::span<const uint64_t>();
  if (spec_.kind == TablesKind::kProbe) {
    // The file's probe tables over the level (their keys are the layout's),
    // the directory on as many of each key's bits as the level's size
    // fills (LevelDirBits): the same rows in fewer probes.
    level.view.dir_bits = LevelDirBits(n, spec_.dir_bits);
    level.view.probe_threshold = spec_.radius;
    level.tables = BuildProbeTables(spec_.masks, level.view.dir_bits, lo, hi);
  } else {
    level.view.dir_bits = DirBitsFor(n);
    level.tables = BuildTables(spec_.masks, level.view.dir_bits, lo, hi, /*threads=*/0);
  }
  for (const OwnedTable& t : level.tables) {
    TableView v;
    v.dir = t.dir;
    v.rows = t.rows;
    v.keys = t.keys;
    v.words = t.words;
    level.view.tables.push_back(v);
  }
  return level;
}

void TableIndex::IndexTail() {
  const size_t end = d_ids_.size();
  if (end == d_built_) return;
  d_levels_.push_back(BuildLevel(d_built_, end));
  // Merged while the older is less than kLevelRatio times the newer: the
  // sizes fall at least that much from the oldest level to the newest.
  while (d_levels_.size() >= 2) {
    const DeltaLevel& older = d_levels_[d_levels_.size() - 2];
    const DeltaLevel& newer = d_levels_.back();
    if (older.end - older.begin >= kLevelRatio * (newer.end - newer.begin)) break;
    const size_t begin = older.begin;
    d_levels_.resize(d_levels_.size() - 2);
    d_levels_.push_back(BuildLevel(begin, end));
  }
  d_built_ = end;
  PointViews();
}

void TableIndex::PointViews() {
  for (DeltaLevel& level : d_levels_) {
    const size_t n = level.end - level.begin;
    level.view.lo = std::span<const uint64_t>(d_lo_.data() + level.begin, n);
    if (spec_.bits == 128) level.view.hi = std::span<const uint64_t>(d_hi_.data() + level.begin, n);
  }
}

std::vector<size_t> TableIndex::DeltaLevelSizes() const {
  EnsureTables();
  std::vector<size_t> sizes;
  for (const DeltaLevel& level : d_levels_) sizes.push_back(level.end - level.begin);
  return sizes;
}

size_t TableIndex::MemoryBytes() const {
  EnsureTables();
  size_t bytes = (d_ids_.capacity() + d_lo_.capacity() + d_hi_.capacity()) * 8 +
                 d_dead_.capacity() / 8 + base_dead_.capacity() / 8 + d_pos_.size() * 48;
  for (const DeltaLevel& level : d_levels_) {
    for (const OwnedTable& t : level.tables) {
      bytes += t.dir.capacity() * 4 + t.rows.capacity() * 4 + t.keys.capacity() * 2 +
               t.words.capacity() * 8;
    }
  }
  return bytes;
}

Status TableIndex::Add(uint64_t id, const Fingerprint& fp) {
  return AddBatch(std::span<const uint64_t>(&id, 1), std::span<const Fingerprint>(&fp, 1));
}

void TableIndex::EnsureTables() const {
  if (tables_current_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(lazy_mu_);
  if (tables_current_.load(std::memory_order_relaxed)) return;
  // Logically const: the answers do not change, only how they are found.
  const_cast<TableIndex*>(this)->IndexTail();
  tables_current_.store(true, std::memory_order_release);
}

Status TableIndex::AddBatch(std::span<const uint64_t> ids, std::span<const Fingerprint> fps) {
  return Append(ids, fps, /*defer=*/false);
}

Status TableIndex::AddBatchDeferTables(std::span<const uint64_t> ids,
                                       std::span<const Fingerprint> fps) {
  return Append(ids, fps, /*defer=*/true);
}

Status TableIndex::Append(std::span<const uint64_t> ids, std::span<const Fingerprint> fps,
                          bool defer) {
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  for (const Fingerprint& fp : fps) {
    if (fp.bits() != bits()) {
      return Status::InvalidArgument("a " + std::to_string(fp.bits()) + "-bit fingerprint in a " +
                                     std::to_string(bits()) + "-bit index");
    }
  }
  const size_t base_rows = base_ ? base_->rows() : 0;
  if (base_rows + d_ids_.size() + ids.size() > kMaxEntries) {
    return Status::ResourceExhausted("an index holds at most 2^32 - 2 entries");
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    d_pos_[ids[i]].push_back(d_ids_.size());
    d_ids_.push_back(ids[i]);
    d_lo_.push_back(fps[i].lo());
    d_hi_.push_back(fps[i].hi());
    d_dead_.push_back(false);
  }
  live_ += ids.size();
  if (d_ids_.size() - d_built_ > tail_cap_) {
    if (defer) {
      tables_current_.store(false, std::memory_order_release);
    } else {
      IndexTail();
      tables_current_.store(true, std::memory_order_release);
    }
  }
  // The vectors may have moved: the views' fingerprints follow them.
  PointViews();
  return Status::OK();
}

size_t TableIndex::Remove(uint64_t id) { return RemoveBatch(std::span<const uint64_t>(&id, 1)); }

size_t TableIndex::RemoveBatch(std::span<const uint64_t> ids) {
  size_t removed = 0;
  for (uint64_t id : ids) {
    if (base_) {
      // Ids ascend in the file; a repeated id occupies neighbouring rows.
      auto all = base_->ids();
      auto it = std::lower_bound(all.begin(), all.end(), id);
      for (; it != all.end() && *it == id; ++it) {
        const size_t row = static_cast<size_t>(it - all.begin());
        if (base_dead_.empty()) base_dead_.assign(base_->rows(), false);
        if (!base_dead_[row]) {
          base_dead_[row] = true;
          ++removed;
        }
      }
    }
    auto d = d_pos_.find(id);
    if (d != d_pos_.end()) {
      for (size_t pos : d->second) {
        if (!d_dead_[pos]) {
          d_dead_[pos] = true;
          ++removed;
        }
      }
      d_pos_.erase(d);
    }
  }
  live_ -= removed;
  return removed;
}

Status TableIndex::CheckQueries(std::span<const Fingerprint> queries, int k) const {
  if (k < 0 || k > max_k()) {
    return Status::InvalidArgument("k must be in [0, " + std::to_string(max_k()) + "], got " +
                                   std::to_string(k));
  }
  for (const Fingerprint& q : queries) {
    if (q.bits() != bits()) {
      return Status::InvalidArgument("a " + std::to_string(q.bits()) + "-bit query in a " +
                                     std::to_string(bits()) + "-bit index");
    }
  }
  return Status::OK();
}

Status TableIndex::Search(const Fingerprint& query, int k, std::vector<Neighbor>* out) const {
  out->clear();
  if (Status st = CheckQueries({&query, 1}, k); !st.ok()) return st;
  if (base_) SearchFile(*base_, &base_dead_, query, k, out);
  SearchDelta(query, k, out);
  std::sort(out->begin(), out->end(), ByDistanceThenId);
  return Status::OK();
}

void TableIndex::SearchFile(const IndexFileV2& file, const std::vector<bool>* dead,
                            const Fingerprint& query, int k, std::vector<Neighbor>* out) {
  thread_local std::vector<uint32_t> rows;
  thread_local std::vector<int> dists;
  rows.clear();
  dists.clear();
  QueryTables(file.tables(), query.hi(), query.lo(), k, &rows, &dists);
  const auto ids = file.ids();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= ids.size()) continue;
    if (dead != nullptr && rows[i] < dead->size() && (*dead)[rows[i]]) continue;
    out->push_back(Neighbor{ids[rows[i]], dists[i]});
  }
}

bool TableIndex::FoundByTables(size_t pos, uint64_t q_hi, uint64_t q_lo) const {
  if (spec_.kind != TablesKind::kProbe) return true;
  return ProbeFinds(spec_, d_hi_[pos] ^ q_hi, d_lo_[pos] ^ q_lo);
}

void TableIndex::SearchDelta(const Fingerprint& query, int k, std::vector<Neighbor>* out) const {
  EnsureTables();
  thread_local std::vector<uint32_t> rows;
  thread_local std::vector<int> dists;
  for (const DeltaLevel& level : d_levels_) {
    rows.clear();
    dists.clear();
    QueryTables(level.view, query.hi(), query.lo(), k, &rows, &dists);
    for (size_t i = 0; i < rows.size(); ++i) {
      const size_t pos = level.begin + rows[i];
      if (d_dead_[pos]) continue;
      out->push_back(Neighbor{d_ids_[pos], dists[i]});
    }
  }
  SearchDeltaSince(d_built_, query, k, out);
}

void TableIndex::SearchDeltaSince(size_t from, const Fingerprint& query, int k,
                                  std::vector<Neighbor>* out) const {
  // The SIMD scan (hamming_scan.h; exact, or the two-level filter of a
  // spec of kind kFilter, as the file's) first, the (bit-packed) removal
  // mark only for a hit.
  const size_t end = d_ids_.size();
  if (from >= end) return;
  const uint64_t q_lo = query.lo();
  const uint64_t q_hi = query.hi();
  RowsView rows;
  rows.bits = spec_.bits;
  rows.n = end;
  rows.lo = d_lo_.data();
  rows.hi = spec_.bits == 128 ? d_hi_.data() : nullptr;
  rows.lo_filter = LoFilter();
  thread_local std::vector<ScanHit> hits;
  hits.clear();
  ScanRows(rows, from, end, std::span<const uint64_t>(&q_hi, 1),
           std::span<const uint64_t>(&q_lo, 1), k, &hits);
  for (const ScanHit& h : hits) {
    if (d_dead_[h.row] || !FoundByTables(h.row, q_hi, q_lo)) continue;
    out->push_back(Neighbor{d_ids_[h.row], static_cast<int>(h.distance)});
  }
}

namespace {

// The words of a batch of queries, and per-query hit lists whose capacity
// is kept from one batch to the next (one set a thread).
struct BatchScratch {
  std::vector<uint64_t> q_hi, q_lo;
  std::vector<std::vector<ScanHit>> hits;

  void Set(std::span<const Fingerprint> queries) {
    q_hi.resize(queries.size());
    q_lo.resize(queries.size());
    for (size_t j = 0; j < queries.size(); ++j) {
      q_hi[j] = queries[j].hi();
      q_lo[j] = queries[j].lo();
    }
    if (hits.size() < queries.size()) hits.resize(queries.size());
    for (size_t j = 0; j < queries.size(); ++j) hits[j].clear();
  }
};

BatchScratch& Scratch() {
  thread_local BatchScratch scratch;
  return scratch;
}

}  // namespace

void TableIndex::SearchFileBatch(const IndexFileV2& file, const std::vector<bool>* dead,
                                 std::span<const Fingerprint> queries, int k,
                                 std::vector<std::vector<Neighbor>>* out) {
  BatchScratch& s = Scratch();
  s.Set(queries);
  QueryTablesBatch(file.tables(), s.q_hi, s.q_lo, k, s.hits.data());
  const auto ids = file.ids();
  for (size_t j = 0; j < queries.size(); ++j) {
    for (const ScanHit& h : s.hits[j]) {
      if (h.row >= ids.size()) continue;
      if (dead != nullptr && h.row < dead->size() && (*dead)[h.row]) continue;
      (*out)[j].push_back(Neighbor{ids[h.row], static_cast<int>(h.distance)});
    }
  }
}

void TableIndex::SearchDeltaBatch(std::span<const Fingerprint> queries, int k,
                                  std::vector<std::vector<Neighbor>>* out) const {
  EnsureTables();
  BatchScratch& s = Scratch();
  s.Set(queries);
  const auto& q_hi = s.q_hi;
  const auto& q_lo = s.q_lo;
  auto& hits = s.hits;
  const auto take = [&](size_t base, bool tail) {
    for (size_t j = 0; j < queries.size(); ++j) {
      for (const ScanHit& h : hits[j]) {
        const size_t pos = base + h.row;
        if (d_dead_[pos] || (tail && !FoundByTables(pos, q_hi[j], q_lo[j]))) continue;
        (*out)[j].push_back(Neighbor{d_ids_[pos], static_cast<int>(h.distance)});
      }
      hits[j].clear();
    }
  };
  for (const DeltaLevel& level : d_levels_) {
    QueryTablesBatch(level.view, q_hi, q_lo, k, hits.data());
    take(level.begin, false);
  }
  // The tail: the tiled SIMD scan (rows are delta positions).
  if (d_built_ < d_ids_.size()) {
    RowsView rows;
    rows.bits = spec_.bits;
    rows.n = d_ids_.size();
    rows.lo = d_lo_.data();
    rows.hi = spec_.bits == 128 ? d_hi_.data() : nullptr;
    rows.lo_filter = LoFilter();
    for (size_t b = d_built_; b < rows.n; b += kScanBlockRows) {
      ScanRows(rows, b, std::min(rows.n, b + kScanBlockRows), q_hi, q_lo, k, hits.data());
    }
    take(0, true);
  }
}

Status TableIndex::SearchBatch(std::span<const Fingerprint> queries, int k, int threads,
                               SearchResults* out) const {
  out->offsets.assign(1, 0);
  out->neighbors.clear();
  if (Status st = CheckQueries(queries, k); !st.ok()) return st;
  // Chunks of kBatchChunk queries (each through one probing pipeline), on
  // `threads` threads; each chunk's results are concatenated in order
  // afterwards, so the output does not depend on `threads`.
  const size_t chunk = BatchChunk(spec_);
  const size_t chunks = (queries.size() + chunk - 1) / chunk;
  std::vector<std::vector<Neighbor>> found(chunks);
  std::vector<std::vector<size_t>> counts(chunks);
  ParallelFor(chunks, threads, [&](size_t c, int) {
    const auto part = queries.subspan(c * chunk, std::min(chunk, queries.size() - c * chunk));
    thread_local std::vector<std::vector<Neighbor>> per;
    if (per.size() < part.size()) per.resize(part.size());
    for (size_t j = 0; j < part.size(); ++j) per[j].clear();
    if (base_) SearchFileBatch(*base_, &base_dead_, part, k, &per);
    SearchDeltaBatch(part, k, &per);
    for (size_t j = 0; j < part.size(); ++j) {
      std::sort(per[j].begin(), per[j].end(), ByDistanceThenId);
      found[c].insert(found[c].end(), per[j].begin(), per[j].end());
      counts[c].push_back(per[j].size());
    }
  });
  for (size_t c = 0; c < chunks; ++c) {
    for (size_t n : counts[c]) out->offsets.push_back(out->offsets.back() + n);
    out->neighbors.insert(out->neighbors.end(), found[c].begin(), found[c].end());
  }
  return Status::OK();
}

Status TableIndex::SearchEach(std::span<const Fingerprint> queries, int k,
                              std::vector<std::vector<Neighbor>>* out) const {
  out->assign(queries.size(), {});
  if (Status st = CheckQueries(queries, k); !st.ok()) return st;
  if (base_) SearchFileBatchChunked(*base_, &base_dead_, queries, k, out);
  SearchDeltaBatchChunked(queries, k, out);
  for (auto& found : *out) std::sort(found.begin(), found.end(), ByDistanceThenId);
  return Status::OK();
}

void TableIndex::SearchDeltaBatchChunked(std::span<const Fingerprint> queries, int k,
                                         std::vector<std::vector<Neighbor>>* out) const {
  std::vector<std::vector<Neighbor>> part;
  const size_t chunk = BatchChunk(spec_);
  for (size_t b = 0; b < queries.size(); b += chunk) {
    const size_t n = std::min(chunk, queries.size() - b);
    part.assign(n, {});
    SearchDeltaBatch(queries.subspan(b, n), k, &part);
    for (size_t j = 0; j < n; ++j) {
      auto& to = (*out)[b + j];
      to.insert(to.end(), part[j].begin(), part[j].end());
    }
  }
}

void TableIndex::SearchFileBatchChunked(const IndexFileV2& file, const std::vector<bool>* dead,
                                        std::span<const Fingerprint> queries, int k,
                                        std::vector<std::vector<Neighbor>>* out) {
  // The pipeline's scratch grows with the batch: bounded by chunks.
  std::vector<std::vector<Neighbor>> part;
  const size_t chunk = BatchChunk(file.meta().spec);
  for (size_t b = 0; b < queries.size(); b += chunk) {
    const size_t n = std::min(chunk, queries.size() - b);
    part.assign(n, {});
    SearchFileBatch(file, dead, queries.subspan(b, n), k, &part);
    for (size_t j = 0; j < n; ++j) {
      auto& to = (*out)[b + j];
      to.insert(to.end(), part[j].begin(), part[j].end());
    }
  }
}

Status TableIndex::SelfJoin(int k, int /*threads*/, std::vector<IdPair>* out) const {
  out->clear();
  std::vector<Neighbor> hits;
  for (const IndexEntry& e : Entries()) {
    NEARDUP_RETURN_IF_ERROR(Search(e.fingerprint, k, &hits));
    for (const Neighbor& h : hits) {
      if (e.id < h.id) out->push_back(IdPair{e.id, h.id, h.distance});
    }
  }
  std::sort(out->begin(), out->end(), [](const IdPair& a, const IdPair& b) {
    return std::tie(a.a, a.b, a.distance) < std::tie(b.a, b.b, b.distance);
  });
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::OK();
}

std::vector<IndexEntry> TableIndex::Entries() const {
  std::vector<IndexEntry> out;
  out.reserve(live_);
  const bool wide = bits() == 128;
  if (base_) {
    const TablesView& v = base_->tables();
    const auto ids = base_->ids();
    uint64_t hi, lo;
    for (size_t row = 0; row < ids.size() && v.RowFingerprint(row, &hi, &lo); ++row) {
      if (BaseRemoved(row)) continue;
      out.push_back(
          IndexEntry{ids[row], wide ? Fingerprint::From128(hi, lo) : Fingerprint::From64(lo)});
    }
  }
  for (size_t i = 0; i < d_ids_.size(); ++i) {
    if (d_dead_[i]) continue;
    out.push_back(IndexEntry{d_ids_[i], wide ? Fingerprint::From128(d_hi_[i], d_lo_[i])
                                             : Fingerprint::From64(d_lo_[i])});
  }
  return out;
}

Status TableIndex::Save(const std::string& path) const {
  return Status::NotSupported(path + ": a document index's tables are written by its Commit");
}

}  // namespace neardup::index_internal
