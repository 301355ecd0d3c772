// Copyright 2026 The neardup Authors.
//
// The batch query paths of the mask tables (QueryTablesBatch;
// TableIndex::SearchBatch and SearchEach, SearchFileBatch, SearchDeltaBatch)
// against the exact scan (LinearScanIndex) and against the same queries one
// at a time: a file of each version (packed 3 and split 2) used in place,
// with a delta of levels and a tail on top and rows removed from both; exact
// tables, bands and the scan (no tables); 64 and 128 bits. A batch always
// answers exactly as its queries one at a time, whatever the kind.

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "index/table_index.h"
#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using index_internal::ChooseLookupTables;
using index_internal::ChooseTables;
using index_internal::IndexFileV2;
using index_internal::IndexFileV2Meta;
using index_internal::IndexFileV2Rows;
using index_internal::MappedFile;
using index_internal::TableIndex;
using index_internal::TablesKind;
using index_internal::TablesPolicy;
using testing::FlipBits;
using testing::RandomFingerprint;

// How the spec is chosen: exact tables (policy.exact), the cheapest lookup
// tables (ChooseLookupTables: bands at 128 bits, k = 28), or ChooseTables
// (the scan at these sizes).
enum class How { kExact, kLookup, kAuto };

struct Case {
  int bits;
  int k;
  How how;
  uint32_t version;
};

class TableBatchTest : public ::testing::TestWithParam<Case> {};

