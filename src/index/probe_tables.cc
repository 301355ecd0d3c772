// Copyright 2026 The neardup Authors.

#include "index/probe_tables.h"

#include <algorithm>
#include <bit>
#include <cmath>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NEARDUP_PROBE_X86 1
#endif

namespace neardup::index_internal {
namespace {

constexpr int kBits = 128;
constexpr int kHalfBits = 64;

double Choose(int n, int r) {
  if (r < 0 || r > n) return 0;
  double c = 1;
  for (int i = 1; i <= r; ++i) c = c * (n - r + i) / i;
  return c;
}

int TablesInHalf(const ProbeTablesSpec& s, int half) {
  return half == 0 ? (s.tables + 1) / 2 : s.tables / 2;
}

// The placements of c differing bits among one half's 64 bits, by c and by
// whether some table of the half has at most r of them in its key: ways[2 c
// + found]. The keys are disjoint groups of b bits; the other bits are one
// group without a table.
std::vector<double> HalfWays(const ProbeTablesSpec& s, int tables, int d) {
  std::vector<double> ways(2 * static_cast<size_t>(d + 1), 0.0);
  ways[0] = 1;
  auto add_group = [&](int size, bool keyed) {
    std::vector<double> next(ways.size(), 0.0);
    for (int c = 0; c <= d; ++c) {
      for (int f = 0; f < 2; ++f) {
        const double w = ways[static_cast<size_t>(2 * c + f)];
        if (w == 0) continue;
        for (int x = 0; x <= size && c + x <= d; ++x) {
          const int found = f | (keyed && x <= s.radius ? 1 : 0);
          next[static_cast<size_t>(2 * (c + x) + found)] += w * Choose(size, x);
        }
      }
    }
    ways.swap(next);
  };
  for (int i = 0; i < tables; ++i) add_group(s.key_bits, true);
  add_group(kHalfBits - tables * s.key_bits, false);
  return ways;
}

double RecallFromWays(const std::vector<double>& lo, const std::vector<double>& hi, int d, int t) {
  double found = 0;
  for (int c0 = 0; c0 <= d; ++c0) {
    const int c1 = d - c0;
    for (int f0 = 0; f0 < 2; ++f0) {
      for (int f1 = 0; f1 < 2; ++f1) {
        if ((f0 != 0 && c0 <= t) || (f1 != 0 && c1 <= t)) {
          found += lo[static_cast<size_t>(2 * c0 + f0)] * hi[static_cast<size_t>(2 * c1 + f1)];
        }
      }
    }
  }
  return found / Choose(kBits, d);
}

// P(Binomial(n, 1/2) <= t).
double BinomialHalfCdf(int n, int t) {
  if (t < 0) return 0;
  double p = 0;
  for (int x = 0; x <= std::min(n, t); ++x) p += Choose(n, x);
  return p / std::ldexp(1.0, n);
}

// Fills the counts of `s` for n rows (probes, reads, survivors, bytes, cost).
void FillCosts(ProbeTablesSpec* s, size_t n) {
  double v = 0, survive = 0;
  for (int i = 0; i <= s->radius; ++i) {
    const double c = Choose(s->key_bits, i);
    v += c;
    survive += c * BinomialHalfCdf(kHalfBits - s->key_bits, s->threshold - i);
  }
  const double per_bucket = static_cast<double>(n) / std::ldexp(1.0, s->key_bits);
  s->probes = s->tables * v;
  s->reads = s->probes * per_bucket;
  s->survivors = s->tables * per_bucket * survive;
  s->bytes_per_fingerprint =
      s->tables * (12.0 + 4.0 * (std::ldexp(1.0, s->key_bits) + 1) / std::max<size_t>(n, 1));
  s->estimated_query_us = ProbeTablesQueryUs(*s, n);
}

}  // namespace

double ProbeTablesRecall(const ProbeTablesSpec& spec, int d) {
  if (spec.tables <= 0 || d < 0 || d > kBits) return 0;
  const auto lo = HalfWays(spec, TablesInHalf(spec, 0), d);
  const auto hi = HalfWays(spec, TablesInHalf(spec, 1), d);
  return RecallFromWays(lo, hi, d, spec.threshold);
}

double ProbeTablesQueryUs(const ProbeTablesSpec& spec, size_t n) {
  (void)n;
  // A query in a batch (SearchEach: the probes sorted by key, each table
  // read in order): per probe (its counting sort, its bucket's first
  // lines), per filter word compared, per survivor (its row number and its
  // other half's word, random reads, prefetched together), by the bucket
  // kernel the CPU runs (ActiveScanIsa). Least-squares fits of BM_Probe at
  // 1M rows, 1,000 queries (b = 12..15, r = 2, L = 8), doc/benchmarks.md:
  // AVX-512 (VPOPCNTQ, 8 words an instruction; AMD EPYC Zen 4, 2026-11-27:
  // 36.7, 29.5, 25.7, 26.8 us a query; at 10M it gives 74 us against 77
  // measured) 22.5 ns a probe, 0.14 a word; AVX2 (a nibble-table popcount,
  // four words a vector; AMD EPYC Zen 3, 2026-11-28: 76.1, 51.1, 41.2, 37.5)
  // 25 ns a probe, 0.38 a word, where a word costs 2.7 times as much and
  // wider keys (fewer words, more probes) pay: b = 15 at 1M instead of 14;
  // scalar (the same machine: 160, 95.9, 65.8, 50.3) 20.3 ns a probe, 0.94
  // a word.
  constexpr double kSurvivorNs = 40.0;
  double probe_ns = 22.5, read_ns = 0.14;
  switch (ActiveScanIsa()) {
    case ScanIsa::kAvx512:
      break;
    case ScanIsa::kAvx2:
      probe_ns = 25.0;
      read_ns = 0.38;
      break;
    case ScanIsa::kScalar:
      probe_ns = 20.3;
      read_ns = 0.94;
      break;
  }
  return (spec.probes * probe_ns + spec.reads * read_ns + spec.survivors * kSurvivorNs) / 1000.0;
}

ProbeTablesSpec ChooseProbeTables(size_t n, int k, double recall, double max_bytes) {
  ProbeTablesSpec best;
  if (recall >= 1 || k <= 0 || k > kBits) return best;
  const int close_d = std::max(k - 4, 0);
  const double close_target = 1 - (1 - recall) / 100;
  for (int b = 6; b <= kMaxProbeKeyBits; ++b) {
    for (int r = 0; r <= 3; ++r) {
      for (int l = 1; l <= 2 * (kHalfBits / b); ++l) {
        ProbeTablesSpec s;
        s.key_bits = b;
        s.radius = r;
        s.tables = l;
        if (l * (12.0 + 4.0 * (std::ldexp(1.0, b) + 1) / std::max<size_t>(n, 1)) > max_bytes) {
          continue;
        }
        const auto lo_k = HalfWays(s, TablesInHalf(s, 0), k);
        const auto hi_k = HalfWays(s, TablesInHalf(s, 1), k);
        const auto lo_c = HalfWays(s, TablesInHalf(s, 0), close_d);
        const auto hi_c = HalfWays(s, TablesInHalf(s, 1), close_d);
        int t = 0;
        for (; t <= kHalfBits; ++t) {
          if (RecallFromWays(lo_k, hi_k, k, t) >= recall &&
              RecallFromWays(lo_c, hi_c, close_d, t) >= close_target) {
            break;
          }
        }
        if (t > kHalfBits) continue;
        s.threshold = t;
        s.recall_at_k = RecallFromWays(lo_k, hi_k, k, t);
        s.recall_at_k_minus_4 = RecallFromWays(lo_c, hi_c, close_d, t);
        FillCosts(&s, n);
        if (best.tables == 0 || s.estimated_query_us < best.estimated_query_us) best = s;
      }
    }
  }
  return best;
}

TableMask ProbeMask(int g, int key_bits, int radius) {
  TableMask m;
  const uint64_t bits = ((uint64_t{1} << key_bits) - 1) << ((g / 2) * key_bits);
  (g % 2 == 0 ? m.lo : m.hi) = bits;
  m.radius = static_cast<uint32_t>(radius);
  return m;
}

TablesSpec ProbeTablesSpecFor(const ProbeTablesSpec& probe, int k) {
  TablesSpec spec;
  spec.kind = TablesKind::kProbe;
  spec.bits = 128;
  spec.max_k = k;
  spec.dir_bits = probe.key_bits;
  spec.radius = probe.threshold;
  spec.recall_at_k = probe.recall_at_k;
  spec.recall_at_k_minus_4 = probe.recall_at_k_minus_4;
  spec.estimated_query_us = probe.estimated_query_us;
  spec.bytes_per_fingerprint = probe.bytes_per_fingerprint;
  for (int g = 0; g < probe.tables; ++g) {
    spec.masks.push_back(ProbeMask(g, probe.key_bits, probe.radius));
  }
  return spec;
}

bool IsProbeLayout(const TablesSpec& spec) {
  if (spec.kind != TablesKind::kProbe || spec.bits != 128 || spec.masks.empty()) return false;
  const int b = spec.dir_bits;
  if (b < 1 || b > kMaxProbeKeyBits || spec.radius < 0 || spec.radius > 64) return false;
  if (spec.masks.size() > static_cast<size_t>(2 * (kHalfBits / b))) return false;
  const uint32_t r = spec.masks[0].radius;
  if (r > 3) return false;
  for (size_t g = 0; g < spec.masks.size(); ++g) {
    const TableMask want = ProbeMask(static_cast<int>(g), b, static_cast<int>(r));
    const TableMask& m = spec.masks[g];
    if (m.hi != want.hi || m.lo != want.lo || m.radius != r) return false;
  }
  return true;
}

bool ProbeFinds(const TablesSpec& spec, uint64_t x_hi, uint64_t x_lo) {
  for (const TableMask& m : spec.masks) {
    const uint64_t half = m.lo != 0 ? x_lo : x_hi;
    if (std::popcount(half & (m.lo | m.hi)) <= static_cast<int>(m.radius) &&
        std::popcount(half) <= spec.radius) {
      return true;
    }
  }
  return false;
}

namespace {

// The half (0: lo, 1: hi) and the key's lowest bit of a probe table's mask.
int MaskHalf(const TableMask& m) { return m.lo != 0 ? 0 : 1; }
int MaskShift(const TableMask& m) { return std::countr_zero(m.lo != 0 ? m.lo : m.hi); }

}  // namespace

std::vector<OwnedTable> BuildProbeTables(std::span<const TableMask> masks, int key_bits,
                                         std::span<const uint64_t> lo,
                                         std::span<const uint64_t> hi) {
  const size_t n = lo.size();
  const size_t buckets = size_t{1} << key_bits;
  const uint64_t key_mask = buckets - 1;
  std::vector<OwnedTable> tables(masks.size());
  for (size_t g = 0; g < masks.size(); ++g) {
    OwnedTable& t = tables[g];
    const std::span<const uint64_t> half = MaskHalf(masks[g]) == 0 ? lo : hi;
    const int shift = MaskShift(masks[g]);
    t.dir.assign(buckets + 1, 0);
    for (size_t i = 0; i < n; ++i) ++t.dir[((half[i] >> shift) & key_mask) + 1];
    for (size_t i = 0; i < buckets; ++i) t.dir[i + 1] += t.dir[i];
    std::vector<uint32_t> fill(t.dir.begin(), t.dir.end() - 1);
    t.words.resize(n);
    t.rows.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t at = fill[(half[i] >> shift) & key_mask]++;
      t.words[at] = half[i];
      t.rows[at] = static_cast<uint32_t>(i);
    }
  }
  return tables;
}

