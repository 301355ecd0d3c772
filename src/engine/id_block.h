// Copyright 2026 The neardup Authors.
//
// Document ids in one block of bytes with their end offsets: what
// DedupJob::Run holds per document instead of a std::string each (32 bytes,
// and a heap block of 32 more for an id of over 15 bytes such as
// "sr10m.txt:1234567": 10M one-line records held 640 MB of ids, 250 MB
// here). Append-only; a plain value, not thread-safe.
//
// Internal to the library (src/, not installed).

#ifndef NEARDUP_ENGINE_ID_BLOCK_H_
#define NEARDUP_ENGINE_ID_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::engine_internal {

class IdBlock {
 public:
  // Room for n ids (their offsets; the bytes grow as they come).
  void reserve(size_t n) { end_.reserve(n); }
  void push_back(std::string_view id) {
    bytes_.append(id);
    end_.push_back(bytes_.size());
  }
  size_t size() const { return end_.size(); }
  // Id i, valid until the next push_back. REQUIRES: i < size().
  std::string_view operator[](size_t i) const {
    const uint64_t begin = i == 0 ? 0 : end_[i - 1];
    return std::string_view(bytes_).substr(begin, end_[i] - begin);
  }

 private:
  std::string bytes_;          // every id, back to back
  std::vector<uint64_t> end_;  // id i is bytes_[end_[i - 1] (0 for i = 0), end_[i])
};

}  // namespace neardup::engine_internal

#endif  // NEARDUP_ENGINE_ID_BLOCK_H_
