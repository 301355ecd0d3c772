// Copyright 2026 The neardup Authors.
//
// The version 2 index file and its lookup tables (index/mask_tables.h,
// index/index_file_v2.h, index/table_index.h), against oracles:
//   - exact tables equal a linear scan;
//   - bands: zero false matches (every match within k, with its true
//     distance); recall on planted pairs against a linear scan, at every
//     distance, held to the computed guarantee;
//   - a DocumentIndex used in place (mmap) answers exactly as the model of its
//     contents predicts (a linear scan filtered by "some table finds it"),
//     after adds, removes, commit (compaction), reopen, and after an upgrade
//     from a version 1 file.

#include "index/table_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include "index/hamming_scan.h"
#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "index/probe_tables.h"
#include "neardup/band_join.h"
#include "neardup/document_index.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using index_internal::ChooseTables;
using index_internal::TableIndex;
using index_internal::TablesKind;
using index_internal::TablesPolicy;
using index_internal::TablesSpec;
using testing::FlipBits;
using testing::OracleSearch;
using testing::RandomFingerprint;

bool FoundBy(const TablesSpec& spec, const Fingerprint& q, const Fingerprint& x) {
  for (const auto& m : spec.masks) {
    const int d = std::popcount((q.hi() ^ x.hi()) & m.hi) + std::popcount((q.lo() ^ x.lo()) & m.lo);
    if (d <= static_cast<int>(m.radius)) return true;
  }
  return false;
}

TEST(ChooseTablesTest, LookupTablesAtOneMillionAreBandsWithTheRecallTargets) {
  const TablesSpec s = index_internal::ChooseLookupTables(1000000, 128, 24, TablesPolicy{});
  EXPECT_EQ(s.kind, TablesKind::kBands);
  EXPECT_GE(s.recall_at_k, 0.99);
  EXPECT_GE(s.recall_at_k_minus_4, 0.9999);
  EXPECT_LE(s.bytes_per_fingerprint, 512);
  EXPECT_EQ(s.seed, kDefaultBandSeed);
  // The guarantee is the band engine's formula for radius 0.
  if (s.radius == 0) {
    EXPECT_DOUBLE_EQ(s.recall_at_k, BandRecall(BitSamplingCollision(128, 24, s.band_bits),
                                               static_cast<int>(s.masks.size())));
  }
  // The masks are the band engine's.
  SimHashBands sb;
  sb.bits = 128;
  sb.band_bits = s.band_bits;
  sb.bands = static_cast<int>(s.masks.size());
  sb.seed = kDefaultBandSeed;
  const auto masks = SimHashBandMasks(sb);
  ASSERT_EQ(masks.size(), s.masks.size());
  for (size_t i = 0; i < masks.size(); ++i) {
    EXPECT_EQ(masks[i].first, s.masks[i].hi);
    EXPECT_EQ(masks[i].second, s.masks[i].lo);
  }
}

