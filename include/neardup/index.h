// Copyright 2026 The neardup Authors.
//
// Hamming-distance indexes over SimHash fingerprints.
//
// Every index answers the same question exactly: which stored fingerprints lie
// at Hamming distance <= k from a query ("<= k", inclusive). Two
// implementations share the HammingIndex interface:
//
//   LinearScanIndex     exact scan, in SIMD (AVX-512 VPOPCNTQ or AVX2, chosen
//                       at run time; a scalar loop elsewhere). O(N) per query.
//                       The oracle for tests; any k in [0, bits].
//   PermutedTableIndex  Manku, Jain, Das Sarma (2007) permuted tables. The f
//                       bits are split into b > max_k blocks; each of the
//                       C(b, max_k) tables keys on a different choice of
//                       (b - max_k) blocks. Two fingerprints within max_k
//                       differ in at most max_k blocks, so by pigeonhole they
//                       agree exactly on the key of at least one table.
//                       Candidates are verified with popcount, so results are
//                       identical to LinearScanIndex's: no misses, no false
//                       hits. Any k in [0, max_k] may be queried.
//
// Usage:
//
//   neardup::PermutedTableOptions opt;
//   opt.bits = 64;
//   opt.max_k = 3;
//   auto index = neardup::PermutedTableIndex::Build(opt, ids, fingerprints);
//   if (!index.ok()) return index.status();
//   std::vector<neardup::Neighbor> hits;
//   NEARDUP_RETURN_IF_ERROR((*index)->Search(query, 3, &hits));
//   std::vector<neardup::IdPair> pairs;
//   NEARDUP_RETURN_IF_ERROR((*index)->SelfJoin(3, /*threads=*/0, &pairs));
//   NEARDUP_RETURN_IF_ERROR((*index)->Save("corpus.ndx"));
//   auto loaded = neardup::LoadIndex("corpus.ndx");   // either type
//
// Ids are opaque uint64_t values chosen by the caller (document ids, row
// numbers). An index does not check that ids are unique: adding an id twice
// stores two entries, both are returned by queries and Remove(id) removes
// both. Callers that want set semantics keep ids unique (or Remove first).
//
// Thread safety: const methods (Search, SearchBatch, SelfJoin, Save, Entries)
// may run concurrently from many threads. Mutating methods (Add, AddBatch,
// Remove, RemoveBatch, Compact) require exclusive access.

#ifndef NEARDUP_INDEX_H_
#define NEARDUP_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/status.h"

namespace neardup {

// One stored fingerprint within the query distance.
struct Neighbor {
  uint64_t id = 0;
  int distance = 0;  // Hamming distance to the query, 0..k
  friend bool operator==(const Neighbor&, const Neighbor&) = default;
};

// An unordered pair of stored entries within the join distance; a < b.
struct IdPair {
  uint64_t a = 0;
  uint64_t b = 0;
  int distance = 0;
  friend bool operator==(const IdPair&, const IdPair&) = default;
};

// One stored entry.
struct IndexEntry {
  uint64_t id = 0;
  Fingerprint fingerprint;
};

// Results of a batch query in compressed-row form: the neighbours of query i
// are neighbors[offsets[i] .. offsets[i + 1]), sorted by (distance, id).
// offsets.size() == number of queries + 1.
struct SearchResults {
  std::vector<size_t> offsets;
  std::vector<Neighbor> neighbors;

