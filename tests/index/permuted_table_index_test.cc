// Copyright 2026 The neardup Authors.
//
// PermutedTableIndex must return exactly what LinearScanIndex returns (which
// linear_scan_index_test.cc checks against the bit-by-bit oracle): no misses,
// no false hits, after bulk builds, inserts, removals, reinsertions, save +
// load and compaction.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <random>
#include <tuple>

#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::FlipBits;
using testing::RandomFingerprint;

// Applies every operation to the index under test and to a linear scan.
class Mirror {
 public:
  Mirror(std::unique_ptr<HammingIndex> fast, int bits) : fast_(std::move(fast)) {
    slow_ = std::move(*LinearScanIndex::Create(bits));
  }
  void Add(uint64_t id, const Fingerprint& fp) {
    ASSERT_TRUE(fast_->Add(id, fp).ok());
    ASSERT_TRUE(slow_->Add(id, fp).ok());
  }
  void AddBatch(const std::vector<uint64_t>& ids, const std::vector<Fingerprint>& fps) {
    ASSERT_TRUE(fast_->AddBatch(ids, fps).ok());
    ASSERT_TRUE(slow_->AddBatch(ids, fps).ok());
  }
  void RemoveBatch(const std::vector<uint64_t>& ids) {
    EXPECT_EQ(fast_->RemoveBatch(ids), slow_->RemoveBatch(ids));
  }
  void Remove(uint64_t id) { EXPECT_EQ(fast_->Remove(id), slow_->Remove(id)); }
  HammingIndex* fast() { return fast_.get(); }
  void set_fast(std::unique_ptr<HammingIndex> fast) { fast_ = std::move(fast); }

  // Compares single and batch queries for every k in `ks`, and the self-join at max(ks).
  void Check(const std::vector<Fingerprint>& queries, const std::vector<int>& ks,
             const std::string& stage) {
    SCOPED_TRACE(stage);
    ASSERT_EQ(fast_->size(), slow_->size());
    for (int k : ks) {
      SearchResults batch;
      ASSERT_TRUE(fast_->SearchBatch(queries, k, 2, &batch).ok());
      ASSERT_EQ(batch.num_queries(), queries.size());
      size_t hits = 0;
      for (size_t q = 0; q < queries.size(); ++q) {
        std::vector<Neighbor> want, got;
        ASSERT_TRUE(slow_->Search(queries[q], k, &want).ok());
        ASSERT_TRUE(fast_->Search(queries[q], k, &got).ok());
        ASSERT_EQ(got, want) << "query " << q << " k " << k;
        ASSERT_EQ(std::vector<Neighbor>(batch[q].begin(), batch[q].end()), want);
        hits += want.size();
      }
      // The planted data guarantees hits; an empty comparison proves nothing.
      EXPECT_GT(hits, 0u);
    }
    const int k = *std::max_element(ks.begin(), ks.end());
    std::vector<IdPair> want, got1, got2;
    ASSERT_TRUE(slow_->SelfJoin(k, 2, &want).ok());
    ASSERT_TRUE(fast_->SelfJoin(k, 1, &got1).ok());
    ASSERT_TRUE(fast_->SelfJoin(k, 3, &got2).ok());
    EXPECT_GT(want.size(), 0u);
    ASSERT_EQ(got1, want);
    ASSERT_EQ(got2, want);
  }

 private:
  std::unique_ptr<HammingIndex> fast_;
  std::unique_ptr<HammingIndex> slow_;
};

