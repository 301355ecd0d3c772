// Copyright 2026 The neardup Authors.
//
// SimHash fingerprints (Charikar 2002; Manku, Jain, Das Sarma 2007).
//
// A document is a list of weighted features. Each feature is hashed to f bits
// (f = 64 or 128). V_j = sum over features of (+w if bit j of its hash is 1,
// else -w); bit j of the fingerprint is 1 iff V_j > 0.
//
//   neardup::SimHasher hasher(64);
//   for (const auto& f : features) hasher.Add(neardup::HashFeature(f.text, 64), f.weight);
//   neardup::Fingerprint fp = hasher.Finish();
//   std::string hex = fp.ToHex();   // "3f0a...", 16 hex digits, MSB first
//
// Fingerprints are stored by users: the feature hash (XXH3 with seed 0, the
// 64-bit variant for f = 64 and the 128-bit variant for f = 128), the bit order
// and the text form are frozen. tests/fingerprint/golden_test.cc pins them.
//
// Thread safety: all types here are values; SimHasher is not shared.

#ifndef NEARDUP_FINGERPRINT_H_
#define NEARDUP_FINGERPRINT_H_

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup {

// A 64- or 128-bit fingerprint. Bit j (0 = least significant) of a 128-bit
// fingerprint lives in lo() for j < 64 and in hi() for j >= 64; a 64-bit
// fingerprint keeps hi() == 0.
class Fingerprint {
 public:
  // A 64-bit fingerprint of value 0.
  constexpr Fingerprint() = default;

  static constexpr Fingerprint From64(uint64_t value) { return Fingerprint(64, 0, value); }
  static constexpr Fingerprint From128(uint64_t hi, uint64_t lo) {
    return Fingerprint(128, hi, lo);
  }
  // Parses the canonical text form: exactly 16 or 32 hex digits (either case),
  // most significant first.
  static Result<Fingerprint> FromHex(std::string_view hex);

  constexpr int bits() const { return bits_; }
  constexpr uint64_t hi() const { return hi_; }
  constexpr uint64_t lo() const { return lo_; }
  // REQUIRES: 0 <= j < bits()
  constexpr bool bit(int j) const { return ((j < 64 ? lo_ >> j : hi_ >> (j - 64)) & 1u) != 0; }

  // Canonical text form: bits()/4 lower-case hex digits, most significant first.
  std::string ToHex() const;

  friend constexpr bool operator==(const Fingerprint&, const Fingerprint&) = default;

 private:
  constexpr Fingerprint(int bits, uint64_t hi, uint64_t lo) : bits_(bits), hi_(hi), lo_(lo) {}

  int bits_ = 64;
  uint64_t hi_ = 0;
  uint64_t lo_ = 0;
};

// popcount(a XOR b). REQUIRES: a.bits() == b.bits()
inline int HammingDistance(const Fingerprint& a, const Fingerprint& b) {
  return std::popcount(a.lo() ^ b.lo()) + std::popcount(a.hi() ^ b.hi());
}

// 1 - distance / f. REQUIRES: a.bits() == b.bits()
inline double Similarity(const Fingerprint& a, const Fingerprint& b) {
  return 1.0 - static_cast<double>(HammingDistance(a, b)) / a.bits();
}

// The hash of one feature, as wide as the fingerprint it feeds.
struct FeatureHash {
  uint64_t hi = 0;  // 0 for 64-bit hashes
  uint64_t lo = 0;

  // Bit j (0 = least significant; Fingerprint's numbering), which decides
  // whether the feature adds +w or -w to V_j. REQUIRES: 0 <= j < 128
  constexpr bool bit(int j) const { return ((j < 64 ? lo >> j : hi >> (j - 64)) & 1u) != 0; }
};

enum class FeatureHashAlgorithm {
  kXxh3,  // XXH3_64bits / XXH3_128bits (high64, low64), seed 0. The default.
  kMd5,   // MD5 digest, first 8 (f = 64) or 16 bytes read big-endian (seed 004).
};

// REQUIRES: bits == 64 || bits == 128
FeatureHash HashFeature(std::string_view text, int bits,
                        FeatureHashAlgorithm algorithm = FeatureHashAlgorithm::kXxh3);

// Accumulates weighted feature hashes into the vector V and thresholds it.
// Add() updates the 64 or 128 double counters with SIMD (AVX2 where the CPU
// has it); each counter sees the same additions in the same order as a scalar
// loop, so the result is bit-identical to it (tests/testing/simhash_oracle.h).
class SimHasher {
 public:
  // REQUIRES: bits == 64 || bits == 128
  explicit SimHasher(int bits);

  int bits() const { return bits_; }
  // Adds +weight to V_j for every set bit j of `hash` and -weight for every clear one.
  void Add(const FeatureHash& hash, double weight);
  // Number of Add() calls since construction or Reset().
  size_t count() const { return count_; }
  // Bit j is 1 iff V_j > 0. With no features every bit is 0.
  Fingerprint Finish() const;
  void Reset();

 private:
  int bits_;
  size_t count_ = 0;
  alignas(32) std::array<double, 128> v_{};
};

// SimHash of features that all have weight 1: Finish() is exactly what a
// SimHasher gives for the same hashes each added with weight 1.0. Weight-count
// features (tf) are the same thing added once per occurrence. The counters are
// integers, bit-sliced (Harley-Seal carry-save adders over blocks of 16
// hashes), so an Add costs a few word operations instead of 64-128 updates.
//
//   neardup::UnitSimHasher hasher(128);
//   for (std::string_view gram : occurrences) hasher.Add(neardup::HashFeature(gram, 128));
//   neardup::Fingerprint fp = hasher.Finish();
class UnitSimHasher {
 public:
  // REQUIRES: bits == 64 || bits == 128
  explicit UnitSimHasher(int bits);

  int bits() const { return bits_; }
  // Adds +1 to V_j for every set bit j of `hash` and -1 for every clear one.
  void Add(const FeatureHash& hash) { Add(hash.hi, hash.lo); }
  // The same, the hash given as its two words (no FeatureHash copied
  // through memory on the way: the fused n-gram pass's hot loop).
  void Add(uint64_t hi, uint64_t lo) {
    block_[static_cast<size_t>(pending_)].hi = hi;
    block_[static_cast<size_t>(pending_)].lo = lo;
    ++pending_;
    if (pending_ == kBlock) FlushBlock();
  }
  // Number of Add() calls since construction or Reset().
  size_t count() const { return flushed_ + static_cast<size_t>(pending_); }
  // Bit j is 1 iff more than half of the added hashes have bit j set.
  Fingerprint Finish() const;
  void Reset();

 private:
  static constexpr int kBlock = 16;
  // Counters of up to 2^40 blocks of 16 hashes: more than any document has features.
  static constexpr int kPlanes = 40;
  // Two words per plane: bits 0-63 and 64-127.
  using Plane = std::array<uint64_t, 2>;
  void FlushBlock();

  int bits_;
  int pending_ = 0;
  int planes_used_ = 0;
  // Hashes in the flushed blocks (Add counts none: a counter stored per
  // Add was a chain through memory in the fused pass's hash loop).
  size_t flushed_ = 0;
  // Bit j of ones_ + 2 twos_ + 4 fours_ + 8 eights_ + 16 sixteens_ (the bits
  // j of its planes read as a binary number, plane k worth 2^k) is the number
  // of flushed hashes with bit j set.
  Plane ones_{}, twos_{}, fours_{}, eights_{};
  std::array<Plane, kPlanes> sixteens_{};
  std::array<FeatureHash, kBlock> block_{};
};

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINT_H_
