// Copyright 2026 The neardup Authors.
//
// Internal: the lookup tables of a version 2 index file (doc/index_format.md),
// used in place from a memory-mapped file or from memory.
//
// A table is a bit mask m over the f fingerprint bits and a probe radius
// (0 or 1). Its key for a fingerprint x is a 32-bit hash of x & m. A query q
// probes the key of q & m and, with radius 1, the keys of (q ^ e_j) & m for
// every bit j of m, so it finds every stored x with popcount((q ^ x) & m) <= 1
// (radius 0: (q ^ x) & m == 0). Every hit is verified by its Hamming
// distance; nothing is ever reported beyond k.
//
// Three kinds of table sets, one structure:
//   exact  the permuted tables of Manku et al.: the f bits cut into b blocks,
//          one table per choice of b - k key blocks (radius 0). Two
//          fingerprints within k agree on the key blocks of some table, so
//          recall is 1.
//   bands  bit sampling (band_join.h): L masks of r positions drawn by
//          SimHashBandMasks from kDefaultBandSeed. A pair at distance d is
//          found by a band with probability P(X <= radius), X the number of
//          the r sampled positions among the d differing ones
//          (hypergeometric; for radius 0 it is BitSamplingCollision), so the
//          recall is BandRecall(p, L), computed for d = k and d = k - 4.
//   scan   no tables at all: every query is answered by the exact SIMD scan
//          of the rows' fingerprints (hamming_scan.h), one query at a time
//          or tiled over a batch; recall 1, and no bytes beyond the rows.
//   filter no tables either (128 bits only): the two-level scan, the rows'
//          lo words (64 bits) within t of the query's first, then the
//          survivors' full distance (RowsView::lo_filter). A row at
//          distance d has at most t of its d differing bits among the 64 lo
//          bits with probability P(X <= t), X ~ Hypergeometric(128, d, 64):
//          t (the spec's radius) is the smallest that gives `recall` at d =
//          k and 1 - (1 - recall) / 100 at k - 4, the bands' targets (at k
//          = 28 and recall 0.99: t = 20, 0.9976 and 0.99997). The rows are
//          stored in two arrays (lo words together), even in a version 3
//          file, so that the first level reads 8 bytes a row.
//   probe  sorted probe tables with inline filter words (128 bits only,
//          probe_tables.h): L tables keyed on b contiguous bits of one half
//          (dir_bits = b; mask i the key's bits, its radius r, 0..3), each
//          row's half word stored beside its row number; a query probes
//          every key within r and keeps the rows whose half is within t
//          (the spec's radius) of its own, then verifies their distance.
//          Recall by ProbeTablesRecall (exact), the same targets.
// ChooseTables picks among them by estimated query cost (the tables within a
// memory budget); `exact` forces the first.
//
// Storage of one table over n rows: a directory of 2^t + 1 uint32 offsets on
// the top t bits of the key, then the rows (uint32) bucketed by those bits,
// with the key's low 16 bits (uint16) beside each row.

#ifndef NEARDUP_INDEX_MASK_TABLES_H_
#define NEARDUP_INDEX_MASK_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "index/hamming_scan.h"
#include "neardup/fingerprint.h"

