// Copyright 2026 The neardup Authors.
//
// DocumentIndex: string ids over a permuted-table index, committed with its
// ids file; the ids file is hostile input (wrong JSON types, null ids) and
// gives a clean Corruption, never an exception or a bogus match.

#include "neardup/document_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::ReadFile;
using testing::WriteFile;

constexpr char kPipeline[] = R"({"method":"tfidf","bits":64,"topk":20,"t2s":false})";

PermutedTableOptions Options() {
  PermutedTableOptions o;
  o.bits = 64;
  o.max_k = 3;
  o.build_threads = 1;
  return o;
}

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

class DocumentIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("document_index");
    path_ = dir_ + "/i.idx";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void BuildAndCommit(const Docs& d) {
    DocumentIndexHeader h;
    h.pipeline_json = kPipeline;
    auto index = DocumentIndex::Build(path_, h, Options(), d.ids, d.fps);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_TRUE((*index)->Commit().ok());
  }

  // Every document answers its own fingerprint at distance 0 with its id.
  static void ExpectHolds(const DocumentIndex& index, const Docs& d) {
    std::vector<DocumentMatch> m;
    for (size_t i = 0; i < d.ids.size(); ++i) {
      ASSERT_TRUE(index.Query(d.fps[i], 0, &m).ok());
      ASSERT_EQ(m.size(), 1u) << d.ids[i];
      EXPECT_EQ(m[0], (DocumentMatch{d.ids[i], 0}));
    }
  }

  std::string dir_;
  std::string path_;
};

TEST_F(DocumentIndexTest, BuildCommitOpenAddRemove) {
  const Docs a = MakeDocs("a", 100, 1);
  BuildAndCommit(a);
  {
    auto r = DocumentIndex::Open(path_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->size(), 100u);
    EXPECT_EQ((*r)->bits(), 64);
    EXPECT_EQ((*r)->max_k(), 3);
    EXPECT_EQ((*r)->header().pipeline_json, kPipeline);
    ExpectHolds(**r, a);
    // Read-only: no changes.
    EXPECT_TRUE((*r)->Add("x", a.fps[0]).IsInvalidArgument());
    EXPECT_TRUE((*r)->Commit().IsInvalidArgument());
  }
  const Docs b = MakeDocs("b", 50, 2);
  {
    auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->AddBatch(b.ids, b.fps).ok());
    std::vector<std::string> missing;
    const std::vector<std::string> gone = {"a0", "a1", "nope"};
    auto removed = (*w)->Remove(gone, &missing);
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 2u);
    EXPECT_EQ(missing, std::vector<std::string>{"nope"});
    ASSERT_TRUE((*w)->Commit().ok());
  }
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->size(), 148u);
  EXPECT_FALSE((*r)->Contains("a0"));
  EXPECT_TRUE((*r)->Contains("a2"));
  ExpectHolds(**r, b);
  // Commit leaves exactly the two files and the lock file.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"i.idx", "i.idx.ids", "i.idx.lock"}));
}

TEST_F(DocumentIndexTest, IdsAreUniqueUnlessReplaced) {
  const Docs a = MakeDocs("a", 10, 3);
  BuildAndCommit(a);
  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite);
  ASSERT_TRUE(w.ok());
  const Fingerprint other = Fingerprint::From64(0x0123456789abcdefULL);
  const Status dup = (*w)->Add("a3", other);
  EXPECT_TRUE(dup.IsInvalidArgument());
  EXPECT_NE(dup.message().find("'a3'"), std::string::npos) << dup.message();
  // All or nothing: a batch with one bad id adds nothing.
  const std::vector<std::string> ids = {"new", "a4"};
  const std::vector<Fingerprint> fps = {other, other};
  EXPECT_TRUE((*w)->AddBatch(ids, fps).IsInvalidArgument());
  EXPECT_FALSE((*w)->Contains("new"));
  const std::vector<std::string> twice = {"z", "z"};
  EXPECT_TRUE((*w)->AddBatch(twice, fps).IsInvalidArgument());
  EXPECT_EQ((*w)->size(), 10u);

  ASSERT_TRUE((*w)->Add("a3", other, /*replace=*/true).ok());
  EXPECT_EQ((*w)->size(), 10u);
  std::vector<DocumentMatch> m;
  ASSERT_TRUE((*w)->Query(other, 0, &m).ok());
  EXPECT_EQ(m, (std::vector<DocumentMatch>{{"a3", 0}}));
  ASSERT_TRUE((*w)->Query(a.fps[3], 0, &m).ok());
  EXPECT_TRUE(m.empty());
  EXPECT_TRUE((*w)->Add("w", Fingerprint::From128(1, 2)).IsInvalidArgument());
  ASSERT_TRUE((*w)->Commit().ok());
}

