// Copyright 2026 The neardup Authors.

#include "index/mask_tables.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <thread>

#include "neardup/band_join.h"
#include "neardup/index.h"
#include "util/random.h"

namespace neardup::index_internal {
namespace {

// Cost model of one query, in nanoseconds on one thread: a probe (key,
// directory slot, bucket scan) and a candidate (a random fingerprint read
// and its distance). A probe's two reads (directory slot, bucket) miss the
// cache once the tables outgrow it: kMissNs more per read, for the share of
// the tables' bytes beyond kCacheBytes. So a layout's size counts: the
// radius-0 bands (few probes, many tables) win once the byte budget allows
// them.
constexpr double kProbeNs = 60.0;
constexpr double kCandidateNs = 30.0;
constexpr double kMissNs = 80.0;
constexpr double kCacheBytes = 16.0 * 1024 * 1024;

double ProbeNs(double n, double bytes_per_fingerprint) {
  const double table_bytes = n * bytes_per_fingerprint;
  if (table_bytes <= kCacheBytes) return kProbeNs;
  return kProbeNs + 2 * kMissNs * (1 - kCacheBytes / table_bytes);
}
// Bytes per row of one table: row (4), key (2), directory (about 0.5).
constexpr double kTableBytes = 6.5;
constexpr int kMaxBands = 4096;

int Popcount2(uint64_t hi, uint64_t lo) { return std::popcount(hi) + std::popcount(lo); }

// The masks of the exact layout with b blocks: bit j of the fingerprint is in
// block (f - 1 - j) * b / f (block 0 holds the most significant bits).
std::vector<TableMask> ExactMasks(int f, int k, int b) {
  std::vector<std::pair<uint64_t, uint64_t>> block(static_cast<size_t>(b), {0, 0});
  for (int j = 0; j < f; ++j) {
    const size_t blk = static_cast<size_t>((f - 1 - j) * b / f);
    if (j < 64) {
      block[blk].second |= uint64_t{1} << j;
    } else {
      block[blk].first |= uint64_t{1} << (j - 64);
    }
  }
  // Every choice of b - k key blocks, in lexicographic order.
  std::vector<TableMask> masks;
  std::vector<bool> chosen(static_cast<size_t>(b), false);
  std::fill(chosen.begin(), chosen.begin() + (b - k), true);
  do {
    TableMask m;
    for (int i = 0; i < b; ++i) {
      if (chosen[static_cast<size_t>(i)]) {
        m.hi |= block[static_cast<size_t>(i)].first;
        m.lo |= block[static_cast<size_t>(i)].second;
      }
    }
    masks.push_back(m);
  } while (std::prev_permutation(chosen.begin(), chosen.end()));
  return masks;
}

}  // namespace

int DirBitsFor(size_t n) {
  int t = 0;
  while (t < 24 && (size_t{8} << t) < n) ++t;
  return t;
}

double TableCollision(int f, int d, int r, int radius) {
  double p = BitSamplingCollision(f, d, r);
  if (radius >= 1 && r >= 1 && d >= 1) {
    // P(X = 1) = C(d, 1) C(f - d, r - 1) / C(f, r)
    //          = d * [C(f - d, r - 1) / C(f, r - 1)] * [C(f, r - 1) / C(f, r)].
    p += d * BitSamplingCollision(f, d, r - 1) * r / (f - r + 1);
  }
  return std::min(p, 1.0);
}

TablesSpec ChooseTables(size_t n, int bits, int k, const TablesPolicy& policy) {
  const double nn = static_cast<double>(n);
  TablesSpec exact;
  exact.kind = TablesKind::kExact;
  exact.bits = bits;
  exact.max_k = k;
  exact.dir_bits = DirBitsFor(n);
  if (k <= bits / 4) {
    // Among b in [k + 1, k + 16] with C(b, k) tables within the memory budget
    // (at least b = k + 1), the lowest cost: C(b, k) probes, each with
    // n * 2^-w candidates, w the narrowest key ((b - k) blocks of at least
    // floor(f / b) bits).
    double tables_cap = policy.max_bytes_per_fingerprint / kTableBytes;
    for (int b = k + 1; b <= std::min(bits, k + 16); ++b) {
      double tables = 1;
      for (int i = 1; i <= k; ++i) tables = tables * (b - k + i) / i;
      if (tables > PermutedTableIndex::kMaxTables || (b > k + 1 && tables > tables_cap)) break;
      const int key_bits = (b - k) * (bits / b);
      const double cost =
          tables *
          (ProbeNs(nn, tables * kTableBytes) + nn * std::ldexp(1.0, -key_bits) * kCandidateNs) *
          1e-3;
      if (exact.blocks == 0 || cost < exact.estimated_query_us) {
        exact.blocks = b;
        exact.estimated_query_us = cost;
        exact.bytes_per_fingerprint = tables * kTableBytes;
      }
    }
    exact.masks = ExactMasks(bits, k, exact.blocks);
    if (policy.exact) return exact;
  }
  // Bands: the same recall targets as ChooseSimHashBands (recall at k, and
  // 1 - (1 - recall) / 100 at k - 4).
  const double recall = std::clamp(policy.recall, 1e-6, 1 - 1e-12);
  const double close_target = 1 - (1 - recall) / 100;
  const int close_d = std::max(k - 4, 0);
  TablesSpec best;
  bool have = false;
  for (int radius = 0; radius <= 1; ++radius) {
    for (int r = 1; r <= bits - k && r <= 32; ++r) {
      const double pk = TableCollision(bits, k, r, radius);
      const double pc = TableCollision(bits, close_d, r, radius);
      if (pk <= 0 || pc <= 0) break;
      const double l =
          std::max(pk >= 1 ? 1.0 : std::ceil(std::log1p(-recall) / std::log1p(-pk)),
                   pc >= 1 ? 1.0 : std::ceil(std::log1p(-close_target) / std::log1p(-pc)));
      if (l > kMaxBands) continue;
      const int bands = std::max(1, static_cast<int>(l));
      if (bands * kTableBytes > policy.max_bytes_per_fingerprint) continue;
      const double probes = static_cast<double>(bands) * (1 + radius * r);
      const double cost = (probes * ProbeNs(nn, bands * kTableBytes) +
                           probes * nn * std::ldexp(1.0, -r) * kCandidateNs) *
                          1e-3;
      if (!have || cost < best.estimated_query_us) {
        have = true;
        best.band_bits = r;
        best.radius = radius;
        best.masks.assign(static_cast<size_t>(bands), TableMask{});
        best.estimated_query_us = cost;
        best.bytes_per_fingerprint = bands * kTableBytes;
      }
    }
  }
  // Exact unless the bands are at least twice as cheap: recall 1 is worth a
  // small premium.
  if (!exact.masks.empty() && (!have || exact.estimated_query_us <= 2 * best.estimated_query_us)) {
    return exact;
  }
  best.kind = TablesKind::kBands;
  best.bits = bits;
  best.max_k = k;
  best.dir_bits = DirBitsFor(n);
  best.seed = kDefaultBandSeed;
  SimHashBands sb;
  sb.bits = bits;
  sb.band_bits = best.band_bits;
  sb.bands = static_cast<int>(best.masks.size());
  sb.seed = best.seed;
  const auto masks = SimHashBandMasks(sb);
  for (size_t i = 0; i < masks.size(); ++i) {
    best.masks[i] = TableMask{masks[i].first, masks[i].second, static_cast<uint32_t>(best.radius)};
  }
  best.recall_at_k = BandRecall(TableCollision(bits, k, best.band_bits, best.radius), sb.bands);
  best.recall_at_k_minus_4 =
      BandRecall(TableCollision(bits, close_d, best.band_bits, best.radius), sb.bands);
  return best;
}

uint32_t TableKey(uint64_t hi, uint64_t lo, const TableMask& mask) {
  return static_cast<uint32_t>(SplitMix64((lo & mask.lo) ^ SplitMix64(hi & mask.hi)) >> 32);
}

const char* TablesKindName(TablesKind kind) {
  return kind == TablesKind::kExact ? "exact" : "bands";
}

std::vector<OwnedTable> BuildTables(std::span<const TableMask> masks, int dir_bits,
                                    std::span<const uint64_t> lo, std::span<const uint64_t> hi,
                                    int threads) {
  const size_t n = lo.size();
  const size_t slots = size_t{1} << dir_bits;
  std::vector<OwnedTable> tables(masks.size());
  const auto build = [&](size_t t) {
    OwnedTable& table = tables[t];
    std::vector<uint32_t> keys(n);
    table.dir.assign(slots + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = TableKey(hi.empty() ? 0 : hi[i], lo[i], masks[t]);
      ++table.dir[(dir_bits == 0 ? 0 : keys[i] >> (32 - dir_bits)) + 1];
    }
    for (size_t s = 0; s < slots; ++s) table.dir[s + 1] += table.dir[s];
    std::vector<uint32_t> fill(table.dir.begin(), table.dir.end() - 1);
    table.rows.resize(n);
    table.keys.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t pos = fill[dir_bits == 0 ? 0 : keys[i] >> (32 - dir_bits)]++;
      table.rows[pos] = static_cast<uint32_t>(i);
      table.keys[pos] = static_cast<uint16_t>(keys[i]);
    }
  };
  unsigned workers = threads > 0 ? static_cast<unsigned>(threads)
                                 : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min<unsigned>(workers, static_cast<unsigned>(masks.size()));
  if (workers <= 1 || n < 4096) {
    for (size_t t = 0; t < masks.size(); ++t) build(t);
    return tables;
  }
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (size_t t = w; t < masks.size(); t += workers) build(t);
    });
  }
  for (auto& th : pool) th.join();
  return tables;
}

