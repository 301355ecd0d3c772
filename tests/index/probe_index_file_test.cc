// Copyright 2026 The neardup Authors.
//
// The probe tables as a table kind of the index file (TablesKind::kProbe,
// doc/index_format.md): the default method's choice; a version 3 and a
// version 2 file of that kind, and the in-memory delta of an index of that
// kind (levels of probe tables and a tail), against the exact scan: exactly
// the rows within k that the tables find (ProbeFinds), single queries and
// batches alike, no false match; a DocumentIndex committing and reopening
// one; a damaged file.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index/hamming_scan.h"
#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "index/probe_tables.h"
#include "index/table_index.h"
#include "neardup/document_index.h"
#include "neardup/index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/planted_index_file.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using index_internal::TableIndex;
using index_internal::TablesKind;
using index_internal::TablesPolicy;
using index_internal::TablesSpec;

constexpr int kK = 28;

using Data = testing::PlantedRows;

Data MakeData(size_t random_rows, size_t queries, uint64_t seed) {
  return testing::MakePlantedRows(random_rows, queries, {kK, kK, 0, 5, 14, kK - 4, kK - 1, kK + 1},
                                  seed);
}

// The exact scan's neighbours of q that the tables of `spec` find.
std::vector<Neighbor> Want(const Data& d, const TablesSpec& spec, const Fingerprint& q) {
  std::vector<Neighbor> want;
  for (const Neighbor& n : testing::OracleSearch(d.entries, q, kK)) {
    const Fingerprint& x = d.fps[(n.id - 1) / 2];
    if (index_internal::ProbeFinds(spec, x.hi() ^ q.hi(), x.lo() ^ q.lo())) want.push_back(n);
  }
  return want;
}

void ExpectAnswers(const TableIndex& index, const Data& d, const TablesSpec& spec,
                   const std::string& what) {
  std::vector<std::vector<Neighbor>> each;
  ASSERT_TRUE(index.SearchEach(d.queries, kK, &each).ok());
  SearchResults batch;
  ASSERT_TRUE(index.SearchBatch(d.queries, kK, 2, &batch).ok());
  size_t found = 0;
  for (size_t q = 0; q < d.queries.size(); ++q) {
    const std::vector<Neighbor> want = Want(d, spec, d.queries[q]);
    found += want.size();
    ASSERT_EQ(each[q], want) << what << " query " << q;
    EXPECT_EQ(std::vector<Neighbor>(batch[q].begin(), batch[q].end()), want) << what;
    if (q % 10 == 0) {
      std::vector<Neighbor> one;
      ASSERT_TRUE(index.Search(d.queries[q], kK, &one).ok());
      EXPECT_EQ(one, want) << what << " query " << q;
    }
  }
  // Every query's planted neighbours at 0 and 5 are found (a key within r
  // and a half within t for such a small distance), so the test is not void.
  EXPECT_GE(found, 2 * d.queries.size()) << what;
}

TEST(ProbeIndexFileTest, TheDefaultMethodChoosesProbeTables) {
  const TablesSpec s = index_internal::ChooseTables(1000000, 128, kK, TablesPolicy{});
  ASSERT_EQ(s.kind, TablesKind::kProbe);
  EXPECT_TRUE(index_internal::IsProbeLayout(s));
  EXPECT_STREQ(index_internal::TablesKindName(s.kind), "probe");
  EXPECT_GE(s.recall_at_k, 0.99);
  EXPECT_GE(s.recall_at_k_minus_4, 0.9999);
  EXPECT_LE(s.bytes_per_fingerprint, 128.0);
  // A mask outside the layout is not one.
  TablesSpec moved = s;
  moved.masks[1].hi <<= 1;
  EXPECT_FALSE(index_internal::IsProbeLayout(moved));
}

TEST(ProbeIndexFileTest, FilesOfBothVersionsAnswerAsTheTables) {
  const Data d = MakeData(30000, 200, 21);
  const TablesSpec spec = index_internal::ChooseTables(1000000, 128, kK, TablesPolicy{});
  ASSERT_EQ(spec.kind, TablesKind::kProbe);
  const std::string dir = testing::MakeTempDir("probe_file");
  for (uint32_t version : {index_internal::kIndexVersion3, index_internal::kIndexVersion2}) {
    const auto file = testing::WritePlantedIndexFile(
        d, spec, dir + "/probe" + std::to_string(version) + ".ndx", version);
    ASSERT_TRUE(file->Verify().ok()) << file->Verify().ToString();
    EXPECT_EQ(file->meta().spec.kind, TablesKind::kProbe);
    EXPECT_EQ(file->meta().spec.radius, spec.radius);
    EXPECT_EQ(file->meta().spec.masks.size(), spec.masks.size());
    EXPECT_EQ(file->tables().probe_threshold, spec.radius);
    const auto index = TableIndex::FromFile(file);
    const std::vector<IndexEntry> entries = index->Entries();
    ASSERT_EQ(entries.size(), d.entries.size());
    ExpectAnswers(*index, d, spec, "version " + std::to_string(version));
  }
}

