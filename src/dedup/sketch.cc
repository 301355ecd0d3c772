// Copyright 2026 The neardup Authors.
//
// Jaccard sketches (dedup.h): one-permutation, b-bit MinHash of a feature set,
// and the verification thresholds that use them.

#include <algorithm>
#include <bit>

#if defined(__SSE2__)
#include <emmintrin.h>
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

}  // namespace

JaccardSketch MakeJaccardSketch(std::span<const uint64_t> hashes) {
  static_assert(std::has_single_bit(static_cast<unsigned>(kSketchSlots)) && kSketchSlots % 64 == 0);
  JaccardSketch s;
  // Each slot's minimum (< 2^32), or kNone: no per-hash update of `empty`,
  // whose two words made a chain of read-modify-writes through memory.
  constexpr uint64_t kNone = ~uint64_t{0};
  std::array<uint64_t, kSketchSlots> low;
  low.fill(kNone);
  for (const uint64_t h : hashes) {
    const uint64_t x = SplitMix64(h ^ kSketchSeed);
    uint64_t& m = low[static_cast<size_t>(x >> kSlotShift)];
    m = std::min<uint64_t>(m, static_cast<uint32_t>(x));
  }
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
  return !options.sketches.empty() && options.verify_jaccard > 0;
}

}  // namespace neardup
