// Copyright 2026 The neardup Authors.

#include "index/hamming_scan.h"

#include <algorithm>
#include <atomic>
#include <bit>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NEARDUP_SCAN_X86 1
#endif

namespace neardup::index_internal {
namespace {

// How a kernel reads a row: 64 bits, 128 bits in two arrays, 128 bits as
// interleaved (lo, hi) pairs.
enum class Layout { k64, k128Split, k128Pair };

Layout LayoutOf(const RowsView& rows) {
  if (rows.bits == 64) return Layout::k64;
  return rows.stride == 2 ? Layout::k128Pair : Layout::k128Split;
}

// Queries are compared four at a time (a register tile) against each row
// vector read.
constexpr size_t kQueryTile = 4;

// ---- scalar ----------------------------------------------------------------

template <Layout L>
inline int RowDistance(const RowsView& rows, size_t i, uint64_t q_hi, uint64_t q_lo) {
  if constexpr (L == Layout::k64) {
    return std::popcount(rows.lo[i] ^ q_lo);
  } else if constexpr (L == Layout::k128Split) {
    return std::popcount(rows.lo[i] ^ q_lo) + std::popcount(rows.hi[i] ^ q_hi);
  } else {
    return std::popcount(rows.lo[2 * i] ^ q_lo) + std::popcount(rows.lo[2 * i + 1] ^ q_hi);
  }
}

template <Layout L>
void ScanScalarOne(const RowsView& rows, size_t begin, size_t end, uint64_t q_hi, uint64_t q_lo,
                   int k, std::vector<ScanHit>* out) {
  size_t i = begin;
  for (; i + 4 <= end; i += 4) {
    const int d0 = RowDistance<L>(rows, i, q_hi, q_lo);
    const int d1 = RowDistance<L>(rows, i + 1, q_hi, q_lo);
    const int d2 = RowDistance<L>(rows, i + 2, q_hi, q_lo);
    const int d3 = RowDistance<L>(rows, i + 3, q_hi, q_lo);
    // One well-predicted branch for the common all-miss case.
    if ((d0 <= k) | (d1 <= k) | (d2 <= k) | (d3 <= k)) {
      if (d0 <= k) out->push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(d0)});
      if (d1 <= k) out->push_back({static_cast<uint32_t>(i + 1), static_cast<uint32_t>(d1)});
      if (d2 <= k) out->push_back({static_cast<uint32_t>(i + 2), static_cast<uint32_t>(d2)});
      if (d3 <= k) out->push_back({static_cast<uint32_t>(i + 3), static_cast<uint32_t>(d3)});
    }
  }
  for (; i < end; ++i) {
    const int d = RowDistance<L>(rows, i, q_hi, q_lo);
    if (d <= k) out->push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(d)});
  }
}

template <Layout L>
void ScanScalar(const RowsView& rows, size_t begin, size_t end, const uint64_t* q_hi,
                const uint64_t* q_lo, size_t nq, int k, std::vector<ScanHit>* out) {
  for (size_t j = 0; j < nq; ++j) {
    ScanScalarOne<L>(rows, begin, end, q_hi == nullptr ? 0 : q_hi[j], q_lo[j], k, &out[j]);
  }
}

#ifdef NEARDUP_SCAN_X86

// ---- AVX2 ------------------------------------------------------------------
// Four rows a vector. The popcount of each byte is two lookups of a 16-entry
// nibble table (vpshufb); vpsadbw sums the bytes of each 64-bit lane.

#define NEARDUP_AVX2 __attribute__((target("avx2,popcnt")))

NEARDUP_AVX2 inline __m256i ByteCounts(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i low = _mm256_and_si256(v, nibble);
  const __m256i high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  return _mm256_add_epi8(_mm256_shuffle_epi8(table, low), _mm256_shuffle_epi8(table, high));
}

// Rows i..i+3, read once for every query of a tile: `valid` rows (1..4),
// the others 0 words.
struct Rows4 {
  __m256i a, b;
};

