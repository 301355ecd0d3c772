// Copyright 2026 The neardup Authors.
//
// The write-ahead log of a DocumentIndex: changes logged by one object are
// seen by the next Open (read-only or read-write) exactly as an in-memory
// oracle holds them; a torn tail is dropped at every cut; a corrupt middle is
// Corruption with its offset; a stale log (written for an older index file)
// is ignored; Commit folds the log in, by hand or by itself.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "neardup/document_index.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::ReadFile;
using testing::WriteFile;

using Oracle = std::map<std::string, Fingerprint>;

class DocumentLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("document_log");
    path_ = dir_ + "/i.idx";
    DocumentIndexHeader h;
    h.pipeline_json = R"({"method":"tfidf","bits":64})";
    PermutedTableOptions o;
    o.bits = 64;
    o.max_k = 3;
    o.build_threads = 1;
    std::mt19937_64 rng(1);
    std::vector<std::string> ids;
    std::vector<Fingerprint> fps;
    for (int i = 0; i < 100; ++i) {
      ids.push_back("base" + std::to_string(i));
      fps.push_back(Fingerprint::From64(rng()));
      oracle_[ids.back()] = fps.back();
    }
    auto index = DocumentIndex::Build(path_, h, o, ids, fps);
    ASSERT_TRUE(index.ok());
    ASSERT_TRUE((*index)->Commit().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static DocumentIndexOptions Logged() {
    DocumentIndexOptions o;
    o.log = true;
    return o;
  }

  // Every oracle document is found by its own fingerprint, nothing else is.
  static ::testing::AssertionResult Holds(const DocumentIndex& index, const Oracle& oracle) {
    if (index.size() != oracle.size()) {
      return ::testing::AssertionFailure()
             << index.size() << " documents, expected " << oracle.size();
    }
    std::vector<DocumentMatch> m;
    for (const auto& [id, fp] : oracle) {
      if (!index.Query(fp, 0, &m).ok() || m.size() != 1 || m[0].id != id) {
        return ::testing::AssertionFailure() << id << " not found";
      }
    }
    return ::testing::AssertionSuccess();
  }

  // Logs `n` rounds of changes (an add batch, a removal, a check) through a
  // logged writer, applying each to the oracle too; returns the log's size
  // after each round.
  std::vector<uint64_t> LogRounds(int n, uint64_t seed) {
    auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, Logged());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> sizes;
    for (int r = 0; r < n; ++r) {
      const std::vector<std::string> ids = {"r" + std::to_string(r) + "a",
                                            "r" + std::to_string(r) + "b"};
      const std::vector<Fingerprint> fps = {Fingerprint::From64(rng()), Fingerprint::From64(rng())};
      EXPECT_TRUE((*w)->AddBatch(ids, fps).ok());
      oracle_[ids[0]] = fps[0];
      oracle_[ids[1]] = fps[1];
      const std::vector<std::string> gone = {"base" + std::to_string(r)};
      EXPECT_EQ(*(*w)->Remove(gone, nullptr), 1u);
      oracle_.erase(gone[0]);
      const std::vector<std::string> cid = {"r" + std::to_string(r) + "c"};
      const std::vector<Fingerprint> cfp = {Fingerprint::From64(rng())};
      std::vector<CheckResult> out;
      EXPECT_TRUE((*w)->Check(cid, cfp, CheckOptions{}, &out).ok());
      if (out[0].added) oracle_[cid[0]] = cfp[0];
      sizes.push_back((*w)->Stats().log_bytes);
    }
    return sizes;
  }

  std::string dir_;
  std::string path_;
  Oracle oracle_;
};

TEST_F(DocumentLogTest, ReplayedOnOpenAndFoldedByCommit) {
  const std::string before = ReadFile(path_);
  const auto sizes = LogRounds(5, 2);
  EXPECT_EQ(ReadFile(path_), before);  // the index file was not rewritten
  ASSERT_TRUE(std::filesystem::exists(path_ + ".log"));
  EXPECT_EQ(std::filesystem::file_size(path_ + ".log"), sizes.back());
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Holds(**r, oracle_));
  EXPECT_EQ((*r)->Stats().log_records, 15u);

  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, Logged());
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(Holds(**w, oracle_));
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_FALSE(std::filesystem::exists(path_ + ".log"));
  w->reset();
  r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(Holds(**r, oracle_));
  EXPECT_EQ((*r)->Stats().log_bytes, 0u);
}

