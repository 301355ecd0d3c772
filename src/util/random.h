// Copyright 2026 The neardup Authors.
//
// Internal: SplitMix64, the one 64-bit mixer behind every frozen pseudo-random
// value in neardup (feature position masks, MinHash seeds, the store's Gear
// table, the seeding of the evaluation's generator in eval/random.h). Its outputs are part of
// stored and golden formats: never change it.
//
// Thread safety: a pure function.

#ifndef NEARDUP_UTIL_RANDOM_H_
#define NEARDUP_UTIL_RANDOM_H_

#include <cstdint>

namespace neardup {

inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// SplitMix64's output for the state x (the state before it is advanced):
// the finalizer of x + kSplitMix64Gamma. SplitMix64(0) == 0xE220A8397B1DCDAF.
constexpr uint64_t SplitMix64(uint64_t x) {
  x += kSplitMix64Gamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace neardup

#endif  // NEARDUP_UTIL_RANDOM_H_