namespace {

// Appends to idx the positions i in [0, n) with popcount(w[i] ^ q) <= t
// and, where kKeyed (a narrow directory: the bucket holds every row whose
// directory bits are the probed key's, not only those whose whole key is
// within r), popcount((w[i] ^ q) & key) <= r.
template <bool kKeyed>
size_t ScanBucketScalar(const uint64_t* w, size_t n, uint64_t q, int t, uint64_t key, int r,
                        uint32_t* idx) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) {
    idx[c] = static_cast<uint32_t>(i);
    const uint64_t x = w[i] ^ q;
    bool keep = std::popcount(x) <= t;
    if constexpr (kKeyed) keep = keep && std::popcount(x & key) <= r;
    c += keep ? 1 : 0;
  }
  return c;
}

#ifdef NEARDUP_PROBE_X86
#define NEARDUP_PROBE_AVX512 __attribute__((target("avx512f,avx512vpopcntdq")))

// The lanes of `valid` whose word v ^ q passes (ScanBucketScalar's test).
template <bool kKeyed>
NEARDUP_PROBE_AVX512 inline __mmask8 Keep8(__mmask8 valid, __m512i v, __m512i qv, __m512i tv,
                                           __m512i kv, __m512i rv) {
  const __m512i x = _mm512_xor_si512(v, qv);
  __mmask8 m = _mm512_mask_cmple_epu64_mask(valid, _mm512_popcnt_epi64(x), tv);
  if constexpr (kKeyed) {
    m = _mm512_mask_cmple_epu64_mask(m, _mm512_popcnt_epi64(_mm512_and_si512(x, kv)), rv);
  }
  return m;
}