namespace neardup::index_internal {

enum class TablesKind : uint32_t { kExact = 1, kBands = 2, kScan = 3, kFilter = 4, kProbe = 5 };

struct TableMask {
  uint64_t hi = 0;
  uint64_t lo = 0;
  uint32_t radius = 0;  // 0 or 1 (kind kProbe: 0..3)
};

// How a table set is chosen (stored in the file so that a compaction chooses
// the same way for its new size).
struct TablesPolicy {
  bool exact = false;                        // exact tables whatever the cost
  double recall = 0.99;                      // target recall at d = k (bands)
  uint32_t max_bytes_per_fingerprint = 512;  // tables only (bands)
  bool tables_only = false;                  // lookup tables even where the scan is cheaper
};

struct TablesSpec {
  TablesKind kind = TablesKind::kExact;
  int bits = 64;
  int max_k = 0;
  int dir_bits = 0;                  // t
  int blocks = 0;                    // exact: b
  int band_bits = 0;                 // bands: r
  int radius = 0;                    // bands: probe radius; filter: t
  uint64_t seed = 0;                 // bands: the SimHashBandMasks seed
  double recall_at_k = 1;            // guaranteed recall at d = max_k
  double recall_at_k_minus_4 = 1;    // at d = max(max_k - 4, 0)
  double estimated_query_us = 0;     // by the cost model, one thread
  double bytes_per_fingerprint = 0;  // of the tables
  std::vector<TableMask> masks;
};

// Directory bits for n rows: about 4 to 8 rows per bucket, at most 24.
int DirBitsFor(size_t n);

// The table set for n fingerprints of `bits` bits queried up to distance k:
// ChooseLookupTables's, or a scan without tables where its estimated cost is
// not above the tables' estimate (never with policy.exact or
// policy.tables_only): the two-level filter (kind kFilter) where its
// threshold is below k for policy.recall, the index has at least
// kMinFilterRows rows and it costs at most kFilterGain of the exact scan,
// else the exact scan (kind kScan; n x TiledScanNsPerRow(bits)). The costs compared are those of a
// query in a batch (what DocumentIndex::Check and QueryBatch, and so the
// CLI, serve and Python, run): the tiled scan's measured cost per row
// against the tables' model, which is calibrated on their measured batch
// cost (doc/index_format.md gives the measurements and the crossover).
// REQUIRES: bits in {64, 128}, 0 <= k <= bits / 4 (the exact layout's limit)
// or, for bands, k < bits.
TablesSpec ChooseTables(size_t n, int bits, int k, const TablesPolicy& policy);
// At 128 bits and from kMinFilterRows rows (never with policy.exact,
// policy.tables_only or recall 1), the probe tables (kind kProbe,
// ChooseProbeTables within policy.max_bytes_per_fingerprint) are chosen
// where their estimate is below every other's.
// The filter is chosen only where it saves at least a quarter of the exact
// scan's cost (recall 1 is worth a premium) and only from this many rows
// (below, the exact scan costs a few microseconds a query).
inline constexpr size_t kMinFilterRows = 65536;
inline constexpr double kFilterGain = 0.75;
// The two-level filter for 128 bits at k and `recall` (kind kFilter,
// radius t, its recall and cost), or a spec of kind kScan when no t < k
// meets the targets (recall 1, or k small).
TablesSpec ChooseFilter(size_t n, int k, double recall);
// P(X <= t), X ~ Hypergeometric(128, d, 64): the share of the pairs at
// distance d that the filter with threshold t finds.
double FilterCollision(int d, int t);
// The cheapest lookup tables, exact or bands, never the scan (the
// benchmarks measure them against it).
TablesSpec ChooseLookupTables(size_t n, int bits, int k, const TablesPolicy& policy);
// The scan's estimated cost of one query over n rows, in a batch (the tiled
// scan, TiledScanNsPerRow), in microseconds.
double ScanQueryUs(size_t n, int bits);

// Recall of one table of r sampled bits probed with `radius` for a pair at
// distance d: P(X <= radius).
double TableCollision(int f, int d, int r, int radius);

// Bytes of one row of a packed table (TableView::entries): the row (uint32)
// then the key's low 16 bits (uint16), little-endian, unaligned.
inline constexpr size_t kPackedEntryBytes = 6;

// One table, in place. Split (a version 2 file, the delta in memory): rows
// and keys in two arrays. Packed (version 3): `entries`, so that a bucket is
// one read instead of two.
struct TableView {
  std::span<const uint32_t> dir;  // 2^t + 1 offsets
  std::span<const uint32_t> rows;
  std::span<const uint16_t> keys;
  std::span<const uint8_t> entries;  // packed: kPackedEntryBytes per row
  std::span<const uint64_t> words;   // kind kProbe: each row's half word, beside rows
};

// A table set over n rows of fingerprints. Split: lo, and hi for 128 bits,
// in two arrays. Packed (version 3): `words`, bits / 64 words per row (lo,
// then hi), so that a candidate's fingerprint is one read instead of two.
struct TablesView {
  int bits = 64;
  int dir_bits = 0;
  size_t n = 0;
  bool packed = false;
  std::span<const uint64_t> lo;
  std::span<const uint64_t> hi;     // empty for 64 bits
  std::span<const uint64_t> words;  // packed
  std::span<const TableMask> masks;
  std::vector<TableView> tables;
  int lo_filter = -1;        // kind kFilter (no masks, split rows): t
  int probe_threshold = -1;  // kind kProbe: t (dir_bits the key's bits)

