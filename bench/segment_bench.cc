// Copyright 2026 The neardup Authors.
//
// Single-threaded throughput of the jieba-compatible segmenter on THUCNews
// text (../shared/data/zh_thucnews1000.jsonl beside the repository): Cut,
// CutWithPos and Extract top-20, over the whole corpus and per document size.
// bench/compare_jieba.sh runs python3-jieba on the same text for reference.
//
//   build/bench/neardup_segment_bench [--benchmark_filter=...]
//   NEARDUP_BENCH_MB=50 build/bench/neardup_segment_bench   # corpus repeated to 50 MB

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "neardup/keywords.h"
#include "neardup/pipeline.h"
#include "neardup/segmenter.h"

namespace {

struct Corpus {
  std::vector<std::string> docs;
  size_t bytes = 0;
  std::unique_ptr<neardup::Segmenter> seg;
  neardup::IdfTable idf;
};

Corpus* LoadCorpus() {
  static Corpus* corpus = [] {
    auto* c = new Corpus;
    const std::string path =
        std::string(NEARDUP_SOURCE_DIR) + "/../shared/data/zh_thucnews1000.jsonl";
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "segment_bench: %s is absent; nothing to measure\n", path.c_str());
      std::exit(0);
    }
    std::vector<std::string> docs;
    std::string line;
    while (std::getline(in, line)) docs.push_back(nlohmann::json::parse(line).at("text"));
    const char* mb = std::getenv("NEARDUP_BENCH_MB");
    const size_t target = mb ? static_cast<size_t>(std::atof(mb) * 1e6) : 0;
    do {
      for (const std::string& d : docs) {
        c->docs.push_back(d);
        c->bytes += d.size();
      }
    } while (c->bytes < target);
    auto seg = neardup::Segmenter::Open(neardup::SegmenterOptions());
    if (!seg.ok()) {
      std::fprintf(stderr, "segment_bench: %s\n", seg.status().ToString().c_str());
      std::exit(1);
    }
    c->seg = std::move(*seg);
    auto idf = neardup::IdfTable::LoadDefault();
    if (!idf.ok()) {
      std::fprintf(stderr, "segment_bench: %s\n", idf.status().ToString().c_str());
      std::exit(1);
    }
    c->idf = std::move(*idf);
    return c;
  }();
  return corpus;
}

void BM_Cut(benchmark::State& state) {
  Corpus* c = LoadCorpus();
  std::vector<std::string_view> words;
  size_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& d : c->docs) {
      c->seg->Cut(d, &words);
      tokens += words.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c->bytes));
  state.counters["tokens"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Cut)->Unit(benchmark::kMillisecond);

void BM_CutWithPos(benchmark::State& state) {
  Corpus* c = LoadCorpus();
  std::vector<neardup::Token> tokens;
  for (auto _ : state) {
    for (const std::string& d : c->docs) c->seg->CutWithPos(d, &tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c->bytes));
}
BENCHMARK(BM_CutWithPos)->Unit(benchmark::kMillisecond);

void BM_ExtractTop20(benchmark::State& state) {
  Corpus* c = LoadCorpus();
  neardup::KeywordExtractor extractor(c->seg.get(), &c->idf);
  std::vector<neardup::Keyword> keywords;
  for (auto _ : state) {
    for (const std::string& d : c->docs) extractor.Extract(d, 20, &keywords);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c->bytes));
}
BENCHMARK(BM_ExtractTop20)->Unit(benchmark::kMillisecond);

// 64-bit tfidf top-20 SimHash fingerprints, the whole pipeline: NFKC + case
// folding (state.range(0) == 1) or none (0), extract_tags, XXH3, SimHash.
void BM_Fingerprint64Tfidf20(benchmark::State& state) {
  Corpus* c = LoadCorpus();
  neardup::PipelineOptions options;
  options.normalize.nfkc_casefold = state.range(0) == 1;
  auto pipeline = neardup::Pipeline::Create(options);
  if (!pipeline.ok()) {
    state.SkipWithError(pipeline.status().ToString().c_str());
    return;
  }
  uint64_t x = 0;
  for (auto _ : state) {
    for (const std::string& d : c->docs) x ^= (*pipeline)->Fingerprint(d).fingerprint.lo();
  }
  benchmark::DoNotOptimize(x);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c->bytes));
}
BENCHMARK(BM_Fingerprint64Tfidf20)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Cut over texts of a given size (bytes, cut at character boundaries from the
// concatenated corpus): per-call overhead vs. long documents.
void BM_CutBySize(benchmark::State& state) {
  Corpus* c = LoadCorpus();
  const size_t size = static_cast<size_t>(state.range(0));
  std::string all;
  for (const std::string& d : c->docs) {
    all += d;
    if (all.size() > (4u << 20)) break;
  }
  std::vector<std::string> pieces;
  for (size_t pos = 0; pos + size <= all.size() && pieces.size() < 4096;) {
    size_t end = pos + size;
    while (end < all.size() && (static_cast<unsigned char>(all[end]) & 0xC0) == 0x80) ++end;
    pieces.push_back(all.substr(pos, end - pos));
    pos = end;
  }
  size_t bytes = 0;
  for (const auto& p : pieces) bytes += p.size();
  std::vector<std::string_view> words;
  for (auto _ : state) {
    for (const std::string& p : pieces) c->seg->Cut(p, &words);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_CutBySize)
    ->Arg(64)
    ->Arg(1024)
    ->Arg(16 << 10)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