template <Layout L>
NEARDUP_AVX2 inline Rows4 Load4(const RowsView& rows, size_t i, size_t valid) {
  Rows4 x;
  if (valid == 4) {
    if constexpr (L == Layout::k64) {
      x.a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows.lo + i));
      x.b = x.a;
    } else if constexpr (L == Layout::k128Split) {
      x.a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows.lo + i));
      x.b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows.hi + i));
    } else {
      x.a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows.lo + 2 * i));
      x.b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows.lo + 2 * i + 4));
    }
    return x;
  }
  alignas(32) uint64_t w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t r = 0; r < valid; ++r) {
    if constexpr (L == Layout::k64) {
      w[r] = rows.lo[i + r];
    } else if constexpr (L == Layout::k128Split) {
      w[r] = rows.lo[i + r];
      w[4 + r] = rows.hi[i + r];
    } else {
      w[2 * r] = rows.lo[2 * (i + r)];
      w[2 * r + 1] = rows.lo[2 * (i + r) + 1];
    }
  }
  x.a = _mm256_load_si256(reinterpret_cast<const __m256i*>(w));
  x.b = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + 4));
  return x;
}

// The distances of the four rows of x (64-bit lanes, in row order).
template <Layout L>
NEARDUP_AVX2 inline __m256i Distances4(const Rows4& x, __m256i q_a, __m256i q_b) {
  const __m256i zero = _mm256_setzero_si256();
  if constexpr (L == Layout::k64) {
    return _mm256_sad_epu8(ByteCounts(_mm256_xor_si256(x.a, q_a)), zero);
  } else if constexpr (L == Layout::k128Split) {
    const __m256i c = _mm256_add_epi8(ByteCounts(_mm256_xor_si256(x.a, q_a)),
                                      ByteCounts(_mm256_xor_si256(x.b, q_b)));
    return _mm256_sad_epu8(c, zero);
  } else {
    // q_a = (lo, hi, lo, hi): two rows a vector.
    __m256i ca = ByteCounts(_mm256_xor_si256(x.a, q_a));
    __m256i cb = ByteCounts(_mm256_xor_si256(x.b, q_a));
    // Add each row's hi bytes to its lo bytes (swap the 64-bit halves of
    // each 128-bit lane): every 64-bit lane then sums to its row's distance.
    ca = _mm256_sad_epu8(_mm256_add_epi8(ca, _mm256_shuffle_epi32(ca, 0x4e)), zero);
    cb = _mm256_sad_epu8(_mm256_add_epi8(cb, _mm256_shuffle_epi32(cb, 0x4e)), zero);
    // ca = (d0, d0, d1, d1), cb = (d2, d2, d3, d3) -> (d0, d2, d1, d3) -> in order.
    return _mm256_permute4x64_epi64(_mm256_blend_epi32(ca, cb, 0xcc), 0xd8);
  }
}

NEARDUP_AVX2 inline void Emit4(__m256i d, unsigned hit, size_t i, std::vector<ScanHit>* out) {
  alignas(32) uint64_t dist[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(dist), d);
  for (; hit != 0; hit &= hit - 1) {
    const int r = std::countr_zero(hit);
    out->push_back(
        {static_cast<uint32_t>(i + static_cast<size_t>(r)), static_cast<uint32_t>(dist[r])});
  }
}

// T queries (a register tile) over rows [begin, end).
template <Layout L, size_t T>
NEARDUP_AVX2 void TileAvx2(const RowsView& rows, size_t begin, size_t end, const __m256i* qa_in,
                           const __m256i* qb_in, int k, std::vector<ScanHit>* out) {
  const __m256i kv = _mm256_set1_epi64x(k);
  __m256i qa[T], qb[T];
  for (size_t t = 0; t < T; ++t) {
    qa[t] = qa_in[t];
    qb[t] = qb_in[t];
  }
  size_t i = begin;
  for (; i + 4 <= end; i += 4) {
    const Rows4 x = Load4<L>(rows, i, 4);
    for (size_t t = 0; t < T; ++t) {
      const __m256i d = Distances4<L>(x, qa[t], qb[t]);
      const unsigned hit = ~static_cast<unsigned>(
                               _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(d, kv)))) &
                           0xfu;
      if (hit != 0) Emit4(d, hit, i, &out[t]);
    }
  }
  if (i < end) {
    const size_t valid = end - i;
    const Rows4 x = Load4<L>(rows, i, valid);
    for (size_t t = 0; t < T; ++t) {
      const __m256i d = Distances4<L>(x, qa[t], qb[t]);
      const unsigned hit = ~static_cast<unsigned>(
                               _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(d, kv)))) &
                           ((1u << valid) - 1);
      if (hit != 0) Emit4(d, hit, i, &out[t]);
    }
  }
}