template <bool kKeyed>
NEARDUP_PROBE_AVX512 size_t ScanBucketAvx512(const uint64_t* w, size_t n, uint64_t q, int t,
                                             uint64_t key, int r, uint32_t* idx) {
  const __m512i qv = _mm512_set1_epi64(static_cast<long long>(q));
  const __m512i tv = _mm512_set1_epi64(t);
  const __m512i kv = _mm512_set1_epi64(static_cast<long long>(key));
  const __m512i rv = _mm512_set1_epi64(r);
  size_t c = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __mmask8 m = Keep8<kKeyed>(0xff, _mm512_loadu_si512(w + i), qv, tv, kv, rv);
    while (m != 0) {
      idx[c++] = static_cast<uint32_t>(i + static_cast<size_t>(std::countr_zero(m)));
      m = static_cast<__mmask8>(m & (m - 1));
    }
  }
  if (i < n) {
    const auto valid = static_cast<__mmask8>((1u << (n - i)) - 1);
    __mmask8 m = Keep8<kKeyed>(valid, _mm512_maskz_loadu_epi64(valid, w + i), qv, tv, kv, rv);
    while (m != 0) {
      idx[c++] = static_cast<uint32_t>(i + static_cast<size_t>(std::countr_zero(m)));
      m = static_cast<__mmask8>(m & (m - 1));
    }
  }
  return c;
}

// AVX2: four words a vector, each word's bits counted by a nibble table
// (vpshufb) and summed by vpsadbw, as the scan's AVX2 kernel.
__attribute__((target("avx2,popcnt"))) inline __m256i WordCounts(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i low = _mm256_and_si256(v, nibble);
  const __m256i high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  return _mm256_sad_epu8(
      _mm256_add_epi8(_mm256_shuffle_epi8(table, low), _mm256_shuffle_epi8(table, high)),
      _mm256_setzero_si256());
}

// A bucket's words that pass for one of several queries: the query's place
// among them and the word's place in the bucket.
struct BucketHit {
  uint32_t query;
  uint32_t at;
};

