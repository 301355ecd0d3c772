// Copyright 2026 The neardup Authors.
//
// Jaccard sketches (dedup.h): one-permutation, b-bit MinHash of a feature set,
// and the verification thresholds that use them.

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NEARDUP_SKETCH_AVX512 1
#endif

#include "neardup/dedup.h"
#include "util/random.h"

namespace neardup {
namespace {

// Remixes a feature hash so that the sketch is independent of the bits the
// fingerprint sums (the same XXH3 hashes).
constexpr uint64_t kSketchSeed = 0x736b65746368ULL;
constexpr int kSlotShift = 64 - std::countr_zero(static_cast<unsigned>(kSketchSlots));

// Bit i set when x[i] == y[i], i < 64 (the slots of one `empty` word): SSE2
// compares 16 bytes at a time (most of what an estimate costs when the short
// rule's sketch join tests millions of candidates).
uint64_t EqualBytes(const uint8_t* x, const uint8_t* y) {
  uint64_t eq = 0;
#if defined(__SSE2__)
  for (int c = 0; c < 4; ++c) {
    const __m128i u = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 16 * c));
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y + 16 * c));
    eq |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(u, v)))} << (16 * c);
  }
#else
  for (int i = 0; i < 64; ++i) eq |= uint64_t{x[i] == y[i]} << i;
#endif
  return eq;
}

// The sketch's remix of hashes[0, n) into out[0, n): SplitMix64(h ^ seed),
// eight at a time with AVX-512 (DQ's 64-bit multiplies) where the CPU has it.
// The hashes' slot updates then run without the mixer's two multiplies.
#ifdef NEARDUP_SKETCH_AVX512
bool HaveAvx512Dq() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  }();
  return have;
}

// GCC's vector extensions rather than intrinsics: GCC 12's _mm512_srli_epi64
// trips -Wmaybe-uninitialized (as in minhash.cc).
using U64x8 = uint64_t __attribute__((vector_size(64)));

[[gnu::target("avx512f,avx512dq")]] void MixAvx512(const uint64_t* h, size_t n, uint64_t* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    U64x8 x;
    std::memcpy(&x, h + i, sizeof(x));
    x = (x ^ kSketchSeed) + kSplitMix64Gamma;  // SplitMix64, lane by lane
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    std::memcpy(out + i, &x, sizeof(x));
  }
  for (; i < n; ++i) out[i] = SplitMix64(h[i] ^ kSketchSeed);
}
#endif

}  // namespace

JaccardSketch MakeJaccardSketch(std::span<const uint64_t> hashes) {
  static_assert(std::has_single_bit(static_cast<unsigned>(kSketchSlots)) && kSketchSlots % 64 == 0);
  JaccardSketch s;
  // Each slot's minimum (< 2^32), or kNone: no per-hash update of `empty`,
  // whose two words made a chain of read-modify-writes through memory.
  constexpr uint64_t kNone = ~uint64_t{0};
  std::array<uint64_t, kSketchSlots> low;
  low.fill(kNone);
  const auto update = [&low](uint64_t x) {
    uint64_t& m = low[static_cast<size_t>(x >> kSlotShift)];
    m = std::min<uint64_t>(m, static_cast<uint32_t>(x));
  };
#ifdef NEARDUP_SKETCH_AVX512
  if (HaveAvx512Dq()) {
    constexpr size_t kBlock = 256;
    uint64_t mixed[kBlock];
    for (size_t b = 0; b < hashes.size(); b += kBlock) {
      const size_t m = std::min(kBlock, hashes.size() - b);
      MixAvx512(hashes.data() + b, m, mixed);
      for (size_t i = 0; i < m; ++i) update(mixed[i]);
    }
  } else {
    for (const uint64_t h : hashes) update(SplitMix64(h ^ kSketchSeed));
  }
#else
  for (const uint64_t h : hashes) update(SplitMix64(h ^ kSketchSeed));
#endif
  for (size_t i = 0; i < low.size(); ++i) {
    // An empty slot keeps the low 8 bits of UINT32_MAX, as before.
    s.slot[i] = static_cast<uint8_t>(low[i]);
    if (low[i] != kNone) s.empty[i / 64] &= ~(uint64_t{1} << (i % 64));
  }
  s.features = static_cast<uint32_t>(std::min<size_t>(hashes.size(), UINT32_MAX));
  return s;
}

double SketchJaccard(const JaccardSketch& a, const JaccardSketch& b) {
  if (a.features == 0 || b.features == 0) return 0;
  int slots = 0, both = 0, matches = 0;
  for (size_t w = 0; w < a.empty.size(); ++w) {
    const uint64_t full = ~a.empty[w] & ~b.empty[w];
    slots += std::popcount(~(a.empty[w] & b.empty[w]));
    both += std::popcount(full);
    matches += std::popcount(full & EqualBytes(a.slot.data() + w * 64, b.slot.data() + w * 64));
  }
  if (slots == 0) return 0;
  // E[matches] = J slots + (both - J slots) / 256: two different minima
  // agree in their low 8 bits by chance.
  constexpr double r = 1.0 / 256;
  const double j = (matches - r * both) / (slots * (1 - r));
  return std::clamp(j, 0.0, 1.0);
}

double VerifyThreshold(const DedupOptions& options, size_t features) {
  if (options.verify_short_features > 0 && features < options.verify_short_features) {
    return options.verify_short_jaccard;
  }
  return options.verify_jaccard;
}

bool Verifying(const DedupOptions& options) {
  return (!options.sketches.empty() || options.packed_sketches != nullptr) &&
         options.verify_jaccard > 0;
}

}  // namespace neardup