// The scan (no tables) wherever its estimated cost is not above the
// tables': at the default method (128 bits, k = 28) and 1M fingerprints with
// a SIMD kernel, never at 64 bits, k = 3 and 1M (the exact tables' ~1 us),
// never with policy.exact or tables_only. Whatever the kernel, the choice
// is the cheaper estimate.
TEST(ChooseTablesTest, TheScanWhereItIsCheaper) {
  using index_internal::ChooseLookupTables;
  using index_internal::ScanQueryUs;
  for (const auto& [n, bits, k] : std::vector<std::tuple<size_t, int, int>>{{1000, 128, 28},
                                                                            {1000000, 128, 28},
                                                                            {1000000, 128, 24},
                                                                            {100000000, 128, 28},
                                                                            {1000, 64, 3},
                                                                            {1000000, 64, 3},
                                                                            {100000000, 64, 3}}) {
    const TablesSpec lookup = ChooseLookupTables(n, bits, k, TablesPolicy{});
    const TablesSpec s = ChooseTables(n, bits, k, TablesPolicy{});
    // Without tables: the two-level filter where it is allowed and saves a
    // quarter of the exact scan, else the exact scan.
    double scan_us = ScanQueryUs(n, bits);
    TablesKind scan_kind = TablesKind::kScan;
    if (bits == 128 && n >= index_internal::kMinFilterRows) {
      const TablesSpec filter = index_internal::ChooseFilter(n, k, TablesPolicy{}.recall);
      if (filter.kind == TablesKind::kFilter &&
          filter.estimated_query_us <= index_internal::kFilterGain * scan_us) {
        scan_us = filter.estimated_query_us;
        scan_kind = TablesKind::kFilter;
      }
    }
    // The probe tables where they are allowed and cheaper than both.
    const index_internal::ProbeTablesSpec probe =
        index_internal::ChooseProbeTables(n, k, TablesPolicy{}.recall);
    if (bits == 128 && n >= index_internal::kMinFilterRows && probe.tables > 0 &&
        probe.estimated_query_us < scan_us &&
        probe.estimated_query_us < lookup.estimated_query_us) {
      EXPECT_EQ(s.kind, TablesKind::kProbe) << n << " " << bits << " " << k;
      EXPECT_EQ(s.masks.size(), static_cast<size_t>(probe.tables));
      EXPECT_EQ(s.dir_bits, probe.key_bits);
      EXPECT_EQ(s.radius, probe.threshold);
      EXPECT_GE(s.recall_at_k, TablesPolicy{}.recall);
      EXPECT_GE(s.recall_at_k_minus_4, 1 - (1 - TablesPolicy{}.recall) / 100);
      EXPECT_LE(s.bytes_per_fingerprint, index_internal::kMaxProbeBytes);
      EXPECT_DOUBLE_EQ(s.estimated_query_us, probe.estimated_query_us);
    } else if (scan_us <= lookup.estimated_query_us) {
      EXPECT_EQ(s.kind, scan_kind) << n << " " << bits << " " << k;
      EXPECT_TRUE(s.masks.empty());
      if (scan_kind == TablesKind::kScan) {
        EXPECT_EQ(s.recall_at_k, 1.0);
      }
      EXPECT_GE(s.recall_at_k, TablesPolicy{}.recall);
      EXPECT_EQ(s.bytes_per_fingerprint, 0.0);
      EXPECT_DOUBLE_EQ(s.estimated_query_us, scan_us);
    } else {
      EXPECT_EQ(s.kind, lookup.kind) << n << " " << bits << " " << k;
      EXPECT_EQ(s.masks.size(), lookup.masks.size());
    }
    TablesPolicy tables_only;
    tables_only.tables_only = true;
    EXPECT_EQ(ChooseTables(n, bits, k, tables_only).kind, lookup.kind);
    TablesPolicy exact;
    exact.exact = true;
    EXPECT_EQ(ChooseTables(n, bits, k, exact).kind, TablesKind::kExact);
  }
  // The measured crossovers (doc/index_format.md).
  EXPECT_EQ(ChooseTables(1000, 128, 28, TablesPolicy{}).kind, TablesKind::kScan);
  EXPECT_NE(ChooseTables(1000000, 64, 3, TablesPolicy{}).kind, TablesKind::kScan);
  {
    // The default method at 1M and 10M: the probe tables (8 tables, radius
    // 2; doc/benchmarks.md) of 15-bit keys, t = 15, at 10M; at 1M of
    // 14-bit keys, t = 14, with the AVX-512 kernel's costs, and of 15-bit
    // keys, t = 15, with AVX2's or the scalar kernel's (a filter word
    // compared costs 2.7 or 6.7 times as much there: fewer of them pay).
    using index_internal::ScanIsa;
    const ScanIsa saved = index_internal::ActiveScanIsa();
    for (const ScanIsa isa : {ScanIsa::kScalar, ScanIsa::kAvx2, ScanIsa::kAvx512}) {
      if (!index_internal::SetScanIsa(isa)) continue;
      const int at_1m = isa == ScanIsa::kAvx512 ? 14 : 15;
      for (const auto& [n, b] :
           std::vector<std::pair<size_t, int>>{{1000000, at_1m}, {10000000, 15}}) {
        const TablesSpec s = ChooseTables(n, 128, 28, TablesPolicy{});
        EXPECT_EQ(s.kind, TablesKind::kProbe) << n;
        EXPECT_EQ(s.dir_bits, b) << n << " " << index_internal::ScanIsaName(isa);
        EXPECT_EQ(s.masks.size(), 8u) << n;
        EXPECT_EQ(s.masks[0].radius, 2u) << n;
        EXPECT_EQ(s.radius, b) << n;
        EXPECT_LE(s.bytes_per_fingerprint, 128.0);
      }
    }
    index_internal::SetScanIsa(saved);
  }
  // Below kMinFilterRows, the scan (recall 1).
  EXPECT_EQ(ChooseTables(20000, 128, 28, TablesPolicy{}).kind, TablesKind::kScan);
  // An exact scan where recall 1 is asked for.
  TablesPolicy all;
  all.recall = 1;
  EXPECT_NE(ChooseTables(1000000, 128, 28, all).kind, TablesKind::kFilter);
  EXPECT_NE(ChooseTables(1000000, 128, 28, all).kind, TablesKind::kProbe);
  EXPECT_EQ(index_internal::ChooseFilter(1000000, 28, 1.0).kind, TablesKind::kScan);
}