TEST_P(TableBatchTest, SearchBatchEqualsSearchAndTheExactScan) {
  const Case c = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(c.bits * 1000 + c.k * 10 + c.version));
  constexpr size_t kBase = 6000;
  // The base: random fingerprints, a third of them near copies of another.
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (uint64_t i = 0; i < kBase; ++i) {
    ids.push_back(i);
    fps.push_back(i % 3 == 1 ? FlipBits(fps[i - 1], static_cast<int>(rng() % (c.k + 2)), rng)
                             : RandomFingerprint(c.bits, rng));
  }
  TablesPolicy policy;
  policy.exact = c.how == How::kExact;
  IndexFileV2Meta meta;
  meta.version = c.version;
  meta.spec = c.how == How::kLookup ? ChooseLookupTables(kBase, c.bits, c.k, policy)
                                    : ChooseTables(kBase, c.bits, c.k, policy);
  const TablesKind kind = meta.spec.kind;
  if (c.how == How::kExact) {
    EXPECT_EQ(kind, TablesKind::kExact);
  }
  if (c.how == How::kLookup && c.k == 28) {
    EXPECT_EQ(kind, TablesKind::kBands);
  }
  // At a few thousand rows of 128 bits the scan costs less than any tables
  // (at 64 bits, k = 3 the exact tables' few probes are as cheap).
  if (c.how == How::kAuto && c.bits == 128) {
    EXPECT_EQ(kind, TablesKind::kScan);
  }
  const bool all_found = kind != TablesKind::kBands;
  meta.policy = policy;
  meta.rows = kBase;
  std::vector<uint64_t> lo, hi;
  std::vector<std::string> names;
  std::vector<std::string_view> name_views;
  for (uint64_t i = 0; i < kBase; ++i) {
    lo.push_back(fps[i].lo());
    if (c.bits == 128) hi.push_back(fps[i].hi());
    names.push_back("d" + std::to_string(i));
  }
  for (const auto& n : names) name_views.push_back(n);
  // A directory of this process's own: ctest runs the cases in parallel,
  // and a case that rewrote another's mapped file would kill it (SIGBUS).
  const std::string dir = testing::MakeTempDir("table_batch");
  const std::string path = dir + "/index.ndx";
  uint64_t checksum = 0;
  ASSERT_TRUE(index_internal::WriteIndexFileV2(path, meta, IndexFileV2Rows{ids, lo, hi, name_views},
                                               1, &checksum)
                  .ok());
  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  auto file = IndexFileV2::Open(*mapped, path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::shared_ptr<const IndexFileV2> shared(std::move(*file));
  ASSERT_EQ(shared->tables().packed, c.version == index_internal::kIndexVersion3);
  auto index = TableIndex::FromFile(shared);

  // A delta: batches that form levels, then a tail; removals from both.
  for (size_t batch : {size_t{2500}, size_t{1300}, size_t{37}}) {
    std::vector<uint64_t> more_ids;
    std::vector<Fingerprint> more;
    for (size_t i = 0; i < batch; ++i) {
      more_ids.push_back(ids.size());
      const Fingerprint fp = rng() % 2 == 0 ? FlipBits(fps[rng() % fps.size()],
                                                       static_cast<int>(rng() % (c.k + 2)), rng)
                                            : RandomFingerprint(c.bits, rng);
      ids.push_back(ids.size());
      fps.push_back(fp);
      more.push_back(fp);
    }
    ASSERT_TRUE(index->AddBatch(more_ids, more).ok());
  }
  std::vector<uint64_t> gone;
  for (uint64_t id = 0; id < ids.size(); id += 17) gone.push_back(id);
  EXPECT_EQ(index->RemoveBatch(gone), gone.size());

  std::vector<uint64_t> live_ids;
  std::vector<Fingerprint> live_fps;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] % 17 == 0) continue;
    live_ids.push_back(ids[i]);
    live_fps.push_back(fps[i]);
  }
  auto exact = LinearScanIndex::Build(c.bits, live_ids, live_fps);
  ASSERT_TRUE(exact.ok());

  // Queries: neighbours planted at every distance 0..k+1, and random ones.
  std::vector<Fingerprint> queries;
  for (int i = 0; i < 600; ++i) {
    queries.push_back(i % 7 == 6 ? RandomFingerprint(c.bits, rng)
                                 : FlipBits(fps[rng() % fps.size()], i % (c.k + 2), rng));
  }
  SearchResults batch, truth;
  ASSERT_TRUE(index->SearchBatch(queries, c.k, 2, &batch).ok());
  ASSERT_TRUE((*exact)->SearchBatch(queries, c.k, 1, &truth).ok());
  ASSERT_EQ(batch.num_queries(), queries.size());
  std::vector<std::vector<Neighbor>> each;
  ASSERT_TRUE(index->SearchEach(queries, c.k, &each).ok());
  ASSERT_EQ(each.size(), queries.size());
  size_t found = 0, wanted = 0;
  for (size_t q = 0; q < queries.size(); ++q) {
    std::vector<Neighbor> one;
    ASSERT_TRUE(index->Search(queries[q], c.k, &one).ok());
    const std::vector<Neighbor> got(batch[q].begin(), batch[q].end());
    const std::vector<Neighbor> want(truth[q].begin(), truth[q].end());
    // The batch paths answer as one query at a time, whatever the kind.
    EXPECT_EQ(got, one) << "query " << q;
    EXPECT_EQ(each[q], one) << "query " << q;
    // Search: never a false match; with exact tables or the scan, every
    // true one.
    for (const Neighbor& n : one) {
      EXPECT_NE(std::find(want.begin(), want.end(), n), want.end()) << "false match";
    }
    if (all_found) {
      EXPECT_EQ(one, want) << "query " << q;
    }
    found += one.size();
    wanted += want.size();
  }
  EXPECT_GT(wanted, queries.size() / 2);
  if (!all_found) {
    // The bands' guarantee is 0.99 at d = k; these queries are spread over
    // 0..k+1, mostly far closer.
    EXPECT_GE(static_cast<double>(found), 0.97 * static_cast<double>(wanted));
  }
  // The tables' batch paths equal SearchFile and SearchDelta query by
  // query.
  std::vector<std::vector<Neighbor>> file_batch(queries.size()), delta_batch(queries.size());
  TableIndex::SearchFileBatch(*shared, nullptr, queries, c.k, &file_batch);
  index->SearchDeltaBatch(queries, c.k, &delta_batch);
  for (size_t q = 0; q < queries.size(); ++q) {
    std::vector<Neighbor> one;
    TableIndex::SearchFile(*shared, nullptr, queries[q], c.k, &one);
    EXPECT_EQ(file_batch[q], one) << "query " << q;
    one.clear();
    index->SearchDelta(queries[q], c.k, &one);
    EXPECT_EQ(delta_batch[q], one) << "query " << q;
  }
  // An empty batch and a bad query.
  SearchResults none;
  ASSERT_TRUE(index->SearchBatch({}, c.k, 1, &none).ok());
  EXPECT_EQ(none.num_queries(), 0u);
  const std::vector<Fingerprint> bad = {RandomFingerprint(c.bits == 64 ? 128 : 64, rng)};
  EXPECT_FALSE(index->SearchBatch(bad, c.k, 1, &none).ok());
  EXPECT_FALSE(index->SearchBatch(queries, c.k + 1, 1, &none).ok());
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    All, TableBatchTest,
    ::testing::Values(Case{64, 3, How::kExact, index_internal::kIndexVersion3},
                      Case{64, 3, How::kExact, index_internal::kIndexVersion2},
                      Case{128, 8, How::kExact, index_internal::kIndexVersion3},
                      Case{128, 28, How::kLookup, index_internal::kIndexVersion3},
                      Case{128, 28, How::kLookup, index_internal::kIndexVersion2},
                      Case{128, 28, How::kAuto, index_internal::kIndexVersion3},
                      Case{128, 28, How::kAuto, index_internal::kIndexVersion2},
                      Case{64, 3, How::kAuto, index_internal::kIndexVersion3}),
    [](const ::testing::TestParamInfo<Case>& info) {
      const How h = info.param.how;
      return "f" + std::to_string(info.param.bits) + "_k" + std::to_string(info.param.k) +
             (h == How::kExact    ? "_exact"
              : h == How::kLookup ? "_lookup"
                                  : "_auto") +
             "_v" + std::to_string(info.param.version);
    });

}  // namespace
}  // namespace neardup