// kQ queries (qw[0, kQ)) against the bucket's n words, each word's nibbles
// split once for all of them: a query then costs two XORs, two table
// lookups, an add, a sum and a compare every four words (against eleven
// operations and a call a query and bucket before). The last one to three
// words are read by a masked load (no read past the bucket, no scalar
// tail). Hits carry query first_query + x.
template <bool kKeyed, size_t kQ>
__attribute__((target("avx2,popcnt"))) size_t ScanBlockAvx2(const uint64_t* w, size_t n,
                                                            const uint64_t* qw, int t, uint64_t key,
                                                            int r, uint32_t first_query,
                                                            BucketHit* out) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i tv = _mm256_set1_epi64x(t);
  const __m256i kv = _mm256_set1_epi64x(static_cast<long long>(key));
  const __m256i rv = _mm256_set1_epi64x(r);
  __m256i q_full[kQ], q_low[kQ], q_high[kQ];
  for (size_t x = 0; x < kQ; ++x) {
    q_full[x] = _mm256_set1_epi64x(static_cast<long long>(qw[x]));
    q_low[x] = _mm256_and_si256(q_full[x], nibble);
    q_high[x] = _mm256_and_si256(_mm256_srli_epi16(q_full[x], 4), nibble);
  }
  size_t c = 0;
  for (size_t i = 0; i < n; i += 4) {
    __m256i v;
    unsigned valid = 0xfu;
    if (n - i >= 4) {
      v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i));
    } else {
      const auto rest = static_cast<long long>(n - i);
      const __m256i lanes =
          _mm256_cmpgt_epi64(_mm256_set1_epi64x(rest), _mm256_setr_epi64x(0, 1, 2, 3));
      v = _mm256_maskload_epi64(reinterpret_cast<const long long*>(w + i), lanes);
      valid = (1u << rest) - 1;
    }
    const __m256i v_low = _mm256_and_si256(v, nibble);
    const __m256i v_high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
    for (size_t x = 0; x < kQ; ++x) {
      // One query: split the XOR (one operation fewer than splitting the
      // word and XORing both halves).
      const __m256i counts =
          kQ == 1 ? WordCounts(_mm256_xor_si256(v, q_full[x]))
                  : _mm256_sad_epu8(
                        _mm256_add_epi8(
                            _mm256_shuffle_epi8(table, _mm256_xor_si256(v_low, q_low[x])),
                            _mm256_shuffle_epi8(table, _mm256_xor_si256(v_high, q_high[x]))),
                        zero);
      __m256i over = _mm256_cmpgt_epi64(counts, tv);
      if constexpr (kKeyed) {
        const __m256i keyed = _mm256_and_si256(_mm256_xor_si256(v, q_full[x]), kv);
        over = _mm256_or_si256(over, _mm256_cmpgt_epi64(WordCounts(keyed), rv));
      }
      auto m = static_cast<unsigned>(~_mm256_movemask_pd(_mm256_castsi256_pd(over))) & valid;
      while (m != 0) {
        out[c++] = BucketHit{first_query + static_cast<uint32_t>(x),
                             static_cast<uint32_t>(i + static_cast<size_t>(std::countr_zero(m)))};
        m &= m - 1;
      }
    }
  }
  return c;
}

// nq queries against a bucket, four at a time (ScanBlockAvx2).
template <bool kKeyed>
__attribute__((target("avx2,popcnt"))) size_t ScanBucketQueriesAvx2(const uint64_t* w, size_t n,
                                                                    const uint64_t* qw, size_t nq,
                                                                    int t, uint64_t key, int r,
                                                                    BucketHit* out) {
  size_t c = 0;
  size_t x = 0;
  for (; x + 4 <= nq; x += 4) {
    c += ScanBlockAvx2<kKeyed, 4>(w, n, qw + x, t, key, r, static_cast<uint32_t>(x), out + c);
  }
  const auto first = static_cast<uint32_t>(x);
  switch (nq - x) {
    case 3:
      c += ScanBlockAvx2<kKeyed, 3>(w, n, qw + x, t, key, r, first, out + c);
      break;
    case 2:
      c += ScanBlockAvx2<kKeyed, 2>(w, n, qw + x, t, key, r, first, out + c);
      break;
    case 1:
      c += ScanBlockAvx2<kKeyed, 1>(w, n, qw + x, t, key, r, first, out + c);
      break;
    default:
      break;
  }
  return c;
}
#endif

using BucketScan = size_t (*)(const uint64_t*, size_t, uint64_t, int, uint64_t, int, uint32_t*);

#ifndef NEARDUP_PROBE_X86
struct BucketHit {
  uint32_t query;
  uint32_t at;
};
#endif

// nq queries (qw[0, nq)) against a bucket's n words: every (query, word)
// that passes, into out (room for n x nq).
using BucketQueriesScan = size_t (*)(const uint64_t*, size_t, const uint64_t*, size_t, int,
                                     uint64_t, int, BucketHit*);

