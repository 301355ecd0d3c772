// Copyright 2026 The neardup Authors.
//
// The two-level filter (TablesKind::kFilter, index/mask_tables.h): its
// threshold and stated recall against a sampled hypergeometric; a version 3
// file of that kind against the exact scan (no false match, exactly the
// rows within k whose lo words are within t, single queries and batches
// alike, the delta as the file); and the measured recall at d = k within 4
// sigma of the stated guarantee (>= 0.99 at the default method).

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "index/table_index.h"
#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/planted_index_file.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using index_internal::ChooseFilter;
using index_internal::FilterCollision;
using index_internal::TableIndex;
using index_internal::TablesKind;
using index_internal::TablesPolicy;
using index_internal::TablesSpec;

constexpr int kK = 28;

int LoDistance(const Fingerprint& a, const Fingerprint& b) {
  return std::popcount(a.lo() ^ b.lo());
}

TEST(FilterTest, CollisionMatchesASampledHypergeometric) {
  // P(at most t of d random positions among 128 fall in the low 64),
  // sampled: within 4 sigma of the formula.
  std::mt19937_64 rng(5);
  std::vector<int> pos(128);
  for (int d : {24, 28}) {
    for (int t : {16, 20}) {
      constexpr int kSamples = 40000;
      int hits = 0;
      for (int s = 0; s < kSamples; ++s) {
        for (int j = 0; j < 128; ++j) pos[static_cast<size_t>(j)] = j;
        int lo = 0;
        for (int i = 0; i < d; ++i) {  // a partial Fisher-Yates draw
          const size_t j = static_cast<size_t>(i) + rng() % static_cast<size_t>(128 - i);
          std::swap(pos[static_cast<size_t>(i)], pos[j]);
          lo += pos[static_cast<size_t>(i)] < 64 ? 1 : 0;
        }
        hits += lo <= t ? 1 : 0;
      }
      const double p = FilterCollision(d, t);
      const double sigma = std::sqrt(std::max(p * (1 - p), 1e-9) / kSamples);
      EXPECT_NEAR(static_cast<double>(hits) / kSamples, p, 4 * sigma + 1e-4) << d << " " << t;
    }
  }
  EXPECT_DOUBLE_EQ(FilterCollision(10, 10), 1.0);
  EXPECT_LT(FilterCollision(28, 27), 1.0);
}

TEST(FilterTest, ThresholdIsTheSmallestMeetingTheRecallTargets) {
  const TablesSpec s = ChooseFilter(1000000, kK, 0.99);
  ASSERT_EQ(s.kind, TablesKind::kFilter);
  EXPECT_TRUE(s.masks.empty());
  EXPECT_EQ(s.bytes_per_fingerprint, 0.0);
  EXPECT_DOUBLE_EQ(s.recall_at_k, FilterCollision(kK, s.radius));
  EXPECT_GE(s.recall_at_k, 0.99);
  EXPECT_GE(s.recall_at_k_minus_4, 0.9999);
  // One less misses a target (the bands' targets: at k, and at k - 4).
  EXPECT_TRUE(FilterCollision(kK, s.radius - 1) < 0.99 ||
              FilterCollision(kK - 4, s.radius - 1) < 0.9999);
  EXPECT_LT(s.estimated_query_us, index_internal::ScanQueryUs(1000000, 128));
  // No threshold below k gives recall 1: the exact scan.
  EXPECT_EQ(ChooseFilter(1000000, kK, 1.0).kind, TablesKind::kScan);
  // Small k: every t < k misses the targets, or the filter would be exact.
  EXPECT_EQ(ChooseFilter(1000000, 3, 0.99).kind, TablesKind::kScan);
}

// Rows: random, plus for each query neighbours planted at k (many: the
// recall at d = k is measured on them), k - 4 and a few other distances.
using Data = testing::PlantedRows;

Data MakeData(size_t random_rows, size_t queries, int at_k_per_query, uint64_t seed) {
  std::vector<int> planted(static_cast<size_t>(at_k_per_query), kK);
  planted.insert(planted.end(), {0, 5, kK - 4, kK - 1, kK + 1});
  return testing::MakePlantedRows(random_rows, queries, planted, seed);
}

