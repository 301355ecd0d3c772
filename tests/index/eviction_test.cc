// Copyright 2026 The neardup Authors.
//
// DocumentIndex::Evict (issue 26): documents older than an age or beyond a
// count, oldest first, by the time recorded at each add, which is kept in the
// log and in the committed ids file; files written before times were
// recorded still open, their documents counting as added when written.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "index/document_log.h"
#include "index/index_file.h"
#include "neardup/document_index.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::ReadFile;
using testing::WriteFile;

struct Docs {
  std::vector<std::string> ids;
  std::vector<Fingerprint> fps;
};

Docs MakeDocs(const std::string& prefix, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Docs d;
  for (size_t i = 0; i < n; ++i) {
    d.ids.push_back(prefix + std::to_string(i));
    d.fps.push_back(Fingerprint::From64(rng()));
  }
  return d;
}

class EvictionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("eviction");
    path_ = dir_ + "/i.idx";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Build(const Docs& d) {
    DocumentIndexHeader h;
    h.pipeline_json = R"({"bits":64})";
    PermutedTableOptions o;
    o.bits = 64;
    o.max_k = 3;
    o.build_threads = 1;
    auto index = DocumentIndex::Build(path_, h, o, d.ids, d.fps);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_TRUE((*index)->Commit().ok());
  }

  // A logged read-write open whose clock reads *now_.
  std::unique_ptr<DocumentIndex> OpenWriter() {
    DocumentIndexOptions o;
    o.log = true;
    o.clock = [this] { return now_; };
    auto index = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, o);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(*index) : nullptr;
  }

  // Each document of `d` is indexed (found by its fingerprint under its id)
  // or, when !present, neither Query nor a query-only Check returns it.
  static void Expect(const DocumentIndex& index, const Docs& d, bool present) {
    for (size_t i = 0; i < d.ids.size(); ++i) {
      std::vector<DocumentMatch> m;
      ASSERT_TRUE(index.Query(d.fps[i], 3, &m).ok());
      bool found = false;
      for (const DocumentMatch& x : m) found |= x.id == d.ids[i];
      EXPECT_EQ(found, present) << d.ids[i];
      EXPECT_EQ(index.Contains(d.ids[i]), present) << d.ids[i];
    }
  }
  static void ExpectCheckSkips(DocumentIndex* index, const Docs& gone) {
    CheckOptions q;
    q.policy = CheckPolicy::kQueryOnly;
    std::vector<std::string> ids;
    for (const std::string& id : gone.ids) ids.push_back("probe-" + id);
    std::vector<CheckResult> out;
    ASSERT_TRUE(index->Check(ids, gone.fps, q, &out).ok());
    for (size_t i = 0; i < out.size(); ++i) {
      for (const DocumentMatch& m : out[i].matches) EXPECT_NE(m.id, gone.ids[i]);
    }
  }

  std::string dir_, path_;
  int64_t now_ = 0;
};

