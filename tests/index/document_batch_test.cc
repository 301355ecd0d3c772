// Copyright 2026 The neardup Authors.
//
// The batch paths of DocumentIndex (issue 26): QueryBatch and Check of many
// documents probe the committed file's tables for the whole batch through one
// pipeline (TableIndex::SearchFileBatch). Each answer must equal the one-at-a-
// time call's (Query; Check one document per call, in order), including a
// document near an earlier one of the same batch, and never report a match
// the exact scan (the oracle) does not; with exact tables, equal the oracle.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "neardup/document_index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::FlipBits;
using testing::OracleSearch;
using testing::RandomFingerprint;

struct Case {
  const char* name;
  int bits;
  int max_k;
  bool exact;
};

class DocumentBatchTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("document_batch"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // An index at `path` of 1,500 documents (random, with planted neighbours
  // at 0..k + 1): 1,500 committed, 100 more in memory (the delta), two
  // removed (in memory).
  void Make(const std::string& path) {
    const Case c = GetParam();
    std::mt19937_64 rng(26);
    for (int i = 0; i < 1600; ++i) {
      ids_.push_back("d" + std::to_string(i));
      fps_.push_back(i > 0 && i % 4 == 0 ? FlipBits(fps_[rng() % fps_.size()],
                                                    static_cast<int>(rng() % (c.max_k + 2)), rng)
                                         : RandomFingerprint(c.bits, rng));
    }
    DocumentIndexHeader h;
    h.pipeline_json = "{}";
    h.tables.exact = c.exact;
    PermutedTableOptions o;
    o.bits = c.bits;
    o.max_k = c.max_k;
    o.build_threads = 1;
    const std::span<const std::string> committed(ids_.data(), 1500);
    auto index = DocumentIndex::Build(path, h, o, committed,
                                      std::span<const Fingerprint>(fps_.data(), 1500));
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_TRUE((*index)->Commit().ok());
    ASSERT_TRUE((*index)
                    ->AddBatch(std::span<const std::string>(ids_.data() + 1500, 100),
                               std::span<const Fingerprint>(fps_.data() + 1500, 100))
                    .ok());
    ASSERT_TRUE((*index)->Remove(std::vector<std::string>{"d3", "d1501"}, nullptr).ok());
    index_ = std::move(*index);
  }

  // Queries: near copies of indexed documents (0..k + 1 bits away) and
  // random ones.
  std::vector<Fingerprint> Queries(size_t n, uint64_t seed) const {
    const Case c = GetParam();
    std::mt19937_64 rng(seed);
    std::vector<Fingerprint> q;
    for (size_t i = 0; i < n; ++i) {
      q.push_back(i % 3 == 2 ? RandomFingerprint(c.bits, rng)
                             : FlipBits(fps_[rng() % fps_.size()],
                                        static_cast<int>(rng() % (c.max_k + 2)), rng));
    }
    return q;
  }

  std::string dir_;
  std::vector<std::string> ids_;
  std::vector<Fingerprint> fps_;
  std::unique_ptr<DocumentIndex> index_;
};

