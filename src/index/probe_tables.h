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
// (bench/index_scan_bench.cc, BM_Probe; doc/benchmarks.md), of a query in a
// batch (SearchEach); a query alone (Search) costs about twice that.
double ProbeTablesQueryUs(const ProbeTablesSpec& spec, size_t n);

// The cheapest layout for n rows at k meeting `recall` at d = k and 1 - (1 -
// recall) / 100 at k - 4 within max_bytes table bytes per fingerprint; its
// `tables` is 0 when none does (recall 1, k too large for the budget).
ProbeTablesSpec ChooseProbeTables(size_t n, int k, double recall, double max_bytes = 128);

class ProbeTableIndex {
 public:
  // Builds the tables of `spec` over rows [0, n) of (lo, hi).
  // REQUIRES: spec.tables >= 1, lo.size() == hi.size() < 2^32.
  ProbeTableIndex(std::span<const uint64_t> lo, std::span<const uint64_t> hi, int k,
                  const ProbeTablesSpec& spec);

  const ProbeTablesSpec& spec() const { return spec_; }
  size_t size() const { return lo_.size(); }
  // Bytes of the tables (directories, filter words, row numbers).
  size_t TableBytes() const;

  // Appends to *out every row within k of (q_hi, q_lo) that some table
  // finds (its key within r, its half within t), once, in row order, with
  // its distance.
  void Search(uint64_t q_hi, uint64_t q_lo, std::vector<ScanHit>* out) const;
  // Search for each query j (q_hi[j], q_lo[j]) into out[j].
  // REQUIRES: out has q_lo.size() vectors, q_hi.size() == q_lo.size().
  void SearchEach(std::span<const uint64_t> q_hi, std::span<const uint64_t> q_lo,
                  std::vector<ScanHit>* out) const;

 private:
  struct Table {
    int half = 0;                 // 0: the lo word, 1: the hi word
    int shift = 0;                // the key's lowest bit in the word
    std::vector<uint32_t> dir;    // 2^b + 1 offsets
    std::vector<uint64_t> words;  // the rows' half words, by key
    std::vector<uint32_t> rows;   // the rows, beside words
  };

  ProbeTablesSpec spec_;
  int k_ = 0;
  std::vector<uint64_t> lo_, hi_;
  std::vector<Table> tables_;
  std::vector<uint32_t> flips_;  // the V key masks within radius r
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_PROBE_TABLES_H_