TEST(ChooseTablesTest, ExactWhenAskedOrCheaper) {
  TablesPolicy exact;
  exact.exact = true;
  EXPECT_EQ(ChooseTables(1000000, 128, 24, exact).kind, TablesKind::kExact);
  EXPECT_EQ(ChooseTables(1000000, 64, 3, TablesPolicy{}).kind, TablesKind::kExact);
  EXPECT_DOUBLE_EQ(ChooseTables(1000, 64, 3, TablesPolicy{}).recall_at_k, 1.0);
}

TEST(TableCollisionTest, MatchesTheHypergeometricByCounting) {
  // P(X <= 1) with X the sampled positions among d differing ones, by
  // brute-force counting over all r-subsets of a small f.
  const int f = 12, d = 4, r = 5;
  int total = 0, le0 = 0, le1 = 0;
  for (int set = 0; set < (1 << f); ++set) {
    if (std::popcount(static_cast<unsigned>(set)) != r) continue;
    ++total;
    const int hit = std::popcount(static_cast<unsigned>(set) & 0xfu);  // differing: bits 0..3
    le0 += hit == 0;
    le1 += hit <= 1;
  }
  EXPECT_NEAR(index_internal::TableCollision(f, d, r, 0), static_cast<double>(le0) / total, 1e-12);
  EXPECT_NEAR(index_internal::TableCollision(f, d, r, 1), static_cast<double>(le1) / total, 1e-12);
}

// Exact tables equal the linear scan, 64 and 128 bits.
TEST(TableIndexTest, ExactTablesEqualLinearScan) {
  for (const auto& [bits, k] : {std::pair{64, 3}, std::pair{128, 8}, std::pair{64, 0}}) {
    std::mt19937_64 rng(bits * 100 + k);
    TablesPolicy policy;
    policy.exact = true;
    auto index = TableIndex::Create(bits, k, policy, 5000);
    ASSERT_TRUE(index.ok());
    std::vector<IndexEntry> entries;
    std::vector<uint64_t> ids;
    std::vector<Fingerprint> fps;
    for (uint64_t i = 0; i < 5000; ++i) {
      const Fingerprint fp = i % 3 == 0 && i > 0
                                 ? FlipBits(fps[i - 1], static_cast<int>(i % (k + 2)), rng)
                                 : RandomFingerprint(bits, rng);
      ids.push_back(i);
      fps.push_back(fp);
      entries.push_back({i, fp});
    }
    ASSERT_TRUE((*index)->AddBatch(ids, fps).ok());
    std::vector<Neighbor> got;
    for (int q = 0; q < 300; ++q) {
      const Fingerprint query =
          FlipBits(fps[rng() % fps.size()], static_cast<int>(rng() % (k + 2)), rng);
      for (int kk : {0, k / 2, k}) {
        ASSERT_TRUE((*index)->Search(query, kk, &got).ok());
        EXPECT_EQ(got, OracleSearch(entries, query, kk)) << bits << " k " << kk;
      }
    }
  }
}

