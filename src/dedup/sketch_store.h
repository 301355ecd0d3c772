// Copyright 2026 The neardup Authors.
//
// Jaccard sketches (neardup/dedup.h) packed by what they hold: what
// DedupJob::Run keeps per document instead of a 152-byte JaccardSketch. A
// short document fills few of the 128 slots (a one-line record of issue
// 27's benchmark: 9 to 13), so a sketch is stored as its non-empty slots
// alone:
//
//   - fewer than 16 non-empty slots: (slot, value) byte pairs, by slot
//     (2 bytes a slot);
//   - 16 or more: the 16-byte occupancy mask, then the values of the
//     non-empty slots in slot order (16 + n bytes; 144 with every slot);
//   - a sketch whose empty slots do not hold 0xFF (MakeJaccardSketch's
//     value for an empty slot; a default JaccardSketch holds 0): the mask
//     and all 128 values (144 bytes), so that every sketch reads back as
//     it was pushed, byte for byte.
//
// The form follows from the length (under 32 bytes: pairs). The bytes sit
// in blocks of 256 sketches (each block at its size once full: no doubling
// of one large array while it grows), with a 16-bit end per sketch within
// its block and the feature count (32 bits) beside them: 10M short records
// take ~0.3 GB instead of 1.52 GB. Jaccard(i, j) equals SketchJaccard of the two sketches as
// pushed, bit for bit (the same counts through the same expression).
//
// A SketchView reads either the caller's JaccardSketch array
// (DedupOptions::sketches) or a PackedSketches
// (DedupOptions::packed_sketches); Dedup's stages take one
// (SketchesOf(options)).
//
// Internal to the library (src/, not installed). Reading is safe from any
// thread while nothing appends.

#ifndef NEARDUP_DEDUP_SKETCH_STORE_H_
#define NEARDUP_DEDUP_SKETCH_STORE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/dedup.h"

namespace neardup::dedup_internal {

// A sketch's occupancy and values, unpacked: full[w] bit b set when slot
// 64 w + b is non-empty; value[s] its value (0xFF where empty).
struct UnpackedSketch {
  std::array<uint64_t, 2> full;
  std::array<uint8_t, kSketchSlots> value;
};

class PackedSketches {
 public:
  PackedSketches() = default;

  void reserve(size_t n) {
    end_.reserve(n);
    features_.reserve(n);
    blocks_.reserve(n / kBlock + 1);
  }
  size_t size() const { return features_.size(); }
  bool empty() const { return features_.empty(); }

  void push_back(const JaccardSketch& s) {
    static_assert(kSketchSlots == 128);
    const uint64_t f0 = ~s.empty[0], f1 = ~s.empty[1];
    const int n = std::popcount(f0) + std::popcount(f1);
    bool plain = true;  // every empty slot holds 0xFF
    for (size_t i = 0; i < kSketchSlots && plain; ++i) {
      plain = Full(f0, f1, i) || s.slot[i] == 0xFF;
    }
    char buf[16 + kSketchSlots];
    size_t len = 0;
    if (plain && n < kPairLimit) {
      for (size_t i = 0; i < kSketchSlots; ++i) {
        if (!Full(f0, f1, i)) continue;
        buf[len++] = static_cast<char>(i);
        buf[len++] = static_cast<char>(s.slot[i]);
      }
    } else {
      std::memcpy(buf, &f0, 8);
      std::memcpy(buf + 8, &f1, 8);
      len = 16;
      for (size_t i = 0; i < kSketchSlots; ++i) {
        if (!plain || Full(f0, f1, i)) buf[len++] = static_cast<char>(s.slot[i]);
      }
    }
    if (size() % kBlock == 0) {
      // The full block at its size (libstdc++ reallocates to it).
      if (!blocks_.empty()) blocks_.back().shrink_to_fit();
      blocks_.emplace_back();
    }
    std::string& block = blocks_.back();
    block.append(buf, len);
    end_.push_back(static_cast<uint16_t>(block.size()));
    features_.push_back(s.features);
  }