// A one-query kernel, query after query.
template <BucketScan kScan>
size_t ScanBucketEach(const uint64_t* w, size_t n, const uint64_t* qw, size_t nq, int t,
                      uint64_t key, int r, BucketHit* out) {
  thread_local std::vector<uint32_t> idx;
  if (idx.size() < n) idx.resize(n);
  size_t c = 0;
  for (size_t x = 0; x < nq; ++x) {
    const size_t got = kScan(w, n, qw[x], t, key, r, idx.data());
    for (size_t y = 0; y < got; ++y) out[c++] = BucketHit{static_cast<uint32_t>(x), idx[y]};
  }
  return c;
}

// The bucket kernel of the active ISA (hamming_scan.h's choice), with the
// key's filter (a narrow directory) or without.
BucketQueriesScan ChooseBucketScan(bool keyed) {
#ifdef NEARDUP_PROBE_X86
  switch (ActiveScanIsa()) {
    case ScanIsa::kAvx512:
      return keyed ? ScanBucketEach<ScanBucketAvx512<true>>
                   : ScanBucketEach<ScanBucketAvx512<false>>;
    case ScanIsa::kAvx2:
      return keyed ? ScanBucketQueriesAvx2<true> : ScanBucketQueriesAvx2<false>;
    case ScanIsa::kScalar:
      break;
  }
#endif
  return keyed ? ScanBucketEach<ScanBucketScalar<true>> : ScanBucketEach<ScanBucketScalar<false>>;
}

// Probes are read this many ahead (directory slot) and half as many (the
// bucket's first lines), so that many misses are in flight at once.
constexpr size_t kDirAhead = 16;
constexpr size_t kBucketAhead = 8;
// The sorted path prefetches the probed buckets this many ahead (their
// first kSortedPrefetchWords words: a bucket at 1M rows and 14-bit keys
// holds ~61).
constexpr size_t kSortedAhead = 4;
constexpr size_t kSortedPrefetchWords = 128;
// A batch's probes are sorted by key (ProbeBatch) from this many queries,
// and only once the words the batch reads in a table (queries x V x n /
// 2^b) reach kSortWordsPerKey a key of its directory: the sort's passes
// over the 2^b keys of every table are a fixed cost a batch (~270 us at
// 14-bit keys, ~870 at 15), repaid by reading each table in address order
// (and a bucket once for all the queries probing it) instead of at random.
// Calibrated on BM_ProbeBatch, query by query against sorted: at 1M rows,
// 14-bit keys (V = 106), 73-82 us a query against 94 sorted at 64
// queries, 79-86 against 69-70 at 128 (even at ~100); at 10M, 15-bit keys
// (V = 121), 391 against 428 at 32, 398 against 294 at 128 (even at ~40):
// 40 and 35. (At 100,000 rows, the tables in the cache, sorting from 16
// costs up to ~15 % more than query by query below ~100 queries, as
// before this rule.) Since the sorted path prefetches its buckets
// (kSortedAhead) and compares a bucket's words four or eight at a time
// with AVX2 as with AVX-512, it is cheaper from fewer queries: at 1M rows
// on AVX2 (no AVX-512), 123-160 us query by query against 98-131 sorted at
// 48-64 queries, 139-166 against 160-173 at 16-32 (doc/benchmarks.md,
// idx13): 16 words a key, from 41 queries at 1M, 14-bit keys. With 15-bit
// keys at 1M (the AVX2 pick) that is 142 queries: query by query 67-80 us
// against 74-97 sorted at 32-64 queries, 68-69 against 64 at 170; at 10M
// (15-bit keys) from 16, the floor below: sorted 547 us against 579 query
// by query at 16, 590 against 615 at 8 (doc/benchmarks.md, idx14).
//
// A small table (a delta's level: the index file's keys over a few
// thousand to a few hundred thousand rows, its buckets nearly empty) costs
// a query its probes whatever its rows (~850 at 1M, each a directory slot
// and a bucket read at random: 8-15 us), and reads too few words for the
// rule above: it is sorted too once the batch probes kSortProbesPerKey a
// key of each table, where the sort's passes are repaid by its probes
// alone (BM_Delta/<n>/<batch>/<2, 3>, 1M layout, sorted against query by
// query: 1,000 queries 6.7 against 14.1 us at 16,384 rows, 9.9 against
// 19.2 at 54,272, 11.1 against 28.9 at 100,000; 250 queries 5.5-13.5
// against 7.8-12.9; 64-128 queries 8.8-18.6 against 7.9-13.3: from ~1.5
// probes a key, 232 queries at 14-bit keys and radius 2).
constexpr size_t kMinProbeBatch = 16;
constexpr double kSortWordsPerKey = 16;
constexpr double kSortProbesPerKey = 1.5;

}  // namespace

bool SortProbes(size_t queries, size_t n, int key_bits, int radius) {
  double v = 0;
  for (int i = 0; i <= radius; ++i) v += Choose(key_bits, i);
  const double keys = std::ldexp(1.0, key_bits);
  const double probes = static_cast<double>(queries) * v;
  const double words = probes * static_cast<double>(n) / keys;
  return queries >= kMinProbeBatch &&
         (words >= kSortWordsPerKey * keys || probes >= kSortProbesPerKey * keys);
}