// The delta in levels: batches of every size (one entry to several tail
// caps), some deferred, with removals between them, so that levels form,
// merge and hold dead entries; after each batch the exact tables answer as
// a linear scan of the live entries.
TEST(TableIndexTest, DeltaLevelsEqualLinearScanThroughAddsAndRemovals) {
  constexpr int kBits = 64, kK = 3;
  std::mt19937_64 rng(11);
  TablesPolicy policy;
  policy.exact = true;
  auto index = TableIndex::Create(kBits, kK, policy, 1);
  ASSERT_TRUE(index.ok());
  std::map<uint64_t, Fingerprint> live;
  std::vector<Fingerprint> all;
  uint64_t next = 0;
  const size_t sizes[] = {1, 700, 1500, 3, 1100, 40, 2500, 1025, 9, 4000, 1, 1300};
  for (size_t round = 0; round < std::size(sizes); ++round) {
    std::vector<uint64_t> ids;
    std::vector<Fingerprint> fps;
    for (size_t i = 0; i < sizes[round]; ++i) {
      const Fingerprint fp =
          !all.empty() && rng() % 3 == 0
              ? FlipBits(all[rng() % all.size()], static_cast<int>(rng() % 5), rng)
              : RandomFingerprint(kBits, rng);
      ids.push_back(next);
      fps.push_back(fp);
      live[next] = fp;
      all.push_back(fp);
      ++next;
    }
    if (round % 3 == 2) {
      ASSERT_TRUE((*index)->AddBatchDeferTables(ids, fps).ok());
    } else {
      ASSERT_TRUE((*index)->AddBatch(ids, fps).ok());
    }
    // Remove about 5 % of what is there, old and new entries alike.
    std::vector<uint64_t> gone;
    for (const auto& [id, fp] : live) {
      if (rng() % 20 == 0) gone.push_back(id);
    }
    EXPECT_EQ((*index)->RemoveBatch(gone), gone.size());
    for (uint64_t id : gone) live.erase(id);
    ASSERT_EQ((*index)->size(), live.size());
    std::vector<IndexEntry> entries;
    for (const auto& [id, fp] : live) entries.push_back({id, fp});
    std::vector<Neighbor> got;
    for (int q = 0; q < 60; ++q) {
      const Fingerprint query =
          FlipBits(all[rng() % all.size()], static_cast<int>(rng() % (kK + 2)), rng);
      ASSERT_TRUE((*index)->Search(query, kK, &got).ok());
      ASSERT_EQ(got, OracleSearch(entries, query, kK)) << "round " << round;
    }
  }
  EXPECT_GT((*index)->MemoryBytes(), all.size() * 8);
}

