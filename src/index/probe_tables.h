// Copyright 2026 The neardup Authors.
//
// Internal: sorted probe tables with inline filter words, for 128-bit
// fingerprints at a large k (the default method: k = 28), measured against
// the exact scan and the two-level filter (TablesKind::kFilter) in
// bench/index_scan_bench.cc (doc/benchmarks.md, "Probe tables").
//
// The permuted sorted tables of Manku et al., with multi-probe and the
// candidates' filter words stored in the tables, so that a probe reads one
// contiguous run of 8-byte words instead of random rows:
//
//   - L tables. Table g keys on b contiguous bits of one half of the
//     fingerprint: half g % 2 (0 the lo word, 1 the hi word), bits
//     [(g / 2) b, (g / 2 + 1) b) of it. Keys of the tables of one half are
//     disjoint, so L <= 2 floor(64 / b).
//   - Each table stores its rows sorted by key: a directory of 2^b + 1
//     uint32 offsets, then for every row its half's 64-bit word (the filter
//     word, which holds the key) and its row number (uint32): 12 bytes a row
//     and table, in two arrays.
//   - A query probes, in every table, each key within Hamming distance r of
//     its own (V = sum_{i <= r} C(b, i) buckets a table), compares every
//     filter word of a probed bucket with its own half word (popcount of the
//     XOR <= t; AVX-512 VPOPCNTQ where the CPU has it), and verifies each
//     survivor's full distance <= k through its row number (the other half's
//     word). A row found by several tables is reported once.
//
// A pair at distance d (its d differing bits uniformly placed) is found when
// some table has at most r differing bits in its key and at most t in its
// half: ProbeTablesRecall computes that probability exactly (a dynamic
// program over the keys' disjoint bit groups of each half, the tables'
// events counted jointly, not as independent), and ChooseProbeTables picks
// (b, r, L, t) meeting recall at d = k and 1 - (1 - recall) / 100 at k - 4
// (the targets of the bands and the filter, mask_tables.h) at the least
// estimated cost within a byte budget. Nothing beyond k is ever reported.
//
// Thread safety: built, then frozen; Search and SearchEach are const and
// may run concurrently.

#ifndef NEARDUP_INDEX_PROBE_TABLES_H_
#define NEARDUP_INDEX_PROBE_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "index/hamming_scan.h"
#include "index/mask_tables.h"