// (bits, max_k, blocks - max_k or 0 for the automatic layout)
class PermutedPropertyTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(PermutedPropertyTest, EqualsLinearScanThroughEveryOperation) {
  const auto [bits, k, extra_blocks] = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(bits * 1000 + k * 10 + extra_blocks));
  PermutedTableOptions opt;
  opt.bits = bits;
  opt.max_k = k;
  opt.blocks = extra_blocks == 0 ? 0 : k + extra_blocks;

  // Query centres, with planted neighbours at every distance 0..k+2.
  std::vector<Fingerprint> centres;
  for (int i = 0; i < 30; ++i) centres.push_back(RandomFingerprint(bits, rng));
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  uint64_t next_id = 1000;
  auto plant = [&](std::vector<uint64_t>* out_ids, std::vector<Fingerprint>* out_fps) {
    for (const Fingerprint& c : centres) {
      for (int d = 0; d <= k + 2; ++d) {
        for (int copy = 0; copy < 2; ++copy) {
          out_ids->push_back(next_id++);
          out_fps->push_back(FlipBits(c, d, rng));
        }
      }
    }
  };
  for (int i = 0; i < 1500; ++i) {
    ids.push_back(next_id++);
    fps.push_back(RandomFingerprint(bits, rng));
  }
  plant(&ids, &fps);
  std::vector<Fingerprint> queries = centres;
  for (int i = 0; i < 10; ++i) queries.push_back(FlipBits(fps[rng() % fps.size()], i % 3, rng));
  std::vector<int> ks = {k};
  if (k > 0) ks.push_back(k / 2);

  opt.expected_size = ids.size();
  auto created = PermutedTableIndex::Create(opt);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Mirror m(std::move(*created), bits);
  m.AddBatch(ids, fps);
  m.Check(queries, ks, "bulk build");

  // Inserts one at a time: buffer, segment flushes and merges.
  std::vector<uint64_t> more_ids;
  std::vector<Fingerprint> more_fps;
  plant(&more_ids, &more_fps);
  for (int i = 0; i < 2600; ++i) {
    more_ids.push_back(next_id++);
    more_fps.push_back(i % 4 == 0
                           ? FlipBits(fps[rng() % fps.size()], static_cast<int>(rng() % 3), rng)
                           : RandomFingerprint(bits, rng));
  }
  for (size_t i = 0; i < more_ids.size(); ++i) m.Add(more_ids[i], more_fps[i]);
  auto* pti = static_cast<PermutedTableIndex*>(m.fast());
  EXPECT_GT(pti->num_segments(), 1u);
  m.Check(queries, ks, "after inserts");

  // Removals, batch and single.
  std::vector<uint64_t> all_ids = ids;
  all_ids.insert(all_ids.end(), more_ids.begin(), more_ids.end());
  std::shuffle(all_ids.begin(), all_ids.end(), rng);
  const std::vector<uint64_t> removed(all_ids.begin(), all_ids.begin() + all_ids.size() / 3);
  m.RemoveBatch(removed);
  for (int i = 0; i < 20; ++i) m.Remove(all_ids[all_ids.size() / 3 + static_cast<size_t>(i)]);
  m.Remove(1);  // never added
  m.Check(queries, ks, "after removals");

  // Removed ids come back, near the query centres.
  for (size_t i = 0; i < 200; ++i) {
    m.Add(removed[i], FlipBits(centres[i % centres.size()], static_cast<int>(i % (k + 3)), rng));
  }
  // Enough fresh inserts to flush the buffer and merge into a segment that
  // carries tombstones.
  for (int i = 0; i < 2100; ++i) m.Add(next_id++, RandomFingerprint(bits, rng));
  m.Check(queries, ks, "after reinsertion");

  // Save + load: one segment, same answers.
  const std::string dir = testing::MakeTempDir("permuted_property");
  const std::string path = dir + "/index.ndx";
  ASSERT_TRUE(m.fast()->Save(path).ok());
  auto loaded = LoadIndex(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->type(), IndexType::kPermutedTable);
  EXPECT_EQ((*loaded)->max_k(), k);
  EXPECT_EQ(static_cast<PermutedTableIndex*>(loaded->get())->layout().blocks, pti->layout().blocks);
  m.set_fast(std::move(*loaded));
  m.Check(queries, ks, "after save and load");

  static_cast<PermutedTableIndex*>(m.fast())->Compact();
  EXPECT_EQ(static_cast<PermutedTableIndex*>(m.fast())->num_segments(), 1u);
  m.Check(queries, ks, "after compact");
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(All, PermutedPropertyTest,
                         ::testing::Combine(::testing::Values(64, 128),
                                            ::testing::Values(0, 1, 3, 6, 10),
                                            ::testing::Values(0, 1, 2)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int, int>>& info) {
                           return "f" + std::to_string(std::get<0>(info.param)) + "_k" +
                                  std::to_string(std::get<1>(info.param)) + "_" +
                                  (std::get<2>(info.param) == 0
                                       ? std::string("auto")
                                       : "b" + std::to_string(std::get<1>(info.param) +
                                                              std::get<2>(info.param)));
                         });

