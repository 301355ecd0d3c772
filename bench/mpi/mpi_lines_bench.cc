// Copyright 2026 The neardup Authors.
//
// Memory of neardup-mpi's boilerplate line counts per rank, before and after
// the reduction by key range (tools/neardup_mpi/boilerplate_exchange.h), on
// synthetic line keys (no text: the counts alone):
//
//   mpirun -np P build/bench/neardup_mpi_lines_bench N [lines per document] [layout]
//
// N documents in all (each rank makes its share, documents [r N / P, (r + 1)
// N / P)), each with `lines` (default 15) distinct lines of its own and,
// every tenth, one of 20 shared footers (boilerplate at min_docs 5). Layouts:
//   reduced (default, neardup-mpi's): ReduceLineCounts.
//   allgather (before): every rank's serialized counts all-gathered and
//        merged on every rank into the whole corpus's table (the filter's).
// Each rank reports its peak RSS (VmHWM) and its RSS once its own counts are
// made (VmRSS): the difference is what the exchange and the table it leaves
// cost. Both layouts' kept lines (>= min_docs) are printed: the reference
// that they strip the same lines.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "boilerplate_exchange.h"
#include "mpi_comm.h"
#include "neardup/boilerplate.h"

namespace neardup::mpi {
namespace {

// VmRSS or VmHWM of this process, in KB.
uint64_t StatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0)
      return std::strtoull(line.c_str() + std::strlen(field), nullptr, 10);
  }
  return 0;
}

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return (x ^ (x >> 31)) | 1;  // line keys are never 0
}

int Main(int argc, char** argv) {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const uint64_t lines = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 15;
  const std::string layout = argc > 3 ? argv[3] : "reduced";
  if (layout != "reduced" && layout != "allgather") {
    if (w.rank == 0) std::fprintf(stderr, "layout: reduced or allgather\n");
    return 2;
  }
  const uint32_t min_docs = 5;
  const uint64_t first = n * static_cast<uint64_t>(w.rank) / static_cast<uint64_t>(w.size);
  const uint64_t end = n * static_cast<uint64_t>(w.rank + 1) / static_cast<uint64_t>(w.size);
  LineCounter counter;
  std::vector<uint64_t> keys;
  for (uint64_t d = first; d < end; ++d) {
    keys.clear();
    for (uint64_t l = 0; l < lines; ++l) keys.push_back(Mix(d * lines + l));
    if (d % 10 == 0) keys.push_back(Mix(~((d / 10) % 20)));
    std::sort(keys.begin(), keys.end());
    counter.AddKeys(keys);
  }
  LineStats local = std::move(counter).Finish();
  const uint64_t own_lines = local.distinct_lines();
  const uint64_t rss_counted = StatusKb("VmRSS:");
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t kept = 0, table_lines = 0;
  Traffic traffic;
  if (layout == "reduced") {
    auto reduced = ReduceLineCounts(w, std::move(local), Status::OK(), min_docs, false);
    if (!reduced.ok()) {
      std::fprintf(stderr, "%s\n", reduced.status().message().c_str());
      return 1;
    }
    kept = reduced->kept.LinesAtLeast(min_docs);
    table_lines = reduced->kept.distinct_lines();
    traffic = reduced->traffic;
  } else {
    // The exchange before: every rank's counts on every rank, merged.
    const std::string mine = local.Serialize();
    local = LineStats();
    const std::vector<uint64_t> sizes = AllGatherU64(w, mine.size());
    const std::string all = AllGatherBytes(w, mine, &traffic);
    LineCounter merged;
    size_t at = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      auto part = LineStats::Deserialize(std::string_view(all).substr(at, sizes[r]), "counts");
      if (!part.ok()) {
        std::fprintf(stderr, "%s\n", part.status().message().c_str());
        return 1;
      }
      merged.Merge(*part);
      at += sizes[r];
    }
    kept = merged.stats().LinesAtLeast(min_docs);
    table_lines = merged.stats().distinct_lines();
  }
  const uint64_t peak = StatusKb("VmHWM:");
  const std::vector<uint64_t> peaks = AllGatherU64(w, peak);
  const std::vector<uint64_t> counted = AllGatherU64(w, rss_counted);
  const std::vector<uint64_t> owns = AllGatherU64(w, own_lines);
  const std::vector<uint64_t> sent = AllGatherU64(w, traffic.bytes_sent);
  if (w.rank == 0) {
    std::printf(
        "N = %llu documents x %llu lines, P = %d, layout %s: kept lines %llu (table %llu)\n",
        static_cast<unsigned long long>(n), static_cast<unsigned long long>(lines), w.size,
        layout.c_str(), static_cast<unsigned long long>(kept),
        static_cast<unsigned long long>(table_lines));
    for (int r = 0; r < w.size; ++r) {
      const size_t i = static_cast<size_t>(r);
      std::printf(
          "rank %d: own distinct lines %llu, RSS with own counts %.0f MB, peak %.0f MB (+%.0f "
          "MB), sent %.1f MB\n",
          r, static_cast<unsigned long long>(owns[i]), static_cast<double>(counted[i]) / 1024,
          static_cast<double>(peaks[i]) / 1024, static_cast<double>(peaks[i] - counted[i]) / 1024,
          static_cast<double>(sent[i]) / 1e6);
    }
  }
  return 0;
}

}  // namespace
}  // namespace neardup::mpi

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int code = neardup::mpi::Main(argc, argv);
  MPI_Finalize();
  return code;
}