TEST_F(DocumentLogTest, TornTailIsDroppedAtEveryCut) {
  const Oracle start = oracle_;
  const auto sizes = LogRounds(1, 3);  // three records: add, remove, check
  const std::string log = ReadFile(path_ + ".log");
  ASSERT_EQ(log.size(), sizes.back());
  // Oracle states after 0..3 records, rebuilt from the log's own replay.
  for (size_t cut = 0; cut < log.size(); ++cut) {
    WriteFile(path_ + ".log", log.substr(0, cut));
    auto r = DocumentIndex::Open(path_);
    ASSERT_TRUE(r.ok()) << "cut at " << cut << ": " << r.status().ToString();
    EXPECT_LE((*r)->Stats().log_records, 2u) << cut;
  }
  // A read-write open cuts the torn tail, and later appends follow it.
  WriteFile(path_ + ".log", log.substr(0, log.size() - 3));
  {
    auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, Logged());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_LT(std::filesystem::file_size(path_ + ".log"), log.size() - 3);
    ASSERT_TRUE((*w)->Add("late", Fingerprint::From64(42)).ok());
  }
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)->Contains("late"));
  EXPECT_TRUE((*r)->Contains("r0a"));
  EXPECT_FALSE((*r)->Contains("base0"));
  EXPECT_EQ((*r)->Stats().log_records, 3u);
}

TEST_F(DocumentLogTest, CorruptMiddleIsCorruptionWithOffset) {
  LogRounds(2, 4);
  const std::string log = ReadFile(path_ + ".log");
  // Every byte of the first record flipped in turn: Corruption naming an
  // offset (never a silent drop, never a crash).
  const size_t first_end =
      32 + 16 + (static_cast<unsigned char>(log[32]) | static_cast<unsigned char>(log[33]) << 8);
  for (size_t i = 32; i < first_end; ++i) {
    std::string bad = log;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    WriteFile(path_ + ".log", bad);
    auto r = DocumentIndex::Open(path_);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find("i.idx.log: offset 32"), std::string::npos)
        << r.status().ToString();
  }
  // A bad header is Corruption too.
  std::string bad = log;
  bad[3] = 'X';
  WriteFile(path_ + ".log", bad);
  EXPECT_TRUE(DocumentIndex::Open(path_).status().IsCorruption());
}

// A bit flip in the last record cannot be told from a torn write on open
// (the batch is dropped, as a crash's would be), but it is not silent:
// Verify reports the dropped record with its offset (it said OK before).
TEST_F(DocumentLogTest, DamagedLastRecordIsReportedByVerify) {
  LogRounds(2, 6);  // six records
  const std::string log = ReadFile(path_ + ".log");
  {
    auto clean = DocumentIndex::Open(path_);
    ASSERT_TRUE(clean.ok()) << clean.status().ToString();
    EXPECT_TRUE((*clean)->Verify().ok()) << (*clean)->Verify().ToString();
  }
  // The last record's offset: records follow the 32-byte header, each a
  // 16-byte header (payload length first) and its payload.
  size_t last = 32;
  for (size_t pos = 32; pos < log.size();) {
    last = pos;
    pos +=
        16 + (static_cast<unsigned char>(log[pos]) | static_cast<unsigned char>(log[pos + 1]) << 8);
  }
  ASSERT_LT(last + 20, log.size());
  for (const size_t at : {last + 17, log.size() - 1}) {
    std::string bad = log;
    bad[at] = static_cast<char>(bad[at] ^ 0x04);
    WriteFile(path_ + ".log", bad);
    auto r = DocumentIndex::Open(path_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->Stats().log_records, 5u);
    const Status v = (*r)->Verify();
    EXPECT_TRUE(v.IsCorruption()) << "flip at " << at << ": " << v.ToString();
    EXPECT_NE(v.message().find("i.idx.log: offset " + std::to_string(last)), std::string::npos)
        << v.ToString();
    EXPECT_NE(v.message().find("checksum"), std::string::npos) << v.ToString();
  }
  // Cut short: reported too.
  WriteFile(path_ + ".log", log.substr(0, log.size() - 2));
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->Verify().IsCorruption());
}

