// Copyright 2026 The neardup Authors.
//
// Single-threaded fingerprint throughput of every method preset on THUCNews
// text (../shared/data/zh_thucnews1000.jsonl beside the repository), the whole
// pipeline (default normalization: NFKC + case folding) per document. The
// JSONL titles are passed (they matter to `improved`). doc/benchmarks.md
// has the figures.
//
//   build/bench/neardup_methods_bench [--benchmark_filter=...]

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"

namespace {

struct Corpus {
  std::vector<std::pair<std::string, std::string>> docs;  // (text, title)
  size_t bytes = 0;
};

const Corpus& LoadCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    const std::string path =
        std::string(NEARDUP_SOURCE_DIR) + "/../shared/data/zh_thucnews1000.jsonl";
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "methods_bench: %s is absent; nothing to measure\n", path.c_str());
      std::exit(0);
    }
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      c->docs.emplace_back(j.at("text"), j.value("title", ""));
      c->bytes += c->docs.back().first.size();
    }
    return c;
  }();
  return *corpus;
}

void BM_Method(benchmark::State& state, const char* method) {
  const Corpus& c = LoadCorpus();
  auto preset = neardup::FindPreset(method);
  if (!preset.ok()) {
    state.SkipWithError(preset.status().ToString().c_str());
    return;
  }
  auto pipeline = neardup::Pipeline::Create(preset->pipeline);
  if (!pipeline.ok()) {
    state.SkipWithError(pipeline.status().ToString().c_str());
    return;
  }
  uint64_t x = 0;
  for (auto _ : state) {
    for (const auto& [text, title] : c.docs) {
      x ^= (*pipeline)->Fingerprint(text, title).fingerprint.lo();
    }
  }
  benchmark::DoNotOptimize(x);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes));
}

// MinHash signatures (Pipeline::MinHashSignature: normalization, features,
// the set, num_perm minima) of a method's text form, beside the default
// method's (chars5u) and chars5's SimHash fingerprints (the references of
// the ratios in doc/benchmarks.md).
void BM_MinHash(benchmark::State& state, const char* text) {
  const Corpus& c = LoadCorpus();
  auto method = neardup::Method::Parse(text);
  if (!method.ok()) {
    state.SkipWithError(method.status().ToString().c_str());
    return;
  }
  auto pipeline = neardup::Pipeline::Create(method->pipeline);
  if (!pipeline.ok()) {
    state.SkipWithError(pipeline.status().ToString().c_str());
    return;
  }
  const neardup::MinHasher hasher(method->minhash.num_perm);
  std::vector<uint32_t> sig(static_cast<size_t>(hasher.num_perm()));
  uint64_t x = 0;
  for (auto _ : state) {
    for (const auto& [text, title] : c.docs) {
      x += (*pipeline)->MinHashSignature(hasher, text, title, sig.data());
      x ^= sig[0];
    }
  }
  benchmark::DoNotOptimize(x);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes));
}

BENCHMARK_CAPTURE(BM_Method, chars5_reference, "chars5")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, chars5u_reference, "chars5u")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MinHash, minhash, "minhash")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MinHash, minhash_chars5, "minhash,features=chars:5")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MinHash, minhash_256, "minhash,num_perm=256")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MinHash, minhash_64, "minhash,num_perm=64")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, classic, "classic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, tfidf, "tfidf")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, chargram, "chargram")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, improved, "improved")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, esimhash, "esimhash")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, sentence, "sentence")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Method, chars5, "chars5")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