TEST_F(DocumentIndexTest, OpensIndexesWrittenBeforeChecksums) {
  // The format of the CLI before DocumentIndex: no index_checksum, no lines,
  // null for removed documents.
  PermutedTableOptions o = Options();
  const std::vector<uint64_t> numeric = {0, 2};
  const std::vector<Fingerprint> fps = {Fingerprint::From64(0xff), Fingerprint::From64(0xff00)};
  auto index = PermutedTableIndex::Build(o, numeric, fps);
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE((*index)->Save(path_).ok());
  WriteFile(path_ + ".ids",
            "{\"neardup_index_ids\":1,\"pipeline\":{\"bits\":64},\"fingerprints_input\":true}\n"
            "\"x\"\nnull\n\"y\"\n");
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<DocumentMatch> m;
  ASSERT_TRUE((*r)->Query(fps[1], 0, &m).ok());
  EXPECT_EQ(m, (std::vector<DocumentMatch>{{"y", 0}}));
  EXPECT_TRUE((*r)->header().fingerprints_input);
  r->reset();
  // A writer converts it to the current format.
  auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Add("z", Fingerprint::From64(1)).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  w->reset();
  EXPECT_EQ(ReadFile(path_ + ".ids").find("{\"neardup_index_ids\":2,"), 0u);
  EXPECT_NE(ReadFile(path_ + ".ids").find("\"index_checksum\""), std::string::npos);
  r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->size(), 3u);
}

// Issue 16, item 3: wrong JSON types and null ids are Corruption with
// file:line: reason (today: an uncaught type_error, or {"id": ""} printed).
TEST_F(DocumentIndexTest, HostileIdsFileIsCorruption) {
  BuildAndCommit(MakeDocs("a", 5, 4));
  const std::string good = ReadFile(path_ + ".ids");
  const size_t nl = good.find('\n');
  const std::string header = good.substr(0, nl);
  const std::string body = good.substr(nl + 1);
  struct Case {
    std::string ids_file;
    std::string expect;
  };
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::vector<Case> cases = {
      {replace(header, "\"bits\":64", "\"bits\":\"128\"") + "\n" + body, ":1: pipeline.bits"},
      {replace(header, "\"topk\":20", "\"topk\":\"zero\"") + "\n" + body, ":1: pipeline.topk"},
      {replace(header, "\"t2s\":false", "\"t2s\":1") + "\n" + body, ":1: pipeline.t2s"},
      {replace(header, "\"bits\":64", "\"bits\":128") + "\n" + body, ":1: says 128 bits"},
      {replace(header, "\"pipeline\":{", "\"pipeline\":[{") + "\n" + body, ":1: malformed JSON"},
      {replace(header, "\"fingerprints_input\":false", "\"fingerprints_input\":\"no\"") + "\n" +
           body,
       ":1: fingerprints_input"},
      {replace(header, "\"neardup_index_ids\":2", "\"neardup_index_ids\":\"2\"") + "\n" + body,
       ":1: not a neardup ids file"},
      {replace(header, "\"lines\":5", "\"count\":5") + "\n" + body, ":1: a version 2 header needs"},
      {replace(header, "\"index_checksum\":\"", "\"index_checksum\":\"x") + "\n" + body,
       ":1: index_checksum must be"},
      {header + "\n" + replace(body, "\"a2\"", "null"), ":4: null, but numeric id 2"},
      {header + "\n" + replace(body, "\"a2\"", "2"), ":4: expected a JSON string"},
      {header + "\n" + replace(body, "\"a4\"\n", ""), ":1: header says 5 id lines"},
      {"", ":1: malformed JSON"},
  };
  for (const Case& c : cases) {
    WriteFile(path_ + ".ids", c.ids_file);
    auto r = DocumentIndex::Open(path_);
    ASSERT_FALSE(r.ok()) << c.ids_file;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find(path_ + ".ids"), std::string::npos)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
  // An ids file of an older format with a null line for an indexed entry.
  WriteFile(path_ + ".ids", "{\"neardup_index_ids\":1}\n\"a0\"\nnull\n\"a2\"\n\"a3\"\n\"a4\"\n");
  auto r = DocumentIndex::Open(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(".ids:3: null, but numeric id 1 is in the index"),
            std::string::npos)
      << r.status().ToString();

  // Create rejects a bad header the same way, as InvalidArgument.
  DocumentIndexHeader h;
  h.pipeline_json = R"({"bits":"64"})";
  EXPECT_TRUE(
      DocumentIndex::Create(dir_ + "/other.idx", h, Options()).status().IsInvalidArgument());
}