namespace {

// Every key mask within radius r of a b-bit key, by distance (0, then 1,
// ...), kept a thread for every (b, r) met (the index file's keys and its
// delta's levels' narrower ones are searched in turn).
const std::vector<uint32_t>& Flips(int key_bits, int radius) {
  thread_local std::vector<uint32_t> cache[kMaxProbeKeyBits + 1][4];
  std::vector<uint32_t>& flips = cache[key_bits][radius];
  if (flips.empty()) {
    for (int d = 0; d <= radius; ++d) {
      for (uint32_t m = 0; m < (uint32_t{1} << key_bits); ++m) {
        if (std::popcount(m) == d) flips.push_back(m);
      }
    }
  }
  return flips;
}

// The bits of table g's key beyond its directory's (a narrow directory
// keys on the low dir_bits of them), or 0 where the directory holds them all.
uint64_t KeyFilter(const TableMask& m, int dir_bits) {
  const uint64_t key = m.lo | m.hi;
  return std::popcount(key) > dir_bits ? key : 0;
}

// One survivor of a table's filter word: its query, its position in its
// table (then, after Resolve, its row), the distance of its table's half,
// which half and which table.
struct Cand {
  uint32_t query;
  uint32_t row;
  uint32_t half_distance;
  uint32_t half;
  uint32_t table;
};

// The survivors' row numbers from their tables' positions: a random read
// each, all prefetched first so that they miss the cache together (read
// while scanning, each was a miss of its own: ~18 % of a query at 1M).
void Resolve(const TablesView& view, std::vector<Cand>* cands) {
  for (const Cand& c : *cands) __builtin_prefetch(view.tables[c.table].rows.data() + c.row);
  for (Cand& c : *cands) c.row = view.tables[c.table].rows[c.row];
}

// The survivors' full distance (their other halves: random reads,
// prefetched a pass ahead); those within k appended to out[query], then
// each query's new hits sorted by row, once each.
void Verify(const TablesView& view, std::span<const uint64_t> q_hi, std::span<const uint64_t> q_lo,
            int k, const std::vector<Cand>& cands, std::vector<ScanHit>* out) {
  const size_t nq = q_lo.size();
  const size_t w = view.packed ? 2 : 1;
  for (const Cand& c : cands) {
    if (view.packed) {
      if (w * c.row < view.words.size()) __builtin_prefetch(&view.words[w * c.row]);
    } else {
      const std::span<const uint64_t> other = c.half == 0 ? view.hi : view.lo;
      if (c.row < other.size()) __builtin_prefetch(&other[c.row]);
    }
  }
  thread_local std::vector<size_t> before;
  before.resize(nq);
  for (size_t j = 0; j < nq; ++j) before[j] = out[j].size();
  for (const Cand& c : cands) {
    uint64_t x_hi = 0, x_lo = 0;
    if (!view.RowFingerprint(c.row, &x_hi, &x_lo)) continue;  // a damaged file
    const uint64_t other = c.half == 0 ? (x_hi ^ q_hi[c.query]) : (x_lo ^ q_lo[c.query]);
    const uint32_t d = c.half_distance + static_cast<uint32_t>(std::popcount(other));
    if (d <= static_cast<uint32_t>(k)) out[c.query].push_back(ScanHit{c.row, d});
  }
  for (size_t j = 0; j < nq; ++j) {
    std::vector<ScanHit>& o = out[j];
    if (o.size() == before[j]) continue;
    const auto from = o.begin() + static_cast<std::ptrdiff_t>(before[j]);
    std::sort(from, o.end(), [](const ScanHit& a, const ScanHit& b) { return a.row < b.row; });
    o.erase(std::unique(from, o.end()), o.end());
  }
}

// The bucket [begin, end) of table t, or an empty one where a damaged
// file's directory points outside its arrays.
bool Bucket(const TableView& t, size_t key, uint32_t* begin, uint32_t* end) {
  if (key + 1 >= t.dir.size()) return false;
  *begin = t.dir[key];
  *end = t.dir[key + 1];
  return *begin < *end && *end <= t.words.size() && *end <= t.rows.size();
}

// One query: every probe of every table in one pipeline (directory slots
// read kDirAhead probes ahead, buckets' first lines kBucketAhead ahead).
void ProbeOne(const TablesView& view, uint32_t query, uint64_t q_hi, uint64_t q_lo,
              std::vector<Cand>* cands) {
  struct Probe {
    uint32_t table;
    uint32_t key;
    uint32_t begin;
    uint32_t end;
  };
  thread_local std::vector<Probe> probes;
  thread_local std::vector<BucketHit> hits;
  probes.clear();
  const int t_max = view.probe_threshold;
  const uint64_t key_mask = (uint64_t{1} << view.dir_bits) - 1;
  const uint64_t q_half[2] = {q_lo, q_hi};
  for (uint32_t g = 0; g < view.masks.size() && g < view.tables.size(); ++g) {
    const TableMask& m = view.masks[g];
    if (m.radius > 3) continue;  // not a probe layout (IsProbeLayout)
    const auto key = static_cast<uint32_t>((q_half[MaskHalf(m)] >> MaskShift(m)) & key_mask);
    for (uint32_t f : Flips(view.dir_bits, static_cast<int>(m.radius))) {
      probes.push_back(Probe{g, key ^ f, 0, 0});
    }
  }
  const size_t np = probes.size();
  const auto dir_ready = [&](size_t i) {
    Probe& p = probes[i];
    const TableView& t = view.tables[p.table];
    if (!Bucket(t, p.key, &p.begin, &p.end)) {
      p.begin = p.end = 0;
      return;
    }
    const uint64_t* w = t.words.data() + p.begin;
    const size_t len = p.end - p.begin;
    for (size_t x = 0; x < std::min<size_t>(len, 32); x += 8) __builtin_prefetch(w + x);
  };
  const auto dir_prefetch = [&](size_t i) {
    const TableView& t = view.tables[probes[i].table];
    if (probes[i].key < t.dir.size()) __builtin_prefetch(&t.dir[probes[i].key]);
  };
  for (size_t i = 0; i < std::min(np, kDirAhead); ++i) dir_prefetch(i);
  for (size_t i = 0; i < std::min(np, kBucketAhead); ++i) dir_ready(i);
  for (size_t i = 0; i < np; ++i) {
    if (i + kDirAhead < np) dir_prefetch(i + kDirAhead);
    if (i + kBucketAhead < np) dir_ready(i + kBucketAhead);
    const Probe& p = probes[i];
    const size_t len = p.end - p.begin;
    if (len == 0) continue;
    const TableView& t = view.tables[p.table];
    const TableMask& m = view.masks[p.table];
    const int half = MaskHalf(m);
    if (hits.size() < len) hits.resize(len);
    const uint64_t* w = t.words.data() + p.begin;
    const uint64_t qw = q_half[half];
    const uint64_t key_filter = KeyFilter(m, view.dir_bits);
    const size_t c = ChooseBucketScan(key_filter != 0)(w, len, &qw, 1, t_max, key_filter,
                                                       static_cast<int>(m.radius), hits.data());
    for (size_t x = 0; x < c; ++x) {
      cands->push_back(Cand{query, p.begin + hits[x].at,
                            static_cast<uint32_t>(std::popcount(w[hits[x].at] ^ qw)),
                            static_cast<uint32_t>(half), p.table});
    }
  }
}

// A batch: the probes of every query into one table sorted by key (a
// counting sort), so that the table is read once, in order, each bucket
// compared with every query probing it while it is in cache, instead of a
// random read a probe.
void ProbeBatch(const TablesView& view, std::span<const uint64_t> q_hi,
                std::span<const uint64_t> q_lo, std::vector<Cand>* cands) {
  thread_local std::vector<uint32_t> start;      // 2^b + 2 counters, then offsets into order
  thread_local std::vector<uint32_t> order;      // query numbers by probed key
  thread_local std::vector<uint64_t> bucket_qw;  // a bucket's queries' half words
  thread_local std::vector<BucketHit> hits;
  const size_t nq = q_lo.size();
  const size_t buckets = size_t{1} << view.dir_bits;
  const uint64_t key_mask = buckets - 1;
  start.resize(buckets + 2);
  for (uint32_t g = 0; g < view.masks.size() && g < view.tables.size(); ++g) {
    const TableMask& m = view.masks[g];
    if (m.radius > 3) continue;  // not a probe layout (IsProbeLayout)
    const TableView& t = view.tables[g];
    const int half = MaskHalf(m);
    const int shift = MaskShift(m);
    const uint64_t key_filter = KeyFilter(m, view.dir_bits);
    const BucketQueriesScan scan = ChooseBucketScan(key_filter != 0);
    const std::span<const uint64_t> q_half = half == 0 ? q_lo : q_hi;
    const std::vector<uint32_t>& flips = Flips(view.dir_bits, static_cast<int>(m.radius));
    order.resize(nq * flips.size());
    std::fill(start.begin(), start.end(), 0);
    for (size_t j = 0; j < nq; ++j) {
      const auto key = static_cast<uint32_t>((q_half[j] >> shift) & key_mask);
      for (uint32_t f : flips) ++start[(key ^ f) + 2];
    }
    for (size_t i = 2; i < start.size(); ++i) start[i] += start[i - 1];
    for (size_t j = 0; j < nq; ++j) {
      const auto key = static_cast<uint32_t>((q_half[j] >> shift) & key_mask);
      for (uint32_t f : flips) order[start[(key ^ f) + 1]++] = static_cast<uint32_t>(j);
    }
    // Now key p's queries are order[start[p], start[p + 1]). The buckets
    // probed are read in address order but with gaps (at 1M rows and 14-bit
    // keys a batch of 128 queries probes ~57 % of them), which the
    // hardware's stream prefetch does not bridge: each probed bucket's
    // lines are prefetched kSortedAhead probed buckets ahead.
    size_t ahead = 0;
    const auto prefetch_next = [&] {
      while (ahead < buckets && start[ahead] == start[ahead + 1]) ++ahead;
      if (ahead >= buckets) return;
      uint32_t begin = 0, end = 0;
      if (Bucket(t, ahead, &begin, &end)) {
        const uint64_t* w = t.words.data() + begin;
        const size_t len = std::min<size_t>(end - begin, kSortedPrefetchWords);
        for (size_t x = 0; x < len; x += 8) __builtin_prefetch(w + x);
      }
      ++ahead;
    };
    for (size_t i = 0; i < kSortedAhead; ++i) prefetch_next();
    for (size_t p = 0; p < buckets; ++p) {
      if (start[p] == start[p + 1]) continue;
      prefetch_next();
      uint32_t begin = 0, end = 0;
      if (!Bucket(t, p, &begin, &end)) continue;
      const size_t len = end - begin;
      const uint32_t* queries = order.data() + start[p];
      const size_t nq_p = start[p + 1] - start[p];
      if (bucket_qw.size() < nq_p) bucket_qw.resize(nq_p);
      for (size_t x = 0; x < nq_p; ++x) bucket_qw[x] = q_half[queries[x]];
      if (hits.size() < len * nq_p) hits.resize(len * nq_p);
      const uint64_t* w = t.words.data() + begin;
      // Every query probing the bucket in one pass over its words.
      const size_t c = scan(w, len, bucket_qw.data(), nq_p, view.probe_threshold, key_filter,
                            static_cast<int>(m.radius), hits.data());
      for (size_t y = 0; y < c; ++y) {
        const BucketHit h = hits[y];
        cands->push_back(Cand{queries[h.query], begin + h.at,
                              static_cast<uint32_t>(std::popcount(w[h.at] ^ bucket_qw[h.query])),
                              static_cast<uint32_t>(half), g});
      }
    }
  }
}

}  // namespace