template <Layout L>
NEARDUP_AVX2 void ScanAvx2(const RowsView& rows, size_t begin, size_t end, const uint64_t* q_hi,
                           const uint64_t* q_lo, size_t nq, int k, std::vector<ScanHit>* out) {
  for (size_t j0 = 0; j0 < nq; j0 += kQueryTile) {
    const size_t tile = std::min(kQueryTile, nq - j0);
    __m256i qa[kQueryTile], qb[kQueryTile];
    for (size_t t = 0; t < tile; ++t) {
      const long long hi = static_cast<long long>(q_hi == nullptr ? 0 : q_hi[j0 + t]);
      const long long lo = static_cast<long long>(q_lo[j0 + t]);
      qa[t] = L == Layout::k128Pair ? _mm256_setr_epi64x(lo, hi, lo, hi) : _mm256_set1_epi64x(lo);
      qb[t] = _mm256_set1_epi64x(hi);
    }
    switch (tile) {
      case 4:
        TileAvx2<L, 4>(rows, begin, end, qa, qb, k, out + j0);
        break;
      case 3:
        TileAvx2<L, 3>(rows, begin, end, qa, qb, k, out + j0);
        break;
      case 2:
        TileAvx2<L, 2>(rows, begin, end, qa, qb, k, out + j0);
        break;
      default:
        TileAvx2<L, 1>(rows, begin, end, qa, qb, k, out + j0);
        break;
    }
  }
}

// ---- AVX-512 + VPOPCNTQ ----------------------------------------------------
// Eight rows a vector; the tail is a masked load.

#define NEARDUP_AVX512 __attribute__((target("avx512f,avx512vpopcntdq,popcnt")))

// Rows i..i+7, read once for every query of a tile: `valid` rows (1..8),
// the others 0 words.
struct Rows8 {
  __m512i a, b;
};

template <Layout L>
NEARDUP_AVX512 inline Rows8 Load8(const RowsView& rows, size_t i, size_t valid) {
  const __mmask8 m = static_cast<__mmask8>(valid >= 8 ? 0xff : (1u << valid) - 1);
  Rows8 x;
  if constexpr (L == Layout::k64) {
    x.a = _mm512_maskz_loadu_epi64(m, rows.lo + i);
    x.b = x.a;
  } else if constexpr (L == Layout::k128Split) {
    x.a = _mm512_maskz_loadu_epi64(m, rows.lo + i);
    x.b = _mm512_maskz_loadu_epi64(m, rows.hi + i);
  } else {
    const size_t words = 2 * valid;
    const __mmask8 ma = static_cast<__mmask8>(words >= 8 ? 0xff : (1u << words) - 1);
    const __mmask8 mb = static_cast<__mmask8>(words <= 8    ? 0
                                              : words >= 16 ? 0xff
                                                            : (1u << (words - 8)) - 1);
    x.a = _mm512_maskz_loadu_epi64(ma, rows.lo + 2 * i);
    x.b = _mm512_maskz_loadu_epi64(mb, rows.lo + 2 * i + 8);
  }
  return x;
}