// A delta grown by many batches (a server's adds between compactions)
// keeps few levels: each at least 8 times the next one's size (a level's
// probes cost a query the same whatever its size), so 60 batches of 1,500
// entries form at most log8(delta / smallest level) + 1; and the search
// still equals the linear scan.
TEST(TableIndexTest, DeltaKeepsFewLevelsUnderSustainedAdds) {
  constexpr int kBits = 64, kK = 3;
  std::mt19937_64 rng(12);
  TablesPolicy policy;
  policy.exact = true;
  auto index = TableIndex::Create(kBits, kK, policy, 1);
  ASSERT_TRUE(index.ok());
  std::vector<IndexEntry> entries;
  size_t most_levels = 0;
  for (int batch = 0; batch < 60; ++batch) {
    std::vector<uint64_t> ids;
    std::vector<Fingerprint> fps;
    for (int i = 0; i < 1500; ++i) {
      const Fingerprint fp = !entries.empty() && rng() % 4 == 0
                                 ? FlipBits(entries[rng() % entries.size()].fingerprint,
                                            static_cast<int>(rng() % 5), rng)
                                 : RandomFingerprint(kBits, rng);
      ids.push_back(entries.size());
      fps.push_back(fp);
      entries.push_back({entries.size(), fp});
    }
    ASSERT_TRUE((*index)->AddBatch(ids, fps).ok());
    const std::vector<size_t> levels = (*index)->DeltaLevelSizes();
    ASSERT_FALSE(levels.empty()) << "batch " << batch;  // 1,500 entries pass the tail cap
    for (size_t l = 1; l < levels.size(); ++l) {
      EXPECT_GE(levels[l - 1], 8 * levels[l]) << "batch " << batch << " level " << l;
    }
    size_t bound = 1;
    for (size_t s = levels.back(); s * 8 <= entries.size(); s *= 8) ++bound;
    EXPECT_LE(levels.size(), bound) << "batch " << batch;
    most_levels = std::max(most_levels, levels.size());
  }
  EXPECT_GE(most_levels, 2u);  // the merging is exercised, not one level alone
  std::vector<Neighbor> got;
  for (int q = 0; q < 100; ++q) {
    const Fingerprint query = FlipBits(entries[rng() % entries.size()].fingerprint,
                                       static_cast<int>(rng() % (kK + 2)), rng);
    ASSERT_TRUE((*index)->Search(query, kK, &got).ok());
    ASSERT_EQ(got, OracleSearch(entries, query, kK)) << "query " << q;
  }
}

// Bands at the default method: planted pairs at every distance 0..k+4 among
// random fingerprints. No false match ever; the recall measured at each
// distance is held to the computed guarantee minus 4 sigma.
TEST(TableIndexTest, BandsRecallOnPlantedPairsAndNoFalseMatches) {
  constexpr int kBits = 128, kK = 24, kPerDistance = 400;
  constexpr size_t kN = 20000;
  std::mt19937_64 rng(7);
  TablesPolicy bands;
  bands.tables_only = true;  // 20,000 rows: the scan would be cheaper
  auto index = TableIndex::Create(kBits, kK, bands, kN);
  ASSERT_TRUE(index.ok());
  const TablesSpec& spec = (*index)->spec();
  ASSERT_EQ(spec.kind, TablesKind::kBands);
  std::vector<IndexEntry> entries;
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  for (uint64_t i = 0; i < kN; ++i) {
    ids.push_back(i);
    fps.push_back(RandomFingerprint(kBits, rng));
    entries.push_back({i, fps.back()});
  }
  ASSERT_TRUE((*index)->AddBatch(ids, fps).ok());
  std::vector<Neighbor> got;
  for (int d = 0; d <= kK + 4; ++d) {
    int found = 0;
    for (int t = 0; t < kPerDistance; ++t) {
      const uint64_t target = rng() % kN;
      const Fingerprint q = FlipBits(fps[target], d, rng);
      ASSERT_TRUE((*index)->Search(q, kK, &got).ok());
      // The linear scan by popcount (SlowDistance, the bit-by-bit oracle,
      // over 20,000 entries per query took 100 s here), then every answer's
      // distance checked by SlowDistance.
      std::vector<Neighbor> truth;
      for (const IndexEntry& e : entries) {
        const int dist =
            std::popcount(e.fingerprint.lo() ^ q.lo()) + std::popcount(e.fingerprint.hi() ^ q.hi());
        if (dist <= kK) truth.push_back(Neighbor{e.id, dist});
      }
      std::sort(truth.begin(), truth.end(), [](const Neighbor& a, const Neighbor& b) {
        return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
      });
      // Zero false matches: every answer is in the linear scan's, with its distance.
      for (const Neighbor& n : got) {
        EXPECT_NE(std::find(truth.begin(), truth.end(), n), truth.end()) << "false match";
        EXPECT_EQ(testing::SlowDistance(q, fps[n.id]), n.distance);
      }
      // What the tables find is exactly the truth filtered by the masks.
      std::vector<Neighbor> predicted;
      for (const Neighbor& n : truth) {
        if (FoundBy(spec, q, fps[n.id])) predicted.push_back(n);
      }
      EXPECT_EQ(got, predicted);
      found +=
          std::any_of(got.begin(), got.end(), [&](const Neighbor& n) { return n.id == target; });
    }
    if (d > kK) {
      EXPECT_EQ(found, 0);
      continue;
    }
    const double p =
        BandRecall(index_internal::TableCollision(kBits, d, spec.band_bits, spec.radius),
                   static_cast<int>(spec.masks.size()));
    const double sigma = std::sqrt(p * (1 - p) / kPerDistance);
    EXPECT_GE(static_cast<double>(found) / kPerDistance, p - 4 * sigma - 1e-9) << "d " << d;
    if (d <= kK - 4) {
      EXPECT_GE(p, 0.9999);
    }
  }
  EXPECT_GE(spec.recall_at_k, 0.99);
}

