// Copyright 2026 The neardup Authors.
//
// Internal: an insertion-ordered index of distinct strings, for counting the
// words of one document on a hot path (keyword extraction, word weights):
// open addressing over entry numbers, no allocation per key, and the table is
// reused from one document to the next.
//
//   thread_local OrderedStringIndex index;
//   index.Reset(words.size());
//   for (std::string_view w : words) {
//     auto [entry, inserted] = index.Insert(w);  // entry: 0, 1, 2, ... in
//     ...                                        // order of first insertion
//   }
//
// Keys are views: the strings must outlive the index's use until Reset.
// Thread safety: none (use one per thread).

#ifndef NEARDUP_UTIL_ORDERED_STRING_INDEX_H_
#define NEARDUP_UTIL_ORDERED_STRING_INDEX_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup {

class OrderedStringIndex {
 public:
  // Forgets every key and makes room for up to max_keys distinct keys.
  // REQUIRES: at most max_keys distinct keys are inserted before the next
  // Reset (the table does not grow).
  void Reset(size_t max_keys) {
    size_t capacity = 64;
    while (capacity < max_keys * 2) capacity *= 2;
    if (slots_.size() < capacity) slots_.resize(capacity);
    std::fill(slots_.begin(), slots_.begin() + static_cast<ptrdiff_t>(capacity), 0u);
    mask_ = capacity - 1;
    keys_.clear();
  }

  // The entry number of `key` (its rank in order of first insertion) and
  // whether this call inserted it.
  std::pair<uint32_t, bool> Insert(std::string_view key) {
    size_t slot = std::hash<std::string_view>()(key) & mask_;
    while (slots_[slot] != 0 && keys_[slots_[slot] - 1] != key) slot = (slot + 1) & mask_;
    if (slots_[slot] != 0) return {slots_[slot] - 1, false};
    keys_.push_back(key);
    slots_[slot] = static_cast<uint32_t>(keys_.size());
    return {slots_[slot] - 1, true};
  }

  size_t size() const { return keys_.size(); }

 private:
  std::vector<uint32_t> slots_;  // entry + 1; 0 = empty
  std::vector<std::string_view> keys_;
  size_t mask_ = 0;
};

}  // namespace neardup

#endif  // NEARDUP_UTIL_ORDERED_STRING_INDEX_H_
