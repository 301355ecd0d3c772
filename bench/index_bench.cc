// Copyright 2026 The neardup Authors.
//
// Hamming index benchmarks, with the linear scan as the reference in the same
// run. Default run (about a minute): N = 1M, 64-bit k = 3 and 128-bit k = 10.
// The 10M-entry cases need --neardup_large (about 2 GiB of memory):
//
//   build/bench/neardup_index_bench
//   build/bench/neardup_index_bench --neardup_large --benchmark_filter=10M
//
// Counters: q/s (queries per second of wall time), recall (fraction of the
// linear scan's answers found; must be 1), bytes_per_fp (MemoryBytes / N),
// pairs (self-join output size).

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "neardup/index.h"

namespace neardup {
namespace {

bool g_large = false;

struct Data {
  int bits = 64;
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  std::vector<Fingerprint> queries;  // planted at 0..max_flip bits from stored entries
};

Fingerprint Flip(const Fingerprint& fp, int flips, std::mt19937_64& rng) {
  uint64_t hi = fp.hi(), lo = fp.lo();
  for (int i = 0; i < flips; ++i) {
    // Distinct positions: retry on collision by flipping back.
    const int j = static_cast<int>(rng() % static_cast<uint64_t>(fp.bits()));
    uint64_t& w = j < 64 ? lo : hi;
    const uint64_t bit = uint64_t{1} << (j % 64);
    if (((j < 64 ? fp.lo() : fp.hi()) ^ w) & bit) {
      --i;
      continue;
    }
    w ^= bit;
  }
  return fp.bits() == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
}

const Data& GetData(int bits, size_t n, size_t num_queries, int max_flip) {
  static std::map<std::tuple<int, size_t, size_t, int>, std::unique_ptr<Data>> cache;
  auto& slot = cache[{bits, n, num_queries, max_flip}];
  if (slot) return *slot;
  slot = std::make_unique<Data>();
  Data& d = *slot;
  d.bits = bits;
  std::mt19937_64 rng(bits * 7919 + n);
  d.ids.resize(n);
  d.fps.resize(n);
  for (size_t i = 0; i < n; ++i) {
    d.ids[i] = i;
    d.fps[i] = bits == 64 ? Fingerprint::From64(rng()) : Fingerprint::From128(rng(), rng());
  }
  for (size_t q = 0; q < num_queries; ++q) {
    d.queries.push_back(
        Flip(d.fps[rng() % n], static_cast<int>(q % static_cast<size_t>(max_flip + 1)), rng));
  }
  return d;
}

PermutedTableOptions Options(int bits, int k) {
  PermutedTableOptions opt;
  opt.bits = bits;
  opt.max_k = k;
  opt.build_threads = 2;
  return opt;
}

const PermutedTableIndex& GetPermuted(int bits, int k, size_t n, double* build_seconds = nullptr) {
  static std::map<std::tuple<int, int, size_t>,
                  std::pair<std::unique_ptr<PermutedTableIndex>, double>>
      cache;
  auto& slot = cache[{bits, k, n}];
  if (!slot.first) {
    const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
    const auto t0 = std::chrono::steady_clock::now();
    slot.first = std::move(*PermutedTableIndex::Build(Options(bits, k), d.ids, d.fps));
    slot.second = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (build_seconds) *build_seconds = slot.second;
  return *slot.first;
}

// Ground truth from the linear scan (2 threads), computed once per data set.
const SearchResults& Truth(int bits, int k, size_t n) {
  static std::map<std::tuple<int, int, size_t>, SearchResults> cache;
  auto it = cache.find({bits, k, n});
  if (it != cache.end()) return it->second;
  const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
  auto linear = LinearScanIndex::Build(bits, d.ids, d.fps);
  SearchResults r;
  (void)(*linear)->SearchBatch(d.queries, k, 2, &r);
  return cache[{bits, k, n}] = std::move(r);
}

double Recall(const SearchResults& truth, const SearchResults& got) {
  size_t want = 0, found = 0;
  for (size_t q = 0; q < truth.num_queries(); ++q) {
    want += truth[q].size();
    for (const Neighbor& nb : truth[q]) {
      for (const Neighbor& g : got[q]) {
        if (g == nb) {
          ++found;
          break;
        }
      }
    }
  }
  return want == 0 ? 1.0 : static_cast<double>(found) / static_cast<double>(want);
}

// args: bits, k, n
void BM_LinearScanQuery(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
  auto linear = LinearScanIndex::Build(bits, d.ids, d.fps);
  const std::span<const Fingerprint> queries(d.queries.data(), 500);
  std::vector<Neighbor> out;
  size_t hits = 0;
  for (auto _ : state) {
    for (const Fingerprint& q : queries) {
      (void)(*linear)->Search(q, k, &out);
      hits += out.size();
    }
  }
  benchmark::DoNotOptimize(hits);
  state.counters["q/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * queries.size()), benchmark::Counter::kIsRate);
}

// Tiled batch linear scan on one thread. args: bits, k, n
void BM_LinearScanBatch(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
  auto linear = LinearScanIndex::Build(bits, d.ids, d.fps);
  const std::span<const Fingerprint> queries(d.queries.data(), 1024);
  SearchResults out;
  for (auto _ : state) (void)(*linear)->SearchBatch(queries, k, 1, &out);
  state.counters["q/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * queries.size()), benchmark::Counter::kIsRate);
}

// args: bits, k, n, threads (0 = single Search calls, else SearchBatch threads)
void BM_PermutedQuery(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const int threads = static_cast<int>(state.range(3));
  const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
  double build_s = 0;
  const PermutedTableIndex& index = GetPermuted(bits, k, n, &build_s);
  SearchResults got;
  for (auto _ : state) {
    if (threads == 0) {
      got.offsets.assign(1, 0);
      got.neighbors.clear();
      std::vector<Neighbor> out;
      for (const Fingerprint& q : d.queries) {
        (void)index.Search(q, k, &out);
        got.neighbors.insert(got.neighbors.end(), out.begin(), out.end());
        got.offsets.push_back(got.neighbors.size());
      }
    } else {
      (void)index.SearchBatch(d.queries, k, threads, &got);
    }
  }
  state.counters["q/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * d.queries.size()), benchmark::Counter::kIsRate);
  state.counters["recall"] = Recall(Truth(bits, k, n), got);
  state.counters["tables"] = index.layout().tables;
  state.counters["build_s"] = build_s;
  state.counters["bytes_per_fp"] =
      static_cast<double>(index.MemoryBytes()) / static_cast<double>(n);
}

// args: bits, k, n, threads
void BM_PermutedBuild(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
  PermutedTableOptions opt = Options(bits, k);
  opt.build_threads = static_cast<int>(state.range(3));
  size_t bytes = 0;
  for (auto _ : state) {
    auto index = PermutedTableIndex::Build(opt, d.ids, d.fps);
    bytes = (*index)->MemoryBytes();
  }
  state.counters["bytes_per_fp"] = static_cast<double>(bytes) / static_cast<double>(n);
}

// args: bits, k, n, threads
void BM_PermutedSelfJoin(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const PermutedTableIndex& index = GetPermuted(bits, k, n);
  std::vector<IdPair> pairs;
  for (auto _ : state) (void)index.SelfJoin(k, static_cast<int>(state.range(3)), &pairs);
  state.counters["pairs"] = static_cast<double>(pairs.size());
}

// args: bits, k, n, threads
void BM_LinearScanSelfJoin(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  const int k = static_cast<int>(state.range(1));
  const size_t n = static_cast<size_t>(state.range(2));
  const Data& d = GetData(bits, n, 10000, k == 3 ? 3 : k);
  auto linear = LinearScanIndex::Build(bits, d.ids, d.fps);
  std::vector<IdPair> pairs;
  for (auto _ : state) (void)(*linear)->SelfJoin(k, static_cast<int>(state.range(3)), &pairs);
  state.counters["pairs"] = static_cast<double>(pairs.size());
}

void RegisterAll() {
  using benchmark::RegisterBenchmark;
  const auto kSec = benchmark::kSecond;
  const auto kMs = benchmark::kMillisecond;
  // 64-bit, k = 3, N = 1M.
  RegisterBenchmark("BM_LinearScanQuery/f64/k3/1M", BM_LinearScanQuery)
      ->Args({64, 3, 1 << 20})
      ->Unit(kMs)
      ->Iterations(2)
      ->UseRealTime();
  RegisterBenchmark("BM_LinearScanBatch/f64/k3/1M/batch1", BM_LinearScanBatch)
      ->Args({64, 3, 1 << 20})
      ->Unit(kMs)
      ->Iterations(1)
      ->UseRealTime();
  RegisterBenchmark("BM_PermutedQuery/f64/k3/1M/single", BM_PermutedQuery)
      ->Args({64, 3, 1 << 20, 0})
      ->Unit(kMs)
      ->UseRealTime();
  RegisterBenchmark("BM_PermutedQuery/f64/k3/1M/batch1", BM_PermutedQuery)
      ->Args({64, 3, 1 << 20, 1})
      ->Unit(kMs)
      ->UseRealTime();
  RegisterBenchmark("BM_PermutedQuery/f64/k3/1M/batch2", BM_PermutedQuery)
      ->Args({64, 3, 1 << 20, 2})
      ->Unit(kMs)
      ->UseRealTime();
  for (int64_t n : {1 << 16, 1 << 20}) {
    RegisterBenchmark("BM_PermutedBuild/f64/k3", BM_PermutedBuild)
        ->Args({64, 3, n, 2})
        ->Unit(kMs)
        ->UseRealTime();
  }
  RegisterBenchmark("BM_PermutedSelfJoin/f64/k3/1M", BM_PermutedSelfJoin)
      ->Args({64, 3, 1 << 20, 2})
      ->Unit(kMs)
      ->UseRealTime();
  RegisterBenchmark("BM_LinearScanSelfJoin/f64/k3/64k", BM_LinearScanSelfJoin)
      ->Args({64, 3, 1 << 16, 2})
      ->Unit(kMs)
      ->Iterations(1)
      ->UseRealTime();
  RegisterBenchmark("BM_PermutedSelfJoin/f64/k3/64k", BM_PermutedSelfJoin)
      ->Args({64, 3, 1 << 16, 2})
      ->Unit(kMs)
      ->UseRealTime();
  // 128-bit, k = 10, N = 1M.
  RegisterBenchmark("BM_LinearScanQuery/f128/k10/1M", BM_LinearScanQuery)
      ->Args({128, 10, 1 << 20})
      ->Unit(kMs)
      ->Iterations(1)
      ->UseRealTime();
  RegisterBenchmark("BM_LinearScanBatch/f128/k10/1M/batch1", BM_LinearScanBatch)
      ->Args({128, 10, 1 << 20})
      ->Unit(kMs)
      ->Iterations(1)
      ->UseRealTime();
  RegisterBenchmark("BM_PermutedQuery/f128/k10/1M/batch1", BM_PermutedQuery)
      ->Args({128, 10, 1 << 20, 1})
      ->Unit(kMs)
      ->Iterations(1)
      ->UseRealTime();
  RegisterBenchmark("BM_PermutedSelfJoin/f128/k10/1M", BM_PermutedSelfJoin)
      ->Args({128, 10, 1 << 20, 2})
      ->Unit(kSec)
      ->Iterations(1)
      ->UseRealTime();
  if (g_large) {
    const int64_t n10m = 10'000'000;
    RegisterBenchmark("BM_PermutedBuild/f64/k3/10M", BM_PermutedBuild)
        ->Args({64, 3, n10m, 2})
        ->Unit(kSec)
        ->Iterations(1)
        ->UseRealTime();
    RegisterBenchmark("BM_LinearScanBatch/f64/k3/10M/batch1", BM_LinearScanBatch)
        ->Args({64, 3, n10m})
        ->Unit(kMs)
        ->Iterations(1)
        ->UseRealTime();
    RegisterBenchmark("BM_PermutedQuery/f64/k3/10M/batch1", BM_PermutedQuery)
        ->Args({64, 3, n10m, 1})
        ->Unit(kMs)
        ->Iterations(3)
        ->UseRealTime();
    RegisterBenchmark("BM_PermutedSelfJoin/f64/k3/10M", BM_PermutedSelfJoin)
        ->Args({64, 3, n10m, 2})
        ->Unit(kSec)
        ->Iterations(1)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace neardup

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--neardup_large") == 0) {
      neardup::g_large = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  neardup::RegisterAll();
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