// ---------------------------------------------------------------------------
// DocumentIndex in place against its model.

class MappedDocumentIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("mapped_index");
    path_ = dir_ + "/i.idx";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The masks the index's tables use, from its stats.
  TablesSpec SpecOf(const DocumentIndex& index) const {
    const DocumentIndexStats s = index.Stats();
    TablesSpec spec;
    if (s.tables.kind == "bands") {
      SimHashBands sb;
      sb.bits = s.bits;
      sb.band_bits = s.tables.band_bits;
      sb.bands = s.tables.tables;
      sb.seed = s.tables.seed;
      for (const auto& [hi, lo] : SimHashBandMasks(sb)) {
        spec.masks.push_back({hi, lo, static_cast<uint32_t>(s.tables.probe_radius)});
      }
    }
    return spec;  // exact tables or the scan: every match within k is found
  }

  // Every query answers as the model predicts.
  void ExpectModel(const DocumentIndex& index, const std::map<std::string, Fingerprint>& model,
                   std::mt19937_64& rng, const std::string& when) {
    ASSERT_EQ(index.size(), model.size()) << when;
    const TablesSpec spec = SpecOf(index);
    const bool exact = index.Stats().tables.kind != "bands";
    std::vector<std::pair<std::string, Fingerprint>> all(model.begin(), model.end());
    std::vector<DocumentMatch> got;
    for (int t = 0; t < 200; ++t) {
      const Fingerprint q = all.empty() || t % 4 == 0
                                ? RandomFingerprint(index.bits(), rng)
                                : FlipBits(all[rng() % all.size()].second,
                                           static_cast<int>(rng() % (index.max_k() + 3)), rng);
      ASSERT_TRUE(index.Query(q, index.max_k(), &got).ok());
      std::vector<std::pair<int, std::string>> want;
      for (const auto& [id, fp] : all) {
        const int d = HammingDistance(q, fp);
        if (d <= index.max_k() && (exact || FoundBy(spec, q, fp))) want.push_back({d, id});
      }
      std::vector<std::pair<int, std::string>> have;
      for (const DocumentMatch& m : got) have.push_back({m.distance, m.id});
      std::sort(want.begin(), want.end());
      std::sort(have.begin(), have.end());
      ASSERT_EQ(have, want) << when << ", query " << t;
    }
    for (const auto& [id, fp] : model) ASSERT_TRUE(index.Contains(id)) << when << " " << id;
  }

  void RunScenario(int bits, int max_k, const IndexTablesOptions& tables) {
    std::mt19937_64 rng(bits + max_k);
    std::map<std::string, Fingerprint> model;
    std::vector<std::string> ids;
    std::vector<Fingerprint> fps;
    for (int i = 0; i < 3000; ++i) {
      ids.push_back("doc-" + std::to_string(i));
      fps.push_back(i % 5 == 0 && i > 0 ? FlipBits(fps.back(), static_cast<int>(rng() % 6), rng)
                                        : RandomFingerprint(bits, rng));
      model[ids.back()] = fps.back();
    }
    PermutedTableOptions options;
    options.bits = bits;
    options.max_k = max_k;
    DocumentIndexHeader header;
    header.tables = tables;
    {
      auto built = DocumentIndex::Build(path_, header, options, ids, fps);
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      built_kind_ = (*built)->Stats().tables.kind;
      ExpectModel(**built, model, rng, "built, in memory");
      ASSERT_TRUE((*built)->Commit().ok());
      ExpectModel(**built, model, rng, "committed");
    }
    DocumentIndexOptions logged;
    logged.log = true;
    logged.compact_fraction = 0;
    {
      auto index = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, logged);
      ASSERT_TRUE(index.ok()) << index.status().ToString();
      EXPECT_EQ((*index)->Stats().tables.file_version, tables.file_version);
      ExpectModel(**index, model, rng, "reopened");
      // Adds (near copies and new), removes of base and delta entries.
      std::vector<std::string> add_ids;
      std::vector<Fingerprint> add_fps;
      for (int i = 0; i < 2500; ++i) {
        add_ids.push_back("new-" + std::to_string(i));
        add_fps.push_back(i % 2
                              ? FlipBits(fps[rng() % fps.size()], static_cast<int>(rng() % 5), rng)
                              : RandomFingerprint(bits, rng));
        model[add_ids.back()] = add_fps.back();
      }
      ASSERT_TRUE((*index)->AddBatch(add_ids, add_fps).ok());
      ExpectModel(**index, model, rng, "after adds");
      std::vector<std::string> gone;
      for (int i = 0; i < 3000; i += 7) gone.push_back("doc-" + std::to_string(i));
      for (int i = 0; i < 2500; i += 11) gone.push_back("new-" + std::to_string(i));
      for (const auto& g : gone) model.erase(g);
      auto removed = (*index)->Remove(gone, nullptr);
      ASSERT_TRUE(removed.ok());
      EXPECT_EQ(*removed, gone.size());
      ExpectModel(**index, model, rng, "after removes");
      // Replace one base document with another fingerprint.
      const Fingerprint moved = RandomFingerprint(bits, rng);
      ASSERT_TRUE((*index)->Add("doc-1", moved, /*replace=*/true).ok());
      model["doc-1"] = moved;
      ExpectModel(**index, model, rng, "after a replace");
    }
    {
      // Reopen: the log is replayed over the mapped file.
      auto index = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadWrite, logged);
      ASSERT_TRUE(index.ok()) << index.status().ToString();
      ExpectModel(**index, model, rng, "reopened with the log");
      ASSERT_TRUE((*index)->Compact().ok());
      EXPECT_EQ((*index)->Stats().tables.delta_entries, 0u);
      // A version 1 or 2 file is rewritten as the current version (the
      // upgrade).
      EXPECT_EQ((*index)->Stats().tables.file_version, IndexTablesOptions{}.file_version);
      ExpectModel(**index, model, rng, "compacted");
      const Status verified = (*index)->Verify();
      ASSERT_TRUE(verified.ok()) << verified.ToString();
    }
    auto reader = DocumentIndex::Open(path_);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    ExpectModel(**reader, model, rng, "reopened after compaction");
    // Read into (huge-page) memory instead of mapped: the same answers.
    DocumentIndexOptions preload;
    preload.preload = true;
    auto preloaded = DocumentIndex::Open(path_, DocumentIndex::Mode::kReadOnly, preload);
    ASSERT_TRUE(preloaded.ok()) << preloaded.status().ToString();
    ExpectModel(**preloaded, model, rng, "preloaded");
  }

  std::string dir_;
  std::string path_;
  std::string built_kind_;  // the kind of tables Build chose
};

