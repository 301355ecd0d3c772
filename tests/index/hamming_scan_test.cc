// Copyright 2026 The neardup Authors.
//
// The exact scan's kernels (scalar, AVX2, AVX-512: each the CPU runs) against
// a bit-by-bit oracle, on random rows with neighbours planted at every
// distance 0..k+1, for every layout, tile size and unaligned range; and
// LinearScanIndex under each kernel against the oracle of hamming_oracle.h.

#include "index/hamming_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"

namespace neardup::index_internal {
namespace {

// Restores the kernel chosen at start-up when a test ends.
class ScanIsaGuard {
 public:
  explicit ScanIsaGuard(ScanIsa isa) : ok_(SetScanIsa(isa)) {}
  ~ScanIsaGuard() { SetScanIsa(BestScanIsa()); }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

int BitDistance(uint64_t a_hi, uint64_t a_lo, uint64_t b_hi, uint64_t b_lo, int bits) {
  int d = 0;
  for (int j = 0; j < bits; ++j) {
    const uint64_t a = j < 64 ? a_lo >> j : a_hi >> (j - 64);
    const uint64_t b = j < 64 ? b_lo >> j : b_hi >> (j - 64);
    d += static_cast<int>((a ^ b) & 1);
  }
  return d;
}

// Flips `d` distinct bits of (hi, lo) among the low `bits`.
void Plant(int bits, int d, std::mt19937_64& rng, uint64_t* hi, uint64_t* lo) {
  std::vector<int> pos(static_cast<size_t>(bits));
  for (int j = 0; j < bits; ++j) pos[static_cast<size_t>(j)] = j;
  std::shuffle(pos.begin(), pos.end(), rng);
  for (int i = 0; i < d; ++i) {
    const int j = pos[static_cast<size_t>(i)];
    if (j < 64) {
      *lo ^= uint64_t{1} << j;
    } else {
      *hi ^= uint64_t{1} << (j - 64);
    }
  }
}

struct Rows {
  int bits;
  std::vector<uint64_t> lo, hi;  // split
  std::vector<uint64_t> pairs;   // interleaved (lo, hi)
};

// n random rows; for each query, neighbours at distances 0..k+1 planted at
// distinct random rows.
Rows MakeRows(int bits, size_t n, const std::vector<uint64_t>& q_hi,
              const std::vector<uint64_t>& q_lo, int k, std::mt19937_64& rng) {
  Rows r{bits, {}, {}, {}};
  for (size_t i = 0; i < n; ++i) {
    r.lo.push_back(rng());
    r.hi.push_back(bits == 128 ? rng() : 0);
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  size_t next = 0;
  for (size_t q = 0; q < q_lo.size(); ++q) {
    for (int d = 0; d <= k + 1 && d <= bits; ++d) {
      const size_t at = order[next++ % n];
      uint64_t hi = q_hi[q], lo = q_lo[q];
      Plant(bits, d, rng, &hi, &lo);
      r.lo[at] = lo;
      r.hi[at] = hi;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    r.pairs.push_back(r.lo[i]);
    r.pairs.push_back(r.hi[i]);
  }
  return r;
}

std::vector<ScanHit> Oracle(const Rows& r, size_t begin, size_t end, uint64_t q_hi, uint64_t q_lo,
                            int k) {
  std::vector<ScanHit> out;
  for (size_t i = begin; i < end; ++i) {
    const int d = BitDistance(r.hi[i], r.lo[i], q_hi, q_lo, r.bits);
    if (d <= k) out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(d)});
  }
  return out;
}

class HammingScanTest : public ::testing::TestWithParam<ScanIsa> {};

TEST_P(HammingScanTest, EveryLayoutTileAndRangeMatchesTheOracle) {
  ScanIsaGuard guard(GetParam());
  if (!guard.ok()) GTEST_SKIP() << "this CPU has no " << ScanIsaName(GetParam());
  ASSERT_EQ(ActiveScanIsa(), GetParam());
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) + 7);
  for (int bits : {64, 128}) {
    for (int k : {0, 3, 28}) {
      if (k > bits) continue;
      const size_t nq = 9;  // two full register tiles and one of one
      std::vector<uint64_t> q_hi(nq), q_lo(nq);
      for (size_t q = 0; q < nq; ++q) {
        q_lo[q] = rng();
        q_hi[q] = bits == 128 ? rng() : 0;
      }
      const size_t n = 1237;  // not a multiple of 4 or 8
      const Rows r = MakeRows(bits, n, q_hi, q_lo, k, rng);
      std::vector<RowsView> views;
      RowsView split{bits, n, r.lo.data(), bits == 128 ? r.hi.data() : nullptr, 1};
      views.push_back(split);
      if (bits == 128) views.push_back(RowsView{bits, n, r.pairs.data(), r.pairs.data() + 1, 2});
      for (const RowsView& v : views) {
        for (auto [begin, end] : std::vector<std::pair<size_t, size_t>>{
                 {0, n}, {3, n - 5}, {1, 2}, {5, 12}, {100, 100}, {n - 7, n}}) {
          for (size_t tile : {size_t{1}, size_t{3}, size_t{4}, nq}) {
            std::vector<std::vector<ScanHit>> got(tile);
            ScanRows(v, begin, end, std::span<const uint64_t>(q_hi).first(tile),
                     std::span<const uint64_t>(q_lo).first(tile), k, got.data());
            for (size_t q = 0; q < tile; ++q) {
              EXPECT_EQ(got[q], Oracle(r, begin, end, q_hi[q], q_lo[q], k))
                  << ScanIsaName(GetParam()) << " bits " << bits << " k " << k << " stride "
                  << v.stride << " rows [" << begin << ", " << end << ") tile " << tile << " query "
                  << q;
            }
          }
        }
        // Every planted distance 0..k is found by the tiled scan.
        std::vector<std::vector<ScanHit>> tiled(nq);
        ScanRowsTiled(v, q_hi, q_lo, k, tiled.data());
        for (size_t q = 0; q < nq; ++q) {
          const auto want = Oracle(r, 0, n, q_hi[q], q_lo[q], k);
          EXPECT_EQ(tiled[q], want);
          std::vector<bool> seen(static_cast<size_t>(k) + 1, false);
          for (const ScanHit& h : want) seen[h.distance] = true;
          for (int d = 0; d <= k; ++d) {
            if (!seen[static_cast<size_t>(d)]) ADD_FAILURE() << "no neighbour at " << d;
          }
        }
      }
    }
  }
}

// The two-level filter (RowsView::lo_filter): exactly the rows within k
// whose lo words are within t, for every kernel, both 128-bit layouts,
// ranges across a block of kScanBlockRows and tiles of 1 to 9 queries.
TEST_P(HammingScanTest, LoFilterMatchesTheOracle) {
  ScanIsaGuard guard(GetParam());
  if (!guard.ok()) GTEST_SKIP() << "this CPU has no " << ScanIsaName(GetParam());
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) + 91);
  constexpr int kK = 28;
  const size_t nq = 9;
  std::vector<uint64_t> q_hi(nq), q_lo(nq);
  for (size_t q = 0; q < nq; ++q) {
    q_lo[q] = rng();
    q_hi[q] = rng();
  }
  const size_t n = kScanBlockRows + 811;
  Rows r = MakeRows(128, n, q_hi, q_lo, kK, rng);
  // More neighbours at k and below, whose lo halves differ by more or less.
  for (size_t i = 0; i < 600; ++i) {
    const size_t q = i % nq, at = (i * 7919) % n;
    uint64_t hi = q_hi[q], lo = q_lo[q];
    Plant(128, kK - static_cast<int>(i % 6), rng, &hi, &lo);
    r.lo[at] = lo;
    r.hi[at] = hi;
    r.pairs[2 * at] = lo;
    r.pairs[2 * at + 1] = hi;
  }
  for (int t : {0, 12, 19, 20, 27, 28}) {
    RowsView split{128, n, r.lo.data(), r.hi.data(), 1, t};
    RowsView pairs{128, n, r.pairs.data(), r.pairs.data() + 1, 2, t};
    for (const RowsView& v : {split, pairs}) {
      for (auto [begin, end] : std::vector<std::pair<size_t, size_t>>{
               {0, n}, {3, n - 5}, {kScanBlockRows - 9, kScanBlockRows + 40}, {5, 12}}) {
        for (size_t tile : {size_t{1}, size_t{4}, nq}) {
          std::vector<std::vector<ScanHit>> got(tile);
          ScanRows(v, begin, end, std::span<const uint64_t>(q_hi).first(tile),
                   std::span<const uint64_t>(q_lo).first(tile), kK, got.data());
          for (size_t q = 0; q < tile; ++q) {
            std::vector<ScanHit> want;
            for (const ScanHit& h : Oracle(r, begin, end, q_hi[q], q_lo[q], kK)) {
              if (BitDistance(0, r.lo[h.row], 0, q_lo[q], 64) <= t) want.push_back(h);
            }
            EXPECT_EQ(got[q], want)
                << ScanIsaName(GetParam()) << " t " << t << " stride " << v.stride << " rows ["
                << begin << ", " << end << ") tile " << tile << " query " << q;
          }
        }
      }
      std::vector<std::vector<ScanHit>> tiled(nq);
      ScanRowsTiled(v, q_hi, q_lo, kK, tiled.data());
      for (size_t q = 0; q < nq; ++q) {
        size_t want = 0;
        for (const ScanHit& h : Oracle(r, 0, n, q_hi[q], q_lo[q], kK)) {
          want += BitDistance(0, r.lo[h.row], 0, q_lo[q], 64) <= t ? 1 : 0;
        }
        EXPECT_EQ(tiled[q].size(), want) << "t " << t << " stride " << v.stride;
      }
    }
  }
}

