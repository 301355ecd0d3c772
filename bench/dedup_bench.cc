// Copyright 2026 The neardup Authors.
//
// Dedup end to end (index build + self-join + union-find, or streaming
// inserts): N 64-bit fingerprints of which ~20% are near copies (0..4 bits) of
// earlier ones, k = 3.
//
//   build/bench/neardup_dedup_bench

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "neardup/dedup.h"

namespace neardup {
namespace {

std::vector<DedupDocument> MakeDocs(size_t n) {
  std::mt19937_64 rng(n);
  std::vector<DedupDocument> docs(n);
  for (size_t i = 0; i < n; ++i) {
    docs[i].length = rng() % 1000;
    if (i > 0 && rng() % 5 == 0) {
      uint64_t x = docs[rng() % i].fingerprint.lo();
      const int flips = static_cast<int>(rng() % 5);
      for (int f = 0; f < flips; ++f) x ^= uint64_t{1} << (rng() % 64);
      docs[i].fingerprint = Fingerprint::From64(x);
    } else {
      docs[i].fingerprint = Fingerprint::From64(rng());
    }
  }
  return docs;
}

// args: n, mode (0 cluster, 1 stream), threads
void BM_Dedup(benchmark::State& state) {
  const auto docs = MakeDocs(static_cast<size_t>(state.range(0)));
  DedupOptions opt;
  opt.k = 3;
  opt.mode = state.range(1) == 0 ? DedupMode::kCluster : DedupMode::kStream;
  opt.threads = static_cast<int>(state.range(2));
  size_t dups = 0;
  for (auto _ : state) dups = Dedup(docs, opt)->summary.duplicates;
  state.counters["docs/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * docs.size()), benchmark::Counter::kIsRate);
  state.counters["duplicates"] = static_cast<double>(dups);
}

BENCHMARK(BM_Dedup)
    ->ArgNames({"n", "stream", "threads"})
    ->Args({100'000, 0, 2})
    ->Args({1'000'000, 0, 2})
    ->Args({100'000, 1, 1})
    ->Args({1'000'000, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace neardup

BENCHMARK_MAIN();