// The distances of the eight rows of x (64-bit lanes, in row order).
template <Layout L>
NEARDUP_AVX512 inline __m512i Distances8(const Rows8& x, __m512i q_a, __m512i q_b) {
  if constexpr (L == Layout::k64) {
    return _mm512_popcnt_epi64(_mm512_xor_si512(x.a, q_a));
  } else if constexpr (L == Layout::k128Split) {
    return _mm512_add_epi64(_mm512_popcnt_epi64(_mm512_xor_si512(x.a, q_a)),
                            _mm512_popcnt_epi64(_mm512_xor_si512(x.b, q_b)));
  } else {
    // q_a = (lo, hi, ...): four rows a vector; the halves of each row added.
    const __m512i a = _mm512_popcnt_epi64(_mm512_xor_si512(x.a, q_a));
    const __m512i b = _mm512_popcnt_epi64(_mm512_xor_si512(x.b, q_a));
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    return _mm512_add_epi64(_mm512_permutex2var_epi64(a, even, b),
                            _mm512_permutex2var_epi64(a, odd, b));
  }
}

NEARDUP_AVX512 inline void Emit8(__m512i d, unsigned hit, size_t i, std::vector<ScanHit>* out) {
  alignas(64) uint64_t dist[8];
  _mm512_store_si512(dist, d);
  for (; hit != 0; hit &= hit - 1) {
    const int r = std::countr_zero(hit);
    out->push_back(
        {static_cast<uint32_t>(i + static_cast<size_t>(r)), static_cast<uint32_t>(dist[r])});
  }
}

// T queries (a register tile) over rows [begin, end).
template <Layout L, size_t T>
NEARDUP_AVX512 void TileAvx512(const RowsView& rows, size_t begin, size_t end, const __m512i* qa_in,
                               const __m512i* qb_in, int k, std::vector<ScanHit>* out) {
  const __m512i kv = _mm512_set1_epi64(k);
  __m512i qa[T], qb[T];
  for (size_t t = 0; t < T; ++t) {
    qa[t] = qa_in[t];
    qb[t] = qb_in[t];
  }
  size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const Rows8 x = Load8<L>(rows, i, 8);
    for (size_t t = 0; t < T; ++t) {
      const __m512i d = Distances8<L>(x, qa[t], qb[t]);
      const unsigned hit = _mm512_cmple_epu64_mask(d, kv);
      if (hit != 0) Emit8(d, hit, i, &out[t]);
    }
  }
  if (i < end) {
    const size_t valid = end - i;
    const Rows8 x = Load8<L>(rows, i, valid);
    const __mmask8 live = static_cast<__mmask8>((1u << valid) - 1);
    for (size_t t = 0; t < T; ++t) {
      const __m512i d = Distances8<L>(x, qa[t], qb[t]);
      const unsigned hit = _mm512_mask_cmple_epu64_mask(live, d, kv);
      if (hit != 0) Emit8(d, hit, i, &out[t]);
    }
  }
}

template <Layout L>
NEARDUP_AVX512 void ScanAvx512(const RowsView& rows, size_t begin, size_t end, const uint64_t* q_hi,
                               const uint64_t* q_lo, size_t nq, int k, std::vector<ScanHit>* out) {
  for (size_t j0 = 0; j0 < nq; j0 += kQueryTile) {
    const size_t tile = std::min(kQueryTile, nq - j0);
    __m512i qa[kQueryTile], qb[kQueryTile];
    for (size_t t = 0; t < tile; ++t) {
      const long long hi = static_cast<long long>(q_hi == nullptr ? 0 : q_hi[j0 + t]);
      const long long lo = static_cast<long long>(q_lo[j0 + t]);
      qa[t] = L == Layout::k128Pair ? _mm512_setr_epi64(lo, hi, lo, hi, lo, hi, lo, hi)
                                    : _mm512_set1_epi64(lo);
      qb[t] = _mm512_set1_epi64(hi);
    }
    switch (tile) {
      case 4:
        TileAvx512<L, 4>(rows, begin, end, qa, qb, k, out + j0);
        break;
      case 3:
        TileAvx512<L, 3>(rows, begin, end, qa, qb, k, out + j0);
        break;
      case 2:
        TileAvx512<L, 2>(rows, begin, end, qa, qb, k, out + j0);
        break;
      default:
        TileAvx512<L, 1>(rows, begin, end, qa, qb, k, out + j0);
        break;
    }
  }
}

