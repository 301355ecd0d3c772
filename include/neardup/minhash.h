// Copyright 2026 The neardup Authors.
//
// MinHash over sets of 64-bit feature hashes, and the arithmetic of its LSH
// bands (the method `minhash`, doc/methods.md). The features and their hashes
// come from the pipeline (Pipeline::FeatureSet); this header only needs the
// hashes, so it is part of the core layer.
//
// Signature: permutation i (0 <= i < num_perm) maps a feature hash h to
// (a_i * h + b_i) mod 2^64 >> 32 (multiply-shift, 32-bit values), with a_i
// (odd) and b_i drawn from SplitMix64 seeded by MinHashOptions::seed; the
// signature holds each permutation's minimum over the set. The share of equal
// components of two signatures estimates the sets' Jaccard similarity.
// Signatures are stored by users like fingerprints: the mapping is frozen
// (tests/fingerprint/minhash_test.cc pins golden vectors). Where the CPU has
// AVX-512 (F and DQ) the same 64-bit arithmetic runs 8 permutations to a
// vector; the values do not depend on the path.
//
// Banding: a signature is cut into `bands` bands of `rows` consecutive values
// (bands * rows <= num_perm; the rest is unused by the bands); two documents
// are candidates when some band is equal. A pair of Jaccard s is a candidate
// with probability P(s) = 1 - (1 - s^rows)^bands.
//
//   neardup::MinHasher hasher(128);
//   std::vector<uint32_t> sig(hasher.num_perm());
//   hasher.Signature(feature_hashes, sig.data());
//   auto [bands, rows] = neardup::OptimalBandsRows(0.5, 128);
//   uint64_t key = neardup::MinHashBandKey(sig, band, rows);
//
// Thread safety: a MinHasher is immutable after construction; the free
// functions are pure.

#ifndef NEARDUP_MINHASH_H_
#define NEARDUP_MINHASH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "neardup/status.h"

namespace neardup {

// The seed of every neardup MinHash signature ("neardup" in ASCII).
inline constexpr uint64_t kMinHashSeed = 0x6e656172647570ULL;
inline constexpr int kMaxMinHashPermutations = 1024;

// The settings of the method `minhash` beyond its features (method.h has the
// text form: num_perm, bands, rows, threshold, verify).
struct MinHashOptions {
  int num_perm = 128;  // 1..kMaxMinHashPermutations
  // bands * rows <= num_perm. 0 (both): chosen from threshold and num_perm
  // when the method is parsed (recall kDefaultMinHashRecall at the threshold,
  // BandsRowsForRecall).
  int bands = 0;
  int rows = 0;
  // Pairs with Jaccard >= threshold are near-duplicates; 0 < threshold <= 1.
  double threshold = 0.5;
  // Verify candidates on the exact Jaccard of the feature sets (held in
  // memory, 8 bytes per distinct feature) instead of the estimate.
  bool exact = false;
  uint64_t seed = kMinHashSeed;
};

class MinHasher {
 public:
  // REQUIRES: 1 <= num_perm <= kMaxMinHashPermutations
  explicit MinHasher(int num_perm, uint64_t seed = kMinHashSeed);

  int num_perm() const { return static_cast<int>(a_.size()); }

  // Writes num_perm() values to out: each permutation's minimum over
  // `hashes` (any order; repeats do not matter). All 0xFFFFFFFF for an empty
  // set.
  void Signature(std::span<const uint64_t> hashes, uint32_t* out) const;
  std::vector<uint32_t> Signature(std::span<const uint64_t> hashes) const;

 private:
  std::vector<uint64_t> a_;  // odd multipliers
  std::vector<uint64_t> b_;
};

// The share of equal components; 0 for empty signatures.
// REQUIRES: a.size() == b.size()
double EstimatedJaccard(std::span<const uint32_t> a, std::span<const uint32_t> b);
// The number of equal components. REQUIRES: a.size() == b.size()
size_t EqualComponents(std::span<const uint32_t> a, std::span<const uint32_t> b);
// |A & B| / |A | B| of two sorted sets of distinct values; 0 when both are
// empty.
double ExactJaccard(std::span<const uint64_t> a, std::span<const uint64_t> b);

// The key of band `band` (rows values from band * rows): XXH3-64 of their
// little-endian bytes. REQUIRES: (band + 1) * rows <= signature.size()
uint64_t MinHashBandKey(std::span<const uint32_t> signature, int band, int rows);

// P(candidate) for a pair of Jaccard s: 1 - (1 - s^rows)^bands.
double MinHashCandidateProbability(double s, int bands, int rows);

struct BandsRows {
  int bands = 0;
  int rows = 0;
  friend bool operator==(const BandsRows&, const BandsRows&) = default;
};

// The recall at the threshold that the minhash method's default layout
// guarantees (BandsRowsForRecall), as SimHash's banded join does at k.
inline constexpr double kDefaultMinHashRecall = 0.99;

// datasketch's choice (MinHashLSH._optimal_param): the (bands, rows) with
// bands * rows <= num_perm that minimise
//   fp_weight * integral_0^t P(s) ds + fn_weight * integral_t^1 (1 - P(s)) ds.
// REQUIRES: 0 < threshold <= 1, 1 <= num_perm <= kMaxMinHashPermutations
BandsRows OptimalBandsRows(double threshold, int num_perm, double fp_weight = 0.5,
                           double fn_weight = 0.5);

// The (bands, rows) with bands * rows <= num_perm and P(threshold) >= recall
// that has the smallest false-positive area (integral_0^t P(s) ds): the fewest
// candidates below the threshold at that recall. InvalidArgument unless
// 0 < recall < 1 and 0 < threshold <= 1.
Result<BandsRows> BandsRowsForRecall(double threshold, int num_perm, double recall);

}  // namespace neardup

#endif  // NEARDUP_MINHASH_H_