TEST_F(DocumentLogTest, StaleLogIsIgnoredAndRemoved) {
  LogRounds(2, 5);
  const std::string log = ReadFile(path_ + ".log");
  {
    auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, Logged());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  // As if the commit had crashed before removing the log: it names the old
  // index file, whose changes the new one holds; replaying it would fail.
  WriteFile(path_ + ".log", log);
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Holds(**r, oracle_));
  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, Logged());
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(std::filesystem::exists(path_ + ".log"));
}

TEST_F(DocumentLogTest, CompactsByItselfPastTheFraction) {
  DocumentIndexOptions unsynced = Logged();
  unsynced.sync = false;                   // 30,000 fsyncs would take minutes
  unsynced.background_compaction = false;  // inline: the call that crosses the limit
  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, unsynced);
  ASSERT_TRUE(w.ok());
  const std::string before = ReadFile(path_);
  // 1 MiB of log at least: ~40 bytes per one-document record.
  std::mt19937_64 rng(6);
  bool compacted = false;
  for (int i = 0; i < 40000 && !compacted; ++i) {
    const std::string id = "bulk" + std::to_string(i);
    const Fingerprint fp = Fingerprint::From64(rng());
    ASSERT_TRUE((*w)->Add(id, fp).ok());
    oracle_[id] = fp;
    compacted = (*w)->Stats().log_bytes == 0;
  }
  ASSERT_TRUE(compacted);
  EXPECT_NE(ReadFile(path_), before);
  w->reset();
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(Holds(**r, oracle_));
}

// The compaction runs on its own thread: readers and writers go on while it
// writes the new file; the changes made meanwhile are carried into the new
// log. Every acknowledged change is found, in memory and after reopening.
TEST_F(DocumentLogTest, CompactsInTheBackground) {
  DocumentIndexOptions unsynced = Logged();
  unsynced.sync = false;
  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, unsynced);
  ASSERT_TRUE(w.ok());
  const std::string before = ReadFile(path_);
  std::atomic<bool> done{false};
  std::atomic<int> queries{0};
  // A reader queries known documents all along.
  std::thread reader([&] {
    std::vector<DocumentMatch> m;
    while (!done) {
      for (int i = 0; i < 10; ++i) {
        const std::string id = "base" + std::to_string(i);
        EXPECT_TRUE((*w)->Query(oracle_.at(id), 0, &m).ok());
        EXPECT_FALSE(m.empty());
      }
      ++queries;
    }
  });
  std::mt19937_64 rng(8);
  Oracle added;
  bool compacted = false;
  for (int i = 0; i < 60000 && !compacted; ++i) {
    const std::string id = "bulk" + std::to_string(i);
    const Fingerprint fp = Fingerprint::From64(rng());
    ASSERT_TRUE((*w)->Add(id, fp).ok());
    added[id] = fp;
    // Published: the log restarted (it holds only the changes made while the
    // new file was written).
    compacted = i > 1000 && (*w)->Stats().log_records < 1000;
  }
  for (int t = 0; t < 2000 && !compacted; ++t) {  // the last one may still run
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    compacted = (*w)->Stats().log_records < 1000;
  }
  done = true;
  reader.join();
  ASSERT_TRUE(compacted);
  EXPECT_GT(queries.load(), 0);
  EXPECT_NE(ReadFile(path_), before);
  for (const auto& [id, fp] : added) oracle_[id] = fp;
  EXPECT_TRUE(Holds(**w, oracle_));
  // A few more changes after the compaction, then reopen: all there.
  const Fingerprint after = Fingerprint::From64(rng());
  ASSERT_TRUE((*w)->Add("after", after).ok());
  oracle_["after"] = after;
  ASSERT_TRUE((*w)->Remove(std::vector<std::string>{"bulk3"}, nullptr).ok());
  oracle_.erase("bulk3");
  std::vector<DocumentMatch> m;
  ASSERT_TRUE((*w)->Query(Fingerprint::From64(0), 0, &m).ok());
  w->reset();
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)->Contains("after"));
  EXPECT_FALSE((*r)->Contains("bulk3"));
  EXPECT_TRUE(Holds(**r, oracle_));
}

}  // namespace
}  // namespace neardup
