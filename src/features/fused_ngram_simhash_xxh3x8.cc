// Copyright 2026 The neardup Authors.

#include "features/fused_ngram_simhash_xxh3x8.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 at -O3 warns of the undefined vector that AVX-512's shift
// intrinsics start from (avx512fintrin.h); located in the header, so
// the pragma stays on from before the include.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define NEARDUP_XXH3X8_AVX512 1
#else
#define NEARDUP_XXH3X8_AVX512 0
#endif

namespace neardup {
namespace fused {
namespace {

// The secret's words XXH3's short paths read (seed 0).
uint64_t SecretWord(int offset) { return XXH_readLE64(XXH3_kSecret + offset); }

}  // namespace

#if NEARDUP_XXH3X8_AVX512

#define NEARDUP_XXH3X8_TARGET __attribute__((target("avx512f,avx512dq,avx512vbmi")))

namespace {

// The 128-bit products of the lanes of a and b: four 32x32->64-bit
// products each (AVX-512 has no 64x64->128).
NEARDUP_XXH3X8_TARGET inline void Mul64To128(__m512i a, __m512i b, __m512i* hi, __m512i* lo) {
  const __m512i a1 = _mm512_srli_epi64(a, 32);
  const __m512i b1 = _mm512_srli_epi64(b, 32);
  const __m512i p00 = _mm512_mul_epu32(a, b);
  const __m512i p01 = _mm512_mul_epu32(a, b1);
  const __m512i p10 = _mm512_mul_epu32(a1, b);
  const __m512i p11 = _mm512_mul_epu32(a1, b1);
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  // At most 3 (2^32 - 1): no carry out.
  const __m512i mid =
      _mm512_add_epi64(_mm512_add_epi64(_mm512_srli_epi64(p00, 32), _mm512_and_si512(p01, low32)),
                       _mm512_and_si512(p10, low32));
  *hi = _mm512_add_epi64(_mm512_add_epi64(p11, _mm512_srli_epi64(mid, 32)),
                         _mm512_add_epi64(_mm512_srli_epi64(p01, 32), _mm512_srli_epi64(p10, 32)));
  // Low dword of each lane from p00, high dword from mid.
  *lo = _mm512_mask_blend_epi32(0x5555, _mm512_slli_epi64(mid, 32), p00);
}

NEARDUP_XXH3X8_TARGET inline __m512i Set1(uint64_t v) {
  return _mm512_set1_epi64(static_cast<int64_t>(v));
}

NEARDUP_XXH3X8_TARGET inline __m512i XorShift(__m512i v, unsigned shift) {
  return _mm512_xor_si512(v, _mm512_srli_epi64(v, shift));
}

// XXH3_avalanche.
NEARDUP_XXH3X8_TARGET inline __m512i Avalanche(__m512i h) {
  h = XorShift(h, 37);
  h = _mm512_mullo_epi64(h, Set1(0x165667919E3779F9ULL));
  return XorShift(h, 32);
}

// XXH3_len_4to8_128b, seed 0, of the lanes' inputs (first: their first 4
// bytes, last: their last 4, in the low words; len: their lengths).
NEARDUP_XXH3X8_TARGET inline void Len4to8(__m512i first, __m512i last, __m512i len, __m512i* hi,
                                          __m512i* lo) {
  const __m512i input = _mm512_or_si512(first, _mm512_slli_epi64(last, 32));
  const __m512i keyed = _mm512_xor_si512(input, Set1(SecretWord(16) ^ SecretWord(24)));
  __m512i h, l;
  Mul64To128(keyed, _mm512_add_epi64(Set1(XXH_PRIME64_1), _mm512_slli_epi64(len, 2)), &h, &l);
  h = _mm512_add_epi64(h, _mm512_slli_epi64(l, 1));
  l = _mm512_xor_si512(l, _mm512_srli_epi64(h, 3));
  l = XorShift(l, 35);
  l = _mm512_mullo_epi64(l, Set1(0x9FB21C651E98DF25ULL));
  *lo = XorShift(l, 28);
  *hi = Avalanche(h);
}

NEARDUP_XXH3X8_TARGET inline __mmask8 LaneMask(size_t left) {
  return left >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << left) - 1);
}

}  // namespace

bool Xxh3x8Supported() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vbmi");
}

NEARDUP_XXH3X8_TARGET void Xxh3AsciiKeys128x8(const uint64_t* keys, size_t count, int n,
                                              uint64_t* hi, uint64_t* lo) {
  // Byte i of XXH3's input word: character i (i < 4) and character
  // n - 4 + (i - 4) (i >= 4): the 8 bits from bit 7 (n - 1 - character)
  // of the key, less their top bit (the next character's lowest).
  uint64_t control = 0;
  for (int i = 0; i < 8; ++i) {
    const int character = i < 4 ? i : n - 8 + i;
    control |= static_cast<uint64_t>(7 * (n - 1 - character)) << (8 * i);
  }
  const __m512i select = Set1(control);
  const __m512i seven_bits = Set1(0x7F7F7F7F7F7F7F7FULL);
  const __m512i len = Set1(static_cast<uint64_t>(n));
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  for (size_t f = 0; f < count; f += 8) {
    const __mmask8 mask = LaneMask(count - f);
    const __m512i input = _mm512_and_si512(
        _mm512_multishift_epi64_epi8(select, _mm512_maskz_loadu_epi64(mask, keys + f)), seven_bits);
    __m512i h, l;
    Len4to8(_mm512_and_si512(input, low32), _mm512_srli_epi64(input, 32), len, &h, &l);
    _mm512_mask_storeu_epi64(hi + f, mask, h);
    _mm512_mask_storeu_epi64(lo + f, mask, l);
  }
}

#else  // !NEARDUP_XXH3X8_AVX512: Xxh3x8Supported() is false; plain XXH3.

bool Xxh3x8Supported() { return false; }

void Xxh3AsciiKeys128x8(const uint64_t* keys, size_t count, int n, uint64_t* hi, uint64_t* lo) {
  for (size_t f = 0; f < count; ++f) {
    uint8_t bytes[8];
    for (int i = 0; i < n; ++i)
      bytes[i] = static_cast<uint8_t>(keys[f] >> (7 * (n - 1 - i)) & 0x7F);
    const XXH128_hash_t h = XXH3_128bits(bytes, static_cast<size_t>(n));
    hi[f] = h.high64;
    lo[f] = h.low64;
  }
}

#endif

}  // namespace fused
}  // namespace neardup