// Many near-identical fingerprints (exact duplicates included) pile up in the
// same buckets.
class PermutedClusteredTest : public ::testing::TestWithParam<int> {};

TEST_P(PermutedClusteredTest, HeavyBuckets) {
  const int bits = GetParam();
  std::mt19937_64 rng(7);
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  std::vector<Fingerprint> queries;
  for (int c = 0; c < 20; ++c) {
    const Fingerprint centre = RandomFingerprint(bits, rng);
    queries.push_back(centre);
    for (int i = 0; i < 150; ++i) {
      ids.push_back(ids.size() * 3);
      fps.push_back(FlipBits(centre, i % 5 == 0 ? 0 : static_cast<int>(rng() % 4), rng));
    }
  }
  PermutedTableOptions opt;
  opt.bits = bits;
  opt.max_k = 3;
  opt.expected_size = ids.size();
  auto created = PermutedTableIndex::Create(opt);
  ASSERT_TRUE(created.ok());
  Mirror mm(std::move(*created), bits);
  mm.AddBatch(ids, fps);
  mm.Check(queries, {0, 1, 3}, "clustered");
}

INSTANTIATE_TEST_SUITE_P(Widths, PermutedClusteredTest, ::testing::Values(64, 128));

TEST(PermutedSelfJoinTest, TwentyThousandEqualsBruteForce) {
  std::mt19937_64 rng(20000);
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (uint64_t i = 0; i < 20000; ++i) {
    ids.push_back(i);
    fps.push_back(i % 4 == 3 ? FlipBits(fps[rng() % i], static_cast<int>(rng() % 5), rng)
                             : RandomFingerprint(64, rng));
  }
  PermutedTableOptions opt;
  opt.max_k = 3;
  auto index = PermutedTableIndex::Build(opt, ids, fps);
  ASSERT_TRUE(index.ok());
  auto linear = LinearScanIndex::Build(64, ids, fps);
  ASSERT_TRUE(linear.ok());
  std::vector<IdPair> want, got;
  ASSERT_TRUE((*linear)->SelfJoin(3, 2, &want).ok());
  ASSERT_TRUE((*index)->SelfJoin(3, 2, &got).ok());
  EXPECT_GT(want.size(), 3000u);
  EXPECT_EQ(got, want);
}