TEST_P(DocumentBatchTest, QueryBatchEqualsQueryAndTheExactScan) {
  const Case c = GetParam();
  Make(dir_ + "/i.idx");
  // The live entries, for the oracle (numeric id = position in ids_).
  std::vector<IndexEntry> live;
  for (size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] != "d3" && ids_[i] != "d1501") live.push_back(IndexEntry{i, fps_[i]});
  }
  const std::vector<Fingerprint> queries = Queries(700, 5);  // more than a 256 chunk
  for (const int k : {0, c.max_k / 2, c.max_k}) {
    std::vector<std::vector<DocumentMatch>> batch;
    ASSERT_TRUE(index_->QueryBatch(queries, k, &batch).ok());
    ASSERT_EQ(batch.size(), queries.size());
    size_t found = 0, truth = 0;
    for (size_t j = 0; j < queries.size(); ++j) {
      std::vector<DocumentMatch> one;
      ASSERT_TRUE(index_->Query(queries[j], k, &one).ok());
      ASSERT_EQ(batch[j], one) << "query " << j << " k " << k;
      const std::vector<Neighbor> oracle = OracleSearch(live, queries[j], k);
      std::vector<DocumentMatch> want;
      for (const Neighbor& n : oracle) want.push_back(DocumentMatch{ids_[n.id], n.distance});
      for (const DocumentMatch& m : one) {
        EXPECT_NE(std::find(want.begin(), want.end(), m), want.end())
            << "query " << j << ": " << m.id << " is not within " << k;
      }
      if (c.exact) {
        EXPECT_EQ(one.size(), want.size()) << "query " << j;
      }
      found += one.size();
      truth += want.size();
    }
    if (k == c.max_k) {
      EXPECT_GT(truth, queries.size() / 4);  // the planted neighbours
    }
    // Bands: the stated recall (0.99 at k) with room for the sample.
    EXPECT_GE(static_cast<double>(found), 0.95 * static_cast<double>(truth)) << "k " << k;
  }
  // The file is searched through the combiner (search_combiner.h): one
  // search a call; concurrent calls get Query's answers.
  const uint64_t calls = index_->Stats().file_search_calls;
  std::vector<std::vector<DocumentMatch>> two;
  ASSERT_TRUE(index_->QueryBatch(std::span(queries).first(2), c.max_k, &two).ok());
  EXPECT_EQ(index_->Stats().file_search_calls, calls + 1);
  std::vector<std::thread> threads;
  std::atomic<int> differ{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t j = static_cast<size_t>(t); j < 80; j += 4) {
        std::vector<std::vector<DocumentMatch>> got;
        std::vector<DocumentMatch> one;
        if (!index_->QueryBatch(std::span(queries).subspan(j, 1), c.max_k, &got).ok() ||
            !index_->Query(queries[j], c.max_k, &one).ok() || got.size() != 1 || got[0] != one) {
          ++differ;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(differ.load(), 0);
  EXPECT_EQ(index_->Stats().file_search_calls, calls + 81);
  // Errors for the whole batch.
  std::vector<std::vector<DocumentMatch>> none;
  EXPECT_TRUE(index_->QueryBatch(queries, c.max_k + 1, &none).IsInvalidArgument());
  std::vector<Fingerprint> bad = queries;
  std::mt19937_64 rng(1);
  bad[3] = RandomFingerprint(c.bits == 64 ? 128 : 64, rng);
  EXPECT_TRUE(index_->QueryBatch(bad, 0, &none).IsInvalidArgument());
  ASSERT_TRUE(index_->QueryBatch({}, 0, &none).ok());
  EXPECT_TRUE(none.empty());
}

// Check of a batch (query-or-add) equals checking its documents one call at
// a time on a copy of the same index: same matches, same adds, the same
// final index. The batch holds documents near earlier ones of the same batch
// (the semantics: each document sees those before it that were added).
TEST_P(DocumentBatchTest, CheckBatchEqualsOneAtATimeIncludingInBatchNeighbours) {
  const Case c = GetParam();
  Make(dir_ + "/a.idx");
  index_.reset();
  std::filesystem::create_directories(dir_ + "/b");
  for (const char* f : {"a.idx", "a.idx.ids", "a.idx.log"}) {
    if (std::filesystem::exists(dir_ + "/" + f)) {
      std::filesystem::copy_file(dir_ + "/" + f, dir_ + "/b/" + f);
    }
  }
  DocumentIndexOptions logged;
  logged.log = true;
  auto a = DocumentIndex::Open(dir_ + "/a.idx", DocumentIndex::Mode::kReadWrite, logged);
  auto b = DocumentIndex::Open(dir_ + "/b/a.idx", DocumentIndex::Mode::kReadWrite, logged);
  ASSERT_TRUE(a.ok() && b.ok());
  std::mt19937_64 rng(9);
  std::vector<std::string> ids;
  std::vector<Fingerprint> fps;
  for (int i = 0; i < 400; ++i) {
    ids.push_back("new" + std::to_string(i));
    if (i % 5 == 1) {
      // Near the document just before it in this batch.
      fps.push_back(FlipBits(fps.back(), static_cast<int>(rng() % (c.max_k / 2 + 1)), rng));
    } else if (i % 5 == 2) {
      fps.push_back(
          FlipBits(fps_[rng() % fps_.size()], static_cast<int>(rng() % (c.max_k + 1)), rng));
    } else {
      fps.push_back(RandomFingerprint(c.bits, rng));
    }
  }
  CheckOptions options;  // kAddIfNew, k = max_k
  std::vector<CheckResult> batch;
  ASSERT_TRUE((*a)->Check(ids, fps, options, &batch).ok());
  ASSERT_EQ(batch.size(), ids.size());
  size_t in_batch = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<CheckResult> one;
    ASSERT_TRUE((*b)->Check(std::span<const std::string>(&ids[i], 1),
                            std::span<const Fingerprint>(&fps[i], 1), options, &one)
                    .ok());
    EXPECT_EQ(batch[i].matches, one[0].matches) << ids[i];
    EXPECT_EQ(batch[i].added, one[0].added) << ids[i];
    if (i % 5 == 1 && batch[i - 1].added) {
      // Its predecessor in the batch was added, so it is found.
      bool found = false;
      for (const DocumentMatch& m : batch[i].matches) found |= m.id == ids[i - 1];
      EXPECT_TRUE(found) << ids[i] << " does not see " << ids[i - 1];
      EXPECT_FALSE(batch[i].added);
      in_batch += found;
    }
  }
  EXPECT_GT(in_batch, 50u);
  EXPECT_EQ((*a)->size(), (*b)->size());
  // A query-only Check equals QueryBatch.
  CheckOptions query_only;
  query_only.policy = CheckPolicy::kQueryOnly;
  std::vector<CheckResult> checked;
  ASSERT_TRUE((*a)->Check(ids, fps, query_only, &checked).ok());
  std::vector<std::vector<DocumentMatch>> queried;
  ASSERT_TRUE((*a)->QueryBatch(fps, c.max_k, &queried).ok());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(checked[i].matches, queried[i]) << ids[i];
}

INSTANTIATE_TEST_SUITE_P(All, DocumentBatchTest,
                         ::testing::Values(Case{"f64_k3_exact", 64, 3, true},
                                           Case{"f128_k28_bands", 128, 28, false},
                                           Case{"f128_k8_exact", 128, 8, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace neardup
