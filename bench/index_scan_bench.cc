// Copyright 2026 The neardup Authors.
//
// Exact scans against the tables, one thread, CPU time, at 1M fingerprints
// (random, plus neighbours planted at every distance 0..k for each of 1,000
// queries): the default method (128 bits, k = 28) and 64 bits, k = 3. The
// environment variable NEARDUP_BENCH_N sets another size (e.g. 10000000).
//
//   BM_Scan/<bits>/<k>/<isa>   LinearScanIndex::Search, one query an
//                              iteration, with the scalar (0), AVX2 (1) or
//                              AVX-512 VPOPCNTQ (2) kernel
//   BM_ScanBatch/<bits>/<k>/<isa>  LinearScanIndex::SearchBatch (tiled),
//                              1,000 queries an iteration
//   BM_Tables                  the cheapest lookup tables (ChooseLookupTables:
//                              exact or bands) in a version 3 index file
//                              (what DocumentIndex queries), read into huge
//                              pages (--preload): TableIndex::Search, one
//                              query an iteration
//   BM_TablesEach              the same tables, TableIndex::SearchEach,
//                              1,000 queries through the tables' batch
//                              pipeline (DocumentIndex::QueryBatch, Check)
//   BM_Chosen, BM_ChosenEach   the same two for what ChooseTables picks
//                              (DocumentIndex's default): the scan (a file
//                              with no tables) where it is cheaper, else
//                              the tables above (the label tells;
//                              NEARDUP_BENCH_SKIP_TABLES=1 builds only it)
//   BM_Combined                the pick through a FileSearchCombiner, one
//                              query a call (serve's /v1/check, /v1/query)
//   BM_HalfFilter/<t>          a two-level scan at 128 bits, k = 28 written
//                              here (the index's own is the kind "filter",
//                              BM_Chosen*): the low 64 bits within t, then
//                              the survivors' full distance; 1,000 queries
//   BM_Probe/<b>/<r>/<L>/<one>  the probe tables (index/probe_tables.h;
//                              measured here, not used by the index): L
//                              tables of b-bit keys probed within radius r,
//                              t the smallest meeting the targets;
//                              /0/0/0 is ChooseProbeTables' pick; 1,000
//                              queries an iteration, by SearchEach (the
//                              batch), or by Search one at a time (one = 1)
//   BM_ProbeBatch/<batch>/<order>  ChooseProbeTables' pick, the 1,000
//                              queries in batches of `batch` (SearchEach
//                              each; serve's combiner's batches hold 1-4
//                              queries), the probes ordered as SearchEach
//                              picks (0), query by query (1) or sorted by
//                              key (2); found: the rows reported (the same
//                              at every batch and order)
//   BM_Delta/<n>/<batch>/<level>/<dir>  an index's delta of n entries: its
//                              tail scanned (0, tiled over the batch)
//                              against a level's probe tables, the probes
//                              ordered as SearchEach picks (1), query by
//                              query (2) or sorted by key (3); the level's
//                              directory on the file's 14 key bits (dir 0),
//                              on LevelDirBits(n) of them (1, what
//                              TableIndex builds), or on `dir` bits (>= 6)
//   BM_ChunkReads/<words>      one core's bandwidth reading runs of `words`
//                              words at random places (a probed bucket)
//   BM_FaissFlat               the reference: faiss IndexBinaryFlat
//                              range_search (Debian's libfaiss), 100 queries
//
// us_per_query is CPU time per query. recall is the tables' on the 1,000
// queries against the exact scan (every neighbour within k, planted or
// not; recall_at_k of those at distance k); table_bytes_per_fp the tables' measured bytes
// (directory and entries) per fingerprint, beyond the fingerprint and its id.
//
//   neardup_index_scan_bench --benchmark_min_time=0.3

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "index/hamming_scan.h"
#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "index/probe_tables.h"
#include "index/search_combiner.h"
#include "index/table_index.h"
#include "neardup/index.h"

#ifdef NEARDUP_HAVE_FAISS
#include <faiss/IndexBinaryFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <omp.h>
#endif