  uint32_t features(size_t i) const { return features_[i]; }
  // The number of non-empty slots of sketch i.
  int NonEmpty(size_t i) const {
    const std::string_view b = Bytes(i);
    if (b.size() < 32) return static_cast<int>(b.size() / 2);
    const std::array<uint64_t, 2> f = Mask(b);
    return std::popcount(f[0]) + std::popcount(f[1]);
  }
  // The occupancy masks of sketch i (UnpackedSketch::full).
  std::array<uint64_t, 2> Occupancy(size_t i) const {
    const std::string_view b = Bytes(i);
    if (b.size() >= 32) return Mask(b);
    std::array<uint64_t, 2> f{0, 0};
    for (size_t p = 0; p < b.size(); p += 2) {
      const auto slot = static_cast<uint8_t>(b[p]);
      f[slot / 64] |= uint64_t{1} << (slot % 64);
    }
    return f;
  }
  // Calls f(slot, value) for every non-empty slot of sketch i, by slot.
  template <typename F>
  void ForEachSlot(size_t i, F&& f) const {
    const std::string_view b = Bytes(i);
    if (b.size() < 32) {
      for (size_t p = 0; p < b.size(); p += 2) {
        f(static_cast<size_t>(static_cast<uint8_t>(b[p])), static_cast<uint8_t>(b[p + 1]));
      }
      return;
    }
    const std::array<uint64_t, 2> m = Mask(b);
    const bool raw = b.size() == 16 + kSketchSlots;  // all 128 values stored
    size_t v = 16;
    for (size_t w = 0; w < 2; ++w) {
      for (uint64_t full = m[w]; full != 0; full &= full - 1) {
        const size_t slot = w * 64 + static_cast<size_t>(std::countr_zero(full));
        f(slot, static_cast<uint8_t>(b[raw ? 16 + slot : v++]));
      }
    }
  }
  void Unpack(size_t i, UnpackedSketch* u) const {
    const std::string_view b = Bytes(i);
    if (b.size() == 16 + kSketchSlots) {
      u->full = Mask(b);
      std::memcpy(u->value.data(), b.data() + 16, kSketchSlots);
      return;
    }
    u->full = {0, 0};
    u->value.fill(0xFF);
    ForEachSlot(i, [u](size_t slot, uint8_t value) {
      u->full[slot / 64] |= uint64_t{1} << (slot % 64);
      u->value[slot] = value;
    });
  }
  // Sketch i as pushed.
  JaccardSketch operator[](size_t i) const {
    UnpackedSketch u;
    Unpack(i, &u);
    JaccardSketch s;
    s.slot = u.value;
    s.empty = {~u.full[0], ~u.full[1]};
    s.features = features_[i];
    return s;
  }
  // SketchJaccard(sketch i, sketch j), bit for bit.
  double Jaccard(size_t i, size_t j) const {
    if (features_[i] == 0 || features_[j] == 0) return 0;
    UnpackedSketch a;
    Unpack(i, &a);
    std::array<uint64_t, 2> fb{0, 0};
    int matches = 0;
    ForEachSlot(j, [&](size_t slot, uint8_t value) {
      fb[slot / 64] |= uint64_t{1} << (slot % 64);
      matches +=
          static_cast<int>((a.full[slot / 64] >> (slot % 64) & 1) != 0 && a.value[slot] == value);
    });
    return Estimate(a.full, fb, matches);
  }
  // SketchJaccard's estimate from the two occupancies and the equal
  // non-empty slots (0 when no slot is non-empty).
  static double Estimate(const std::array<uint64_t, 2>& fa, const std::array<uint64_t, 2>& fb,
                         int matches) {
    const int slots = std::popcount(fa[0] | fb[0]) + std::popcount(fa[1] | fb[1]);
    const int both = std::popcount(fa[0] & fb[0]) + std::popcount(fa[1] & fb[1]);
    if (slots == 0) return 0;
    constexpr double r = 1.0 / 256;
    const double j = (matches - r * both) / (slots * (1 - r));
    return std::clamp(j, 0.0, 1.0);
  }
  // Frees every sketch (size() 0).
  void clear() {
    std::vector<std::string>().swap(blocks_);
    std::vector<uint16_t>().swap(end_);
    std::vector<uint32_t>().swap(features_);
  }
  // Bytes held in the blocks and the per-sketch arrays (capacities).
  size_t bytes() const {
    size_t b = blocks_.capacity() * sizeof(std::string) + end_.capacity() * sizeof(uint16_t) +
               features_.capacity() * sizeof(uint32_t);
    for (const std::string& block : blocks_) b += block.capacity();
    return b;
  }