// SelfJoinStream: the same pairs as the linear scan's SelfJoin (sorted here),
// in pieces of at most kSelfJoinPiece, across several segments and the insert
// buffer, whatever the thread count. 600 copies of one fingerprint give
// 179,700 pairs (several pieces from one task).
TEST(PermutedSelfJoinTest, StreamGivesEveryPairOnceInBoundedPieces) {
  std::mt19937_64 rng(31);
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  const Fingerprint copy = RandomFingerprint(128, rng);
  for (uint64_t i = 0; i < 12000; ++i) {
    ids.push_back(i);
    fps.push_back(i < 600      ? copy
                  : i % 3 == 0 ? FlipBits(fps[rng() % i], static_cast<int>(rng() % 8), rng)
                               : RandomFingerprint(128, rng));
  }
  PermutedTableOptions opt;
  opt.bits = 128;
  opt.max_k = 6;
  opt.expected_size = 12000;
  auto index = PermutedTableIndex::Create(opt);
  ASSERT_TRUE(index.ok());
  // Three batches: segments that merge or not, and an insert buffer.
  for (auto [b, e] : {std::pair{0, 8000}, std::pair{8000, 11000}, std::pair{11000, 12000}}) {
    ASSERT_TRUE((*index)
                    ->AddBatch(std::span(ids).subspan(b, e - b), std::span(fps).subspan(b, e - b))
                    .ok());
  }
  const Fingerprint near = FlipBits(copy, 2, rng);
  ASSERT_TRUE((*index)->Add(12000, near).ok());
  ids.push_back(12000);
  fps.push_back(near);
  auto linear = LinearScanIndex::Build(128, ids, fps);
  ASSERT_TRUE(linear.ok());
  std::vector<IdPair> want;
  ASSERT_TRUE((*linear)->SelfJoin(6, 2, &want).ok());
  ASSERT_GT(want.size(), 180000u);
  for (int threads : {1, 2, 4}) {
    std::mutex mu;
    std::vector<IdPair> got;
    size_t pieces = 0;
    ASSERT_TRUE((*index)
                    ->SelfJoinStream(6, threads,
                                     [&](std::span<const IdPair> piece) {
                                       std::lock_guard<std::mutex> lock(mu);
                                       EXPECT_LE(piece.size(), PermutedTableIndex::kSelfJoinPiece);
                                       EXPECT_FALSE(piece.empty());
                                       ++pieces;
                                       got.insert(got.end(), piece.begin(), piece.end());
                                     })
                    .ok());
    std::sort(got.begin(), got.end(),
              [](const IdPair& x, const IdPair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
    EXPECT_EQ(got, want) << "threads " << threads;
    EXPECT_GE(pieces, 3u);
  }
  EXPECT_TRUE((*index)->SelfJoinStream(7, 1, [](std::span<const IdPair>) {}).IsInvalidArgument());
}

TEST(PermutedSelfJoinTest, Wide128K10EqualsBruteForce) {
  std::mt19937_64 rng(128);
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (uint64_t i = 0; i < 8000; ++i) {
    ids.push_back(i);
    fps.push_back(i % 4 == 3 ? FlipBits(fps[rng() % i], static_cast<int>(rng() % 14), rng)
                             : RandomFingerprint(128, rng));
  }
  PermutedTableOptions opt;
  opt.bits = 128;
  opt.max_k = 10;
  auto index = PermutedTableIndex::Build(opt, ids, fps);
  ASSERT_TRUE(index.ok());
  auto linear = LinearScanIndex::Build(128, ids, fps);
  ASSERT_TRUE(linear.ok());
  std::vector<IdPair> want, got;
  ASSERT_TRUE((*linear)->SelfJoin(10, 2, &want).ok());
  ASSERT_TRUE((*index)->SelfJoin(10, 2, &got).ok());
  EXPECT_GT(want.size(), 1000u);
  EXPECT_EQ(got, want);
}

TEST(PermutedLayoutTest, AutomaticLayouts) {
  // The classic 64-bit, k = 3 layout: 4 blocks of 16 bits, 4 tables, 40 bytes.
  const TableLayout l = PermutedTableIndex::ChooseLayout(64, 3, 1 << 20, 64);
  EXPECT_EQ(l.blocks, 4);
  EXPECT_EQ(l.tables, 4);
  EXPECT_EQ(l.min_key_bits, 16);
  EXPECT_EQ(l.bytes_per_fingerprint, 40u);
  // Same at 10M: a bigger layout would not fit the memory budget.
  EXPECT_EQ(PermutedTableIndex::ChooseLayout(64, 3, 10'000'000, 64).tables, 4);
  // k = 0: one table keyed on everything.
  EXPECT_EQ(PermutedTableIndex::ChooseLayout(64, 0, 1000, 64).tables, 1);
  // 128 bits, k = 10: only b = 11 fits; it is chosen even over budget.
  const TableLayout w = PermutedTableIndex::ChooseLayout(128, 10, 1 << 20, 64);
  EXPECT_EQ(w.blocks, 11);
  EXPECT_EQ(w.tables, 11);
  // A larger budget buys more, narrower-bucket tables for big N.
  const TableLayout big = PermutedTableIndex::ChooseLayout(64, 3, 100'000'000, 1000);
  EXPECT_GT(big.tables, 4);
}

TEST(PermutedOptionsTest, RejectsBadOptions) {
  PermutedTableOptions opt;
  opt.bits = 96;
  EXPECT_TRUE(PermutedTableIndex::Create(opt).status().IsInvalidArgument());
  opt.bits = 64;
  opt.max_k = 17;
  EXPECT_TRUE(PermutedTableIndex::Create(opt).status().IsInvalidArgument());
  opt.max_k = 3;
  opt.blocks = 3;
  EXPECT_TRUE(PermutedTableIndex::Create(opt).status().IsInvalidArgument());
  opt.bits = 128;
  opt.max_k = 32;
  opt.blocks = 64;  // C(64, 32) tables
  EXPECT_TRUE(PermutedTableIndex::Create(opt).status().IsInvalidArgument());
  opt.blocks = 0;
  auto index = PermutedTableIndex::Create(opt);
  ASSERT_TRUE(index.ok());
  std::vector<Neighbor> out;
  EXPECT_TRUE((*index)->Search(Fingerprint::From128(0, 0), 33, &out).IsInvalidArgument());
  EXPECT_TRUE((*index)->Search(Fingerprint::From64(0), 1, &out).IsInvalidArgument());
  std::vector<IdPair> pairs;
  EXPECT_TRUE((*index)->SelfJoin(33, 1, &pairs).IsInvalidArgument());
}

TEST(PermutedIdsTest, DuplicateIdsAndReinsertion) {
  PermutedTableOptions opt;
  auto index = PermutedTableIndex::Create(opt);
  ASSERT_TRUE(index.ok());
  HammingIndex& ix = **index;
  const Fingerprint a = Fingerprint::From64(0xffff0000ffff0000ULL);
  const Fingerprint b = Fingerprint::From64(0xffff0000ffff0001ULL);
  ASSERT_TRUE(ix.Add(5, a).ok());
  ASSERT_TRUE(ix.Add(5, b).ok());
  ASSERT_TRUE(ix.Add(6, b).ok());
  std::vector<Neighbor> got;
  ASSERT_TRUE(ix.Search(a, 1, &got).ok());
  EXPECT_EQ(got, (std::vector<Neighbor>{{5, 0}, {5, 1}, {6, 1}}));
  std::vector<IdPair> pairs;
  ASSERT_TRUE(ix.SelfJoin(1, 1, &pairs).ok());
  // Entries sharing id 5 form no pair with each other.
  EXPECT_EQ(pairs, (std::vector<IdPair>{{5, 6, 0}, {5, 6, 1}}));
  EXPECT_EQ(ix.Remove(5), 2u);
  ASSERT_TRUE(ix.Search(a, 1, &got).ok());
  EXPECT_EQ(got, (std::vector<Neighbor>{{6, 1}}));
  ASSERT_TRUE(ix.Add(5, a).ok());
  ASSERT_TRUE(ix.Search(a, 1, &got).ok());
  EXPECT_EQ(got, (std::vector<Neighbor>{{5, 0}, {6, 1}}));
  EXPECT_EQ(ix.size(), 2u);
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

// The largest supported k (bits / 4): 17 or 33 tables with 3- to 4-bit keys.
TEST(PermutedExtremeTest, MaxKEqualsLinearScan) {
  for (int bits : {64, 128}) {
    std::mt19937_64 rng(static_cast<uint64_t>(bits));
    const int k = bits / 4;
    std::vector<uint64_t> ids;
    std::vector<Fingerprint> fps;
    std::vector<Fingerprint> queries;
    for (int c = 0; c < 10; ++c) {
      queries.push_back(RandomFingerprint(bits, rng));
      for (int d = 0; d <= k + 2; d += 2) {
        ids.push_back(ids.size());
        fps.push_back(FlipBits(queries.back(), d, rng));
      }
    }
    for (int i = 0; i < 600; ++i) {
      ids.push_back(ids.size());
      fps.push_back(RandomFingerprint(bits, rng));
    }
    PermutedTableOptions opt;
    opt.bits = bits;
    opt.max_k = k;
    auto index = PermutedTableIndex::Build(opt, ids, fps);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ((*index)->layout().blocks, k + 1);
    auto linear = LinearScanIndex::Build(bits, ids, fps);
    ASSERT_TRUE(linear.ok());
    for (const Fingerprint& q : queries) {
      std::vector<Neighbor> want, got;
      ASSERT_TRUE((*linear)->Search(q, k, &want).ok());
      ASSERT_TRUE((*index)->Search(q, k, &got).ok());
      EXPECT_EQ(got, want);
      EXPECT_GE(want.size(), static_cast<size_t>(k / 2));
    }
    std::vector<IdPair> want, got;
    ASSERT_TRUE((*linear)->SelfJoin(k, 2, &want).ok());
    ASSERT_TRUE((*index)->SelfJoin(k, 2, &got).ok());
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace neardup
