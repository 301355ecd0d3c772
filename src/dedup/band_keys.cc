// Copyright 2026 The neardup Authors.

#include "dedup/band_keys.h"

#include <bit>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_HAVE_PEXT 1
#endif

namespace neardup::dedup_internal {

#ifdef NEARDUP_HAVE_PEXT
bool HaveFastPext() {
  static const bool fast = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1") &&
           !__builtin_cpu_is("znver2");
  }();
  return fast;
}

__attribute__((target("bmi2"))) void PackKeysPext(const FingerprintWords* words, size_t n,
                                                  uint64_t mask_hi, uint64_t mask_lo,
                                                  uint64_t* out) {
  const int lo_bits = std::popcount(mask_lo);
  for (size_t i = 0; i < n; ++i) {
    out[i] = _pext_u64(words[i].second, mask_lo) | (_pext_u64(words[i].first, mask_hi) << lo_bits);
  }
}
#else
bool HaveFastPext() { return false; }

void PackKeysPext(const FingerprintWords* words, size_t n, uint64_t mask_hi, uint64_t mask_lo,
                  uint64_t* out) {
  (void)words, (void)n, (void)mask_hi, (void)mask_lo, (void)out;
  __builtin_trap();  // REQUIRES: HaveFastPext()
}
#endif

std::unique_ptr<BandByteTables> MakeBandByteTables(uint64_t mask_hi, uint64_t mask_lo) {
  auto t = std::make_unique<BandByteTables>();
  int offset = 0;  // packed position of the byte's lowest sampled bit
  for (int j = 0; j < 16; ++j) {
    const auto mb = static_cast<uint32_t>(((j < 8 ? mask_lo : mask_hi) >> (8 * (j % 8))) & 0xff);
    for (uint32_t v = 0; v < 256; ++v) {
      uint32_t packed = 0;
      int rank = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if (((mb >> bit) & 1) == 0) continue;
        packed |= ((v >> bit) & 1) << (offset + rank);
        ++rank;
      }
      t->table[j][v] = packed;
    }
    offset += std::popcount(mb);
  }
  return t;
}

void PackKeysTable(const BandByteTables& tables, const FingerprintWords* words, size_t n,
                   uint64_t* out) {
  const auto& t = tables.table;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t lo = words[i].second, hi = words[i].first;
    uint32_t key = 0;
    for (int j = 0; j < 8; ++j)
      key |= t[j][(lo >> (8 * j)) & 0xff] | t[8 + j][(hi >> (8 * j)) & 0xff];
    out[i] = key;
  }
}

void BucketPairsScalar(const uint64_t* hi, const uint64_t* lo, size_t m, int k,
                       std::vector<IdPair>* out) {
  for (size_t x = 0; x + 1 < m; ++x) {
    const uint64_t hx = hi[x], lx = lo[x];
    for (size_t y = x + 1; y < m; ++y) {
      const int d = std::popcount(hx ^ hi[y]) + std::popcount(lx ^ lo[y]);
      if (d <= k) out->push_back({x, y, d});
    }
  }
}

#ifdef NEARDUP_HAVE_PEXT
bool HaveAvx512Popcount() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
  }();
  return have;
}

__attribute__((target("avx512f,avx512vpopcntdq"))) void BucketPairsAvx512(
    const uint64_t* hi, const uint64_t* lo, size_t m, int k, std::vector<IdPair>* out) {
  const __m512i limit = _mm512_set1_epi64(k);
  for (size_t x = 0; x + 1 < m; ++x) {
    const __m512i hx = _mm512_set1_epi64(static_cast<long long>(hi[x]));
    const __m512i lx = _mm512_set1_epi64(static_cast<long long>(lo[x]));
    for (size_t y = x + 1; y < m; y += 8) {
      const __mmask8 valid =
          m - y >= 8 ? __mmask8{0xff} : static_cast<__mmask8>((1u << (m - y)) - 1);
      const __m512i h = _mm512_maskz_loadu_epi64(valid, hi + y);
      const __m512i l = _mm512_maskz_loadu_epi64(valid, lo + y);
      const __m512i d = _mm512_add_epi64(_mm512_popcnt_epi64(_mm512_xor_si512(h, hx)),
                                         _mm512_popcnt_epi64(_mm512_xor_si512(l, lx)));
      for (unsigned hit = _mm512_mask_cmple_epu64_mask(valid, d, limit); hit != 0; hit &= hit - 1) {
        const size_t z = y + static_cast<size_t>(std::countr_zero(hit));
        out->push_back({x, z, std::popcount(hi[x] ^ hi[z]) + std::popcount(lo[x] ^ lo[z])});
      }
    }
  }
}
#else
bool HaveAvx512Popcount() { return false; }

void BucketPairsAvx512(const uint64_t* hi, const uint64_t* lo, size_t m, int k,
                       std::vector<IdPair>* out) {
  (void)hi, (void)lo, (void)m, (void)k, (void)out;
  __builtin_trap();  // REQUIRES: HaveAvx512Popcount()
}
#endif

}  // namespace neardup::dedup_internal
