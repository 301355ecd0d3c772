// Copyright 2026 The neardup Authors.
//
// FileSearchCombiner (the searches of concurrent checks combined into
// batches, issue 26): threads searching one index file at once, with two
// values of k, each get exactly the rows of the exact scan (the oracle) for
// their own queries, in the order SearchFile gives them; and under that
// load the calls are combined (fewer batches than calls). The file holds
// the scan (128 bits, k = 28: the default method's choice) or exact tables
// (64 bits, k = 3). A batch whose search throws throws in each of its
// callers; a large call never waits behind a leader; a leader that is done
// hands its place to a queued caller; under load a leader gathers one more
// call, alone it never waits.

#include "index/search_combiner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "index/probe_tables.h"
#include "index/table_index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/planted_index_file.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using index_internal::ChooseTables;
using index_internal::FileSearchCombiner;
using index_internal::IndexFileV2;
using index_internal::IndexFileV2Meta;
using index_internal::IndexFileV2Rows;
using index_internal::MappedFile;
using index_internal::TableIndex;
using index_internal::TablesPolicy;
using index_internal::TablesSpec;
using testing::FlipBits;
using testing::OracleSearch;
using testing::RandomFingerprint;

// `rows` random 128-bit fingerprints, ids 0, 1, ...
std::vector<IndexEntry> RandomEntries(size_t rows, std::mt19937_64& rng) {
  std::vector<IndexEntry> entries;
  for (uint64_t i = 0; i < rows; ++i) entries.push_back(IndexEntry{i, RandomFingerprint(128, rng)});
  return entries;
}

// `entries` (all of `bits` bits, named "d<id>") written as a version 3 index
// file under `dir`, with the layout ChooseTables picks at k, and opened in
// place; nullptr (and a test failure) when either step fails.
std::unique_ptr<const IndexFileV2> WriteAndOpen(const std::vector<IndexEntry>& entries, int bits,
                                                int k, const std::string& dir) {
  std::vector<uint64_t> ids, lo, hi;
  std::vector<std::string> names;
  for (const IndexEntry& e : entries) {
    ids.push_back(e.id);
    lo.push_back(e.fingerprint.lo());
    if (bits == 128) hi.push_back(e.fingerprint.hi());
    names.push_back("d" + std::to_string(e.id));
  }
  std::vector<std::string_view> name_views(names.begin(), names.end());
  TablesPolicy policy;
  IndexFileV2Meta meta;
  meta.version = index_internal::kIndexVersion3;
  meta.spec = ChooseTables(entries.size(), bits, k, policy);
  meta.policy = policy;
  meta.rows = entries.size();
  const std::string path = dir + "/index.ndx";
  uint64_t checksum = 0;
  const Status written = index_internal::WriteIndexFileV2(
      path, meta, IndexFileV2Rows{ids, lo, hi, name_views}, 1, &checksum);
  if (!written.ok()) {
    ADD_FAILURE() << written.ToString();
    return nullptr;
  }
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) {
    ADD_FAILURE() << mapped.status().ToString();
    return nullptr;
  }
  auto opened = IndexFileV2::Open(*mapped, path);
  if (!opened.ok()) {
    ADD_FAILURE() << opened.status().ToString();
    return nullptr;
  }
  return std::move(*opened);
}

struct Case {
  int bits;
  int k;
};

class SearchCombinerTest : public ::testing::TestWithParam<Case> {};

