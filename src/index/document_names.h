// Copyright 2026 The neardup Authors.
//
// Names: the document ids of a DocumentIndex by numeric id.

#ifndef NEARDUP_INDEX_DOCUMENT_NAMES_H_
#define NEARDUP_INDEX_DOCUMENT_NAMES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "index/index_file_v2.h"

namespace neardup::index_internal {

// The document ids by numeric id: those of a version 2 base file (read in
// place: its name order gives the lookup by id) and, above them, the ids
// added since (or all of them, for an index read from version 1 files).
class Names {
 public:
  // Numeric ids below `lines` are the base's (a row of `base`, or removed).
  void Reset(std::shared_ptr<const IndexFileV2> base, uint64_t lines) {
    base_ = std::move(base);
    base_lines_ = lines;
    base_removed_.clear();
    extra_.clear();
    live_.clear();
  }
  uint64_t lines() const { return base_lines_ + extra_.size(); }

  // The document id of numeric id n; nullopt when removed or unknown.
  std::optional<std::string_view> Get(uint64_t n) const {
    if (n >= base_lines_) {
      if (n - base_lines_ >= extra_.size() || !extra_[n - base_lines_]) return std::nullopt;
      return std::string_view(*extra_[n - base_lines_]);
    }
    if (!base_) return std::nullopt;
    const std::optional<size_t> row = base_->FindId(n);
    if (!row || Removed(*row)) return std::nullopt;
    return base_->Name(*row);
  }
  // The numeric ids of `id` (one, unless old files repeated it).
  std::vector<uint64_t> Find(std::string_view id) const {
    std::vector<uint64_t> out;
    if (base_) {
      for (uint32_t row : base_->FindName(id)) {
        if (!Removed(row)) out.push_back(base_->ids()[row]);
      }
    }
    auto [begin, end] = live_.equal_range(std::string(id));
    for (auto it = begin; it != end; ++it) out.push_back(it->second);
    return out;
  }
  bool Contains(std::string_view id) const { return !Find(id).empty(); }
  uint64_t Append(std::optional<std::string> id) {
    const uint64_t n = lines();
    if (id) live_.emplace(*id, n);
    extra_.push_back(std::move(id));
    return n;
  }
  void Erase(uint64_t n) {
    if (n >= base_lines_) {
      auto& e = extra_[n - base_lines_];
      if (!e) return;
      auto [begin, end] = live_.equal_range(*e);
      for (auto it = begin; it != end; ++it) {
        if (it->second == n) {
          live_.erase(it);
          break;
        }
      }
      e.reset();
      return;
    }
    if (!base_) return;
    if (const auto row = base_->FindId(n)) {
      if (base_removed_.empty()) base_removed_.assign(base_->rows(), false);
      base_removed_[*row] = true;
    }
  }

 private:
  bool Removed(size_t row) const { return row < base_removed_.size() && base_removed_[row]; }

  std::shared_ptr<const IndexFileV2> base_;
  uint64_t base_lines_ = 0;
  std::vector<bool> base_removed_;
  std::vector<std::optional<std::string>> extra_;
  // Document id -> numeric id of every live entry of extra_. A multimap only
  // because files written before ids were unique may repeat an id.
  std::unordered_multimap<std::string, uint64_t> live_;
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_DOCUMENT_NAMES_H_