TEST_F(MappedDocumentIndexTest, Bands128) {
  IndexTablesOptions t;
  t.tables_only = true;  // at this size the scan would be cheaper
  RunScenario(128, 24, t);
  EXPECT_EQ(built_kind_, "bands");
}

// The default method at a few thousand documents: no tables, the scan.
TEST_F(MappedDocumentIndexTest, Scan128) {
  RunScenario(128, 28, IndexTablesOptions{});
  EXPECT_EQ(built_kind_, "scan");
}

TEST_F(MappedDocumentIndexTest, VersionTwoScan128) {
  IndexTablesOptions v2;
  v2.file_version = 2;
  RunScenario(128, 28, v2);
  EXPECT_EQ(built_kind_, "scan");
}

TEST_F(MappedDocumentIndexTest, Bands64) { RunScenario(64, 3, IndexTablesOptions{}); }

TEST_F(MappedDocumentIndexTest, Exact64) {
  IndexTablesOptions t;
  t.exact = true;
  RunScenario(64, 3, t);
}

TEST_F(MappedDocumentIndexTest, Exact128) {
  IndexTablesOptions t;
  t.exact = true;
  RunScenario(128, 10, t);
}

// Version 2 files (the tables' rows and keys, and the fingerprints' halves,
// in separate arrays) are read, changed through the log, and upgraded to
// version 3 by Compact.
TEST_F(MappedDocumentIndexTest, VersionTwoBands128) {
  IndexTablesOptions v2;
  v2.file_version = 2;
  v2.tables_only = true;
  RunScenario(128, 24, v2);
}