namespace neardup::index_internal {

struct ProbeTablesSpec {
  int key_bits = 0;                // b, 1..24
  int radius = 0;                  // r, 0..3: probe every key within r of the query's
  int tables = 0;                  // L, 1..2 floor(64 / b); 0: no layout meets the targets
  int threshold = 0;               // t, 0..64: a filter word's distance to survive
  double recall_at_k = 0;          // ProbeTablesRecall at d = k
  double recall_at_k_minus_4 = 0;  // at d = max(k - 4, 0)
  double probes = 0;               // L V buckets a query
  double reads = 0;                // filter words compared a query: L V n / 2^b
  double survivors = 0;            // random rows verified a query (expected)
  double estimated_query_us = 0;   // ProbeTablesQueryUs
  double bytes_per_fingerprint = 0;
};

// P(a pair at distance d over 128 bits is found by the tables of `spec`):
// exact, over the uniformly random placement of the d differing bits.
double ProbeTablesRecall(const ProbeTablesSpec& spec, int d);

// The estimated CPU time of one query over n rows, in microseconds: probes,
// filter words compared and survivors verified, each at its measured cost
// with the bucket kernel the CPU runs (ActiveScanIsa: a word compared costs
// 2.7 times as much with AVX2 as with AVX-512, so that the layout picked
// differs: bench/index_scan_bench.cc, BM_Probe; doc/benchmarks.md), of a
// query in a batch (SearchEach); a query alone (Search) costs about twice
// that.
double ProbeTablesQueryUs(const ProbeTablesSpec& spec, size_t n);

// The cheapest layout for n rows at k meeting `recall` at d = k and 1 - (1 -
// recall) / 100 at k - 4 within max_bytes table bytes per fingerprint; its
// `tables` is 0 when none does (recall 1, k too large for the budget).
ProbeTablesSpec ChooseProbeTables(size_t n, int k, double recall, double max_bytes = 128);

// Table bytes per fingerprint the probe tables may take (ChooseTables:
// at most this, and at most the policy's budget).
inline constexpr double kMaxProbeBytes = 128;
// The widest key (the directory has 2^b + 1 slots).
inline constexpr int kMaxProbeKeyBits = 20;

// The key mask of table g of a layout of b-bit keys probed within `radius`:
// b contiguous bits of half g % 2, from bit (g / 2) b.
TableMask ProbeMask(int g, int key_bits, int radius);
// The table set (kind kProbe) of a layout at k: dir_bits b, radius t, one
// ProbeMask a table; recall, cost and bytes from `probe`.
TablesSpec ProbeTablesSpecFor(const ProbeTablesSpec& probe, int k);
// True when `spec` is a layout ProbeTablesSpecFor makes (an index file's
// metadata is checked with it).
bool IsProbeLayout(const TablesSpec& spec);
// True when the tables of `spec` (kind kProbe) find a pair whose bits
// differ by (x_hi, x_lo): some table's key differs in at most r bits and
// its half in at most t. (The delta of an index of this kind answers by
// it, so that it answers as the file written from it.)
bool ProbeFinds(const TablesSpec& spec, uint64_t x_hi, uint64_t x_lo);
// The tables of `masks` (ProbeMask's, b-bit keys) over rows [0, n) of
// (lo, hi): directory, row numbers and half words (OwnedTable::words). The
// directory keys on the low key_bits of each mask's (b, or fewer: a narrow
// directory, LevelDirBits; a TablesView of it has dir_bits = key_bits).
std::vector<OwnedTable> BuildProbeTables(std::span<const TableMask> masks, int key_bits,
                                         std::span<const uint64_t> lo,
                                         std::span<const uint64_t> hi);
// How QueryProbeTables orders a batch's probes: each query's in one
// prefetched pipeline, query after query (kEachQuery), or the batch's
// probes into each table sorted by key, each table read once in order
// (kSorted); kAuto: as SortProbes. The answers are the same.
enum class ProbeOrder { kAuto, kEachQuery, kSorted };
// kAuto's choice for `queries` queries into tables of n rows, b-bit keys
// probed within `radius` (b: the directory's bits): sorted from 16 queries
// whose probes read 16 words a key of each table's directory (queries x V x
// n / 2^b >= 16 x 2^b: at 1M rows, radius 2, from 41 queries with 14-bit
// keys (AVX-512's pick), from 142 with 15-bit keys (AVX2's); at 10M, 15-bit
// keys, from 16; a delta's level, its directory narrowed to
// ~16 rows a key, from 16) or make 1.5 probes a key (queries x V >= 1.5 x
// 2^b), else query by query.
bool SortProbes(size_t queries, size_t n, int key_bits, int radius);

// For each query j, appends to out[j] every row within k that the probe
// tables of `view` find (view.probe_threshold = t, view.dir_bits = b), once
// each, in row order, with its distance, the probes ordered by `order`.
// Tolerates a damaged view (directory offsets or rows out of range are
// skipped).
void QueryProbeTables(const TablesView& view, std::span<const uint64_t> q_hi,
                      std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out,
                      ProbeOrder order = ProbeOrder::kAuto);

// The directory bits for probe tables of b-bit keys over n rows (a delta's
// level, whose rows are far fewer than the 2^b keys the index file's
// directory holds): the low bits of each table's key, so that a directory
// key holds about kLevelRowsPerKey rows, at least kMinLevelDirBits and at
// most b. A query probes the keys within r of its own in those bits and
// keeps a bucket's row only when its whole key is within r (and its half
// within t): the same rows as the full directory, in far fewer probes.
int LevelDirBits(size_t n, int key_bits);
inline constexpr double kLevelRowsPerKey = 16;
inline constexpr int kMinLevelDirBits = 6;

class ProbeTableIndex {
 public:
  // Builds the tables of `spec` over rows [0, n) of (lo, hi), with a
  // directory of dir_bits of each key (0: all spec.key_bits of them;
  // LevelDirBits).
  // REQUIRES: spec.tables >= 1, lo.size() == hi.size() < 2^32,
  // dir_bits <= spec.key_bits.
  ProbeTableIndex(std::span<const uint64_t> lo, std::span<const uint64_t> hi, int k,
                  const ProbeTablesSpec& spec, int dir_bits = 0);
  ProbeTableIndex(const ProbeTableIndex&) = delete;
  ProbeTableIndex& operator=(const ProbeTableIndex&) = delete;

  const ProbeTablesSpec& spec() const { return spec_; }
  size_t size() const { return lo_.size(); }
  // Bytes of the tables (directories, filter words, row numbers).
  size_t TableBytes() const;
  int dir_bits() const { return view_.dir_bits; }

  // Appends to *out every row within k of (q_hi, q_lo) that some table
  // finds (its key within r, its half within t), once, in row order, with
  // its distance.
  void Search(uint64_t q_hi, uint64_t q_lo, std::vector<ScanHit>* out) const;
  // Search for each query j (q_hi[j], q_lo[j]) into out[j], the probes
  // ordered by `order`.
  // REQUIRES: out has q_lo.size() vectors, q_hi.size() == q_lo.size().
  void SearchEach(std::span<const uint64_t> q_hi, std::span<const uint64_t> q_lo,
                  std::vector<ScanHit>* out, ProbeOrder order = ProbeOrder::kAuto) const;

 private:
  ProbeTablesSpec spec_;
  int k_ = 0;
  std::vector<uint64_t> lo_, hi_;
  TablesSpec tables_spec_;
  std::vector<OwnedTable> tables_;
  TablesView view_;
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_PROBE_TABLES_H_
