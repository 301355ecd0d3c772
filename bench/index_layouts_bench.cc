// Copyright 2026 The neardup Authors.
//
// Band layouts of the version 3 index file compared in one process: each
// layout (bands, bits per band, probe radius) is written over the same N
// random 128-bit fingerprints, and the layouts are queried in turn, 200
// queries at a time (queries planted at distance 0..k from a stored row), so
// that the machine's load falls on all of them alike. Prints the CPU time
// per query (this thread's, /proc/thread-self/schedstat) and the planted
// rows found. This is how the cost model in src/index/mask_tables.cc was
// checked (doc/benchmarks.md):
//
//   build/bench/neardup_index_layouts_bench K BANDS R RADIUS [BANDS R RADIUS]...
//   e.g. 28 69 17 1 251 15 0     (the default at 1M, and the 2,048-byte budget's)
//
// NEARDUP_LAYOUTS_N (environment) sets N (default 1,000,000).

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "neardup/band_join.h"

namespace neardup::index_internal {
namespace {

double ThreadCpuUs() {
  std::ifstream in("/proc/thread-self/schedstat");
  double ns = 0;
  in >> ns;
  return ns / 1e3;
}

TablesSpec BandsSpec(int k, int bands, int r, int radius, size_t n) {
  TablesSpec s;
  s.kind = TablesKind::kBands;
  s.bits = 128;
  s.max_k = k;
  s.dir_bits = DirBitsFor(n);
  s.band_bits = r;
  s.radius = radius;
  s.seed = kDefaultBandSeed;
  SimHashBands sb;
  sb.bits = 128;
  sb.band_bits = r;
  sb.bands = bands;
  sb.seed = s.seed;
  for (const auto& [hi, lo] : SimHashBandMasks(sb)) {
    s.masks.push_back(TableMask{hi, lo, static_cast<uint32_t>(radius)});
  }
  return s;
}

struct Layout {
  std::string name;
  std::unique_ptr<IndexFileV2> file;
  double cpu_us = 0;
  size_t queries = 0;
  size_t found = 0;
};

int Run(int argc, char** argv) {
  if (argc < 5 || (argc - 2) % 3 != 0) {
    std::fprintf(stderr, "usage: %s K BANDS R RADIUS [BANDS R RADIUS]...\n", argv[0]);
    return 2;
  }
  const int k = std::atoi(argv[1]);
  const char* n_env = std::getenv("NEARDUP_LAYOUTS_N");
  const size_t n = n_env != nullptr ? std::strtoull(n_env, nullptr, 10) : 1000000;
  std::mt19937_64 rng(1);
  std::vector<uint64_t> ids(n), lo(n), hi(n);
  std::vector<std::string> names(n);
  for (size_t i = 0; i < n; ++i) {
    ids[i] = i;
    lo[i] = rng();
    hi[i] = rng();
    names[i] = "d" + std::to_string(i);
  }
  const std::vector<std::string_view> views(names.begin(), names.end());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "neardup_index_layouts_bench";
  std::filesystem::create_directories(dir);
  std::vector<Layout> layouts;
  for (int a = 2; a + 2 < argc; a += 3) {
    IndexFileV2Meta meta;
    meta.spec = BandsSpec(k, std::atoi(argv[a]), std::atoi(argv[a + 1]), std::atoi(argv[a + 2]), n);
    meta.rows = n;
    const std::string path = (dir / ("l" + std::to_string(layouts.size()) + ".idx")).string();
    uint64_t checksum = 0;
    if (!WriteIndexFileV2(path, meta, {ids, lo, hi, views}, 0, &checksum).ok()) return 1;
    auto mapped = MappedFile::Open(path);
    if (!mapped.ok()) return 1;
    auto file = IndexFileV2::Open(std::move(*mapped), path);
    if (!file.ok()) return 1;
    layouts.push_back(
        Layout{std::string(argv[a]) + " bands of " + argv[a + 1] + " bits, radius " + argv[a + 2],
               std::move(*file)});
  }
  std::vector<std::pair<uint64_t, uint64_t>> queries;
  for (int i = 0; i < 4000; ++i) {
    const size_t t = rng() % n;
    uint64_t q_hi = hi[t], q_lo = lo[t];
    for (int d = 0; d < i % (k + 1); ++d) {  // a bit may flip twice: distance <= i % (k + 1)
      const int b = static_cast<int>(rng() % 128);
      (b < 64 ? q_lo : q_hi) ^= uint64_t{1} << (b % 64);
    }
    queries.push_back({q_hi, q_lo});
  }
  std::vector<uint32_t> rows;
  std::vector<int> dists;
  for (size_t round = 0; round < 20; ++round) {
    for (Layout& l : layouts) {
      const double start = ThreadCpuUs();
      for (size_t i = 0; i < 200; ++i) {
        const auto& [q_hi, q_lo] = queries[(round * 200 + i) % queries.size()];
        rows.clear();
        dists.clear();
        QueryTables(l.file->tables(), q_hi, q_lo, k, &rows, &dists);
        l.found += rows.size();
      }
      l.cpu_us += ThreadCpuUs() - start;
      l.queries += 200;
    }
  }
  for (const Layout& l : layouts) {
    std::printf("k = %d, N = %zu, %s: %.1f us CPU per query, %zu rows found in %zu queries\n", k, n,
                l.name.c_str(), l.cpu_us / static_cast<double>(l.queries), l.found, l.queries);
  }
  layouts.clear();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace neardup::index_internal

int main(int argc, char** argv) { return neardup::index_internal::Run(argc, argv); }
