// Copyright 2026 The neardup Authors.

#include "store/near_index.h"

#include <algorithm>
#include <bit>

namespace neardup::store_internal {
namespace {

class LinearScanIndex final : public NearBlockIndex {
 public:
  void Insert(uint64_t fingerprint, int64_t block_id) override {
    fingerprints_.push_back(fingerprint);
    ids_.push_back(block_id);
  }
  void Clear() override {
    fingerprints_.clear();
    ids_.clear();
  }
  size_t size() const override { return ids_.size(); }

  std::vector<NearMatch> Search(uint64_t fingerprint, int max_distance,
                                size_t limit) const override {
    std::vector<NearMatch> out;
    if (limit == 0) return out;
    for (size_t i = 0; i < fingerprints_.size(); ++i) {
      const int d = std::popcount(fingerprints_[i] ^ fingerprint);
      if (d <= max_distance) out.push_back({ids_[i], d});
    }
    const auto less = [](const NearMatch& a, const NearMatch& b) {
      return a.distance != b.distance ? a.distance < b.distance : a.block_id < b.block_id;
    };
    if (out.size() > limit) {
      std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(limit), out.end(),
                        less);
      out.resize(limit);
    } else {
      std::sort(out.begin(), out.end(), less);
    }
    return out;
  }

 private:
  std::vector<uint64_t> fingerprints_;
  std::vector<int64_t> ids_;
};

}  // namespace

std::unique_ptr<NearBlockIndex> NewLinearScanIndex() { return std::make_unique<LinearScanIndex>(); }

}  // namespace neardup::store_internal
