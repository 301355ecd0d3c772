// Copyright 2026 The neardup Authors.
//
// Documents with equal identity keys (identical fingerprints, identical
// signatures), collapsed into groups: what cluster mode joins (dedup.h) and
// what a run over several processes (dedup_over_ranks.h) numbers and hands
// to its cluster stage.
//
// Thread safety: a plain value.

#ifndef NEARDUP_DEDUP_GROUPS_H_
#define NEARDUP_DEDUP_GROUPS_H_

#include <cstddef>
#include <span>
#include <vector>

namespace neardup {

// The non-empty positions sorted by (key, position), cut into groups of
// equal keys. Group g's members are members[begin[g] .. begin[g + 1]), in
// increasing position; groups are in key order.
struct DedupGroups {
  std::vector<size_t> members;
  std::vector<size_t> begin;
  std::vector<size_t> of;  // per position: its group, or SIZE_MAX when empty

  size_t size() const { return begin.empty() ? 0 : begin.size() - 1; }
  std::span<const size_t> Members(size_t g) const {
    return std::span<const size_t>(members).subspan(begin[g], begin[g + 1] - begin[g]);
  }
};

}  // namespace neardup

#endif  // NEARDUP_DEDUP_GROUPS_H_
