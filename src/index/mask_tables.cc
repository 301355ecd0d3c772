// Copyright 2026 The neardup Authors.

#include "index/mask_tables.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <thread>

#include "index/probe_tables.h"
#include "neardup/band_join.h"
#include "neardup/index.h"
#include "neardup/parallel.h"
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

double ScanQueryUs(size_t n, int bits) {
  return static_cast<double>(n) * TiledScanNsPerRow(bits) * 1e-3;
}

double FilterCollision(int d, int t) {
  // P(X = i) = C(d, i) C(128 - d, 64 - i) / C(128, 64), in logs.
  const auto lc = [](int a, int b) {
    return std::lgamma(a + 1.0) - std::lgamma(b + 1.0) - std::lgamma(a - b + 1.0);
  };
  double p = 0;
  for (int i = std::max(0, d - 64); i <= std::min(d, t); ++i) {
    p += std::exp(lc(d, i) + lc(128 - d, 64 - i) - lc(128, 64));
  }
  return std::min(p, 1.0);
}

TablesSpec ChooseFilter(size_t n, int k, double recall) {
  TablesSpec spec;
  spec.kind = TablesKind::kScan;
  spec.bits = 128;
  spec.max_k = k;
  spec.estimated_query_us = ScanQueryUs(n, 128);
  const double target = std::clamp(recall, 0.0, 1.0);
  const double close_target = 1 - (1 - target) / 100;
  const int close_d = std::max(k - 4, 0);
  for (int t = 0; t < k; ++t) {
    const double at_k = FilterCollision(k, t);
    const double close = FilterCollision(close_d, t);
    if (at_k < target || close < close_target) continue;
    // A random row passes the first level with P(Binomial(64, 1/2) <= t).
    double survivors = 0;
    for (int i = 0; i <= t; ++i)
      survivors += std::exp(std::lgamma(65.0) - std::lgamma(i + 1.0) - std::lgamma(65.0 - i) -
                            64 * std::log(2.0));
    spec.kind = TablesKind::kFilter;
    spec.radius = t;
    spec.recall_at_k = at_k;
    spec.recall_at_k_minus_4 = close;
    spec.estimated_query_us = static_cast<double>(n) * FilterScanNsPerRow(survivors) * 1e-3;
    break;
  }
  return spec;
}

TablesSpec ChooseTables(size_t n, int bits, int k, const TablesPolicy& policy) {
  TablesSpec tables = ChooseLookupTables(n, bits, k, policy);
  if (policy.exact || policy.tables_only) return tables;
  TablesSpec scan;
  scan.kind = TablesKind::kScan;
  scan.bits = bits;
  scan.max_k = k;
  scan.estimated_query_us = ScanQueryUs(n, bits);
  if (bits == 128 && n >= kMinFilterRows) {
    TablesSpec filter = ChooseFilter(n, k, policy.recall);
    if (filter.kind == TablesKind::kFilter &&
        filter.estimated_query_us <= kFilterGain * scan.estimated_query_us) {
      scan = std::move(filter);
    }
  }
  if (bits == 128 && n >= kMinFilterRows && policy.recall < 1) {
    const ProbeTablesSpec probe = ChooseProbeTables(
        n, k, policy.recall, std::min<double>(kMaxProbeBytes, policy.max_bytes_per_fingerprint));
    if (probe.tables > 0 && probe.estimated_query_us < scan.estimated_query_us &&
        probe.estimated_query_us < tables.estimated_query_us) {
      return ProbeTablesSpecFor(probe, k);
    }
  }
  if (scan.estimated_query_us > tables.estimated_query_us) return tables;
  return scan;
}