TEST_F(MappedDocumentIndexTest, VersionTwoExact64) {
  IndexTablesOptions v2;
  v2.file_version = 2;
  v2.exact = true;
  RunScenario(64, 3, v2);
}

// Version 1 files (written by older neardup, or with file_version 1) are
// read, changed through the log, and upgraded to version 3 by Compact.
TEST_F(MappedDocumentIndexTest, VersionOneFilesAreReadAndUpgradedByCompact) {
  IndexTablesOptions v1;
  v1.file_version = 1;
  v1.exact = true;
  RunScenario(64, 3, v1);
}

TEST_F(MappedDocumentIndexTest, VersionOneBands) {
  IndexTablesOptions v1;
  v1.file_version = 1;
  RunScenario(64, 3, v1);
}

// A damaged version 2 or 3 file: every byte flipped in turn is an error on
// Open or on Verify, or (a flip in a section, unverified) answers without
// crashing.
// Param: (file version, lookup tables required): a file of exact tables,
// and one with no tables (the scan, the default at this size).
class DamagedFileTest : public MappedDocumentIndexTest,
                        public ::testing::WithParamInterface<std::tuple<int, bool>> {};

TEST_P(DamagedFileTest, FlippedBytesAreCaughtByOpenOrVerify) {
  std::mt19937_64 rng(3);
  std::vector<std::string> ids;
  std::vector<Fingerprint> fps;
  for (int i = 0; i < 50; ++i) {
    ids.push_back("d" + std::to_string(i));
    fps.push_back(RandomFingerprint(128, rng));
  }
  PermutedTableOptions options;
  options.bits = 128;
  options.max_k = 24;
  const auto [version, tables_only] = GetParam();
  DocumentIndexHeader header;
  header.tables.file_version = version;
  header.tables.tables_only = tables_only;
  auto built = DocumentIndex::Build(path_, header, options, ids, fps);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ((*built)->Stats().tables.kind, tables_only ? "exact" : "scan");
  ASSERT_TRUE((*built)->Commit().ok());
  built->reset();
  const std::string good = testing::ReadFile(path_);
  ASSERT_EQ(index_internal::IndexFileVersion(good), static_cast<uint32_t>(version));
  std::vector<DocumentMatch> got;
  for (size_t i = 0; i < good.size(); i += std::max<size_t>(1, good.size() / 400)) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 + rng() % 255));
    testing::WriteFile(path_, bad);
    auto index = DocumentIndex::Open(path_);
    if (!index.ok()) continue;  // the metadata checksum, or ids/checksum pairing
    EXPECT_FALSE((*index)->Verify().ok()) << "flip at " << i;
    for (const Fingerprint& fp : fps) (void)(*index)->Query(fp, 24, &got);
  }
  // Truncated at every length in steps: never opens as valid.
  for (size_t len = 0; len < good.size(); len += std::max<size_t>(1, good.size() / 200)) {
    testing::WriteFile(path_, good.substr(0, len));
    EXPECT_FALSE(DocumentIndex::Open(path_).ok()) << "length " << len;
  }
  testing::WriteFile(path_, good);
  EXPECT_TRUE(DocumentIndex::Open(path_).ok());
}

INSTANTIATE_TEST_SUITE_P(Versions, DamagedFileTest,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Bool()));

}  // namespace
}  // namespace neardup
