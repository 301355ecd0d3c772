// Copyright 2026 The neardup Authors.
//
// The persistent DocumentIndex (version 2 file, used in place) at the default
// method's shape, 128 bits and k = 28 (--neardup_k=K), N = 1M random fingerprints (half of the
// queries planted at distance 0..k from a stored one), with the linear scan
// as the reference in the same run:
//
//   build/bench/neardup_document_index_bench [--neardup_n=N]
//
// BM_QueryMapped/3 queries a version 3 file, BM_QueryMapped/2 the same index
// written as version 2 (the reference for the packed layout).
//
// Counters: q/s (queries per second, one thread), recall (planted targets
// found / planted), rss_mb (resident memory of the process after Open, before
// any query; the index file is mapped, so its pages come in as queries touch
// them), open_ms.

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "neardup/document_index.h"
#include "neardup/index.h"

namespace neardup {
namespace {

size_t g_n = 1000000;
int g_k = 28;  // the default method's k (chars5u)
uint32_t g_table_bytes = IndexTablesOptions{}.max_bytes_per_fingerprint;

struct Data {
  std::string dir;
  std::string path;     // version 3 (the default)
  std::string path_v2;  // version 2
  std::vector<Fingerprint> fps;
  std::vector<Fingerprint> queries;
  std::vector<std::string> targets;  // planted target id, or "" for a random query
};

Fingerprint Flip(Fingerprint fp, int d, std::mt19937_64& rng) {
  uint64_t hi = fp.hi(), lo = fp.lo();
  std::vector<int> pos(128);
  for (int i = 0; i < 128; ++i) pos[i] = i;
  for (int i = 0; i < d; ++i) {
    std::swap(pos[i], pos[i + rng() % (128 - i)]);
    if (pos[i] < 64) {
      lo ^= uint64_t{1} << pos[i];
    } else {
      hi ^= uint64_t{1} << (pos[i] - 64);
    }
  }
  return Fingerprint::From128(hi, lo);
}

// This thread's time on a CPU, waiting on a run queue (runnable, no CPU free:
// the machine's other load), and its voluntary context switches (blocked:
// a lock, I/O), from /proc/thread-self/schedstat and getrusage.
struct ThreadTimes {
  double run_us = 0, wait_us = 0, blocked = 0;
};
ThreadTimes GetThreadTimes() {
  ThreadTimes t;
  std::ifstream in("/proc/thread-self/schedstat");
  double run_ns = 0, wait_ns = 0;
  in >> run_ns >> wait_ns;
  t.run_us = run_ns / 1e3;
  t.wait_us = wait_ns / 1e3;
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) t.blocked = static_cast<double>(ru.ru_nvcsw);
  return t;
}

// Anonymous memory of the process backed by huge pages (MB).
double AnonHugeMb() {
  std::ifstream in("/proc/self/smaps_rollup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("AnonHugePages:", 0) == 0) return std::stod(line.substr(14)) / 1e3;
  }
  return 0;
}

double RssMb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return static_cast<double>(resident) * 4096 / 1e6;
}