// The first level of the two-level filter (RowsView::lo_filter), at
// AVX-512: for each query s of the tile, the rows of [begin, end) whose lo
// word is within t of q[s], appended (row numbers alone, compressed in a
// register and stored whole: no distance to store and reload, no loop over
// the hit bits) at rows[s * stride + count[s]]. Each query's space holds
// end - begin + 16 rows.
template <size_t T>
NEARDUP_AVX512 void CandidatesAvx512(const uint64_t* lo, size_t begin, size_t end,
                                     const uint64_t* q, int t, uint32_t* rows, size_t stride,
                                     size_t* count) {
  const __m512i tv = _mm512_set1_epi64(t);
  const __m512i step = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0);
  __m512i qv[T];
  for (size_t s = 0; s < T; ++s) qv[s] = _mm512_set1_epi64(static_cast<long long>(q[s]));
  size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m512i x = _mm512_loadu_si512(lo + i);
    for (size_t s = 0; s < T; ++s) {
      const __mmask8 hit =
          _mm512_cmple_epu64_mask(_mm512_popcnt_epi64(_mm512_xor_si512(x, qv[s])), tv);
      if (hit != 0) {
        const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(i)), step);
        uint32_t* to = rows + s * stride + count[s];
        _mm512_storeu_si512(to, _mm512_maskz_compress_epi32(hit, idx));
        count[s] += static_cast<size_t>(std::popcount(static_cast<unsigned>(hit)));
      }
    }
  }
  for (; i < end; ++i) {
    for (size_t s = 0; s < T; ++s) {
      if (std::popcount(lo[i] ^ q[s]) <= t)
        rows[s * stride + count[s]++] = static_cast<uint32_t>(i);
    }
  }
}

NEARDUP_AVX512 void CandidatesAvx512Tiled(const uint64_t* lo, size_t begin, size_t end,
                                          const uint64_t* q, size_t nq, int t, uint32_t* rows,
                                          size_t stride, size_t* count) {
  size_t j = 0;
  for (; j + 4 <= nq; j += 4) {
    CandidatesAvx512<4>(lo, begin, end, q + j, t, rows + j * stride, stride, count + j);
  }
  for (; j < nq; ++j) {
    CandidatesAvx512<1>(lo, begin, end, q + j, t, rows + j * stride, stride, count + j);
  }
}

#endif  // NEARDUP_SCAN_X86

using Kernel = void (*)(const RowsView&, size_t, size_t, const uint64_t*, const uint64_t*, size_t,
                        int, std::vector<ScanHit>*);

template <template <Layout> class Pick>
Kernel ForLayout(Layout l) {
  switch (l) {
    case Layout::k64:
      return Pick<Layout::k64>::kFn;
    case Layout::k128Split:
      return Pick<Layout::k128Split>::kFn;
    case Layout::k128Pair:
      return Pick<Layout::k128Pair>::kFn;
  }
  return Pick<Layout::k64>::kFn;
}

template <Layout L>
struct PickScalar {
  static constexpr Kernel kFn = &ScanScalar<L>;
};
#ifdef NEARDUP_SCAN_X86
template <Layout L>
struct PickAvx2 {
  static constexpr Kernel kFn = &ScanAvx2<L>;
};
template <Layout L>
struct PickAvx512 {
  static constexpr Kernel kFn = &ScanAvx512<L>;
};
#endif

Kernel KernelFor(ScanIsa isa, Layout l) {
#ifdef NEARDUP_SCAN_X86
  if (isa == ScanIsa::kAvx512) return ForLayout<PickAvx512>(l);
  if (isa == ScanIsa::kAvx2) return ForLayout<PickAvx2>(l);
#else
  (void)isa;
#endif
  return ForLayout<PickScalar>(l);
}

