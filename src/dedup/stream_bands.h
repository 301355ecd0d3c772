// Copyright 2026 The neardup Authors.
//
// Stream mode (keep the first document, DedupMode::kStream) over bit-sampling
// bands: an incremental banded index of the kept documents, so that N
// documents cost about O(N log N) index work instead of the permuted tables'
// O(N^2) at the default method's k (doc/banding.md, "Stream mode").
//
//   StreamBandIndex index(layout, words);      // words: every document's (hi, lo)
//   index.Query(q, k, keys, &best, &counts);   // best kept one sharing a band key
//   index.Add(ids, keys, &pool);               // a batch's kept documents
//
// The index holds, per band, LSM-style levels of sorted (key, document)
// arrays: a batch's kept documents become a sorted run merged into level 0;
// a level larger than kBatch * 4^(i + 1) entries is merged into the next one
// (leveling with growth 4): about log4(N / kBatch) levels, each entry merged
// about 2 log4(N / kBatch) times. A level's array is cut by a directory of the
// top t key bits (2^t about a quarter of its size), so a probe is one
// directory lookup and a short scan; when t reaches the key's bits the keys
// are not stored (4 bytes per entry and band plus the directory).
//
// The unsorted delta is the current batch itself (at most kBatch documents):
// its documents are compared with each other exactly (every pair), so pairs
// within a batch are always found; pairs across batches are found when they
// share a band key (recall(d) of band_join.h). Every candidate is verified by
// its Hamming distance, so a reported duplicate is always within k.
//
// Internal to the library (src/, not installed).

#ifndef NEARDUP_DEDUP_STREAM_BANDS_H_
#define NEARDUP_DEDUP_STREAM_BANDS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dedup/documents.h"
#include "neardup/band_join.h"
#include "neardup/dedup.h"
#include "neardup/status.h"
#include "util/thread_pool.h"

namespace neardup::dedup_internal {

// Documents per batch: the delta compared exactly, and the unit of level sizes.
inline constexpr size_t kStreamBatch = 4096;

class StreamBandIndex {
 public:
  using Words = std::pair<uint64_t, uint64_t>;  // (hi, lo)

  // words[id] is document id's fingerprint; the caller keeps it alive.
  // REQUIRES: layout.bands >= 1, 1 <= layout.band_bits <= layout.bits.
  StreamBandIndex(const SimHashBands& layout, std::span<const Words> words);

  int bands() const { return static_cast<int>(masks_.size()); }

  // The 32-bit band keys of documents ids: out[b * ids.size() + j] is band b's
  // key of ids[j]. Bands in parallel on pool.
  void Keys(std::span<const uint32_t> ids, ThreadPool* pool, std::vector<uint32_t>* out) const;

  struct Best {
    uint32_t id = UINT32_MAX;  // UINT32_MAX: none within k
    int distance = INT32_MAX;
  };
  struct Counts {
    size_t candidates = 0;  // (band, indexed document) key matches
    size_t tested = 0;      // distance tests (entries of a probed directory bucket)
  };
  // The indexed document within k of document q that shares a band key with
  // it, closest first, then smallest id. keys[b * stride] is q's key of band
  // b (from Keys). Thread-safe against other Query calls.
  void Query(uint32_t q, int k, const uint32_t* keys, size_t stride, Best* best,
             Counts* counts) const;

  // Verified pairs: Query then finds only indexed documents that pass
  // PassesVerification(*options, id, q) (stages.h). Null: no check.
  void set_verify(const DedupOptions* options) { verify_ = options; }

  // Indexes documents ids (increasing); keys as from Keys(ids). Merges levels.
  void Add(std::span<const uint32_t> ids, std::span<const uint32_t> keys, ThreadPool* pool);

  size_t size() const { return size_; }
  size_t levels() const { return levels_.size(); }
  // Bytes held by the levels (keys, ids, directories).
  size_t MemoryBytes() const;

 private:
  // One band's sorted array at one level.
  struct Run {
    int dir_bits = 0;            // t
    std::vector<uint32_t> keys;  // empty when t == key_bits_
    std::vector<uint32_t> ids;   // sorted by (key, id)
    std::vector<uint32_t> dir;   // 2^t + 1 offsets by the top t key bits
    size_t size() const { return ids.size(); }
  };
  // (key << 32 | id), sorted.
  std::vector<uint64_t> RunWords(const Run& run) const;
  Run BuildRun(const std::vector<uint64_t>& words) const;

  std::span<const Words> words_;
  int key_bits_;  // min(band_bits, 32)
  bool packed_;   // band_bits <= 32: keys are the sampled bits, else hashed
  std::vector<std::pair<uint64_t, uint64_t>> masks_;
  std::vector<std::vector<Run>> levels_;  // levels_[level][band]
  size_t size_ = 0;
  const DedupOptions* verify_ = nullptr;
};

// Stream mode over the bands of `layout` (chosen by the caller, see
// ChooseSimHashStreamBands): fills result->records, pairs (as Dedup's stream
// mode does), and result->join's counts. Output depends on the input order
// and layout only, not on options.threads.
Status BandedStream(DocumentView docs, const DedupOptions& options, const SimHashBands& layout,
                    DedupResult* result);

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_STREAM_BANDS_H_
