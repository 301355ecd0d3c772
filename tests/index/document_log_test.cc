// Copyright 2026 The neardup Authors.
//
// The write-ahead log of a DocumentIndex: changes logged by one object are
// seen by the next Open (read-only or read-write) exactly as an in-memory
// oracle holds them; a torn tail is dropped at every cut; a corrupt middle is
// Corruption with its offset; a stale log (written for an older index file)
// is ignored; Commit folds the log in, by hand or by itself.

#include "index/document_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
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

// A background compaction publishes without holding the writer's lock for
// the heavy part: while it stands between the written file and the lock (the
// new file mapped, its tables and names set up, the changes made meanwhile
// carried over it), a check that adds and a query from another thread
// answer; under the lock it carries only the changes made since (counted by
// the hook, not timed). Everything acknowledged is there after publication
// and after reopening.
TEST_F(DocumentLogTest, PublishesWithoutHoldingTheLockForTheHeavyPart) {
  DocumentIndexOptions o = Logged();
  o.sync = false;
  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, o);
  ASSERT_TRUE(w.ok());
  DocumentIndex& index = **w;
  std::mt19937_64 rng(11);
  // Documents a helper thread checks (and adds) at a stage of the
  // compaction; `index` must answer it while the compaction waits.
  std::mutex oracle_mu;
  const auto check_from_another_thread = [&](const std::string& prefix, int n) {
    std::vector<std::string> ids;
    std::vector<Fingerprint> fps;
    for (int i = 0; i < n; ++i) {
      ids.push_back(prefix + std::to_string(i));
      std::lock_guard l(oracle_mu);
      fps.push_back(Fingerprint::From64(rng()));
    }
    auto done = std::async(std::launch::async, [&] {
      std::vector<CheckResult> out;
      if (!index.Check(ids, fps, CheckOptions{}, &out).ok()) return false;
      std::vector<DocumentMatch> m;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (!out[i].added) return false;
        if (!index.Query(fps[i], 0, &m).ok() || m.size() != 1 || m[0].id != ids[i]) return false;
      }
      return true;
    });
    // Not a timing: a lock held here would make the check wait forever.
    if (done.wait_for(std::chrono::minutes(5)) != std::future_status::ready) {
      std::fprintf(stderr, "the check did not answer while the compaction stood at %s\n",
                   prefix.c_str());
      std::abort();
    }
    EXPECT_TRUE(done.get()) << prefix;
    std::lock_guard l(oracle_mu);
    for (int i = 0; i < n; ++i) oracle_[ids[i]] = fps[i];
  };
  std::atomic<int> prepared{0};
  std::atomic<int> published{0};
  std::atomic<int> stop{0};     // the adds below stop ...
  std::atomic<int> stopped{0};  // ... and have stopped
  index_internal::CompactionProgress seen;
  index_internal::SetCompactionHookForTesting([&](const index_internal::CompactionProgress& p) {
    using Stage = index_internal::CompactionProgress::Stage;
    if (published.load() > 0) return;
    if (p.stage == Stage::kWritten) {
      stop = 1;
      stopped.wait(0);
      check_from_another_thread("written", 200);
    } else if (p.stage == Stage::kPrepared) {
      prepared = 1;
      check_from_another_thread("prepared", 5);
    } else {
      seen = p;
      published = 1;
      published.notify_all();
    }
  });
  // Adds, one a record, until the log passes its share and the compaction
  // has written the new file; then no more.
  for (int i = 0; i < 200000 && stop.load() == 0; ++i) {
    const std::string id = "bulk" + std::to_string(i);
    Fingerprint fp;
    {
      std::lock_guard l(oracle_mu);
      fp = Fingerprint::From64(rng());
    }
    ASSERT_TRUE(index.Add(id, fp).ok());
    std::lock_guard l(oracle_mu);
    oracle_[id] = fp;
  }
  stopped = 1;
  stopped.notify_all();
  ASSERT_EQ(stop.load(), 1);
  published.wait(0);
  EXPECT_EQ(prepared.load(), 1);
  index_internal::SetCompactionHookForTesting(nullptr);
  // The adds made while the file was written and the 200 documents checked
  // after it were carried outside the lock; under it, only the helper's
  // record of 5 made at kPrepared (a time and 5 adds).
  EXPECT_GE(seen.carried_outside, 202u);
  EXPECT_EQ(seen.carried_locked, 6u);
  EXPECT_EQ(index.Stats().compactions, 1u);
  EXPECT_TRUE(Holds(index, oracle_));
  w->reset();
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Holds(**r, oracle_));
}