  // The fingerprint of row `row` (hi is 0 for 64 bits); false when the row
  // is out of range of the arrays (a damaged file).
  bool RowFingerprint(size_t row, uint64_t* x_hi, uint64_t* x_lo) const {
    if (packed) {
      const size_t w = bits == 128 ? 2 : 1;
      if (row >= words.size() / w) return false;
      *x_lo = words[w * row];
      *x_hi = w == 2 ? words[w * row + 1] : 0;
      return true;
    }
    if (row >= lo.size() || (bits == 128 && row >= hi.size())) return false;
    *x_lo = lo[row];
    *x_hi = bits == 128 ? hi[row] : 0;
    return true;
  }
};

// Tables built in memory (split).
struct OwnedTable {
  std::vector<uint32_t> dir;
  std::vector<uint32_t> rows;
  std::vector<uint16_t> keys;
  std::vector<uint64_t> words;  // kind kProbe (then no keys)
};

// The packed entries of a split table (TableView::entries).
std::vector<uint8_t> PackEntries(const OwnedTable& table);

// Builds every table of `masks` over rows [0, n) of (lo, hi), on `threads`
// threads (0 = all).
std::vector<OwnedTable> BuildTables(std::span<const TableMask> masks, int dir_bits,
                                    std::span<const uint64_t> lo, std::span<const uint64_t> hi,
                                    int threads);

// Appends to *rows every row x with HammingDistance(q, x) <= k found by the
// tables, each once, with its distance in *dists (same order). Tolerates a
// hostile view (offsets and rows out of range are skipped), never reads out
// of the spans; a damaged table (one that fails IndexFileV2::Verify) may
// still give a row twice or miss one.
void QueryTables(const TablesView& view, uint64_t q_hi, uint64_t q_lo, int k,
                 std::vector<uint32_t>* rows, std::vector<int>* dists);

// QueryTables for a batch of queries (q_hi[j], q_lo[j]; q_hi is ignored for
// 64 bits): appends to out[j] every row found for query j, with its distance,
// in the order QueryTables gives them. A view without masks (kind kScan) is
// answered by the exact scan of its rows (ScanRowsTiled: tiled over the
// batch; row order), so QueryTables and QueryTablesBatch give the same rows
// for every kind. Consecutive queries are probed as a
// group of about 64 probes, in passes that each prefetch what the next
// reads (directory slots, buckets, candidates' fingerprints), so a batch of
// queries of few probes each (64 bits, small k) keeps as many cache misses
// in flight as one query of many. QueryTables is this with one query. REQUIRES: out has q_lo.size()
// vectors.
void QueryTablesBatch(const TablesView& view, std::span<const uint64_t> q_hi,
                      std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out);

// The 32-bit key of (hi, lo) & mask.
uint32_t TableKey(uint64_t hi, uint64_t lo, const TableMask& mask);

// "exact", "bands", "scan", "filter" or "probe".
const char* TablesKindName(TablesKind kind);

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_MASK_TABLES_H_