ScanIsa DetectIsa() {
#ifdef NEARDUP_SCAN_X86
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the vector state
  // (XGETBV), so a kernel that disables AVX-512 gets AVX2.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq")) {
    return ScanIsa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2")) return ScanIsa::kAvx2;
#endif
  return ScanIsa::kScalar;
}

std::atomic<int>& Active() {
  static std::atomic<int> active{static_cast<int>(BestScanIsa())};
  return active;
}

}  // namespace

ScanIsa BestScanIsa() {
  static const ScanIsa best = DetectIsa();
  return best;
}

bool ScanIsaSupported(ScanIsa isa) {
  return static_cast<int>(isa) <= static_cast<int>(BestScanIsa());
}

ScanIsa ActiveScanIsa() { return static_cast<ScanIsa>(Active().load(std::memory_order_relaxed)); }

bool SetScanIsa(ScanIsa isa) {
  if (!ScanIsaSupported(isa)) return false;
  Active().store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

const char* ScanIsaName(ScanIsa isa) {
  switch (isa) {
    case ScanIsa::kScalar:
      return "scalar";
    case ScanIsa::kAvx2:
      return "avx2";
    case ScanIsa::kAvx512:
      return "avx512";
  }
  return "scalar";
}

namespace {

// ScanRows with rows.lo_filter = t < k (128 bits): the rows within t on
// their lo words, then within k on both.
void FilterScanRows(const RowsView& rows, size_t begin, size_t end, std::span<const uint64_t> q_hi,
                    std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  const int t = rows.lo_filter;
  const size_t nq = q_lo.size();
  if (rows.stride != 1) {
    // (lo, hi) pairs: the full scan, then the rows beyond t on the lo words
    // dropped (no saving; the same answers as the split layout's).
    thread_local std::vector<size_t> before;
    before.resize(nq);
    for (size_t j = 0; j < nq; ++j) before[j] = out[j].size();
    KernelFor(ActiveScanIsa(), LayoutOf(rows))(rows, begin, end, q_hi.data(), q_lo.data(), nq, k,
                                               out);
    for (size_t j = 0; j < nq; ++j) {
      const auto from = out[j].begin() + static_cast<std::ptrdiff_t>(before[j]);
      out[j].erase(std::remove_if(from, out[j].end(),
                                  [&](const ScanHit& h) {
                                    return std::popcount(rows.lo[h.row * rows.stride] ^ q_lo[j]) >
                                           t;
                                  }),
                   out[j].end());
    }
    return;
  }
  // Split: the lo words alone, a block at a time, then each survivor's hi
  // word while the block's hi words are in cache (a block of 8192 rows is
  // 64 KiB of lo words and 64 KiB of hi words; the first level keeps a
  // random row with probability P(Binomial(64, 1/2) <= t), 0.18 % at t = 20).
  RowsView low;
  low.bits = 64;
  low.n = rows.n;
  low.lo = rows.lo;
#ifdef NEARDUP_SCAN_X86
  if (ActiveScanIsa() == ScanIsa::kAvx512) {
    // Row numbers alone from the first level, then each survivor's full
    // distance (its lo word still in cache), 1,024 rows at a time (8 KiB of
    // lo words compared with every query while in L1; room for every row
    // of them to survive: 4 KiB a query).
    constexpr size_t kRows = 1024;
    const size_t stride = kRows + 16;
    thread_local std::vector<uint32_t> cand;
    thread_local std::vector<size_t> count;
    if (cand.size() < nq * stride) cand.resize(nq * stride);
    count.resize(nq);
    for (size_t b = begin; b < end; b += kRows) {
      const size_t e = std::min(end, b + kRows);
      std::fill(count.begin(), count.end(), 0);
      for (size_t i = b; i < e; i += 8) __builtin_prefetch(rows.hi + i);
      CandidatesAvx512Tiled(rows.lo, b, e, q_lo.data(), nq, t, cand.data(), stride, count.data());
      for (size_t j = 0; j < nq; ++j) {
        const uint64_t ql = q_lo[j], qh = q_hi[j];
        const uint32_t* c = cand.data() + j * stride;
        for (size_t x = 0; x < count[j]; ++x) {
          const uint32_t row = c[x];
          const auto d = static_cast<uint32_t>(std::popcount(rows.lo[row] ^ ql) +
                                               std::popcount(rows.hi[row] ^ qh));
          if (d <= static_cast<uint32_t>(k)) out[j].push_back(ScanHit{row, d});
        }
      }
    }
    return;
  }
#endif
  const Kernel kernel = KernelFor(ActiveScanIsa(), Layout::k64);
  thread_local std::vector<std::vector<ScanHit>> first;
  if (first.size() < nq) first.resize(nq);
  for (size_t b = begin; b < end; b += kScanBlockRows) {
    const size_t e = std::min(end, b + kScanBlockRows);
    for (size_t j = 0; j < nq; ++j) first[j].clear();
    // The survivors of a batch touch most of the block's hi words, each
    // first touch a cache miss in no order the hardware predicts: the
    // block's hi words are read ahead, in order, while the first level runs.
    for (size_t i = b; i < e; i += 8) __builtin_prefetch(rows.hi + i);
    kernel(low, b, e, nullptr, q_lo.data(), nq, t, first.data());
    for (size_t j = 0; j < nq; ++j) {
      const uint64_t qh = q_hi[j];
      for (const ScanHit& h : first[j]) {
        const uint32_t d = h.distance + static_cast<uint32_t>(std::popcount(rows.hi[h.row] ^ qh));
        if (d <= static_cast<uint32_t>(k)) out[j].push_back(ScanHit{h.row, d});
      }
    }
  }
}

}  // namespace

void ScanRows(const RowsView& rows, size_t begin, size_t end, std::span<const uint64_t> q_hi,
              std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  if (begin >= end || q_lo.empty()) return;
  if (rows.bits == 128 && rows.lo_filter >= 0 && rows.lo_filter < k) {
    FilterScanRows(rows, begin, end, q_hi, q_lo, k, out);
    return;
  }
  KernelFor(ActiveScanIsa(), LayoutOf(rows))(
      rows, begin, end, rows.bits == 128 ? q_hi.data() : nullptr, q_lo.data(), q_lo.size(), k, out);
}

double TiledScanNsPerRow(int bits) {
  // BM_ScanBatch, 1M rows, 1,000 queries, one thread of a loaded 2-core
  // AMD EPYC (Zen 4), 2026-11-27: 128 bits 665 / 557 / 202 us a query
  // (scalar / AVX2 / AVX-512), 64 bits 379 / 230 / 96.
  const bool wide = bits == 128;
  switch (ActiveScanIsa()) {
    case ScanIsa::kAvx512:
      return wide ? 0.202 : 0.096;
    case ScanIsa::kAvx2:
      return wide ? 0.557 : 0.230;
    case ScanIsa::kScalar:
      break;
  }
  return wide ? 0.665 : 0.379;
}

double FilterScanNsPerRow(double survivors) {
  // The lo words' tiled scan (64 bits a row), plus each survivor's cost
  // (its hit's branch and store, its words' popcounts): BM_ChosenEach at 1M
  // rows, 1,000 queries, AVX-512, 2026-11-27: 129 us a query with 1,873
  // survivors against 97 for the 64-bit scan alone (bench/index_scan_bench.cc,
  // doc/benchmarks.md), ~17 ns a survivor.
  constexpr double kSurvivorNs = 17.0;
  return TiledScanNsPerRow(64) + survivors * kSurvivorNs;
}

void ScanRowsTiled(const RowsView& rows, std::span<const uint64_t> q_hi,
                   std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out) {
  if (q_lo.size() <= kQueryTile) {
    ScanRows(rows, 0, rows.n, q_hi, q_lo, k, out);
    return;
  }
  for (size_t b = 0; b < rows.n; b += kScanBlockRows) {
    ScanRows(rows, b, std::min(rows.n, b + kScanBlockRows), q_hi, q_lo, k, out);
  }
}

}  // namespace neardup::index_internal