TablesSpec ChooseLookupTables(size_t n, int bits, int k, const TablesPolicy& policy) {
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
  switch (kind) {
    case TablesKind::kExact:
      return "exact";
    case TablesKind::kBands:
      return "bands";
    case TablesKind::kScan:
      break;
    case TablesKind::kFilter:
      return "filter";
    case TablesKind::kProbe:
      return "probe";
  }
  return "scan";
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
  if (n < 4096) {
    for (size_t t = 0; t < masks.size(); ++t) build(t);
    return tables;
  }
  // On the library's pool: a failed allocation on a worker (std::bad_alloc)
  // reaches the caller (threads of its own ended the process: std::terminate).
  ParallelFor(masks.size(), threads, [&](size_t t, int) { build(t); });
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

// The probes of a group of queries go through four passes, each
// prefetching what the next reads, so that the cache misses of all the
// group's probes overlap instead of following one another: the directory
// slots, the buckets, the candidates' fingerprints. A group is as many
// consecutive queries as hold kGroupProbes probes (at least one query):
// one query of many probes (128 bits, bands of radius 1: 1,242) is a group
// alone, a batch of queries of few probes each (64 bits, exact tables: 10)
// shares its passes, so their misses overlap too. Groups of 24 to 64
// probes measured best at 64 bits, k = 3 (0.78 us a query against 1.07 at
// 128 to 512: the lines prefetched by a larger group's first pass no longer
// fit in L1 when the next pass reads them).
constexpr size_t kGroupProbes = 64;

template <typename Layout>
void QueryTablesIn(const TablesView& view, std::span<const uint64_t> q_hi,
                   std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  const size_t slots = size_t{1} << view.dir_bits;
  const int shift = 32 - view.dir_bits;
  struct Probe {
    uint32_t query;
    uint32_t table;
    uint32_t key;
    uint64_t hi, lo;  // the probed value (q with one bit flipped, or q)
  };
  thread_local std::vector<Probe> probes;
  const size_t tables = std::min(view.tables.size(), view.masks.size());
  size_t next = 0;
  while (next < q_lo.size()) {
    probes.clear();
    for (; next < q_lo.size() && probes.size() < kGroupProbes; ++next) {
      const uint32_t j = static_cast<uint32_t>(next);
      const uint64_t qh = view.bits == 128 ? q_hi[next] : 0;
      const uint64_t ql = q_lo[next];
      for (size_t t = 0; t < tables; ++t) {
        const TableMask& m = view.masks[t];
        const uint32_t tt = static_cast<uint32_t>(t);
        probes.push_back(Probe{j, tt, TableKey(qh, ql, m), qh, ql});
        if (m.radius >= 1) {
          for (uint64_t bits = m.lo; bits != 0; bits &= bits - 1) {
            const uint64_t flip = bits & (~bits + 1);
            probes.push_back(Probe{j, tt, TableKey(qh, ql ^ flip, m), qh, ql ^ flip});
          }
          for (uint64_t bits = m.hi; bits != 0; bits &= bits - 1) {
            const uint64_t flip = bits & (~bits + 1);
            probes.push_back(Probe{j, tt, TableKey(qh ^ flip, ql, m), qh ^ flip, ql});
          }
        }
      }
    }
    for (const Probe& p : probes) {
      const TableView& tv = view.tables[p.table];
      const size_t s = view.dir_bits == 0 ? 0 : p.key >> shift;
      if (s + 1 < tv.dir.size()) __builtin_prefetch(&tv.dir[s]);
    }
    struct Range {
      uint32_t probe, begin, end;
    };
    thread_local std::vector<Range> ranges;
    ranges.clear();
    for (size_t i = 0; i < probes.size(); ++i) {
      const Probe& p = probes[i];
      const TableView& tv = view.tables[p.table];
      const size_t s = view.dir_bits == 0 ? 0 : p.key >> shift;
      if (s >= slots || s + 1 >= tv.dir.size()) continue;
      const size_t end = std::min<size_t>(tv.dir[s + 1], Layout::Rows(tv));
      const size_t begin = tv.dir[s];
      if (begin >= end) continue;
      Layout::PrefetchBucket(tv, begin, end);
      ranges.push_back(Range{static_cast<uint32_t>(i), static_cast<uint32_t>(begin),
                             static_cast<uint32_t>(end)});
    }
    struct Candidate {
      uint32_t probe, row;
    };
    thread_local std::vector<Candidate> candidates;
    candidates.clear();
    for (const Range& r : ranges) {
      const Probe& p = probes[r.probe];
      const TableView& tv = view.tables[p.table];
      const uint16_t low = static_cast<uint16_t>(p.key);
      for (size_t i = r.begin; i < r.end; ++i) {
        if (Layout::Key(tv, i) != low) continue;
        const uint32_t row = Layout::Row(tv, i);
        if (row >= view.n || !Layout::HasRow(view, row)) continue;
        Layout::PrefetchRow(view, row);
        candidates.push_back(Candidate{r.probe, row});
      }
    }
    for (const Candidate& c : candidates) {
      const Probe& p = probes[c.probe];
      const TableMask& m = view.masks[p.table];
      const uint64_t qh = view.bits == 128 ? q_hi[p.query] : 0;
      const uint64_t ql = q_lo[p.query];
      uint64_t x_hi, x_lo;
      Layout::Read(view, c.row, &x_hi, &x_lo);
      // Genuinely the probed value in this table (not a hash collision), so
      // the row is found by exactly one probe of this table.
      if (((x_hi ^ p.hi) & m.hi) != 0 || ((x_lo ^ p.lo) & m.lo) != 0) continue;
      const int d = Popcount2(x_hi ^ qh, x_lo ^ ql);
      if (d > k) continue;
      // Reported by the first table that finds it.
      bool earlier = false;
      for (size_t u = 0; u < p.table && !earlier; ++u) {
        const TableMask& e = view.masks[u];
        earlier = Popcount2((x_hi ^ qh) & e.hi, (x_lo ^ ql) & e.lo) <= static_cast<int>(e.radius);
      }
      if (earlier) continue;
      out[p.query].push_back(ScanHit{c.row, static_cast<uint32_t>(d)});
    }
  }
}

}  // namespace

void QueryTablesBatch(const TablesView& view, std::span<const uint64_t> q_hi,
                      std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  if (view.n == 0 || q_lo.empty()) return;
  if (view.probe_threshold >= 0) {
    QueryProbeTables(view, q_hi, q_lo, k, out);
    return;
  }
  if (view.masks.empty()) {
    // Kind kScan: the exact scan of the rows that the arrays hold (a
    // damaged file's short array is scanned as far as it goes); kind
    // kFilter: the two-level scan of them (lo_filter).
    RowsView rows;
    rows.bits = view.bits;
    const size_t w = view.bits == 128 ? 2 : 1;
    if (view.packed) {
      rows.n = std::min(view.n, view.words.size() / w);
      rows.lo = view.words.data();
      rows.hi = w == 2 ? view.words.data() + 1 : nullptr;
      rows.stride = w;
    } else {
      rows.n = std::min(view.n, view.lo.size());
      if (w == 2) rows.n = std::min(rows.n, view.hi.size());
      rows.lo = view.lo.data();
      rows.hi = w == 2 ? view.hi.data() : nullptr;
    }
    rows.lo_filter = view.lo_filter;
    if (rows.n > 0) ScanRowsTiled(rows, q_hi, q_lo, k, out);
    return;
  }
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
