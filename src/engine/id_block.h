// Copyright 2026 The neardup Authors.
//
// Document ids in one block of bytes with their end offsets: what
// DedupJob::Run holds per document instead of a std::string each (32 bytes,
// and a heap block of 32 more for an id of over 15 bytes such as
// "sr10m.txt:1234567": 10M one-line records held 640 MB of ids, 210 MB
// here: the bytes and a 32-bit end per id within its chunk of 4,096, 64-bit
// ends once a chunk's ids take 4 GiB). Append-only; a plain value, not
// thread-safe.
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
  // narrow_limit: the largest span of bytes a chunk's ids may take with
  // 32-bit ends (a parameter for the tests only).
  explicit IdBlock(uint64_t narrow_limit = UINT32_MAX) : narrow_limit_(narrow_limit) {}

  // Room for n ids (their offsets; the bytes grow as they come).
  void reserve(size_t n) {
    if (wide_) {
      wide_end_.reserve(n);
    } else {
      end_.reserve(n);
      chunk_begin_.reserve(n / kChunk + 1);
    }
  }
  void push_back(std::string_view id) {
    const size_t i = size();
    if (!wide_ && i % kChunk == 0) chunk_begin_.push_back(bytes_.size());
    bytes_.append(id);
    if (!wide_ && bytes_.size() - chunk_begin_.back() > narrow_limit_) Widen();
    if (wide_) {
      wide_end_.push_back(bytes_.size());
    } else {
      end_.push_back(static_cast<uint32_t>(bytes_.size() - chunk_begin_.back()));
    }
  }
  size_t size() const { return wide_ ? wide_end_.size() : end_.size(); }
  // Id i, valid until the next push_back. REQUIRES: i < size().
  std::string_view operator[](size_t i) const {
    const uint64_t begin = i == 0 ? 0 : End(i - 1);
    return std::string_view(bytes_).substr(begin, End(i) - begin);
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 12;

  uint64_t End(size_t i) const { return wide_ ? wide_end_[i] : chunk_begin_[i / kChunk] + end_[i]; }
  // A chunk's ids took more than narrow_limit_ bytes: 64-bit ends from now on.
  void Widen() {
    wide_end_.resize(end_.size());
    for (size_t i = 0; i < end_.size(); ++i) wide_end_[i] = End(i);
    std::vector<uint32_t>().swap(end_);
    std::vector<uint64_t>().swap(chunk_begin_);
    wide_ = true;
  }

  uint64_t narrow_limit_;
  bool wide_ = false;
  std::string bytes_;  // every id, back to back
  // Id i is bytes_[End(i - 1) (0 for i = 0), End(i)). Narrow: End(i) is
  // chunk_begin_[i / kChunk] + end_[i] (4 bytes an id); wide: wide_end_[i].
  std::vector<uint32_t> end_;
  std::vector<uint64_t> chunk_begin_;
  std::vector<uint64_t> wide_end_;
};

}  // namespace neardup::engine_internal

#endif  // NEARDUP_ENGINE_ID_BLOCK_H_
