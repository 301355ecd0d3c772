// Copyright 2026 The neardup Authors.
//
// Internal: disjoint sets with path compression (halving) and union by size,
// used by dedup and the evaluation harness to group near-duplicates.
//
// Thread safety: none; Find compresses paths, so even it mutates.

#ifndef NEARDUP_UTIL_UNION_FIND_H_
#define NEARDUP_UTIL_UNION_FIND_H_

#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace neardup {

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n), size_(n, 1) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
  }

  size_t Find(size_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // Returns false when a and b were already in one set.
  bool Union(size_t a, size_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
    return true;
  }

  size_t SizeOf(size_t x) { return size_[Find(x)]; }

 private:
  std::vector<size_t> parent_;
  std::vector<size_t> size_;
};

}  // namespace neardup

#endif  // NEARDUP_UTIL_UNION_FIND_H_