TEST(ProbeIndexFileTest, DeltaAnswersAsTheFileWrittenFromIt) {
  // More entries than the tail holds (8 tables x 121 probes x 64): the
  // delta has a level of probe tables and a tail.
  const Data d = MakeData(64000, 150, 22);
  const TablesSpec spec = index_internal::ChooseTables(1000000, 128, kK, TablesPolicy{});
  ASSERT_EQ(spec.kind, TablesKind::kProbe);
  const std::string dir = testing::MakeTempDir("probe_delta");
  const auto mem =
      TableIndex::FromFile(testing::WritePlantedIndexFile(Data{}, spec, dir + "/empty.ndx"));
  ASSERT_EQ(mem->spec().kind, TablesKind::kProbe);
  const size_t half = d.ids.size() * 3 / 4;
  ASSERT_TRUE(mem->AddBatch(std::span(d.ids).first(half), std::span(d.fps).first(half)).ok());
  ASSERT_TRUE(mem->AddBatch(std::span(d.ids).subspan(half), std::span(d.fps).subspan(half)).ok());
  ExpectAnswers(*mem, d, spec, "delta");
  // The level's tables (8 x 12 bytes a row) are built: beyond the delta's
  // own ~72 bytes a row.
  EXPECT_GT(mem->MemoryBytes(), 150 * d.ids.size());
  const auto from_file =
      TableIndex::FromFile(testing::WritePlantedIndexFile(d, spec, dir + "/full.ndx"));
  std::vector<std::vector<Neighbor>> a, b;
  ASSERT_TRUE(mem->SearchEach(d.queries, kK, &a).ok());
  ASSERT_TRUE(from_file->SearchEach(d.queries, kK, &b).ok());
  EXPECT_EQ(a, b);
}

// A delta grown by batches (a server's adds) under every kernel the CPU
// has: the tail's cap depends on the kernel (the scan's measured cost a
// row), its levels' directories on their sizes (LevelDirBits: narrower
// than the file's keys), and the answers are still the file's.
TEST(ProbeIndexFileTest, NarrowLevelsAndTheKernelsTailAnswerAsTheFile) {
  const Data d = MakeData(40000, 120, 23);
  const TablesSpec spec = index_internal::ChooseTables(1000000, 128, kK, TablesPolicy{});
  ASSERT_EQ(spec.kind, TablesKind::kProbe);
  const std::string dir = testing::MakeTempDir("probe_levels");
  const auto empty = testing::WritePlantedIndexFile(Data{}, spec, dir + "/empty.ndx");
  const index_internal::ScanIsa saved = index_internal::ActiveScanIsa();
  for (const index_internal::ScanIsa isa :
       {index_internal::ScanIsa::kScalar, index_internal::ScanIsa::kAvx2,
        index_internal::ScanIsa::kAvx512}) {
    if (!index_internal::SetScanIsa(isa)) continue;
    const auto mem = TableIndex::FromFile(empty);
    for (size_t at = 0; at < d.ids.size(); at += 4000) {
      const size_t m = std::min<size_t>(4000, d.ids.size() - at);
      ASSERT_TRUE(
          mem->AddBatch(std::span(d.ids).subspan(at, m), std::span(d.fps).subspan(at, m)).ok());
    }
    const std::vector<size_t> levels = mem->DeltaLevelSizes();
    size_t in_levels = 0;
    for (size_t n : levels) in_levels += n;
    const std::string what = index_internal::ScanIsaName(isa);
    // ~41,000 entries: past the cap of every kernel but AVX-512's (~61,000).
    if (isa != index_internal::ScanIsa::kAvx512) {
      ASSERT_FALSE(levels.empty()) << what;
      EXPECT_GE(index_internal::LevelDirBits(levels.front(), spec.dir_bits), 10) << what;
      EXPECT_LT(index_internal::LevelDirBits(levels.front(), spec.dir_bits), spec.dir_bits) << what;
    }
    EXPECT_LE(in_levels, mem->delta_size()) << what;
    ExpectAnswers(*mem, d, spec, what);
  }
  index_internal::SetScanIsa(saved);
}