void QueryProbeTables(const TablesView& view, std::span<const uint64_t> q_hi,
                      std::span<const uint64_t> q_lo, int k, std::vector<ScanHit>* out,
                      ProbeOrder order) {
  if (view.n == 0 || q_lo.empty() || view.bits != 128 || view.dir_bits < 1 ||
      view.dir_bits > kMaxProbeKeyBits || view.probe_threshold < 0) {
    return;
  }
  thread_local std::vector<Cand> cands;
  const size_t nq = q_lo.size();
  const int radius = view.masks.empty() ? 0 : static_cast<int>(view.masks[0].radius);
  const bool sorted = order == ProbeOrder::kSorted ||
                      (order == ProbeOrder::kAuto && SortProbes(nq, view.n, view.dir_bits, radius));
  if (!sorted) {
    for (size_t j = 0; j < nq; ++j) {
      cands.clear();
      ProbeOne(view, 0, q_hi[j], q_lo[j], &cands);
      Resolve(view, &cands);
      Verify(view, q_hi.subspan(j, 1), q_lo.subspan(j, 1), k, cands, &out[j]);
    }
    return;
  }
  cands.clear();
  ProbeBatch(view, q_hi, q_lo, &cands);
  Resolve(view, &cands);
  Verify(view, q_hi, q_lo, k, cands, out);
}