std::vector<uint8_t> PackEntries(const OwnedTable& table) {
  const size_t n = std::min(table.rows.size(), table.keys.size());
  std::vector<uint8_t> out(n * kPackedEntryBytes);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&out[i * kPackedEntryBytes], &table.rows[i], 4);
    std::memcpy(&out[i * kPackedEntryBytes + 4], &table.keys[i], 2);
  }
  return out;
}

namespace {

// How QueryTablesIn reads a table's buckets and the rows' fingerprints:
// split (two arrays each) or packed (one).
struct SplitLayout {
  static size_t Rows(const TableView& tv) { return std::min(tv.rows.size(), tv.keys.size()); }
  static void PrefetchBucket(const TableView& tv, size_t begin, size_t /*end*/) {
    __builtin_prefetch(&tv.keys[begin]);
    __builtin_prefetch(&tv.rows[begin]);
  }
  static uint16_t Key(const TableView& tv, size_t i) { return tv.keys[i]; }
  static uint32_t Row(const TableView& tv, size_t i) { return tv.rows[i]; }
  static bool HasRow(const TablesView& v, uint32_t row) {
    return row < v.lo.size() && (v.bits != 128 || row < v.hi.size());
  }
  static void PrefetchRow(const TablesView& v, uint32_t row) {
    __builtin_prefetch(&v.lo[row]);
    if (v.bits == 128) __builtin_prefetch(&v.hi[row]);
  }
  static void Read(const TablesView& v, uint32_t row, uint64_t* hi, uint64_t* lo) {
    *lo = v.lo[row];
    *hi = v.bits == 128 ? v.hi[row] : 0;
  }
};

struct PackedLayout {
  static size_t Rows(const TableView& tv) { return tv.entries.size() / kPackedEntryBytes; }
  static void PrefetchBucket(const TableView& tv, size_t begin, size_t end) {
    // A bucket of a few rows may straddle two cache lines.
    __builtin_prefetch(&tv.entries[begin * kPackedEntryBytes]);
    __builtin_prefetch(&tv.entries[end * kPackedEntryBytes - 1]);
  }
  static uint16_t Key(const TableView& tv, size_t i) {
    uint16_t key;
    std::memcpy(&key, &tv.entries[i * kPackedEntryBytes + 4], 2);
    return key;
  }
  static uint32_t Row(const TableView& tv, size_t i) {
    uint32_t row;
    std::memcpy(&row, &tv.entries[i * kPackedEntryBytes], 4);
    return row;
  }
  static size_t Words(const TablesView& v) { return v.bits == 128 ? 2 : 1; }
  static bool HasRow(const TablesView& v, uint32_t row) { return row < v.words.size() / Words(v); }
  static void PrefetchRow(const TablesView& v, uint32_t row) {
    __builtin_prefetch(&v.words[Words(v) * row]);
  }
  static void Read(const TablesView& v, uint32_t row, uint64_t* hi, uint64_t* lo) {
    const size_t w = Words(v);
    *lo = v.words[w * row];
    *hi = w == 2 ? v.words[w * row + 1] : 0;
  }
};

// A fixed-capacity FIFO (a power of two).
template <typename T, size_t kCap>
class Ring {
 public:
  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ == kCap; }
  void push(const T& v) { slots_[tail_++ & (kCap - 1)] = v; }
  T pop() { return slots_[head_++ & (kCap - 1)]; }