TEST_P(SearchCombinerTest, ConcurrentCallersGetTheExactScansRows) {
  const Case c = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(c.bits + c.k));
  constexpr size_t kRows = 20000;
  std::vector<IndexEntry> entries;
  for (uint64_t i = 0; i < kRows; ++i) {
    const Fingerprint fp =
        i % 3 == 1 ? FlipBits(entries[i - 1].fingerprint, static_cast<int>(rng() % (c.k + 2)), rng)
                   : RandomFingerprint(c.bits, rng);
    entries.push_back(IndexEntry{i, fp});
  }
  const std::string dir = testing::MakeTempDir("search_combiner");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, c.bits, c.k, dir);
  ASSERT_NE(file, nullptr);

  // Queries near stored rows (0..k+1 bits away) and random ones; each
  // thread's calls hold 1 to 3 of them, at k or at k - 1.
  constexpr int kThreads = 8;
  constexpr int kCalls = 20;
  std::vector<std::vector<std::vector<Fingerprint>>> queries(kThreads);
  for (auto& calls : queries) {
    for (int i = 0; i < kCalls; ++i) {
      std::vector<Fingerprint> call;
      for (size_t j = 0, n = 1 + rng() % 3; j < n; ++j) {
        call.push_back(rng() % 5 == 0 ? RandomFingerprint(c.bits, rng)
                                      : FlipBits(entries[rng() % kRows].fingerprint,
                                                 static_cast<int>(rng() % (c.k + 2)), rng));
      }
      calls.push_back(call);
    }
  }
  FileSearchCombiner combiner(1);
  // The first leader waits (up to 10 s) until every thread has called:
  // the other threads' first calls are then searched as one batch.
  std::atomic<bool> first{true};
  combiner.SetOnLeadForTesting([&] {
    if (!first.exchange(false)) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (combiner.counts().calls < static_cast<uint64_t>(kThreads) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::vector<std::vector<std::vector<Neighbor>>>> got(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int i = 0; i < kCalls; ++i) {
        const int k = i % 2 == 0 ? c.k : c.k - 1;
        std::vector<std::vector<Neighbor>> out(queries[t][i].size());
        combiner.Search(*file, queries[t][i], k, &out);
        got[t].push_back(std::move(out));
      }
    });
  }
  for (auto& th : threads) th.join();

  size_t matches = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kCalls; ++i) {
      const int k = i % 2 == 0 ? c.k : c.k - 1;
      ASSERT_EQ(got[t][i].size(), queries[t][i].size());
      for (size_t j = 0; j < queries[t][i].size(); ++j) {
        // SearchFile's rows, in its order (the call alone).
        std::vector<Neighbor> alone;
        TableIndex::SearchFile(*file, nullptr, queries[t][i][j], k, &alone);
        EXPECT_EQ(got[t][i][j], alone) << "thread " << t << " call " << i << " query " << j;
        // The exact scan's rows (the file holds the scan or exact tables).
        std::vector<Neighbor> sorted = got[t][i][j];
        std::sort(sorted.begin(), sorted.end(), [](const Neighbor& a, const Neighbor& b) {
          return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
        });
        EXPECT_EQ(sorted, OracleSearch(entries, queries[t][i][j], k))
            << "thread " << t << " call " << i << " query " << j;
        matches += sorted.size();
      }
    }
  }
  EXPECT_GT(matches, static_cast<size_t>(kThreads * kCalls));
  // One leader at a time: the seven first calls that queued while the
  // first leader waited were searched as one batch (at least).
  const FileSearchCombiner::Counts counts = combiner.counts();
  EXPECT_EQ(counts.calls, static_cast<uint64_t>(kThreads * kCalls));
  EXPECT_LE(counts.batches, counts.calls - (kThreads - 2));
  std::filesystem::remove_all(dir);
}