// Checks that add (with neighbours planted at distances 0 to 4) answer
// exactly as the exact scan of what is indexed, through background
// compactions (two) while another thread adds unrelated documents and a reader
// queries: every answer, before, during and after each publication.
TEST_F(DocumentLogTest, ChecksEqualTheExactScanAcrossCompactionsUnderConcurrentAdds) {
  // An index of exact tables (answers are exact), 64 bits, k = 3.
  const std::string path = dir_ + "/exact.idx";
  DocumentIndexHeader h;
  h.pipeline_json = R"({"method":"tfidf","bits":64})";
  h.tables.exact = true;
  PermutedTableOptions po;
  po.bits = 64;
  po.max_k = 3;
  po.build_threads = 1;
  std::mt19937_64 rng(21);
  std::vector<std::pair<std::string, Fingerprint>> live;
  {
    std::vector<std::string> ids;
    std::vector<Fingerprint> fps;
    for (int i = 0; i < 5000; ++i) {
      ids.push_back("b" + std::to_string(i));
      fps.push_back(Fingerprint::From64(rng()));
      live.emplace_back(ids.back(), fps.back());
    }
    auto built = DocumentIndex::Build(path, h, po, ids, fps);
    ASSERT_TRUE(built.ok());
    ASSERT_TRUE((*built)->Commit().ok());
  }
  DocumentIndexOptions o = Logged();
  o.sync = false;
  o.compact_fraction = 0.01;  // from 1 MiB of log
  auto w = DocumentIndex::Open(path, DocumentIndex::Mode::kReadWrite, o);
  ASSERT_TRUE(w.ok());
  DocumentIndex& index = **w;
  std::atomic<bool> done{false};
  // Unrelated documents (random 64-bit fingerprints: none within 3 bits of
  // another, but for odds of ~1e-9 over the test), in batches.
  std::atomic<int> noise_batches{0};
  std::thread noise([&] {
    std::mt19937_64 nrng(22);
    for (int b = 0; b < 400 && !done; ++b) {
      std::vector<std::string> ids;
      std::vector<Fingerprint> fps;
      for (int i = 0; i < 250; ++i) {
        ids.push_back("n" + std::to_string(b) + "." + std::to_string(i));
        fps.push_back(Fingerprint::From64(nrng()));
      }
      ASSERT_TRUE(index.AddBatch(ids, fps).ok());
      ++noise_batches;
    }
  });
  // A reader: base documents are always found, by themselves only (its own
  // copy of them: `live` grows meanwhile).
  std::thread reader([&, base = live] {
    std::vector<DocumentMatch> m;
    for (size_t i = 0; !done; i = (i + 1) % base.size()) {
      ASSERT_TRUE(index.Query(base[i].second, 0, &m).ok());
      ASSERT_EQ(m.size(), 1u);
      ASSERT_EQ(m[0].id, base[i].first);
    }
  });
  const auto exact = [&](const Fingerprint& q) {
    std::vector<DocumentMatch> out;
    for (const auto& [id, fp] : live) {
      const int d = HammingDistance(q, fp);
      if (d <= 3) out.push_back(DocumentMatch{id, d});
    }
    std::sort(out.begin(), out.end(), [](const DocumentMatch& a, const DocumentMatch& b) {
      return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
    });
    return out;
  };
  int checked = 0, added = 0;
  for (int batch = 0; batch < 20000 && index.Stats().compactions < 2; ++batch) {
    std::vector<std::string> ids;
    std::vector<Fingerprint> fps;
    for (int i = 0; i < 16; ++i) {
      ids.push_back("c" + std::to_string(batch) + "." + std::to_string(i));
      uint64_t v = rng();
      if (i % 2 == 0) {
        // Near an indexed document: 0 to 4 bits flipped.
        v = live[rng() % live.size()].second.lo();
        const int flips = static_cast<int>(rng() % 5);
        for (int f = 0; f < flips; ++f) v ^= uint64_t{1} << (rng() % 64);
      }
      fps.push_back(Fingerprint::From64(v));
    }
    std::vector<CheckResult> out;
    ASSERT_TRUE(index.Check(ids, fps, CheckOptions{}, &out).ok());
    for (size_t i = 0; i < ids.size(); ++i) {
      std::vector<DocumentMatch> got = out[i].matches;
      std::sort(got.begin(), got.end(), [](const DocumentMatch& a, const DocumentMatch& b) {
        return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
      });
      ASSERT_EQ(got, exact(fps[i])) << "batch " << batch << " item " << i;
      ASSERT_EQ(out[i].added, got.empty());
      ++checked;
      if (out[i].added) {
        live.emplace_back(ids[i], fps[i]);
        ++added;
      }
    }
  }
  done = true;
  noise.join();
  reader.join();
  EXPECT_GE(index.Stats().compactions, 2u);
  EXPECT_GT(added, 0);
  EXPECT_LT(added, checked);
  // And after reopening: the checked documents that were added, exactly.
  w->reset();
  auto r = DocumentIndex::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<DocumentMatch> m;
  for (size_t i = 5000; i < live.size(); i += 7) {
    ASSERT_TRUE((*r)->Query(live[i].second, 3, &m).ok());
    ASSERT_EQ(m, exact(live[i].second)) << live[i].first;
  }
  std::printf("%d checks (%d added), %d noise batches\n", checked, added, noise_batches.load());
}

}  // namespace
}  // namespace neardup