TEST_F(EvictionTest, ByAgeRemovesOlderDocumentsAndKeepsEveryYoungerOne) {
  Build({});
  const Docs a = MakeDocs("a", 30, 1), b = MakeDocs("b", 30, 2), c = MakeDocs("c", 30, 3);
  {
    auto w = OpenWriter();
    now_ = 1000;
    ASSERT_TRUE(w->AddBatch(a.ids, a.fps).ok());
    now_ = 2000;
    ASSERT_TRUE(w->AddBatch(b.ids, b.fps).ok());
    now_ = 3000;
    ASSERT_TRUE(w->AddBatch(c.ids, c.fps).ok());
    // Nothing is older than 2001 s; a is older than 1001 s (at 1000, b at
    // 2000 exactly 1000 s ago: kept).
    auto none = w->Evict(EvictionOptions{2001, std::nullopt});
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(*none, 0u);
    auto evicted = w->Evict(EvictionOptions{1000, std::nullopt});
    ASSERT_TRUE(evicted.ok()) << evicted.status().ToString();
    EXPECT_EQ(*evicted, a.ids.size());
    EXPECT_EQ(w->Stats().evicted, a.ids.size());
    Expect(*w, a, false);
    Expect(*w, b, true);
    Expect(*w, c, true);
    ExpectCheckSkips(w.get(), a);
    // No limit evicts nothing; a negative age is refused.
    EXPECT_EQ(*w->Evict(EvictionOptions{}), 0u);
    EXPECT_TRUE(w->Evict(EvictionOptions{-1, std::nullopt}).status().IsInvalidArgument());
  }
  // The eviction was logged: a reopen (replaying the log) agrees.
  {
    auto r = DocumentIndex::Open(path_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    Expect(**r, a, false);
    Expect(**r, c, true);
  }
  // The times survive the log (replayed) and then a compaction (in the ids
  // file's header): at 3500, an age of 1000 evicts b and only b.
  for (const bool compact : {false, true}) {
    const std::string saved = dir_ + (compact ? "/compacted" : "/logged");
    std::filesystem::create_directories(saved);
    for (const char* f : {"i.idx", "i.idx.ids", "i.idx.log"}) {
      if (std::filesystem::exists(dir_ + "/" + f)) {
        std::filesystem::copy_file(dir_ + "/" + f, saved + "/" + f);
      }
    }
    const std::string keep = path_;
    path_ = saved + "/i.idx";
    if (compact) {
      auto w = OpenWriter();
      ASSERT_TRUE(w->Compact().ok());
      EXPECT_FALSE(std::filesystem::exists(path_ + ".log"));
    }
    auto w = OpenWriter();
    now_ = 3500;
    auto evicted = w->Evict(EvictionOptions{1000, std::nullopt});
    ASSERT_TRUE(evicted.ok()) << evicted.status().ToString();
    EXPECT_EQ(*evicted, b.ids.size()) << (compact ? "compacted" : "logged");
    ASSERT_TRUE(w->Compact().ok());
    w.reset();
    auto r = DocumentIndex::Open(path_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE((*r)->Verify().ok());
    Expect(**r, a, false);
    Expect(**r, b, false);
    Expect(**r, c, true);
    path_ = keep;
  }
}

TEST_F(EvictionTest, ByCountRemovesTheOldestFirst) {
  const Docs base = MakeDocs("base", 20, 4);
  Build(base);
  const Docs a = MakeDocs("a", 10, 5), b = MakeDocs("b", 10, 6);
  auto w = OpenWriter();
  now_ = 100;
  ASSERT_TRUE(w->AddBatch(a.ids, a.fps).ok());
  // Replacing an old document makes it new.
  const std::vector<std::string> again = {"base0"};
  ASSERT_TRUE(w->AddBatch(again, std::vector<Fingerprint>{base.fps[0]}, true).ok());
  ASSERT_TRUE(w->AddBatch(b.ids, b.fps).ok());
  auto evicted = w->Evict(EvictionOptions{std::nullopt, 15});
  ASSERT_TRUE(evicted.ok()) << evicted.status().ToString();
  EXPECT_EQ(*evicted, 25u);
  EXPECT_EQ(w->size(), 15u);
  // Kept: the newest 15 = a6..a9, base0 (re-added), b0..b9.
  Docs gone, kept;
  for (size_t i = 1; i < base.ids.size(); ++i) {
    gone.ids.push_back(base.ids[i]);
    gone.fps.push_back(base.fps[i]);
  }
  for (size_t i = 0; i < a.ids.size(); ++i) {
    (i < 6 ? gone : kept).ids.push_back(a.ids[i]);
    (i < 6 ? gone : kept).fps.push_back(a.fps[i]);
  }
  Expect(*w, gone, false);
  Expect(*w, kept, true);
  Expect(*w, b, true);
  EXPECT_TRUE(w->Contains("base0"));
  // Within the limit: nothing more.
  EXPECT_EQ(*w->Evict(EvictionOptions{std::nullopt, 15}), 0u);
  EXPECT_EQ(*w->Evict(EvictionOptions{std::nullopt, 14}), 1u);
  EXPECT_FALSE(w->Contains("a6"));
  // Read-only: refused.
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->Evict(EvictionOptions{std::nullopt, 1}).status().IsInvalidArgument());
}

// An ids file written before add times were recorded (no "added" member):
// it opens, and its documents count as added when its index file was
// written (its mtime), never earlier.
TEST_F(EvictionTest, FilesWithoutAddTimesOpenAndCountAsAddedWhenWritten) {
  const Docs d = MakeDocs("d", 25, 7);
  Build(d);
  const std::string ids = ReadFile(path_ + ".ids");
  const size_t nl = ids.find('\n');
  auto header = nlohmann::ordered_json::parse(ids.substr(0, nl));
  ASSERT_TRUE(header.contains("added")) << header.dump();
  header.erase("added");
  WriteFile(path_ + ".ids", header.dump() + ids.substr(nl));
  // Written at a known time (before the rewrite of its ids file).
  constexpr int64_t kWritten = 1000000000;
  const struct timespec times[2] = {{kWritten, 0}, {kWritten, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path_.c_str(), times, 0), 0);
  auto w = OpenWriter();
  ASSERT_NE(w, nullptr);
  Expect(*w, d, true);
  now_ = kWritten + 100;
  EXPECT_EQ(*w->Evict(EvictionOptions{200, std::nullopt}), 0u);
  now_ = kWritten + 300;
  EXPECT_EQ(*w->Evict(EvictionOptions{200, std::nullopt}), d.ids.size());
  Expect(*w, d, false);
}

// The log's time operation round-trips; one with an id is Corruption; a log
// written before it existed (adds without a time) replays, its adds counting
// as made when the log was last written.
TEST_F(EvictionTest, LogTimesRoundTripAndOldLogsCountAsWrittenWhenModified) {
  using index_internal::LogOp;
  LogOp time;
  time.type = LogOp::Type::kTime;
  time.time = -12345678901;
  const LogOp add{LogOp::Type::kAdd, "x", Fingerprint::From64(7)};
  std::string log(32, '\0');
  {
    const std::string file = dir_ + "/probe.log";
    auto w = index_internal::LogWriter::Create(file, 1, 64);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append({time, add}, true).ok());
    log = ReadFile(file);
  }
  auto parsed = index_internal::ParseLog(log, "probe.log");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->batches.size(), 1u);
  ASSERT_EQ(parsed->batches[0].ops.size(), 2u);
  EXPECT_EQ(parsed->batches[0].ops[0].type, LogOp::Type::kTime);
  EXPECT_EQ(parsed->batches[0].ops[0].time, -12345678901);
  EXPECT_EQ(parsed->batches[0].ops[1].id, "x");
  LogOp named = time;
  named.id = "y";
  const std::string bad = log.substr(0, 32) + index_internal::EncodeLogRecord({named}, 64);
  EXPECT_TRUE(index_internal::ParseLog(bad, "bad.log").status().IsCorruption());

  // An older writer's log: adds with no time operation.
  const Docs d = MakeDocs("d", 10, 9), old = MakeDocs("old", 10, 10);
  Build(d);
  const uint64_t base = index_internal::StoredChecksum(ReadFile(path_));
  {
    auto w = index_internal::LogWriter::Create(path_ + ".log", base, 64);
    ASSERT_TRUE(w.ok());
    std::vector<LogOp> ops;
    for (size_t i = 0; i < old.ids.size(); ++i) {
      ops.push_back(LogOp{LogOp::Type::kAdd, old.ids[i], old.fps[i]});
    }
    ASSERT_TRUE((*w)->Append(ops, true).ok());
  }
  constexpr int64_t kWritten = 2000000000;
  const struct timespec times[2] = {{kWritten, 0}, {kWritten, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, (path_ + ".log").c_str(), times, 0), 0);
  auto w = OpenWriter();
  ASSERT_NE(w, nullptr);
  Expect(*w, old, true);
  now_ = kWritten + 50;
  // d (built now, before 2033) is older than 100 s; the log's adds are not.
  EXPECT_EQ(*w->Evict(EvictionOptions{100, std::nullopt}), d.ids.size());
  Expect(*w, old, true);
  now_ = kWritten + 150;
  EXPECT_EQ(*w->Evict(EvictionOptions{100, std::nullopt}), old.ids.size());
  Expect(*w, old, false);
}

TEST_F(EvictionTest, MalformedAddTimesAreACleanCorruption) {
  Build(MakeDocs("d", 5, 8));
  const std::string ids = ReadFile(path_ + ".ids");
  const size_t nl = ids.find('\n');
  for (const char* bad : {R"("x")", R"([[0,5],[0,4]])", R"([[1,5],[0,6]])", R"([[9,5]])",
                          R"([[0,"5"]])", R"([[0]])"}) {
    auto header = nlohmann::ordered_json::parse(ids.substr(0, nl));
    header["added"] = nlohmann::ordered_json::parse(bad);
    WriteFile(path_ + ".ids", header.dump() + ids.substr(nl));
    auto r = DocumentIndex::Open(path_);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsCorruption()) << bad << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("i.idx.ids:1: added"), std::string::npos)
        << r.status().ToString();
  }
}

}  // namespace
}  // namespace neardup
