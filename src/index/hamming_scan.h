// Copyright 2026 The neardup Authors.
//
// Internal: the exact Hamming scan, in SIMD where the CPU has it.
//
// ScanRows visits every row of an array of fingerprints and reports each row
// within distance k of a query, for a tile of queries at once: the rows are
// read once per block of kScanBlockRows and compared with every query of the
// tile while they are in cache, four queries at a time from registers.
//
// The kernel is chosen at run time, once (BestScanIsa): AVX-512 with
// VPOPCNTQ (avx512f + avx512vpopcntdq) where the CPU and the OS have it, else
// AVX2 (a nibble-table popcount, vpshufb + vpsadbw), else a scalar popcount
// loop; on a CPU other than x86-64 only the scalar loop is built. Every
// kernel gives the same rows in the same order (row order, per query).
// SetScanIsa overrides the choice (tests run every kernel the CPU has
// against the scalar one).
//
// Layouts of the rows (RowsView): 64-bit fingerprints are one word a row; a
// 128-bit row is the word pair (lo, hi), either interleaved in one array
// (stride 2: lo at 2i, hi at 2i + 1, the layout of unsigned __int128 on
// x86-64) or in two arrays (stride 1).

#ifndef NEARDUP_INDEX_HAMMING_SCAN_H_
#define NEARDUP_INDEX_HAMMING_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace neardup::index_internal {

enum class ScanIsa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// The fastest kernel this CPU runs (detected once).
ScanIsa BestScanIsa();
// True when this CPU (and build) runs `isa`.
bool ScanIsaSupported(ScanIsa isa);
// The kernel ScanRows uses: BestScanIsa() unless overridden.
ScanIsa ActiveScanIsa();
// Makes ScanRows use `isa` (false, and no change, when it is not
// supported). Not thread-safe with concurrent scans: for tests and
// benchmarks.
bool SetScanIsa(ScanIsa isa);
// "scalar", "avx2" or "avx512".
const char* ScanIsaName(ScanIsa isa);

// The rows to scan: n fingerprints of `bits` bits.
struct RowsView {
  int bits = 64;
  size_t n = 0;
  const uint64_t* lo = nullptr;  // lo word of row i at lo[i * stride]
  const uint64_t* hi = nullptr;  // 128 bits only: hi[i * stride]
  size_t stride = 1;             // 1, or 2 for 128-bit (lo, hi) pairs (hi == lo + 1)
  // 128 bits only: when >= 0, a row is reported only if its lo words are
  // also within this distance of the query's (the two-level filter of
  // TablesKind::kFilter, mask_tables.h). With the rows in two arrays
  // (stride 1) the scan then compares the lo words alone, 64 bits a row,
  // and reads a survivor's hi word after; with pairs (stride 2) it scans
  // the full rows and drops the others: the same rows either way.
  int lo_filter = -1;
};

// One hit of a scan: row (relative to the view) and distance.
struct ScanHit {
  uint32_t row = 0;
  uint32_t distance = 0;
  friend bool operator==(const ScanHit&, const ScanHit&) = default;
};

// Rows per block of a tiled scan (128 KiB of 128-bit rows: in L2).
inline constexpr size_t kScanBlockRows = 8192;

// For every query j (words q_lo[j], and q_hi[j] for 128 bits), appends to
// out[j] every row of [begin, end) within distance k (and, with
// rows.lo_filter >= 0, whose lo words are within lo_filter), in row order.
// REQUIRES: end <= rows.n < 2^32, out has q_lo.size() vectors, q_hi the size
// of q_lo for 128 bits.
void ScanRows(const RowsView& rows, size_t begin, size_t end, std::span<const uint64_t> q_hi,
              std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out);

// The CPU time of the tiled scan (ScanRowsTiled with a batch of at least
// kMinTiledBatch queries) in nanoseconds per row and query, for the active
// kernel and `bits`: measured (bench/index_scan_bench.cc, BM_ScanBatch at 1M
// rows; doc/benchmarks.md), for the cost model of ChooseTables (the scan
// against the tables).
double TiledScanNsPerRow(int bits);
// The same for a view of 128-bit rows in two arrays with lo_filter = t
// (the lo words' tiled scan, then the survivors' hi words), with a share
// `survivors` of the rows passing the first level.
double FilterScanNsPerRow(double survivors);
inline constexpr size_t kMinTiledBatch = 64;

// ScanRows over all rows, tiled: blocks of kScanBlockRows rows, each
// compared with every query before the next block is read.
void ScanRowsTiled(const RowsView& rows, std::span<const uint64_t> q_hi,
                   std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out);

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_HAMMING_SCAN_H_
