// Copyright 2026 The neardup Authors.
//
// Lookup of stored blocks by SimHash distance, behind a small interface so
// that a faster index (permuted tables) can replace the linear scan.

#ifndef NEARDUP_STORE_NEAR_INDEX_H_
#define NEARDUP_STORE_NEAR_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace neardup::store_internal {

struct NearMatch {
  int64_t block_id = 0;
  int distance = 0;
};

class NearBlockIndex {
 public:
  virtual ~NearBlockIndex() = default;

  virtual void Insert(uint64_t fingerprint, int64_t block_id) = 0;
  virtual void Clear() = 0;
  virtual size_t size() const = 0;

  // At most `limit` blocks whose Hamming distance to `fingerprint` is
  // <= max_distance, nearest first; equal distances: lower block_id first.
  virtual std::vector<NearMatch> Search(uint64_t fingerprint, int max_distance,
                                        size_t limit) const = 0;
};

// An exact scan over every inserted fingerprint: O(n) per search.
std::unique_ptr<NearBlockIndex> NewLinearScanIndex();

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_NEAR_INDEX_H_