 private:
  T slots_[kCap];
  size_t head_ = 0, tail_ = 0;
};

// The probing pipeline of QueryTablesBatch: every probe of every query of a
// batch goes through three stages, each a fixed distance behind the one
// before, so that each stage's read was prefetched that many steps earlier
// and dozens of cache misses are outstanding at once, whatever the number of
// probes a query makes (group prefetching, software-pipelined):
//   1. the probe's key is hashed and its directory slot prefetched;
//   2. kDirLag probes later the slot is read and the bucket prefetched;
//   3. kBucketLag buckets later the bucket is scanned for the key's low
//      bits, and each match's fingerprint prefetched;
//   4. kCandidateLag candidates later the fingerprint is read and checked.
// The stages are FIFOs, so hits come out in the order of the one-query
// passes this replaced (probes in order, each bucket in order).
template <typename Layout>
class Pipeline {
 public:
  static constexpr size_t kDirLag = 16;
  static constexpr size_t kBucketLag = 16;
  static constexpr size_t kCandidateLag = 32;

  Pipeline(const TablesView& view, int k, std::vector<ScanHit>* out)
      : view_(view),
        k_(k),
        out_(out),
        slots_(size_t{1} << view.dir_bits),
        shift_(32 - view.dir_bits),
        tables_(std::min(view.tables.size(), view.masks.size())) {}