TEST_F(DocumentIndexTest, ReadersPairFilesByChecksum) {
  const Docs a = MakeDocs("a", 20, 5);
  BuildAndCommit(a);
  const std::string old_index = ReadFile(path_);
  const std::string old_ids = ReadFile(path_ + ".ids");
  {
    auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add("n", Fingerprint::From64(7)).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  const std::string new_ids = ReadFile(path_ + ".ids");
  // The state after the commit point but before the tidying rename: the new
  // index file, the old ids file, the new ids file under its checksum.
  const std::string header = new_ids.substr(0, new_ids.find('\n'));
  const size_t at = header.find("\"index_checksum\":\"") + 18;
  const std::string pending = path_ + ".ids." + header.substr(at, 16);
  WriteFile(pending, new_ids);
  WriteFile(path_ + ".ids", old_ids);
  auto r = DocumentIndex::Open(path_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)->Contains("n"));
  r->reset();
  // A writer completes that commit and removes leftovers.
  WriteFile(path_ + ".tmp", "partial");
  WriteFile(path_ + ".ids.00000000deadbeef", "partial");
  {
    auto w = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
  }
  EXPECT_EQ(ReadFile(path_ + ".ids"), new_ids);
  EXPECT_FALSE(std::filesystem::exists(pending));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".ids.00000000deadbeef"));

  // A mismatched pair without its pending file is reported, not served.
  WriteFile(path_, old_index);
  WriteFile(path_ + ".ids", new_ids);
  r = DocumentIndex::Open(path_);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption());
  EXPECT_NE(r.status().message().find("written for another version"), std::string::npos)
      << r.status().ToString();
}

// CheckOrAdd over a stream with planted near copies keeps exactly what a
// linear scan over the kept fingerprints keeps, and reports the same matches.
TEST_F(DocumentIndexTest, CheckOrAddMatchesLinearScan) {
  DocumentIndexHeader h;
  h.pipeline_json = kPipeline;
  auto index = DocumentIndex::Create(path_, h, Options());
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::mt19937_64 rng(17);
  std::vector<Fingerprint> kept;
  std::vector<DocumentMatch> found;
  for (int i = 0; i < 400; ++i) {
    uint64_t v = rng();
    if (i > 0 && rng() % 2 == 0) {  // a near copy of an earlier kept one
      v = kept[rng() % kept.size()].lo() ^ (uint64_t{1} << (rng() % 64)) ^
          (uint64_t{1} << (rng() % 64));
    }
    const Fingerprint fp = Fingerprint::From64(v);
    std::vector<DocumentMatch> expected;
    for (size_t j = 0; j < kept.size(); ++j) {
      const int d = HammingDistance(fp, kept[j]);
      if (d <= 3) expected.push_back(DocumentMatch{"d" + std::to_string(j), d});
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [](const auto& a, const auto& b) { return a.distance < b.distance; });
    auto added = (*index)->CheckOrAdd("d" + std::to_string(kept.size()), fp, 3, &found);
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    EXPECT_EQ(*added, expected.empty()) << "document " << i;
    EXPECT_EQ(found, expected) << "document " << i;
    if (*added) kept.push_back(fp);
  }
  EXPECT_EQ((*index)->size(), kept.size());
  EXPECT_LT(kept.size(), 400u);
  ASSERT_TRUE((*index)->Commit().ok());
  auto reader = DocumentIndex::Open(path_);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), kept.size());
  // Read-only: an error, not a silent query.
  EXPECT_TRUE((*reader)->CheckOrAdd("x", kept[0], 3, &found).status().IsInvalidArgument());
}

}  // namespace
}  // namespace neardup