TEST(FilterTest, FileAnswersTheFilteredExactScanInBatchesAndAlone) {
  const Data d = MakeData(10000, 200, 2, 11);
  const TablesSpec spec = ChooseFilter(d.ids.size(), kK, 0.99);
  ASSERT_EQ(spec.kind, TablesKind::kFilter);
  const std::string dir = testing::MakeTempDir("filter_file");
  const auto file = testing::WritePlantedIndexFile(d, spec, dir + "/filter.ndx");
  ASSERT_TRUE(file->Verify().ok()) << file->Verify().ToString();
  EXPECT_EQ(file->meta().spec.kind, TablesKind::kFilter);
  EXPECT_EQ(file->meta().spec.radius, spec.radius);
  EXPECT_FALSE(file->tables().packed);  // lo words together, in a version 3 file
  EXPECT_EQ(file->meta().version, index_internal::kIndexVersion3);
  const auto index = TableIndex::FromFile(file);
  const std::vector<IndexEntry> entries = index->Entries();
  ASSERT_EQ(entries.size(), d.entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].id, d.entries[i].id);
    EXPECT_EQ(entries[i].fingerprint, d.entries[i].fingerprint);
  }

  std::vector<std::vector<Neighbor>> each;
  ASSERT_TRUE(index->SearchEach(d.queries, kK, &each).ok());
  SearchResults batch;
  ASSERT_TRUE(index->SearchBatch(d.queries, kK, 2, &batch).ok());
  for (size_t q = 0; q < d.queries.size(); ++q) {
    // Exactly the exact scan's rows whose lo words are within t.
    std::vector<Neighbor> want;
    for (const Neighbor& n : testing::OracleSearch(d.entries, d.queries[q], kK)) {
      if (LoDistance(d.fps[(n.id - 1) / 2], d.queries[q]) <= spec.radius) want.push_back(n);
    }
    EXPECT_EQ(each[q], want) << "query " << q;
    EXPECT_EQ(std::vector<Neighbor>(batch[q].begin(), batch[q].end()), want);
    std::vector<Neighbor> one;
    ASSERT_TRUE(index->Search(d.queries[q], kK, &one).ok());
    EXPECT_EQ(one, want) << "query " << q;
    // At k at most t: the filter is exact.
    std::vector<Neighbor> near;
    ASSERT_TRUE(index->Search(d.queries[q], spec.radius, &near).ok());
    EXPECT_EQ(near, testing::OracleSearch(d.entries, d.queries[q], spec.radius));
  }
}

TEST(FilterTest, DeltaAnswersAsTheFileWrittenFromIt) {
  const Data d = MakeData(3000, 100, 2, 12);
  const TablesSpec spec = ChooseFilter(1000000, kK, 0.99);
  // An empty file of the filter chosen for 1M entries, its delta scanned.
  ASSERT_EQ(spec.kind, TablesKind::kFilter);
  const std::string dir = testing::MakeTempDir("filter_delta");
  const auto mem =
      TableIndex::FromFile(testing::WritePlantedIndexFile(Data{}, spec, dir + "/empty.ndx"));
  ASSERT_EQ(mem->spec().kind, TablesKind::kFilter);
  ASSERT_TRUE(mem->AddBatch(d.ids, d.fps).ok());
  const auto file = testing::WritePlantedIndexFile(d, mem->spec(), dir + "/delta.ndx");
  const auto from_file = TableIndex::FromFile(file);
  std::vector<std::vector<Neighbor>> a, b;
  ASSERT_TRUE(mem->SearchEach(d.queries, kK, &a).ok());
  ASSERT_TRUE(from_file->SearchEach(d.queries, kK, &b).ok());
  EXPECT_EQ(a, b);
  for (size_t q = 0; q < d.queries.size(); ++q) {
    std::vector<Neighbor> one;
    ASSERT_TRUE(mem->Search(d.queries[q], kK, &one).ok());
    EXPECT_EQ(one, a[q]);
  }
}

TEST(FilterTest, MeasuredRecallAtKIsTheStatedGuarantee) {
  // 4,000 pairs at d = k (2,000 queries, 2 each): the share found is within
  // 4 sigma of the stated recall, and >= 0.99 less that margin.
  const Data d = MakeData(5000, 2000, 2, 13);
  const TablesSpec spec = ChooseFilter(1000000, kK, 0.99);
  ASSERT_EQ(spec.kind, TablesKind::kFilter);
  const std::string dir = testing::MakeTempDir("filter_recall");
  const auto index =
      TableIndex::FromFile(testing::WritePlantedIndexFile(d, spec, dir + "/recall.ndx"));
  std::vector<std::vector<Neighbor>> got;
  ASSERT_TRUE(index->SearchEach(d.queries, kK, &got).ok());
  SearchResults truth;
  auto scan = LinearScanIndex::Build(128, d.ids, d.fps);
  ASSERT_TRUE(scan.ok());
  ASSERT_TRUE((*scan)->SearchBatch(d.queries, kK, 1, &truth).ok());
  size_t at_k = 0, found_at_k = 0, all = 0, found = 0;
  for (size_t q = 0; q < d.queries.size(); ++q) {
    for (const Neighbor& n : truth[q]) {
      const bool hit = std::find(got[q].begin(), got[q].end(), n) != got[q].end();
      ++all;
      found += hit ? 1 : 0;
      if (n.distance == kK) {
        ++at_k;
        found_at_k += hit ? 1 : 0;
      }
    }
    for (const Neighbor& n : got[q]) {  // no false match
      EXPECT_NE(std::find(truth[q].begin(), truth[q].end(), n), truth[q].end());
    }
  }
  ASSERT_GE(at_k, 4000u);
  const double p = spec.recall_at_k;
  const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(at_k));
  const double measured = static_cast<double>(found_at_k) / static_cast<double>(at_k);
  EXPECT_NEAR(measured, p, 4 * sigma) << found_at_k << " of " << at_k;
  EXPECT_GE(measured, 0.99 - 4 * sigma);
  EXPECT_GE(static_cast<double>(found) / static_cast<double>(all), measured);
}

}  // namespace
}  // namespace neardup
