// Copyright 2026 The neardup Authors.

#include "neardup/minhash.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "util/random.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_MINHASH_AVX512 1
#endif

namespace neardup {
namespace {

// Permutations are taken in blocks of kBlock: a block's minima stay in
// registers (AVX-512: 8 vectors of minima, 8 of a, 8 of b) or L1 (scalar)
// while the features stream past.
constexpr size_t kBlock = 64;

// mins[i] = the minimum over `hashes` of a[i] * h + b[i] (mod 2^64) for
// i < m; UINT64_MAX for an empty set. REQUIRES: m <= kBlock
using BlockMinsFn = void (*)(const uint64_t* a, const uint64_t* b, size_t m,
                             std::span<const uint64_t> hashes, uint64_t* mins);

void BlockMinsScalar(const uint64_t* a, const uint64_t* b, size_t m,
                     std::span<const uint64_t> hashes, uint64_t* mins) {
  std::fill(mins, mins + m, std::numeric_limits<uint64_t>::max());
  for (uint64_t h : hashes) {
    for (size_t i = 0; i < m; ++i) mins[i] = std::min(mins[i], a[i] * h + b[i]);
  }
}

#ifdef NEARDUP_MINHASH_AVX512
// The same arithmetic 8 permutations to a vector (vpmullq, vpaddq, vpminuq:
// exact 64-bit integer operations, so the values are those of the scalar
// loop). V = ceil(m / 8) vectors; the lanes past m are computed on zero
// multipliers and dropped. GCC's vector extensions rather than intrinsics:
// GCC 12's _mm512_min_epu64 trips -Wmaybe-uninitialized.
using U64x8 = uint64_t __attribute__((vector_size(64)));

template <int V>
[[gnu::target("avx512f,avx512dq")]] void BlockMinsAvx512V(const uint64_t* a, const uint64_t* b,
                                                          size_t m,
                                                          std::span<const uint64_t> hashes,
                                                          uint64_t* mins) {
  uint64_t padded_a[8 * V] = {}, padded_b[8 * V] = {}, out[8 * V];
  std::memcpy(padded_a, a, m * sizeof(uint64_t));
  std::memcpy(padded_b, b, m * sizeof(uint64_t));
  U64x8 va[V], vb[V], vm[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    std::memcpy(&va[v], padded_a + 8 * v, sizeof(U64x8));
    std::memcpy(&vb[v], padded_b + 8 * v, sizeof(U64x8));
    vm[v] = ~U64x8{};
  }
  for (const uint64_t h : hashes) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      const U64x8 x = va[v] * h + vb[v];
      vm[v] = x < vm[v] ? x : vm[v];
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) std::memcpy(out + 8 * v, &vm[v], sizeof(U64x8));
  std::memcpy(mins, out, m * sizeof(uint64_t));
}

[[gnu::target("avx512f,avx512dq")]] void BlockMinsAvx512(const uint64_t* a, const uint64_t* b,
                                                         size_t m, std::span<const uint64_t> hashes,
                                                         uint64_t* mins) {
  static_assert(kBlock == 64);
  switch ((m + 7) / 8) {
    case 1:
      return BlockMinsAvx512V<1>(a, b, m, hashes, mins);
    case 2:
      return BlockMinsAvx512V<2>(a, b, m, hashes, mins);
    case 3:
      return BlockMinsAvx512V<3>(a, b, m, hashes, mins);
    case 4:
      return BlockMinsAvx512V<4>(a, b, m, hashes, mins);
    case 5:
      return BlockMinsAvx512V<5>(a, b, m, hashes, mins);
    case 6:
      return BlockMinsAvx512V<6>(a, b, m, hashes, mins);
    case 7:
      return BlockMinsAvx512V<7>(a, b, m, hashes, mins);
    default:
      return BlockMinsAvx512V<8>(a, b, m, hashes, mins);
  }
}

const BlockMinsFn kBlockMins = [] {
  __builtin_cpu_init();  // this may run before libgcc's own initializer
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? BlockMinsAvx512
                                                                                 : BlockMinsScalar;
}();
#else
constexpr BlockMinsFn kBlockMins = BlockMinsScalar;
#endif

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
  // minimum of the high 32 bits.
  uint64_t mins[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t m = std::min(kBlock, n - base);
    kBlockMins(a_.data() + base, b_.data() + base, m, hashes, mins);
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