  // Probes every table for query j = (q_hi, q_lo).
  void Query(uint32_t j, uint64_t q_hi, uint64_t q_lo) {
    for (size_t t = 0; t < tables_; ++t) {
      const TableMask& m = view_.masks[t];
      Issue(Probe{j, static_cast<uint32_t>(t), 0, q_hi, q_lo, q_hi, q_lo});
      if (m.radius >= 1) {
        for (uint64_t bits = m.lo; bits != 0; bits &= bits - 1) {
          const uint64_t flip = bits & (~bits + 1);
          Issue(Probe{j, static_cast<uint32_t>(t), 0, q_hi, q_lo ^ flip, q_hi, q_lo});
        }
        for (uint64_t bits = m.hi; bits != 0; bits &= bits - 1) {
          const uint64_t flip = bits & (~bits + 1);
          Issue(Probe{j, static_cast<uint32_t>(t), 0, q_hi ^ flip, q_lo, q_hi, q_lo});
        }
      }
    }
  }

  // Runs every stage to the end.
  void Finish() {
    while (!probes_.empty()) ReadSlot(probes_.pop());
    while (!buckets_.empty()) ScanBucket(buckets_.pop());
    while (!candidates_.empty()) Check(candidates_.pop());
  }

 private:
  struct Probe {
    uint32_t query, table, key;
    uint64_t hi, lo;      // the probed value (the query, or it with one bit flipped)
    uint64_t q_hi, q_lo;  // the query
  };
  struct Bucket {
    Probe probe;
    uint32_t begin, end;
  };
  struct PendingCandidate {
    uint32_t query, table, row;
    uint64_t hi, lo, q_hi, q_lo;
  };

  void Issue(Probe p) {
    p.key = TableKey(p.hi, p.lo, view_.masks[p.table]);
    const TableView& tv = view_.tables[p.table];
    const size_t s = view_.dir_bits == 0 ? 0 : p.key >> shift_;
    if (s + 1 < tv.dir.size()) __builtin_prefetch(&tv.dir[s]);
    if (probes_.full()) ReadSlot(probes_.pop());
    probes_.push(p);
  }

