// Copyright 2026 The neardup Authors.

#include "neardup/minhash.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "util/random.h"

namespace neardup {
namespace {

// integral_lo^hi f(s) ds by composite Simpson's rule (f is smooth on [0, 1]).
template <typename F>
double Integrate(F f, double lo, double hi) {
  constexpr int kIntervals = 128;  // even
  if (!(hi > lo)) return 0;
  const double h = (hi - lo) / kIntervals;
  double sum = f(lo) + f(hi);
  for (int i = 1; i < kIntervals; ++i) sum += (i % 2 == 1 ? 4 : 2) * f(lo + i * h);
  return sum * h / 3;
}

double FalsePositiveArea(double threshold, int bands, int rows) {
  return Integrate([&](double s) { return MinHashCandidateProbability(s, bands, rows); }, 0.0,
                   threshold);
}

double FalseNegativeArea(double threshold, int bands, int rows) {
  return Integrate([&](double s) { return 1 - MinHashCandidateProbability(s, bands, rows); },
                   threshold, 1.0);
}

}  // namespace

MinHasher::MinHasher(int num_perm, uint64_t seed) {
  const size_t n = static_cast<size_t>(std::clamp(num_perm, 1, kMaxMinHashPermutations));
  a_.resize(n);
  b_.resize(n);
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    a_[i] = SplitMix64(state) | 1;
    state += kSplitMix64Gamma;
    b_[i] = SplitMix64(state);
    state += kSplitMix64Gamma;
  }
}

void MinHasher::Signature(std::span<const uint64_t> hashes, uint32_t* out) const {
  const size_t n = a_.size();
  // 64-bit minima of (a h + b): the high 32 bits of the minimum are the
  // minimum of the high 32 bits. Blocks of 64 permutations keep the minima in
  // registers/L1 while the features stream past.
  constexpr size_t kBlock = 64;
  uint64_t mins[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t m = std::min(kBlock, n - base);
    const uint64_t* a = a_.data() + base;
    const uint64_t* b = b_.data() + base;
    std::fill(mins, mins + m, std::numeric_limits<uint64_t>::max());
    for (uint64_t h : hashes) {
      for (size_t i = 0; i < m; ++i) mins[i] = std::min(mins[i], a[i] * h + b[i]);
    }
    for (size_t i = 0; i < m; ++i) out[base + i] = static_cast<uint32_t>(mins[i] >> 32);
  }
}

std::vector<uint32_t> MinHasher::Signature(std::span<const uint64_t> hashes) const {
  std::vector<uint32_t> out(a_.size());
  Signature(hashes, out.data());
  return out;
}

size_t EqualComponents(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  size_t equal = 0;
  for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i] ? 1 : 0;
  return equal;
}

double EstimatedJaccard(std::span<const uint32_t> a, std::span<const uint32_t> b) {
  if (a.empty()) return 0;
  return static_cast<double>(EqualComponents(a, b)) / static_cast<double>(a.size());
}

double ExactJaccard(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      ++common;
      ++i;
      ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  const size_t uni = a.size() + b.size() - common;
  return uni == 0 ? 0 : static_cast<double>(common) / static_cast<double>(uni);
}

uint64_t MinHashBandKey(std::span<const uint32_t> signature, int band, int rows) {
  const size_t r = static_cast<size_t>(rows);
  uint32_t values[kMaxMinHashPermutations];
  std::memcpy(values, signature.data() + static_cast<size_t>(band) * r, r * sizeof(uint32_t));
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i < r; ++i) values[i] = __builtin_bswap32(values[i]);
  }
  return XXH3_64bits(values, r * sizeof(uint32_t));
}

double MinHashCandidateProbability(double s, int bands, int rows) {
  return 1 - std::pow(1 - std::pow(s, rows), bands);
}

BandsRows OptimalBandsRows(double threshold, int num_perm, double fp_weight, double fn_weight) {
  BandsRows best{1, 1};
  double best_error = std::numeric_limits<double>::infinity();
  for (int b = 1; b <= num_perm; ++b) {
    for (int r = 1; r <= num_perm / b; ++r) {
      const double error = fp_weight * FalsePositiveArea(threshold, b, r) +
                           fn_weight * FalseNegativeArea(threshold, b, r);
      if (error < best_error) {
        best_error = error;
        best = {b, r};
      }
    }
  }
  return best;
}

Result<BandsRows> BandsRowsForRecall(double threshold, int num_perm, double recall) {
  if (!(recall > 0 && recall < 1)) {
    return Status::InvalidArgument("recall must be in (0, 1), got " + std::to_string(recall));
  }
  if (!(threshold > 0 && threshold <= 1)) {
    return Status::InvalidArgument("threshold must be in (0, 1], got " + std::to_string(threshold));
  }
  BandsRows best{num_perm, 1};
  double best_area = std::numeric_limits<double>::infinity();
  for (int b = 1; b <= num_perm; ++b) {
    for (int r = 1; r <= num_perm / b; ++r) {
      if (MinHashCandidateProbability(threshold, b, r) < recall) continue;
      const double area = FalsePositiveArea(threshold, b, r);
      if (area < best_area) {
        best_area = area;
        best = {b, r};
      }
    }
  }
  return best;
}

}  // namespace neardup