namespace neardup {
namespace {

using index_internal::ScanIsa;

size_t BenchN() {
  const char* n = std::getenv("NEARDUP_BENCH_N");
  return n != nullptr && std::atoll(n) > 0 ? static_cast<size_t>(std::atoll(n)) : 1000000;
}
const size_t kN = BenchN();
// NEARDUP_BENCH_ISA=scalar|avx2|avx512: the kernels of that ISA (where the
// CPU has it) instead of the best one, for the probe tables' cost model.
const bool kIsaSet = [] {
  const char* isa = std::getenv("NEARDUP_BENCH_ISA");
  if (isa == nullptr) return false;
  const std::string name(isa);
  return index_internal::SetScanIsa(name == "scalar" ? ScanIsa::kScalar
                                    : name == "avx2" ? ScanIsa::kAvx2
                                                     : ScanIsa::kAvx512);
}();
constexpr size_t kQueries = 1000;

struct Data {
  int bits = 0;
  int k = 0;
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  std::vector<Fingerprint> queries;
  std::unique_ptr<LinearScanIndex> scan;
  std::unique_ptr<index_internal::TableIndex> tables;
  std::unique_ptr<index_internal::TableIndex> chosen;  // null: the same as tables
  std::string path, chosen_path;
  double recall = 0;              // of every neighbour within k, by Search
  double recall_at_k = 0;         // of those at distance k
  double chosen_recall = 0;       // the same for ChooseTables' pick, by
  double chosen_recall_at_k = 0;  // SearchEach
  double table_bytes_per_fp = 0;
  double chosen_bytes_per_fp = 0;  // when chosen is not null
  std::string tables_desc, chosen_desc;
#ifdef NEARDUP_HAVE_FAISS
  std::unique_ptr<faiss::IndexBinaryFlat> faiss;
  std::vector<uint8_t> qcodes;
#endif
  ~Data() {
    if (!path.empty()) std::filesystem::remove(path);
    if (!chosen_path.empty()) std::filesystem::remove(chosen_path);
  }
};

Fingerprint Random(int bits, std::mt19937_64& rng) {
  return bits == 64 ? Fingerprint::From64(rng()) : Fingerprint::From128(rng(), rng());
}

Fingerprint Flip(const Fingerprint& fp, int d, int bits, std::mt19937_64& rng) {
  uint64_t hi = fp.hi(), lo = fp.lo();
  std::vector<int> pos(static_cast<size_t>(bits));
  for (int j = 0; j < bits; ++j) pos[static_cast<size_t>(j)] = j;
  std::shuffle(pos.begin(), pos.end(), rng);
  for (int i = 0; i < d; ++i) {
    const int j = pos[static_cast<size_t>(i)];
    if (j < 64) {
      lo ^= uint64_t{1} << j;
    } else {
      hi ^= uint64_t{1} << (j - 64);
    }
  }
  return bits == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
}

Data& Get(int bits, int k) {
  static std::map<std::pair<int, int>, std::unique_ptr<Data>> cache;
  auto& slot = cache[{bits, k}];
  if (slot) return *slot;
  slot = std::make_unique<Data>();
  Data& d = *slot;
  d.bits = bits;
  d.k = k;
  std::mt19937_64 rng(static_cast<uint64_t>(bits * 100 + k));
  for (size_t i = 0; i < kN; ++i) {
    d.ids.push_back(i);
    d.fps.push_back(Random(bits, rng));
  }
  // Neighbours at 0..k of each query, at distinct random rows.
  std::vector<size_t> order(kN);
  for (size_t i = 0; i < kN; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  size_t next = 0;
  for (size_t q = 0; q < kQueries; ++q) {
    d.queries.push_back(Random(bits, rng));
    for (int dist = 0; dist <= k; ++dist)
      d.fps[order[next++]] = Flip(d.queries[q], dist, bits, rng);
  }
  d.scan = std::move(*LinearScanIndex::Build(bits, d.ids, d.fps));

  // The cheapest lookup tables, and ChooseTables' pick (DocumentIndex's
  // default), each in a version 3 file.
  index_internal::TablesPolicy policy;
  std::vector<uint64_t> lo, hi;
  std::vector<std::string> names;
  std::vector<std::string_view> views;
  for (size_t i = 0; i < kN; ++i) {
    lo.push_back(d.fps[i].lo());
    if (bits == 128) hi.push_back(d.fps[i].hi());
    names.push_back(std::to_string(i));
  }
  for (const auto& n : names) views.push_back(n);
  const auto open = [&](const index_internal::TablesSpec& spec, const std::string& suffix,
                        std::string* path, double* table_bytes_per_fp) {
    index_internal::IndexFileV2Meta meta;
    meta.spec = spec;
    meta.policy = policy;
    meta.rows = kN;
    *path = (std::filesystem::temp_directory_path() /
             ("neardup_index_scan_bench_" + std::to_string(::getpid()) + "_" +
              std::to_string(bits) + "_" + std::to_string(k) + suffix + ".ndx"))
                .string();
    uint64_t checksum = 0;
    const Status written = index_internal::WriteIndexFileV2(
        *path, meta, index_internal::IndexFileV2Rows{d.ids, lo, hi, views}, 0, &checksum);
    if (!written.ok()) {
      std::fprintf(stderr, "%s\n", written.ToString().c_str());
      std::abort();
    }
    auto mapped = index_internal::MappedFile::Open(*path, /*preload=*/true);
    auto file = index_internal::IndexFileV2::Open(*mapped, *path);
    std::shared_ptr<const index_internal::IndexFileV2> shared(std::move(*file));
    size_t table_bytes = 0;
    for (const auto& t : shared->tables().tables) {
      table_bytes += t.dir.size_bytes() + t.rows.size_bytes() + t.keys.size_bytes() +
                     t.entries.size_bytes() + t.words.size_bytes();
    }
    *table_bytes_per_fp = static_cast<double>(table_bytes) / static_cast<double>(kN);
    return index_internal::TableIndex::FromFile(shared);
  };
  const auto describe = [](const index_internal::TablesSpec& spec) {
    if (spec.kind == index_internal::TablesKind::kScan) return std::string("scan, no tables");
    if (spec.kind == index_internal::TablesKind::kFilter) {
      return "filter (two-level scan), t = " + std::to_string(spec.radius) + ", no tables";
    }
    if (spec.kind == index_internal::TablesKind::kProbe) {
      return "probe, " + std::to_string(spec.masks.size()) + " tables of " +
             std::to_string(spec.dir_bits) + "-bit keys, radius " +
             std::to_string(spec.masks[0].radius) + ", t = " + std::to_string(spec.radius);
    }
    return std::string(index_internal::TablesKindName(spec.kind)) + ", " +
           std::to_string(spec.masks.size()) + " tables" +
           (spec.kind == index_internal::TablesKind::kBands
                ? " of " + std::to_string(spec.band_bits) + " bits, radius " +
                      std::to_string(spec.radius)
                : " of " + std::to_string(spec.blocks) + " blocks");
  };
  const index_internal::TablesSpec lookup = index_internal::ChooseLookupTables(kN, bits, k, policy);
  const index_internal::TablesSpec chosen = index_internal::ChooseTables(kN, bits, k, policy);
  // NEARDUP_BENCH_SKIP_TABLES=1: only ChooseTables' pick is built (BM_Tables
  // then measures it too), for sizes whose lookup tables take too long.
  const bool skip = std::getenv("NEARDUP_BENCH_SKIP_TABLES") != nullptr;
  const index_internal::TablesSpec& first = skip ? chosen : lookup;
  d.tables = open(first, "", &d.path, &d.table_bytes_per_fp);
  d.tables_desc = describe(first);
  d.chosen_desc = describe(chosen);
  if (chosen.kind != first.kind) {
    d.chosen = open(chosen, "_chosen", &d.chosen_path, &d.chosen_bytes_per_fp);
  }

  // Recall against the exact scan on the 1,000 queries: the tables' by
  // Search, the pick's by SearchEach. Neither reports a false match
  // (tested), so the counts compare.
  SearchResults truth;
  (void)d.scan->SearchBatch(d.queries, k, 1, &truth);
  std::vector<Neighbor> single, one;
  for (const Fingerprint& q : d.queries) {
    (void)d.tables->Search(q, k, &one);
    single.insert(single.end(), one.begin(), one.end());
  }
  std::vector<std::vector<Neighbor>> each;
  (void)(d.chosen ? d.chosen : d.tables)->SearchEach(d.queries, k, &each);
  std::vector<Neighbor> picked;
  for (const auto& e : each) picked.insert(picked.end(), e.begin(), e.end());
  const auto at_k = [k](const std::vector<Neighbor>& v) {
    return static_cast<double>(
        std::count_if(v.begin(), v.end(), [k](const Neighbor& n) { return n.distance == k; }));
  };
  const double all = static_cast<double>(std::max<size_t>(1, truth.neighbors.size()));
  const double all_k = std::max(1.0, at_k(truth.neighbors));
  d.recall = static_cast<double>(single.size()) / all;
  d.recall_at_k = at_k(single) / all_k;
  d.chosen_recall = static_cast<double>(picked.size()) / all;
  d.chosen_recall_at_k = at_k(picked) / all_k;
#ifdef NEARDUP_HAVE_FAISS
  const size_t bytes = static_cast<size_t>(bits / 8);
  std::vector<uint8_t> codes(kN * bytes);
  for (size_t i = 0; i < kN; ++i) {
    std::memcpy(&codes[i * bytes], &lo[i], 8);
    if (bits == 128) std::memcpy(&codes[i * bytes + 8], &hi[i], 8);
  }
  d.faiss = std::make_unique<faiss::IndexBinaryFlat>(bits);
  d.faiss->add(static_cast<faiss::IndexBinary::idx_t>(kN), codes.data());
  d.qcodes.resize(kQueries * bytes);
  for (size_t q = 0; q < kQueries; ++q) {
    const uint64_t ql = d.queries[q].lo(), qh = d.queries[q].hi();
    std::memcpy(&d.qcodes[q * bytes], &ql, 8);
    if (bits == 128) std::memcpy(&d.qcodes[q * bytes + 8], &qh, 8);
  }
#endif
  return d;
}

void PerQuery(benchmark::State& state, size_t queries_per_iteration) {
  state.counters["us_per_query"] = benchmark::Counter(
      static_cast<double>(queries_per_iteration) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Scan(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const auto isa = static_cast<ScanIsa>(state.range(2));
  Data& d = Get(bits, k);
  if (!index_internal::SetScanIsa(isa)) {
    state.SkipWithError("this CPU lacks the kernel");
    return;
  }
  std::vector<Neighbor> hits;
  size_t q = 0;
  for (auto _ : state) {
    (void)d.scan->Search(d.queries[q], k, &hits);
    benchmark::DoNotOptimize(hits.data());
    q = (q + 1) % d.queries.size();
  }
  index_internal::SetScanIsa(index_internal::BestScanIsa());
  state.SetLabel(index_internal::ScanIsaName(isa));
  state.counters["bytes_per_fp"] = static_cast<double>(bits / 8);
  PerQuery(state, 1);
}

void BM_ScanBatch(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const auto isa = static_cast<ScanIsa>(state.range(2));
  Data& d = Get(bits, k);
  if (!index_internal::SetScanIsa(isa)) {
    state.SkipWithError("this CPU lacks the kernel");
    return;
  }
  SearchResults out;
  for (auto _ : state) {
    (void)d.scan->SearchBatch(d.queries, k, 1, &out);
    benchmark::DoNotOptimize(out.neighbors.data());
  }
  index_internal::SetScanIsa(index_internal::BestScanIsa());
  state.SetLabel(index_internal::ScanIsaName(isa));
  state.counters["bytes_per_fp"] = static_cast<double>(bits / 8);
  PerQuery(state, d.queries.size());
}

// A two-level scan (measured here, not in the library): the 1,000 queries
// tiled over the rows' low 64-bit words alone (a split layout's lo array,
// 8 bytes a row) within distance t, then each survivor's full 128-bit
// distance <= k. A row at distance d has at most t of its d differing bits
// in the low half with probability P(Hypergeometric(128, d, 64) <= t): at
// d = 28, 0.9912 for t = 19 and 0.9976 for t = 20; a random row survives
// with P(Binomial(64, 1/2) <= t): 0.08 % and 0.18 %.
void BM_HalfFilter(benchmark::State& state) {
  const int t = static_cast<int>(state.range(0));
  constexpr int kK = 28;
  Data& d = Get(128, kK);
  std::vector<uint64_t> lo(kN), hi(kN), q_lo, q_hi;
  for (size_t i = 0; i < kN; ++i) {
    lo[i] = d.fps[i].lo();
    hi[i] = d.fps[i].hi();
  }
  for (const Fingerprint& q : d.queries) {
    q_lo.push_back(q.lo());
    q_hi.push_back(q.hi());
  }
  index_internal::RowsView rows;
  rows.bits = 64;
  rows.n = kN;
  rows.lo = lo.data();
  std::vector<std::vector<index_internal::ScanHit>> hits(d.queries.size());
  size_t found = 0, found_at_k = 0, survivors = 0;
  for (auto _ : state) {
    found = found_at_k = survivors = 0;
    for (auto& h : hits) h.clear();
    index_internal::ScanRowsTiled(rows, {}, q_lo, t, hits.data());
    for (size_t q = 0; q < hits.size(); ++q) {
      survivors += hits[q].size();
      for (const index_internal::ScanHit& h : hits[q]) {
        const int dist = static_cast<int>(h.distance) + std::popcount(hi[h.row] ^ q_hi[q]);
        if (dist <= kK) {
          ++found;
          if (dist == kK) ++found_at_k;
        }
      }
    }
    benchmark::DoNotOptimize(found);
  }
  SearchResults truth;
  (void)d.scan->SearchBatch(d.queries, kK, 1, &truth);
  const size_t at_k =
      static_cast<size_t>(std::count_if(truth.neighbors.begin(), truth.neighbors.end(),
                                        [](const Neighbor& n) { return n.distance == kK; }));
  state.counters["recall"] =
      static_cast<double>(found) / static_cast<double>(std::max<size_t>(1, truth.neighbors.size()));
  state.counters["recall_at_k"] =
      static_cast<double>(found_at_k) / static_cast<double>(std::max<size_t>(1, at_k));
  state.counters["survivors_per_query"] =
      static_cast<double>(survivors) / static_cast<double>(d.queries.size());
  state.SetLabel(index_internal::ScanIsaName(index_internal::ActiveScanIsa()));
  PerQuery(state, d.queries.size());
}

void BM_Tables(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  Data& d = Get(bits, k);
  std::vector<Neighbor> hits;
  size_t q = 0;
  for (auto _ : state) {
    (void)d.tables->Search(d.queries[q], k, &hits);
    benchmark::DoNotOptimize(hits.data());
    q = (q + 1) % d.queries.size();
  }
  state.SetLabel(d.tables_desc);
  state.counters["model_us"] = d.tables->spec().estimated_query_us;
  state.counters["recall"] = d.recall;
  state.counters["recall_at_k"] = d.recall_at_k;
  state.counters["table_bytes_per_fp"] = d.table_bytes_per_fp;
  PerQuery(state, 1);
}

// The tables' batch pipeline alone (TableIndex::SearchEach: what
// DocumentIndex::QueryBatch and Check use; the same answers as BM_Tables).
void BM_TablesEach(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  Data& d = Get(bits, k);
  std::vector<std::vector<Neighbor>> out;
  for (auto _ : state) {
    (void)d.tables->SearchEach(d.queries, k, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(d.tables_desc);
  state.counters["model_us"] = d.tables->spec().estimated_query_us;
  state.counters["table_bytes_per_fp"] = d.table_bytes_per_fp;
  PerQuery(state, d.queries.size());
}

// What ChooseTables picks (DocumentIndex's default): one query at a time
// (BM_ChosenEach: a batch) and its model's estimate.
void BM_Chosen(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  Data& d = Get(bits, k);
  const index_internal::TableIndex& index = d.chosen ? *d.chosen : *d.tables;
  std::vector<Neighbor> hits;
  size_t q = 0;
  for (auto _ : state) {
    (void)index.Search(d.queries[q], k, &hits);
    benchmark::DoNotOptimize(hits.data());
    q = (q + 1) % d.queries.size();
  }
  state.SetLabel(d.chosen_desc);
  state.counters["model_us"] = index.spec().estimated_query_us;
  PerQuery(state, 1);
}

void BM_ChosenEach(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  Data& d = Get(bits, k);
  const index_internal::TableIndex& index = d.chosen ? *d.chosen : *d.tables;
  std::vector<std::vector<Neighbor>> out;
  for (auto _ : state) {
    (void)index.SearchEach(d.queries, k, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(d.chosen_desc);
  state.counters["model_us"] = index.spec().estimated_query_us;
  state.counters["recall"] = d.chosen_recall;
  state.counters["recall_at_k"] = d.chosen_recall_at_k;
  state.counters["stated_recall_at_k"] = index.spec().recall_at_k;
  state.counters["table_bytes_per_fp"] = d.chosen ? d.chosen_bytes_per_fp : d.table_bytes_per_fp;
  PerQuery(state, d.queries.size());
}

// What ChooseTables picks, searched as serve's checks and queries search
// the index file: through a FileSearchCombiner (search_combiner.h), one
// query a call from one thread (no other call to combine with: the call
// leads at once with its own query).
void BM_Combined(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  Data& d = Get(bits, k);
  const index_internal::TableIndex& index = d.chosen ? *d.chosen : *d.tables;
  index_internal::FileSearchCombiner combiner;
  std::vector<std::vector<Neighbor>> out(1);
  size_t q = 0;
  for (auto _ : state) {
    out[0].clear();
    combiner.Search(*index.base(), std::span<const Fingerprint>(&d.queries[q], 1), k, &out);
    benchmark::DoNotOptimize(out[0].data());
    q = (q + 1) % d.queries.size();
  }
  state.SetLabel(d.chosen_desc);
  state.counters["model_us"] = index.spec().estimated_query_us;
  PerQuery(state, 1);
}

// The lo and hi words of the first n fingerprints of `fps`.
void Words(const std::vector<Fingerprint>& fps, size_t n, std::vector<uint64_t>* lo,
           std::vector<uint64_t>* hi) {
  lo->resize(n);
  hi->resize(n);
  for (size_t i = 0; i < n; ++i) {
    (*lo)[i] = fps[i].lo();
    (*hi)[i] = fps[i].hi();
  }
}

// The probe tables of `spec` over the 128-bit, k = 28 rows, built once.
const index_internal::ProbeTableIndex& ProbeIndex(const index_internal::ProbeTablesSpec& spec) {
  static std::map<std::tuple<int, int, int, int>, std::unique_ptr<index_internal::ProbeTableIndex>>
      cache;
  auto& slot = cache[{spec.key_bits, spec.radius, spec.tables, spec.threshold}];
  if (!slot) {
    const Data& d = Get(128, 28);
    std::vector<uint64_t> lo, hi;
    Words(d.fps, kN, &lo, &hi);
    slot = std::make_unique<index_internal::ProbeTableIndex>(lo, hi, 28, spec);
  }
  return *slot;
}

void BM_Probe(benchmark::State& state) {
  constexpr int kK = 28;
  constexpr double kRecall = 0.99;
  Data& d = Get(128, kK);
  index_internal::ProbeTablesSpec spec;
  if (state.range(0) == 0) {
    spec = index_internal::ChooseProbeTables(kN, kK, kRecall);
  } else {
    spec.key_bits = static_cast<int>(state.range(0));
    spec.radius = static_cast<int>(state.range(1));
    spec.tables = static_cast<int>(state.range(2));
    for (spec.threshold = 0; spec.threshold < 64; ++spec.threshold) {
      if (index_internal::ProbeTablesRecall(spec, kK) >= kRecall &&
          index_internal::ProbeTablesRecall(spec, kK - 4) >= 1 - (1 - kRecall) / 100) {
        break;
      }
    }
  }
  const index_internal::ProbeTableIndex& index = ProbeIndex(spec);
  std::vector<uint64_t> q_lo, q_hi;
  Words(d.queries, d.queries.size(), &q_lo, &q_hi);
  std::vector<std::vector<index_internal::ScanHit>> out(d.queries.size());
  const bool alone = state.range(3) != 0;
  for (auto _ : state) {
    for (auto& o : out) o.clear();
    if (alone) {
      for (size_t j = 0; j < q_lo.size(); ++j) index.Search(q_hi[j], q_lo[j], &out[j]);
    } else {
      index.SearchEach(q_hi, q_lo, out.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
  SearchResults truth;
  (void)d.scan->SearchBatch(d.queries, kK, 1, &truth);
  size_t found = 0, found_at_k = 0;
  for (const auto& o : out) {
    found += o.size();
    for (const auto& h : o) found_at_k += h.distance == kK ? 1 : 0;
  }
  const size_t at_k =
      static_cast<size_t>(std::count_if(truth.neighbors.begin(), truth.neighbors.end(),
                                        [](const Neighbor& n) { return n.distance == kK; }));
  const index_internal::ProbeTablesSpec& s = index.spec();
  state.SetLabel("b " + std::to_string(s.key_bits) + ", r " + std::to_string(s.radius) + ", L " +
                 std::to_string(s.tables) + ", t " + std::to_string(s.threshold) + ", " +
                 index_internal::ScanIsaName(index_internal::ActiveScanIsa()));
  state.counters["recall"] =
      static_cast<double>(found) / static_cast<double>(std::max<size_t>(1, truth.neighbors.size()));
  state.counters["recall_at_k"] =
      static_cast<double>(found_at_k) / static_cast<double>(std::max<size_t>(1, at_k));
  state.counters["stated_recall_at_k"] = s.recall_at_k;
  state.counters["model_us"] = s.estimated_query_us;
  state.counters["probes"] = s.probes;
  state.counters["reads"] = s.reads;
  state.counters["survivors"] = s.survivors;
  state.counters["table_bytes_per_fp"] =
      static_cast<double>(index.TableBytes()) / static_cast<double>(kN);
  PerQuery(state, d.queries.size());
}
BENCHMARK(BM_Probe)
    ->Args({0, 0, 0, 0})
    ->Args({0, 0, 0, 1})
    ->Args({12, 2, 8, 0})
    ->Args({13, 2, 8, 0})
    ->Args({14, 2, 8, 0})
    ->Args({15, 2, 8, 0})
    ->Args({16, 3, 6, 0})
    ->Unit(benchmark::kMillisecond);

// ChooseProbeTables' pick, the 1,000 queries in batches of `batch`
// (SearchEach each; serve's combiner hands the tables 1-4 queries a call),
// the probes ordered as SearchEach picks (order 0), each query's in turn
// (1) or the batch's sorted by key (2; before this rule, every batch of 16
// or more).
// The loop of BM_ProbeBatch and BM_ProbeLayout: d's queries in batches of
// `batch`, probed in `order`; returns the neighbours found.
size_t TimeBatches(benchmark::State& state, const index_internal::ProbeTableIndex& index,
                   const Data& d, size_t batch, index_internal::ProbeOrder order) {
  std::vector<uint64_t> q_lo, q_hi;
  Words(d.queries, d.queries.size(), &q_lo, &q_hi);
  std::vector<std::vector<index_internal::ScanHit>> out(d.queries.size());
  for (auto _ : state) {
    for (auto& o : out) o.clear();
    for (size_t j = 0; j < q_lo.size(); j += batch) {
      const size_t m = std::min(batch, q_lo.size() - j);
      index.SearchEach(std::span<const uint64_t>(q_hi).subspan(j, m),
                       std::span<const uint64_t>(q_lo).subspan(j, m), out.data() + j, order);
    }
    benchmark::DoNotOptimize(out.data());
  }
  size_t found = 0;
  for (const auto& o : out) found += o.size();
  return found;
}

void BM_ProbeBatch(benchmark::State& state) {
  constexpr int kK = 28;
  Data& d = Get(128, kK);
  const index_internal::ProbeTableIndex& index =
      ProbeIndex(index_internal::ChooseProbeTables(kN, kK, 0.99));
  const size_t found = TimeBatches(state, index, d, static_cast<size_t>(state.range(0)),
                                   static_cast<index_internal::ProbeOrder>(state.range(1)));
  const index_internal::ProbeTablesSpec& s = index.spec();
  state.SetLabel("b " + std::to_string(s.key_bits) + ", r " + std::to_string(s.radius) + ", L " +
                 std::to_string(s.tables) + ", t " + std::to_string(s.threshold));
  state.counters["found"] = static_cast<double>(found);
  PerQuery(state, d.queries.size());
}
BENCHMARK(BM_ProbeBatch)
    ->ArgsProduct({{1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 170, 256, 1000}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond);

// A layout of the default family (radius 2, 8 tables) with b-bit keys,
// its threshold the least meeting the targets (as BM_Probe), the 1,000
// queries in batches of `batch`, the probes ordered as SearchEach picks
// (0), query by query (1) or sorted (2): what ChooseProbeTables' cost model
// weighs (b = 14 at 1M and 15 at 10M with AVX-512's costs), measured at the
// batch sizes a server makes.
void BM_ProbeLayout(benchmark::State& state) {
  constexpr int kK = 28;
  constexpr double kRecall = 0.99;
  Data& d = Get(128, kK);
  index_internal::ProbeTablesSpec spec;
  spec.key_bits = static_cast<int>(state.range(0));
  spec.radius = 2;
  spec.tables = 8;
  for (spec.threshold = 0; spec.threshold < 64; ++spec.threshold) {
    if (index_internal::ProbeTablesRecall(spec, kK) >= kRecall &&
        index_internal::ProbeTablesRecall(spec, kK - 4) >= 1 - (1 - kRecall) / 100) {
      break;
    }
  }
  const index_internal::ProbeTableIndex& index = ProbeIndex(spec);
  const size_t found = TimeBatches(state, index, d, static_cast<size_t>(state.range(1)),
                                   static_cast<index_internal::ProbeOrder>(state.range(2)));
  const index_internal::ProbeTablesSpec& s = index.spec();
  state.SetLabel("b " + std::to_string(s.key_bits) + ", t " + std::to_string(s.threshold) + ", " +
                 index_internal::ScanIsaName(index_internal::ActiveScanIsa()));
  state.counters["found"] = static_cast<double>(found);
  state.counters["stated_recall_at_k"] = s.recall_at_k;
  state.counters["reads"] = s.reads;
  state.counters["probes"] = s.probes;
  state.counters["model_us"] = s.estimated_query_us;
  state.counters["table_bytes_per_fp"] =
      static_cast<double>(index.TableBytes()) / static_cast<double>(kN);
  PerQuery(state, d.queries.size());
}
BENCHMARK(BM_ProbeLayout)
    ->ArgsProduct({{13, 14, 15, 16}, {1, 4, 16, 32, 64, 128, 170, 256, 1000}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond);

// An index's delta at the default method (TableIndex: the entries added
// since its file was written), n entries (the first n rows), the 1,000
// queries in batches of `batch`: its tail, scanned (ScanRows, tiled over
// the batch, as SearchDeltaBatch), against a level of it, probe tables of
// the file's layout (ChooseProbeTables at kN rows) over the n entries. The
// tail is indexed into a level past TableIndex's tail cap (probes a query
// x 64 entries: 54,272 at 1M).
void BM_Delta(benchmark::State& state) {
  constexpr int kK = 28;
  Data& d = Get(128, kK);
  const auto n = static_cast<size_t>(state.range(0));
  const auto batch = static_cast<size_t>(state.range(1));
  const bool level = state.range(2) != 0;
  // The level's probes ordered as SearchEach picks (1), query by query (2)
  // or sorted by key (3).
  const auto order = level ? static_cast<index_internal::ProbeOrder>(state.range(2) - 1)
                           : index_internal::ProbeOrder::kAuto;
  std::vector<uint64_t> lo, hi, q_lo, q_hi;
  Words(d.fps, n, &lo, &hi);
  Words(d.queries, d.queries.size(), &q_lo, &q_hi);
  index_internal::RowsView rows;
  rows.bits = 128;
  rows.n = n;
  rows.lo = lo.data();
  rows.hi = hi.data();
  std::unique_ptr<index_internal::ProbeTableIndex> tables;
  const index_internal::ProbeTablesSpec spec = index_internal::ChooseProbeTables(kN, kK, 0.99);
  const auto dir_arg = static_cast<int>(state.range(3));
  const int dir_bits = dir_arg == 0   ? spec.key_bits
                       : dir_arg == 1 ? index_internal::LevelDirBits(n, spec.key_bits)
                                      : dir_arg;
  if (level) {
    tables = std::make_unique<index_internal::ProbeTableIndex>(lo, hi, kK, spec, dir_bits);
  }
  std::vector<std::vector<index_internal::ScanHit>> out(q_lo.size());
  for (auto _ : state) {
    for (auto& o : out) o.clear();
    for (size_t j = 0; j < q_lo.size(); j += batch) {
      const size_t m = std::min(batch, q_lo.size() - j);
      const auto part_hi = std::span<const uint64_t>(q_hi).subspan(j, m);
      const auto part_lo = std::span<const uint64_t>(q_lo).subspan(j, m);
      if (level) {
        tables->SearchEach(part_hi, part_lo, out.data() + j, order);
        continue;
      }
      for (size_t b = 0; b < n; b += index_internal::kScanBlockRows) {
        index_internal::ScanRows(rows, b, std::min(n, b + index_internal::kScanBlockRows), part_hi,
                                 part_lo, kK, out.data() + j);
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  size_t found = 0;
  for (const auto& o : out) found += o.size();
  state.counters["found"] = static_cast<double>(found);
  state.SetLabel(level ? "level, directory of " + std::to_string(dir_bits) + " bits" : "tail");
  PerQuery(state, q_lo.size());
}
BENCHMARK(BM_Delta)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (int64_t n : {4096, 16384, 54272, 100000, 300000}) {
        for (int64_t batch : {1, 4, 32, 64, 128, 250, 1000}) {
          b->Args({n, batch, 0, 0});
          for (int64_t order : {1, 2, 3}) {
            for (int64_t dir : {0, 1}) b->Args({n, batch, order, dir});
          }
        }
      }
    })
    ->Unit(benchmark::kMillisecond);

// The floor under a query of the probe tables alone: it reads its probed
// buckets (`reads` words: BM_Probe's counter), contiguous runs of about
// n / 2^b words at random places in tables far larger than the caches.
// Here: 4,096 runs of `words` words at random offsets of a 256 MB array,
// read and folded (no compare, no software prefetch: with it, a run or
// several ahead, a test read no faster); bytes_per_second is what one core
// reads so (61 words: a bucket at 1M rows, 14-bit keys; 305: 10M, 15-bit).
void BM_ChunkReads(benchmark::State& state) {
  const auto words = static_cast<size_t>(state.range(0));
  static const std::vector<uint64_t> array = [] {
    std::vector<uint64_t> a(size_t{1} << 25);
    std::mt19937_64 rng(7);
    for (uint64_t& w : a) w = rng();
    return a;
  }();
  std::mt19937_64 rng(8);
  std::vector<size_t> starts(4096);
  for (size_t& s : starts) s = rng() % (array.size() - words);
  uint64_t fold = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < starts.size(); ++i) {
      const uint64_t* w = array.data() + starts[i];
      for (size_t x = 0; x < words; ++x) fold ^= w[x];
    }
    benchmark::DoNotOptimize(fold);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(starts.size() * words * 8));
}
BENCHMARK(BM_ChunkReads)->Arg(61)->Arg(305)->Unit(benchmark::kMillisecond);

#ifdef NEARDUP_HAVE_FAISS
void BM_FaissFlat(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  Data& d = Get(bits, k);
  omp_set_num_threads(1);
  constexpr size_t kBatch = 100;
  size_t found = 0;
  for (auto _ : state) {
    faiss::RangeSearchResult res(static_cast<faiss::IndexBinary::idx_t>(kBatch));
    // faiss's radius is strict: distance < k + 1.
    d.faiss->range_search(static_cast<faiss::IndexBinary::idx_t>(kBatch), d.qcodes.data(), k + 1,
                          &res);
    found = res.lims[kBatch];
    benchmark::DoNotOptimize(res.labels);
  }
  state.counters["neighbours_per_100"] = static_cast<double>(found);
  state.counters["bytes_per_fp"] = static_cast<double>(bits / 8);
  PerQuery(state, kBatch);
}
BENCHMARK(BM_FaissFlat)->Args({128, 28})->Args({64, 3})->Unit(benchmark::kMillisecond);
#endif

BENCHMARK(BM_Scan)
    ->Args({128, 28, 0})
    ->Args({128, 28, 1})
    ->Args({128, 28, 2})
    ->Args({64, 3, 0})
    ->Args({64, 3, 1})
    ->Args({64, 3, 2})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScanBatch)
    ->Args({128, 28, 0})
    ->Args({128, 28, 1})
    ->Args({128, 28, 2})
    ->Args({64, 3, 0})
    ->Args({64, 3, 1})
    ->Args({64, 3, 2})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HalfFilter)->Arg(19)->Arg(20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Tables)->Args({128, 28})->Args({64, 3})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TablesEach)->Args({128, 28})->Args({64, 3})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chosen)->Args({128, 28})->Args({64, 3})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ChosenEach)->Args({128, 28})->Args({64, 3})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Combined)->Args({128, 28})->Args({64, 3})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