Data& GetData() {
  static Data* d = [] {
    auto* data = new Data();
    data->dir = std::filesystem::temp_directory_path() / "neardup_document_index_bench";
    std::filesystem::create_directories(data->dir);
    data->path = data->dir + "/i.idx";
    data->path_v2 = data->dir + "/v2.idx";
    std::mt19937_64 rng(1);
    std::vector<std::string> ids;
    for (size_t i = 0; i < g_n; ++i) {
      data->fps.push_back(Fingerprint::From128(rng(), rng()));
      ids.push_back("doc-" + std::to_string(i));
    }
    for (int q = 0; q < 2000; ++q) {
      const size_t t = rng() % g_n;
      data->queries.push_back(Flip(data->fps[t], q % (g_k + 1), rng));
      data->targets.push_back(ids[t]);
      data->queries.push_back(Fingerprint::From128(rng(), rng()));
      data->targets.push_back("");
    }
    PermutedTableOptions o;
    o.bits = 128;
    o.max_k = g_k;
    const auto start = std::chrono::steady_clock::now();
    DocumentIndexHeader header;
    header.tables.max_bytes_per_fingerprint = g_table_bytes;
    auto index = DocumentIndex::Build(data->path, header, o, ids, data->fps);
    if (!index.ok() || !(*index)->Commit().ok()) std::abort();
    std::fprintf(stderr, "built and committed %zu fingerprints in %.1f s\n", g_n,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    // The same index as a version 2 file (the reference of BM_QueryMapped/2).
    header.tables.file_version = 2;
    auto v2 = DocumentIndex::Build(data->path_v2, header, o, ids, data->fps);
    if (!v2.ok() || !(*v2)->Commit().ok()) std::abort();
    return data;
  }();
  return *d;
}

void BM_Open(benchmark::State& state) {
  Data& d = GetData();
  double rss = 0;
  for (auto _ : state) {
    const double before = RssMb();
    auto index = DocumentIndex::Open(d.path);
    if (!index.ok()) state.SkipWithError(index.status().ToString().c_str());
    rss = RssMb() - before;
    benchmark::DoNotOptimize(index);
  }
  state.counters["rss_mb"] = rss;
}
BENCHMARK(BM_Open)->Unit(benchmark::kMillisecond);

// Args: the file version, 3 (the default) or 2 (the reference); 1 to read
// the file into huge pages (DocumentIndexOptions::preload) instead of
// mapping it.
void BM_QueryMapped(benchmark::State& state) {
  Data& d = GetData();
  DocumentIndexOptions options;
  options.preload = state.range(1) == 1;
  auto index = DocumentIndex::Open(state.range(0) == 2 ? d.path_v2 : d.path,
                                   DocumentIndex::Mode::kReadOnly, options);
  if (!index.ok()) return state.SkipWithError(index.status().ToString().c_str());
  std::vector<DocumentMatch> m;
  size_t i = 0, found = 0, planted = 0;
  const ThreadTimes t0 = GetThreadTimes();
  for (auto _ : state) {
    const size_t q = i++ % d.queries.size();
    if (!(*index)->Query(d.queries[q], g_k, &m).ok()) return state.SkipWithError("query");
    if (!d.targets[q].empty()) {
      ++planted;
      for (const auto& x : m) found += x.id == d.targets[q];
    }
  }
  const ThreadTimes t1 = GetThreadTimes();
  state.counters["q/s"] = benchmark::Counter(static_cast<double>(i), benchmark::Counter::kIsRate);
  // CPU time per query (on a loaded machine, steadier than q/s).
  state.counters["cpu_us"] = (t1.run_us - t0.run_us) / static_cast<double>(std::max<size_t>(i, 1));
  state.counters["huge_mb"] = AnonHugeMb();
  state.counters["recall"] = planted ? static_cast<double>(found) / planted : 0;
  const IndexTablesStats t = (*index)->Stats().tables;
  state.counters["recall_guarantee"] = t.recall_at_k;
  state.counters["tables"] = t.tables;
  state.counters["band_bits"] = t.band_bits;
  state.counters["radius"] = t.probe_radius;
}
BENCHMARK(BM_QueryMapped)
    ->Args({3, 0})
    ->Args({2, 0})
    ->Args({3, 1})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(3);

// Check (query-or-add, every query a new random fingerprint, so each is
// added) from 1, 2 and 8 threads on one read-write index with its log (no
// fsync): the checks' queries run under the shared lock, so two threads
// should approach twice one thread's rate on two idle cores; with 8, the
// searches of the checks in flight are combined into batches
// (search_combiner.h: less CPU a check). The reference is BM_QueryMapped (a
// query alone, one thread).
void BM_Check(benchmark::State& state) {
  Data& d = GetData();
  static DocumentIndex* index = [&] {
    DocumentIndexOptions o;
    o.log = true;
    o.sync = false;
    o.compact_fraction = 0;
    std::filesystem::remove(d.path + ".log");  // a previous run's checks
    auto opened = DocumentIndex::Open(d.path, DocumentIndex::Mode::kReadWrite, o);
    if (!opened.ok()) std::abort();
    return opened->release();
  }();
  static std::atomic<uint64_t> next_id{0};
  std::mt19937_64 rng(1000 + next_id.fetch_add(1));
  std::vector<CheckResult> out;
  size_t i = 0;
  const ThreadTimes t0 = GetThreadTimes();
  for (auto _ : state) {
    ++i;
    const std::string id = "check-" + std::to_string(next_id.fetch_add(1));
    const Fingerprint fp = Fingerprint::From128(rng(), rng());
    if (!index
             ->Check(std::span<const std::string>(&id, 1), std::span<const Fingerprint>(&fp, 1),
                     CheckOptions{}, &out)
             .ok()) {
      return state.SkipWithError("check");
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(i));  // items_per_second: checks/s, all threads
  // Per check, averaged over the threads: CPU time, time runnable but
  // waiting for a CPU, and blocking context switches.
  const ThreadTimes t1 = GetThreadTimes();
  const double checks = static_cast<double>(std::max<size_t>(i, 1));
  state.counters["cpu_us"] =
      benchmark::Counter((t1.run_us - t0.run_us) / checks, benchmark::Counter::kAvgThreads);
  state.counters["runq_us"] =
      benchmark::Counter((t1.wait_us - t0.wait_us) / checks, benchmark::Counter::kAvgThreads);
  state.counters["blocked"] =
      benchmark::Counter((t1.blocked - t0.blocked) / checks, benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_Check)
    ->Threads(1)
    ->Threads(2)
    ->Threads(8)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(3);

void BM_QueryLinearScan(benchmark::State& state) {
  Data& d = GetData();
  auto scan = LinearScanIndex::Create(128);
  std::vector<uint64_t> ids(d.fps.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  if (!(*scan)->AddBatch(ids, d.fps).ok()) return state.SkipWithError("add");
  std::vector<Neighbor> m;
  size_t i = 0;
  for (auto _ : state) {
    if (!(*scan)->Search(d.queries[i++ % d.queries.size()], g_k, &m).ok()) {
      return state.SkipWithError("search");
    }
  }
  state.counters["q/s"] = benchmark::Counter(static_cast<double>(i), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_QueryLinearScan)->Unit(benchmark::kMicrosecond)->MinTime(3);

}  // namespace
}  // namespace neardup

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--neardup_n=", 12) == 0) neardup::g_n = std::stoul(argv[i] + 12);
    if (std::strncmp(argv[i], "--neardup_k=", 12) == 0) neardup::g_k = std::stoi(argv[i] + 12);
    if (std::strncmp(argv[i], "--neardup_table_bytes=", 22) == 0) {
      neardup::g_table_bytes = static_cast<uint32_t>(std::stoul(argv[i] + 22));
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::filesystem::remove_all(neardup::GetData().dir);
  return 0;
}
