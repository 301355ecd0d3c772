// Copyright 2026 The neardup Authors.
//
// Internal: a small seeded generator whose output is the same on every
// platform and standard library (std::uniform_int_distribution is not).

#ifndef NEARDUP_EVAL_RANDOM_H_
#define NEARDUP_EVAL_RANDOM_H_

#include <cstddef>
#include <cstdint>

#include "util/random.h"

namespace neardup::eval_internal {

// xoshiro256** seeded by SplitMix64 of the mixed seed words.
class Rng {
 public:
  explicit Rng(uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    uint64_t x = SplitMix64(a) ^ SplitMix64(b + 0x1234567ULL) ^ SplitMix64(c + 0x89abcdefULL);
    for (uint64_t& s : s_) {
      x = SplitMix64(x);
      s = x;
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n) up to a bias below n / 2^64; 0 when n == 0.
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace neardup::eval_internal

#endif  // NEARDUP_EVAL_RANDOM_H_