 private:
  // Sketches with fewer non-empty slots are stored as (slot, value) pairs.
  static constexpr int kPairLimit = 16;
  // Sketches a block: 256 x 144 bytes fit a 16-bit end.
  static constexpr size_t kBlock = 256;
  static_assert(kBlock * (16 + kSketchSlots) <= UINT16_MAX);

  // Sketch i's bytes.
  std::string_view Bytes(size_t i) const {
    const std::string& block = blocks_[i / kBlock];
    const size_t begin = i % kBlock == 0 ? 0 : end_[i - 1];
    return std::string_view(block).substr(begin, end_[i] - begin);
  }

  static bool Full(uint64_t f0, uint64_t f1, size_t i) {
    return ((i < 64 ? f0 : f1) >> (i % 64) & 1) != 0;
  }
  static std::array<uint64_t, 2> Mask(std::string_view b) {
    std::array<uint64_t, 2> f;
    std::memcpy(f.data(), b.data(), 16);
    return f;
  }

  std::vector<std::string> blocks_;  // sketches 256 b .. 256 b + 255, back to back
  std::vector<uint16_t> end_;        // sketch i ends at end_[i] of its block
  std::vector<uint32_t> features_;
};

// The sketches Dedup's stages read: the caller's array or a packed store
// (neither: empty). Cheap to copy.
class SketchView {
 public:
  SketchView() = default;
  SketchView(std::span<const JaccardSketch> dense) : dense_(dense) {}     // NOLINT: implicit
  SketchView(const PackedSketches* packed) : packed_(packed) {}           // NOLINT: implicit
  SketchView(const std::vector<JaccardSketch>& dense) : dense_(dense) {}  // NOLINT: implicit

  size_t size() const { return packed_ != nullptr ? packed_->size() : dense_.size(); }
  bool empty() const { return size() == 0; }
  bool packed() const { return packed_ != nullptr; }
  uint32_t features(size_t i) const {
    return packed_ != nullptr ? packed_->features(i) : dense_[i].features;
  }
  int NonEmpty(size_t i) const {
    if (packed_ != nullptr) return packed_->NonEmpty(i);
    return std::popcount(~dense_[i].empty[0]) + std::popcount(~dense_[i].empty[1]);
  }
  std::array<uint64_t, 2> Occupancy(size_t i) const {
    if (packed_ != nullptr) return packed_->Occupancy(i);
    return {~dense_[i].empty[0], ~dense_[i].empty[1]};
  }
  // Calls f(slot, value) for every non-empty slot of sketch i, by slot.
  template <typename F>
  void ForEachSlot(size_t i, F&& f) const {
    if (packed_ != nullptr) return packed_->ForEachSlot(i, f);
    const JaccardSketch& s = dense_[i];
    for (size_t w = 0; w < s.empty.size(); ++w) {
      for (uint64_t full = ~s.empty[w]; full != 0; full &= full - 1) {
        const size_t slot = w * 64 + static_cast<size_t>(std::countr_zero(full));
        f(slot, s.slot[slot]);
      }
    }
  }
  JaccardSketch Get(size_t i) const { return packed_ != nullptr ? (*packed_)[i] : dense_[i]; }
  double Jaccard(size_t i, size_t j) const {
    return packed_ != nullptr ? packed_->Jaccard(i, j) : SketchJaccard(dense_[i], dense_[j]);
  }
  // The caller's array (empty for a packed store).
  std::span<const JaccardSketch> dense() const { return dense_; }

 private:
  std::span<const JaccardSketch> dense_;
  const PackedSketches* packed_ = nullptr;
};

// The options' sketches: DedupOptions::packed_sketches when set, else
// DedupOptions::sketches.
inline SketchView SketchesOf(const DedupOptions& options) {
  if (options.packed_sketches != nullptr) return SketchView(options.packed_sketches);
  return SketchView(options.sketches);
}

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_SKETCH_STORE_H_