TEST_P(HammingScanTest, LinearScanIndexMatchesTheOracle) {
  ScanIsaGuard guard(GetParam());
  if (!guard.ok()) GTEST_SKIP() << "this CPU has no " << ScanIsaName(GetParam());
  for (int bits : {64, 128}) {
    std::mt19937_64 rng(static_cast<uint64_t>(bits) * 31 + static_cast<uint64_t>(GetParam()));
    std::vector<IndexEntry> entries;
    for (uint64_t i = 0; i < 2000; ++i) {
      entries.push_back({i * 3 + 1, i % 5 == 4
                                        ? testing::FlipBits(entries[i - 1].fingerprint,
                                                            static_cast<int>(rng() % 30), rng)
                                        : testing::RandomFingerprint(bits, rng)});
    }
    std::vector<uint64_t> ids;
    std::vector<Fingerprint> fps;
    for (const auto& e : entries) {
      ids.push_back(e.id);
      fps.push_back(e.fingerprint);
    }
    auto index = LinearScanIndex::Build(bits, ids, fps);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    std::vector<Fingerprint> queries;
    for (int i = 0; i < 70; ++i) {
      queries.push_back(
          testing::FlipBits(entries[rng() % entries.size()].fingerprint, i % 30, rng));
    }
    for (int k : {0, 3, 28}) {
      SearchResults batch;
      ASSERT_TRUE((*index)->SearchBatch(queries, k, 1, &batch).ok());
      ASSERT_EQ(batch.num_queries(), queries.size());
      for (size_t q = 0; q < queries.size(); ++q) {
        const auto want = testing::OracleSearch(entries, queries[q], k);
        std::vector<Neighbor> got;
        ASSERT_TRUE((*index)->Search(queries[q], k, &got).ok());
        EXPECT_EQ(got, want) << "bits " << bits << " k " << k << " query " << q;
        EXPECT_EQ(std::vector<Neighbor>(batch[q].begin(), batch[q].end()), want);
      }
    }
  }
}

TEST(HammingScan, DispatchIsOverridableAndRestored) {
  EXPECT_TRUE(ScanIsaSupported(ScanIsa::kScalar));
  EXPECT_TRUE(ScanIsaSupported(BestScanIsa()));
  EXPECT_EQ(ActiveScanIsa(), BestScanIsa());
  {
    ScanIsaGuard guard(ScanIsa::kScalar);
    EXPECT_EQ(ActiveScanIsa(), ScanIsa::kScalar);
  }
  EXPECT_EQ(ActiveScanIsa(), BestScanIsa());
  if (!ScanIsaSupported(ScanIsa::kAvx512)) {
    EXPECT_FALSE(SetScanIsa(ScanIsa::kAvx512));
    EXPECT_EQ(ActiveScanIsa(), BestScanIsa());
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, HammingScanTest,
                         ::testing::Values(ScanIsa::kScalar, ScanIsa::kAvx2, ScanIsa::kAvx512),
                         [](const ::testing::TestParamInfo<ScanIsa>& info) {
                           return std::string(ScanIsaName(info.param));
                         });

}  // namespace
}  // namespace neardup::index_internal