  size_t num_queries() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  // REQUIRES: i < num_queries()
  std::span<const Neighbor> operator[](size_t i) const {
    return std::span<const Neighbor>(neighbors.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
};

enum class IndexType : uint32_t {
  kLinearScan = 1,
  kPermutedTable = 2,
  // The tables of a version 2 document index file (doc/index_format.md); not
  // a HammingIndex::Save format.
  kTables = 3,
};

// The abstract interface. "threads" arguments: 0 = all hardware threads,
// otherwise the number of worker threads (1 = the calling thread only).
class HammingIndex {
 public:
  virtual ~HammingIndex() = default;

  virtual IndexType type() const = 0;
  // Width of every stored fingerprint: 64 or 128.
  virtual int bits() const = 0;
  // The largest k accepted by Search, SearchBatch and SelfJoin.
  virtual int max_k() const = 0;
  // Number of live (not removed) entries.
  virtual size_t size() const = 0;
  // Heap bytes held by the index's arrays (capacity, not just size).
  virtual size_t MemoryBytes() const = 0;

  // Adds one entry. InvalidArgument if fp.bits() != bits(); ResourceExhausted
  // past 2^32 - 2 entries.
  virtual Status Add(uint64_t id, const Fingerprint& fp) = 0;
  // Adds ids[i] with fps[i] for every i; cheaper per entry than Add for large
  // batches. REQUIRES: ids.size() == fps.size() (else InvalidArgument; nothing
  // is added when any argument is invalid).
  virtual Status AddBatch(std::span<const uint64_t> ids, std::span<const Fingerprint> fps) = 0;
  // Removes every entry carrying `id`; returns how many were removed (0 when
  // none). O(N): prefer RemoveBatch for many ids.
  virtual size_t Remove(uint64_t id) = 0;
  // Removes every entry whose id is in `ids`; returns how many were removed.
  virtual size_t RemoveBatch(std::span<const uint64_t> ids) = 0;

  // Replaces *out with every live entry at distance <= k from `query`, sorted
  // by (distance, id). InvalidArgument if k is outside [0, max_k()] or
  // query.bits() != bits().
  virtual Status Search(const Fingerprint& query, int k, std::vector<Neighbor>* out) const = 0;
  // Search for every query, on `threads` threads. Same errors as Search.
  virtual Status SearchBatch(std::span<const Fingerprint> queries, int k, int threads,
                             SearchResults* out) const = 0;
  // Replaces *out with every unordered pair of live entries at distance <= k,
  // each pair exactly once with a < b (by id), sorted by (a, b, distance). Entries that
  // share an id form no pair with each other. Output is independent of
  // `threads`.
  virtual Status SelfJoin(int k, int threads, std::vector<IdPair>* out) const = 0;

  // Every live entry, in an unspecified but deterministic order.
  virtual std::vector<IndexEntry> Entries() const = 0;

  // Writes the index to `path` (see doc/index_format.md), atomically and
  // durably: the data goes to "<path>.tmp", is fsynced and renamed over
  // `path`, and the directory is fsynced. IOError on failure (the old file
  // is then intact). For an index with string ids and its settings, see
  // DocumentIndex (document_index.h).
  virtual Status Save(const std::string& path) const = 0;
};

// Loads an index saved by HammingIndex::Save, of either type. The file is
// treated as hostile: Corruption (truncated, bad checksum, inconsistent
// fields) or NotSupported (unknown version or index type), with the file name
// and reason in the message; IOError when it cannot be read.
Result<std::unique_ptr<HammingIndex>> LoadIndex(const std::string& path);
// As LoadIndex, from bytes in memory; `name` is used in error messages.
Result<std::unique_ptr<HammingIndex>> LoadIndexFromMemory(std::string_view bytes,
                                                          std::string_view name);

// Exact linear scan: fingerprints are stored contiguously and every query
// visits all of them, with the widest popcount the CPU has (AVX-512 VPOPCNTQ,
// else AVX2, else scalar; chosen at run time). SearchBatch compares each
// block of entries with a tile of queries while it is in cache. SelfJoin is
// O(N^2 / 2).
class LinearScanIndex : public HammingIndex {
 public:
  // REQUIRES: bits == 64 || bits == 128 (else InvalidArgument).
  static Result<std::unique_ptr<LinearScanIndex>> Create(int bits);
  // Create + AddBatch.
  static Result<std::unique_ptr<LinearScanIndex>> Build(int bits, std::span<const uint64_t> ids,
                                                        std::span<const Fingerprint> fps);
};

struct PermutedTableOptions {
  // Fingerprint width: 64 or 128.
  int bits = 64;
  // Largest query distance; the tables are laid out for it. 0 <= max_k <= bits / 4.
  int max_k = 3;
  // Number of blocks b; 0 = chosen by ChooseLayout from expected_size. When
  // set: max_k < blocks <= bits and C(blocks, max_k) <= kMaxTables.
  int blocks = 0;
  // Expected number of entries, for the automatic layout. 0 = 2^20 (Build
  // uses the number of fingerprints it is given when this is 0).
  size_t expected_size = 0;
  // Memory budget for the automatic layout, in bytes per stored fingerprint
  // (fingerprint + id + one fingerprint-sized word per extra table). The
  // smallest layout (b = max_k + 1) is used when nothing fits.
  size_t max_bytes_per_fingerprint = 64;
  // Threads used to build tables in Build, AddBatch and Load; 0 = all.
  int build_threads = 0;
};

// The shape of a permuted-table index.
struct TableLayout {
  int bits = 64;
  int max_k = 3;
  int blocks = 4;         // b
  int tables = 4;         // C(b, max_k)
  int min_key_bits = 16;  // the narrowest table key, in bits (capped at 64 for lookup)
  // Estimated bytes per fingerprint: bits/8 + 8 (id) + (tables - 1) * bits/8.
  size_t bytes_per_fingerprint = 40;
};

// Permuted-table index. Storage: table 0 keys on the top (b - max_k) blocks,
// whose permutation is the identity, so it doubles as the primary store
// (fingerprints sorted, ids beside them); every other table holds the
// permuted fingerprints only, sorted, with a radix directory on their top key
// bits. A match in a table is mapped back to its ids through the primary
// store. Inserts go to a small unsorted buffer (2,048 entries; an AddBatch of
// at least that many becomes a segment directly) that is turned into a sorted
// segment; a segment is merged into the previous one while it holds at least
// half as many live entries (logarithmic method: O(log N) segments, each entry
// re-merged O(log N) times). Removals mark tombstones; a segment is rebuilt
// when more than half of it is dead. Remove costs O(N) (a scan of the ids).
class PermutedTableIndex : public HammingIndex {
 public:
  static constexpr int kMaxTables = 4096;

  // InvalidArgument for bad options.
  static Result<std::unique_ptr<PermutedTableIndex>> Create(const PermutedTableOptions& options);
  // Create + AddBatch: a bulk load into a single sorted segment (batches of
  // fewer than 2,048 entries stay in the insert buffer, which is scanned
  // linearly). With options.expected_size == 0 the layout is chosen for
  // fps.size().
  static Result<std::unique_ptr<PermutedTableIndex>> Build(PermutedTableOptions options,
                                                           std::span<const uint64_t> ids,
                                                           std::span<const Fingerprint> fps);

  // The automatic layout for n entries: among b in [k + 1, min(bits, k + 16)]
  // with C(b, k) <= kMaxTables and within the memory budget, the one with the
  // lowest estimated query cost
  //   cost(b) = C(b, k) * (1 + n * 2^-w(b) * c)
  // where C(b, k) tables each cost one directory probe, w(b) is the narrowest
  // key width in bits ((b - k) * floor(bits / b), at most 64), n * 2^-w(b) is
  // the expected number of candidates per table for random fingerprints, and
  // c (0.05 for 64 bits, 0.08 for 128) is the cost of checking one candidate,
  // sequential in memory, relative to a cache-missing probe. Ties go to fewer
  // tables. REQUIRES: bits in {64, 128}, 0 <= k <= bits / 4.
  static TableLayout ChooseLayout(int bits, int k, size_t n, size_t max_bytes_per_fingerprint);

  // SelfJoin without holding the pairs: `sink` receives them in pieces of at
  // most kSelfJoinPiece pairs, each pair exactly once (a < b by id, as
  // SelfJoin), in no particular order; it is called concurrently from the
  // worker threads, so it must be thread-safe. Memory: one piece per thread,
  // however many pairs there are (SelfJoin holds them all). Same errors as
  // SelfJoin.
  static constexpr size_t kSelfJoinPiece = 65536;
  using PairPieceSink = std::function<void(std::span<const IdPair>)>;
  virtual Status SelfJoinStream(int k, int threads, const PairPieceSink& sink) const = 0;

  virtual const TableLayout& layout() const = 0;
  // Number of sorted segments plus 1 if the insert buffer is not empty.
  virtual size_t num_segments() const = 0;
  // Merges every segment and the insert buffer into one segment, dropping
  // removed entries. Queries are fastest after Compact.
  virtual void Compact() = 0;
};

}  // namespace neardup

#endif  // NEARDUP_INDEX_H_
