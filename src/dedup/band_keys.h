// Copyright 2026 The neardup Authors.
//
// Packed SimHash band keys: the bits of a 128-bit fingerprint (hi, lo) at the
// positions of a band's mask, packed into the low bits of the key in order
// (lo's sampled bits first, from bit 0 up, then hi's):
//
//   key = pext(lo, mask_lo) | pext(hi, mask_hi) << popcount(mask_lo)
//
// Two implementations with equal output: BMI2 `pext` where it is fast (x86-64
// with BMI2, except AMD Zen 1/2 whose pext is microcoded), else byte tables
// (16 lookups per key). Internal to the library.

#ifndef NEARDUP_DEDUP_BAND_KEYS_H_
#define NEARDUP_DEDUP_BAND_KEYS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "neardup/index.h"

namespace neardup::dedup_internal {

// A fingerprint as (hi, lo).
using FingerprintWords = std::pair<uint64_t, uint64_t>;

// True when PackKeysPext may be called and is fast on this CPU.
bool HaveFastPext();

// out[i] = key of words[i] for i < n. REQUIRES: HaveFastPext().
void PackKeysPext(const FingerprintWords* words, size_t n, uint64_t mask_hi, uint64_t mask_lo,
                  uint64_t* out);

// The byte tables of one band: key = OR over bytes j of table[j][byte j].
// REQUIRES: popcount(mask_hi) + popcount(mask_lo) <= 32.
struct BandByteTables {
  uint32_t table[16][256];
};
std::unique_ptr<BandByteTables> MakeBandByteTables(uint64_t mask_hi, uint64_t mask_lo);
void PackKeysTable(const BandByteTables& tables, const FingerprintWords* words, size_t n,
                   uint64_t* out);

// The tests of one bucket: the pairs x < y < m of fingerprints (hi[i], lo[i])
// whose Hamming distance d is at most k, appended to *out as {x, y, d} in
// (x, y) order. Two implementations with equal output: AVX-512 (VPOPCNTDQ:
// a member against eight others per instruction) where the CPU has it, else
// scalar.
bool HaveAvx512Popcount();
void BucketPairsScalar(const uint64_t* hi, const uint64_t* lo, size_t m, int k,
                       std::vector<IdPair>* out);
// REQUIRES: HaveAvx512Popcount().
void BucketPairsAvx512(const uint64_t* hi, const uint64_t* lo, size_t m, int k,
                       std::vector<IdPair>* out);

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_BAND_KEYS_H_