int LevelDirBits(size_t n, int key_bits) {
  const double keys = static_cast<double>(n) / kLevelRowsPerKey;
  int b = kMinLevelDirBits;
  while (b < key_bits && std::ldexp(1.0, b) < keys) ++b;
  return std::min(b, key_bits);
}

ProbeTableIndex::ProbeTableIndex(std::span<const uint64_t> lo, std::span<const uint64_t> hi, int k,
                                 const ProbeTablesSpec& spec, int dir_bits)
    : spec_(spec), k_(k), lo_(lo.begin(), lo.end()), hi_(hi.begin(), hi.end()) {
  FillCosts(&spec_, lo_.size());
  spec_.recall_at_k = ProbeTablesRecall(spec_, k);
  spec_.recall_at_k_minus_4 = ProbeTablesRecall(spec_, std::max(k - 4, 0));
  tables_spec_ = ProbeTablesSpecFor(spec_, k);
  if (dir_bits <= 0 || dir_bits > spec_.key_bits) dir_bits = spec_.key_bits;
  tables_ = BuildProbeTables(tables_spec_.masks, dir_bits, lo_, hi_);
  view_.bits = 128;
  view_.dir_bits = dir_bits;
  view_.n = lo_.size();
  view_.lo = lo_;
  view_.hi = hi_;
  view_.masks = tables_spec_.masks;
  view_.probe_threshold = spec_.threshold;
  for (const OwnedTable& t : tables_) {
    TableView v;
    v.dir = t.dir;
    v.rows = t.rows;
    v.words = t.words;
    view_.tables.push_back(v);
  }
}

size_t ProbeTableIndex::TableBytes() const {
  size_t bytes = 0;
  for (const OwnedTable& t : tables_) {
    bytes += t.dir.size() * 4 + t.words.size() * 8 + t.rows.size() * 4;
  }
  return bytes;
}

void ProbeTableIndex::Search(uint64_t q_hi, uint64_t q_lo, std::vector<ScanHit>* out) const {
  QueryProbeTables(view_, std::span<const uint64_t>(&q_hi, 1), std::span<const uint64_t>(&q_lo, 1),
                   k_, out);
}

void ProbeTableIndex::SearchEach(std::span<const uint64_t> q_hi, std::span<const uint64_t> q_lo,
                                 std::vector<ScanHit>* out, ProbeOrder order) const {
  QueryProbeTables(view_, q_hi, q_lo, k_, out, order);
}

}  // namespace neardup::index_internal