// A batch whose search throws (out of memory, here from the test hook)
// throws in each of its callers, not only in the leader: none waits
// forever, and the next calls are searched as usual.
TEST(SearchCombinerFailureTest, AThrowingBatchThrowsInEachCallerAndTheNextCallsWork) {
  std::mt19937_64 rng(7);
  constexpr size_t kRows = 2000;
  const std::vector<IndexEntry> entries = RandomEntries(kRows, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_failure");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);

  constexpr int kThreads = 4;
  FileSearchCombiner combiner(1);
  // The first leader (its batch: its own call) waits until every thread
  // has called; the second batch, the three calls queued meanwhile, throws.
  std::atomic<int> leads{0};
  combiner.SetOnLeadForTesting([&] {
    const int lead = leads++;
    if (lead == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (combiner.counts().calls < static_cast<uint64_t>(kThreads) &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    } else if (lead == 1) {
      throw std::bad_alloc();
    }
  });
  const Fingerprint query = FlipBits(entries[5].fingerprint, 3, rng);
  std::atomic<int> threw{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::vector<std::vector<Neighbor>> out(1);
      try {
        combiner.Search(*file, std::span<const Fingerprint>(&query, 1), 28, &out);
      } catch (const std::bad_alloc&) {
        ++threw;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(combiner.counts().batches, 2u);
  EXPECT_EQ(threw.load(), kThreads - 1);
  // The combiner goes on: a later call gets the oracle's rows.
  std::vector<std::vector<Neighbor>> out(1);
  combiner.Search(*file, std::span<const Fingerprint>(&query, 1), 28, &out);
  std::sort(out[0].begin(), out[0].end(), [](const Neighbor& a, const Neighbor& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
  });
  EXPECT_EQ(out[0], OracleSearch(entries, query, 28));
  EXPECT_FALSE(out[0].empty());
  std::filesystem::remove_all(dir);
}

// A call of kSearchAloneQueries queries or more is searched at once, even
// while a leader holds the combiner: it never waits for other calls.
TEST(SearchCombinerLargeCallTest, ALargeCallIsNotQueuedBehindALeader) {
  std::mt19937_64 rng(11);
  constexpr size_t kRows = 3000;
  const std::vector<IndexEntry> entries = RandomEntries(kRows, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_large");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);

  FileSearchCombiner combiner(1);
  // The leader of the small call below stays in its batch until the large
  // call is done (or 10 s: the large call waited for it).
  std::atomic<bool> large_done{false}, released_by_timeout{false};
  combiner.SetOnLeadForTesting([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!large_done.load()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        released_by_timeout = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const Fingerprint small_query = FlipBits(entries[1].fingerprint, 4, rng);
  std::thread small([&] {
    std::vector<std::vector<Neighbor>> out(1);
    combiner.Search(*file, std::span<const Fingerprint>(&small_query, 1), 28, &out);
  });
  while (combiner.counts().batches == 0) std::this_thread::yield();  // the leader holds it
  std::vector<Fingerprint> queries;
  for (size_t i = 0; i < index_internal::kSearchAloneQueries; ++i) {
    queries.push_back(FlipBits(entries[rng() % kRows].fingerprint, static_cast<int>(i % 29), rng));
  }
  std::vector<std::vector<Neighbor>> out(queries.size());
  combiner.Search(*file, queries, 28, &out);
  large_done = true;
  small.join();
  EXPECT_FALSE(released_by_timeout.load());
  for (size_t q = 0; q < queries.size(); ++q) {
    std::sort(out[q].begin(), out[q].end(), [](const Neighbor& a, const Neighbor& b) {
      return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
    });
    EXPECT_EQ(out[q], OracleSearch(entries, queries[q], 28)) << "query " << q;
  }
  EXPECT_EQ(combiner.counts().calls, 2u);
  std::filesystem::remove_all(dir);
}

// Two leaders at once (max_leaders 2), each held until four more calls
// are queued: each leader wakes its own caller alone, and a leader that is
// done hands its place to the first queued caller, which searches every
// queued call as one batch (three batches in all). Every caller gets the
// oracle's rows.
TEST(SearchCombinerHandOffTest, ALeaderThatIsDoneHandsItsPlaceToAQueuedCaller) {
  std::mt19937_64 rng(13);
  constexpr size_t kRows = 2000;
  const std::vector<IndexEntry> entries = RandomEntries(kRows, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_hand_off");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);

  constexpr int kThreads = 6;
  FileSearchCombiner combiner(2);
  std::atomic<int> leads{0}, held{0};
  combiner.SetOnLeadForTesting([&] {
    if (leads++ >= 2) return;
    ++held;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((held.load() < 2 || combiner.counts().calls < static_cast<uint64_t>(kThreads)) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<Fingerprint> queries;
  for (int t = 0; t < kThreads; ++t) {
    queries.push_back(FlipBits(entries[rng() % kRows].fingerprint, 3 + 4 * t, rng));
  }
  std::vector<std::vector<std::vector<Neighbor>>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      got[t].resize(1);
      combiner.Search(*file, std::span<const Fingerprint>(&queries[t], 1), 28, &got[t]);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(held.load(), 2);  // both first leaders searched at once
  const FileSearchCombiner::Counts counts = combiner.counts();
  EXPECT_EQ(counts.calls, static_cast<uint64_t>(kThreads));
  EXPECT_EQ(counts.batches, 3u);
  for (int t = 0; t < kThreads; ++t) {
    std::sort(got[t][0].begin(), got[t][0].end(), [](const Neighbor& a, const Neighbor& b) {
      return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
    });
    EXPECT_EQ(got[t][0], OracleSearch(entries, queries[t], 28)) << "caller " << t;
    EXPECT_FALSE(got[t][0].empty()) << "caller " << t;
  }
  std::filesystem::remove_all(dir);
}

// Under load (a call queued while the last batch ran) a new leader waits,
// within the gather window, for one more call than the last batch held: the
// call that comes 50 ms later joins its batch (two batches for three calls,
// where at once would be three). A caller alone never waits: one thread's
// calls one after the other take no window.
TEST(SearchCombinerGatherTest, ALeaderUnderLoadWaitsForOneMoreCallAndAloneNever) {
  std::mt19937_64 rng(17);
  constexpr size_t kRows = 2000;
  const std::vector<IndexEntry> entries = RandomEntries(kRows, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_gather");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);

  std::vector<Fingerprint> queries;
  for (int t = 0; t < 3; ++t) queries.push_back(FlipBits(entries[7 * t].fingerprint, 5, rng));
  const auto search = [&](FileSearchCombiner& combiner, int t,
                          std::vector<std::vector<Neighbor>>* out) {
    out->assign(1, {});
    combiner.Search(*file, std::span<const Fingerprint>(&queries[t], 1), 28, out);
  };
  {
    // Alone: ten calls in a row, each at once (a window of 10 s each
    // would take 100 s).
    FileSearchCombiner combiner(1);
    combiner.SetGatherWindowForTesting(std::chrono::seconds(10));
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::vector<Neighbor>> out;
    for (int i = 0; i < 10; ++i) search(combiner, i % 3, &out);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_EQ(combiner.counts().batches, 10u);
  }
  FileSearchCombiner combiner(1);
  combiner.SetGatherWindowForTesting(std::chrono::seconds(10));
  // The first leader holds its batch until the second call is queued.
  std::atomic<bool> first{true};
  combiner.SetOnLeadForTesting([&] {
    if (!first.exchange(false)) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (combiner.counts().calls < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::vector<std::vector<Neighbor>>> got(3);
  std::thread a([&] { search(combiner, 0, &got[0]); });
  while (combiner.counts().batches == 0) std::this_thread::yield();
  std::thread b([&] { search(combiner, 1, &got[1]); });
  a.join();  // the second call was queued meanwhile: its leader gathers
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto start = std::chrono::steady_clock::now();
  std::thread c([&] { search(combiner, 2, &got[2]); });
  b.join();
  c.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(combiner.counts().calls, 3u);
  EXPECT_EQ(combiner.counts().batches, 2u);
  for (int t = 0; t < 3; ++t) {
    std::sort(got[t][0].begin(), got[t][0].end(), [](const Neighbor& x, const Neighbor& y) {
      return x.distance != y.distance ? x.distance < y.distance : x.id < y.id;
    });
    EXPECT_EQ(got[t][0], OracleSearch(entries, queries[t], 28)) << "call " << t;
  }
  std::filesystem::remove_all(dir);
}

// Three leaders at once, eight threads calling back to back with a gather
// window: offered leads, requests taken by another leader while offered,
// and gathering leaders all happen; every call still gets its own rows
// (SearchFile's, the call alone) and none waits forever.
TEST(SearchCombinerHandOffTest, ManyLeadersUnderLoadAnswerEveryCall) {
  std::mt19937_64 rng(19);
  constexpr size_t kRows = 2000;
  const std::vector<IndexEntry> entries = RandomEntries(kRows, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_many");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);

  constexpr int kThreads = 8;
  constexpr int kCalls = 60;
  std::vector<Fingerprint> queries;
  for (int i = 0; i < kThreads * kCalls; ++i) {
    queries.push_back(
        FlipBits(entries[rng() % kRows].fingerprint, static_cast<int>(rng() % 30), rng));
  }
  FileSearchCombiner combiner(3);
  combiner.SetGatherWindowForTesting(std::chrono::microseconds(200));
  std::vector<std::vector<Neighbor>> got(queries.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const size_t q = static_cast<size_t>(t * kCalls + i);
        std::vector<std::vector<Neighbor>> out(1);
        combiner.Search(*file, std::span<const Fingerprint>(&queries[q], 1), 28, &out);
        got[q] = std::move(out[0]);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (size_t q = 0; q < queries.size(); ++q) {
    std::vector<Neighbor> alone;
    TableIndex::SearchFile(*file, nullptr, queries[q], 28, &alone);
    ASSERT_EQ(got[q], alone) << "call " << q;
  }
  EXPECT_EQ(combiner.counts().calls, queries.size());
  std::filesystem::remove_all(dir);
}

// Search appends to each caller's rows: what a caller's rows held before
// its call stays first, whether its call was searched alone or in a
// combined batch (one leader, eight callers back to back, gathering).
TEST(SearchCombinerHandOffTest, CombinedCallsAppendToTheCallersRows) {
  std::mt19937_64 rng(23);
  constexpr size_t kRows = 2000;
  const std::vector<IndexEntry> entries = RandomEntries(kRows, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_append");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);

  constexpr int kThreads = 8;
  constexpr int kCalls = 40;
  std::vector<Fingerprint> queries;
  for (int i = 0; i < kThreads * kCalls * 2; ++i) {
    queries.push_back(
        FlipBits(entries[rng() % kRows].fingerprint, static_cast<int>(rng() % 30), rng));
  }
  FileSearchCombiner combiner(1);
  combiner.SetGatherWindowForTesting(std::chrono::microseconds(100));
  // The first leader holds on until every thread has called (at most 10 s),
  // so that the next batch combines the others' calls.
  std::atomic<bool> first{true};
  combiner.SetOnLeadForTesting([&] {
    if (!first.exchange(false)) return;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (combiner.counts().calls < kThreads && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const Neighbor before{kRows + 7, 99};  // no row's id
  std::vector<std::vector<Neighbor>> got(queries.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const size_t q = static_cast<size_t>(2 * (t * kCalls + i));
        std::vector<std::vector<Neighbor>> out(2, std::vector<Neighbor>{before});
        combiner.Search(*file, std::span<const Fingerprint>(&queries[q], 2), 28, &out);
        got[q] = std::move(out[0]);
        got[q + 1] = std::move(out[1]);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (size_t q = 0; q < queries.size(); ++q) {
    std::vector<Neighbor> want{before};
    TableIndex::SearchFile(*file, nullptr, queries[q], 28, &want);
    ASSERT_EQ(got[q], want) << "query " << q;
  }
  EXPECT_LT(combiner.counts().batches, combiner.counts().calls);
  std::filesystem::remove_all(dir);
}

// On an index file of probe tables (the default method's layout at 1M),
// calls of 256 queries (a `neardup serve` request of 256 fingerprints) are
// combined: the sorted probe path costs less a query the larger the batch.
// A leader held until every call is queued: its own call is one batch, the
// three queued meanwhile another, and each caller gets, query by query, the
// rows of SearchFile alone, which are the exact scan's that the tables
// find (ProbeFinds). Only a call of the pipeline's whole chunk is searched
// alone; on a scan's file, one of kSearchAloneQueries.
TEST(SearchCombinerProbeTest, LargeCallsOnProbeTablesAreCombined) {
  const TablesSpec spec = ChooseTables(1000000, 128, 28, TablesPolicy{});
  ASSERT_EQ(spec.kind, index_internal::TablesKind::kProbe);
  constexpr int kThreads = 4;
  constexpr size_t kQueriesACall = 256;
  const testing::PlantedRows d =
      testing::MakePlantedRows(3000, kThreads * kQueriesACall, {0, 5, 14, 27, 28, 29}, 31);
  const std::string dir = testing::MakeTempDir("search_combiner_probe");
  const auto file = testing::WritePlantedIndexFile(d, spec, dir + "/probe.ndx");
  ASSERT_EQ(file->meta().spec.kind, index_internal::TablesKind::kProbe);
  EXPECT_EQ(index_internal::AloneQueries(*file), TableIndex::BatchChunk(spec));
  EXPECT_GT(index_internal::AloneQueries(*file), kQueriesACall);
  {
    std::mt19937_64 rng(3);
    const std::unique_ptr<const IndexFileV2> scan =
        WriteAndOpen(RandomEntries(2000, rng), 128, 28, dir);
    ASSERT_NE(scan, nullptr);
    EXPECT_NE(scan->meta().spec.kind, index_internal::TablesKind::kProbe);
    EXPECT_EQ(index_internal::AloneQueries(*scan), index_internal::kSearchAloneQueries);
  }

  FileSearchCombiner combiner(1);
  std::atomic<bool> first{true};
  combiner.SetOnLeadForTesting([&] {
    if (!first.exchange(false)) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (combiner.counts().calls < static_cast<uint64_t>(kThreads) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::vector<std::vector<Neighbor>>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      got[t].resize(kQueriesACall);
      combiner.Search(*file, std::span(d.queries).subspan(t * kQueriesACall, kQueriesACall), 28,
                      &got[t]);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(combiner.counts().calls, static_cast<uint64_t>(kThreads));
  EXPECT_EQ(combiner.counts().batches, 2u);

  std::unordered_map<uint64_t, Fingerprint> by_id;
  for (const IndexEntry& e : d.entries) by_id.emplace(e.id, e.fingerprint);
  size_t found = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (size_t j = 0; j < kQueriesACall; ++j) {
      const Fingerprint& q = d.queries[t * kQueriesACall + j];
      std::vector<Neighbor> alone;
      TableIndex::SearchFile(*file, nullptr, q, 28, &alone);
      EXPECT_EQ(got[t][j], alone) << "thread " << t << " query " << j;
      std::vector<Neighbor> want;
      for (const Neighbor& n : OracleSearch(d.entries, q, 28)) {
        const Fingerprint& x = by_id.at(n.id);
        if (index_internal::ProbeFinds(spec, x.hi() ^ q.hi(), x.lo() ^ q.lo())) want.push_back(n);
      }
      std::vector<Neighbor> sorted = got[t][j];
      std::sort(sorted.begin(), sorted.end(), [](const Neighbor& a, const Neighbor& b) {
        return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
      });
      EXPECT_EQ(sorted, want) << "thread " << t << " query " << j;
      found += sorted.size();
    }
  }
  // The planted neighbours at 0 and 5 bits are always found.
  EXPECT_GE(found, 2 * d.queries.size());
  std::filesystem::remove_all(dir);
}

// The delta's search (SetDeltaSearch) runs once a batch for the callers
// that ask for it (delta_out), with their queries alone: each gets, query
// by query, the delta's rows for its own queries (here an in-memory index
// of its own, against SearchDelta one query at a time) and the mark the
// search set; a caller that does not ask gets no delta rows.
TEST(SearchCombinerDeltaTest, TheDeltaIsSearchedOnceABatchForTheCallersThatAsk) {
  std::mt19937_64 rng(17);
  const std::vector<IndexEntry> entries = RandomEntries(2000, rng);
  const std::string dir = testing::MakeTempDir("search_combiner_delta");
  const std::unique_ptr<const IndexFileV2> file = WriteAndOpen(entries, 128, 28, dir);
  ASSERT_NE(file, nullptr);
  // The delta: other rows, some near the file's.
  auto delta = TableIndex::Create(128, 28, TablesPolicy{}, 3000);
  ASSERT_TRUE(delta.ok());
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (uint64_t i = 0; i < 3000; ++i) {
    ids.push_back(10000 + i);
    fps.push_back(i % 2 == 0 ? FlipBits(entries[i % entries.size()].fingerprint,
                                        static_cast<int>(i % 31), rng)
                             : RandomFingerprint(128, rng));
  }
  ASSERT_TRUE((*delta)->AddBatch(ids, fps).ok());

  FileSearchCombiner combiner(1);
  std::atomic<int> delta_calls{0};
  std::atomic<size_t> delta_queries{0};
  combiner.SetDeltaSearch([&](std::span<const Fingerprint> queries, int k,
                              std::vector<std::vector<Neighbor>>* out,
                              index_internal::DeltaMark* mark) {
    ++delta_calls;
    delta_queries += queries.size();
    (*delta)->SearchDeltaBatchChunked(queries, k, out);
    mark->epoch = 7;
    mark->end = (*delta)->delta_size();
  });
  constexpr int kThreads = 4;
  std::atomic<bool> first{true};
  combiner.SetOnLeadForTesting([&] {
    if (!first.exchange(false)) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (combiner.counts().calls < static_cast<uint64_t>(kThreads) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  // Three queries a caller, near the file's rows and the delta's; caller 2
  // asks for the file alone.
  std::vector<std::vector<Fingerprint>> queries(kThreads);
  for (auto& q : queries) {
    for (int j = 0; j < 3; ++j) {
      q.push_back(
          FlipBits(j == 0 ? entries[rng() % entries.size()].fingerprint : fps[rng() % fps.size()],
                   static_cast<int>(rng() % 20), rng));
    }
  }
  std::vector<std::vector<std::vector<Neighbor>>> got(kThreads), got_delta(kThreads);
  std::vector<index_internal::DeltaMark> marks(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      got[t].resize(3);
      got_delta[t].resize(3);
      if (t == 2) {
        combiner.Search(*file, queries[t], 28, &got[t]);
      } else {
        combiner.Search(*file, queries[t], 28, &got[t], &got_delta[t], &marks[t]);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(combiner.counts().batches, 2u);
  EXPECT_EQ(delta_calls.load(), 2);  // the first leader's own call, then the three queued
  EXPECT_EQ(delta_queries.load(), 3u * (kThreads - 1));
  size_t found = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (size_t j = 0; j < 3; ++j) {
      std::vector<Neighbor> alone;
      TableIndex::SearchFile(*file, nullptr, queries[t][j], 28, &alone);
      EXPECT_EQ(got[t][j], alone) << "thread " << t << " query " << j;
      std::vector<Neighbor> want;
      if (t != 2) (*delta)->SearchDelta(queries[t][j], 28, &want);
      std::vector<Neighbor> have = got_delta[t][j];
      const auto by_id = [](const Neighbor& a, const Neighbor& b) { return a.id < b.id; };
      std::sort(want.begin(), want.end(), by_id);
      std::sort(have.begin(), have.end(), by_id);
      EXPECT_EQ(have, want) << "thread " << t << " query " << j;
      found += have.size();
    }
    if (t != 2) {
      EXPECT_EQ(marks[t].epoch, 7u);
      EXPECT_EQ(marks[t].end, 3000u);
    }
  }
  EXPECT_GE(found, 2u * (kThreads - 1));  // the queries near delta rows find them
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Kinds, SearchCombinerTest, ::testing::Values(Case{128, 28}, Case{64, 3}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::to_string(info.param.bits) + "bits_k" +
                                  std::to_string(info.param.k);
                         });

}  // namespace
}  // namespace neardup