// A DocumentIndex at the default method from 65,536 documents commits a
// file of probe tables, reopens it and finds near neighbours through it.
TEST(ProbeIndexFileTest, DocumentIndexCommitsAndQueriesProbeTables) {
  const Data d = MakeData(66000, 50, 24);
  std::vector<std::string> ids;
  for (size_t i = 0; i < d.fps.size(); ++i) ids.push_back("doc" + std::to_string(i));
  PermutedTableOptions options;
  options.bits = 128;
  options.max_k = kK;
  const std::string path = testing::MakeTempDir("probe_document") + "/i.idx";
  auto built = DocumentIndex::Build(path, DocumentIndexHeader{}, options, ids, d.fps);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_TRUE((*built)->Commit().ok());
  built->reset();
  auto index = DocumentIndex::Open(path);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_TRUE((*index)->Verify().ok());
  const DocumentIndexStats stats = (*index)->Stats();
  EXPECT_EQ(stats.tables.kind, "probe");
  EXPECT_GE(stats.tables.recall_at_k, 0.99);
  // The stats state the layout the cost model chose for these rows (and
  // the file recorded): L, b, r, t, its recall and table bytes.
  const index_internal::ProbeTablesSpec chosen =
      index_internal::ChooseProbeTables(d.fps.size(), kK, 0.99, index_internal::kMaxProbeBytes);
  ASSERT_GT(chosen.tables, 0);
  EXPECT_EQ(stats.tables.tables, chosen.tables);
  EXPECT_EQ(stats.tables.band_bits, chosen.key_bits);
  EXPECT_EQ(stats.tables.probe_radius, chosen.radius);
  EXPECT_EQ(stats.tables.filter_threshold, chosen.threshold);
  EXPECT_DOUBLE_EQ(stats.tables.recall_at_k, chosen.recall_at_k);
  EXPECT_DOUBLE_EQ(stats.tables.bytes_per_fingerprint, chosen.bytes_per_fingerprint);
  // Every query's planted neighbours at 0 and 5 (always within a table's
  // radius and threshold) are found, with their distances.
  std::vector<DocumentMatch> got;
  for (size_t q = 0; q < d.queries.size(); ++q) {
    ASSERT_TRUE((*index)->Query(d.queries[q], kK, &got).ok());
    size_t close = 0;
    for (const DocumentMatch& m : got) {
      const Fingerprint& x = d.fps[std::stoul(m.id.substr(3))];
      EXPECT_EQ(m.distance, HammingDistance(x, d.queries[q]));
      close += m.distance <= 5 ? 1 : 0;
    }
    EXPECT_GE(close, 2u) << "query " << q;
  }
}

// A damaged probe-tables file: every flip (in steps) fails Open or Verify,
// and queries on an opened but unverified file neither crash nor read out
// of bounds (their rows and directories are checked as they are read).
TEST(ProbeIndexFileTest, FlippedBytesAreCaughtByOpenOrVerify) {
  const Data d = MakeData(300, 20, 23);
  const TablesSpec spec = index_internal::ChooseTables(1000000, 128, kK, TablesPolicy{});
  ASSERT_EQ(spec.kind, TablesKind::kProbe);
  const std::string dir = testing::MakeTempDir("probe_damaged");
  const std::string path = dir + "/probe.ndx";
  ASSERT_TRUE(testing::WritePlantedIndexFile(d, spec, path)->Verify().ok());
  const std::string good = testing::ReadFile(path);
  std::mt19937_64 rng(4);
  size_t opened = 0;
  for (size_t i = 0; i < good.size(); i += std::max<size_t>(1, good.size() / 400)) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 + rng() % 255));
    testing::WriteFile(path, bad);
    auto mapped = index_internal::MappedFile::Open(path);
    ASSERT_TRUE(mapped.ok());
    auto file = index_internal::IndexFileV2::Open(*mapped, path);
    if (!file.ok()) continue;
    ++opened;
    EXPECT_FALSE((*file)->Verify().ok()) << "flip at " << i;
    const auto index =
        TableIndex::FromFile(std::shared_ptr<const index_internal::IndexFileV2>(std::move(*file)));
    std::vector<std::vector<Neighbor>> each;
    (void)index->SearchEach(d.queries, kK, &each);
    std::vector<Neighbor> one;
    (void)index->Search(d.queries[0], kK, &one);
  }
  EXPECT_GT(opened, 100u);  // most flips land in sections (caught by Verify)
  testing::WriteFile(path, good);
  auto mapped = index_internal::MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE(index_internal::IndexFileV2::Open(*mapped, path).ok());
}

}  // namespace
}  // namespace neardup