  void ReadSlot(const Probe& p) {
    const TableView& tv = view_.tables[p.table];
    const size_t s = view_.dir_bits == 0 ? 0 : p.key >> shift_;
    if (s >= slots_ || s + 1 >= tv.dir.size()) return;
    const size_t end = std::min<size_t>(tv.dir[s + 1], Layout::Rows(tv));
    const size_t begin = tv.dir[s];
    if (begin >= end) return;
    Layout::PrefetchBucket(tv, begin, end);
    if (buckets_.full()) ScanBucket(buckets_.pop());
    buckets_.push(Bucket{p, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
  }

  void ScanBucket(const Bucket& b) {
    const TableView& tv = view_.tables[b.probe.table];
    const uint16_t low = static_cast<uint16_t>(b.probe.key);
    for (size_t i = b.begin; i < b.end; ++i) {
      if (Layout::Key(tv, i) != low) continue;
      const uint32_t row = Layout::Row(tv, i);
      if (row >= view_.n || !Layout::HasRow(view_, row)) continue;
      Layout::PrefetchRow(view_, row);
      if (candidates_.full()) Check(candidates_.pop());
      candidates_.push(PendingCandidate{b.probe.query, b.probe.table, row, b.probe.hi, b.probe.lo,
                                        b.probe.q_hi, b.probe.q_lo});
    }
  }

  void Check(const PendingCandidate& c) {
    const TableMask& m = view_.masks[c.table];
    uint64_t x_hi, x_lo;
    Layout::Read(view_, c.row, &x_hi, &x_lo);
    // Genuinely the probed value in this table (not a hash collision), so
    // the row is found by exactly one probe of this table.
    if (((x_hi ^ c.hi) & m.hi) != 0 || ((x_lo ^ c.lo) & m.lo) != 0) return;
    const int d = Popcount2(x_hi ^ c.q_hi, x_lo ^ c.q_lo);
    if (d > k_) return;
    // Reported by the first table that finds it.
    for (size_t u = 0; u < c.table; ++u) {
      const TableMask& e = view_.masks[u];
      if (Popcount2((x_hi ^ c.q_hi) & e.hi, (x_lo ^ c.q_lo) & e.lo) <= static_cast<int>(e.radius)) {
        return;
      }
    }
    out_[c.query].push_back(ScanHit{c.row, static_cast<uint32_t>(d)});
  }

  const TablesView& view_;
  const int k_;
  std::vector<ScanHit>* const out_;
  const size_t slots_;
  const int shift_;
  const size_t tables_;
  Ring<Probe, kDirLag> probes_;
  Ring<Bucket, kBucketLag> buckets_;
  Ring<PendingCandidate, kCandidateLag> candidates_;
};

template <typename Layout>
void QueryTablesIn(const TablesView& view, std::span<const uint64_t> q_hi,
                   std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  Pipeline<Layout> pipeline(view, k, out);
  for (size_t j = 0; j < q_lo.size(); ++j) {
    pipeline.Query(static_cast<uint32_t>(j), view.bits == 128 ? q_hi[j] : 0, q_lo[j]);
  }
  pipeline.Finish();
}

}  // namespace

void QueryTablesBatch(const TablesView& view, std::span<const uint64_t> q_hi,
                      std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  if (view.n == 0 || q_lo.empty()) return;
  if (view.packed) {
    QueryTablesIn<PackedLayout>(view, q_hi, q_lo, k, out);
  } else {
    QueryTablesIn<SplitLayout>(view, q_hi, q_lo, k, out);
  }
}

void QueryTables(const TablesView& view, uint64_t q_hi, uint64_t q_lo, int k,
                 std::vector<uint32_t>* rows, std::vector<int>* dists) {
  thread_local std::vector<ScanHit> hits;
  hits.clear();
  QueryTablesBatch(view, std::span<const uint64_t>(&q_hi, 1), std::span<const uint64_t>(&q_lo, 1),
                   k, &hits);
  for (const ScanHit& h : hits) {
    rows->push_back(h.row);
    dists->push_back(static_cast<int>(h.distance));
  }
}

}  // namespace neardup::index_internal
