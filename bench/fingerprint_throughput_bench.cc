// Copyright 2026 The neardup Authors.
//
// Single-thread throughput of the default fingerprint (`chars5u`: NFKC +
// case folding, distinct character 5-grams, 128 bits) in MB per CPU-second:
// Pipeline::Fingerprint (the fused single pass, src/features/
// fused_ngram_simhash.h) against the general path it replaces, measured in
// the same run (Normalizer::Normalize, then FeatureExtractor::SimHashOf: the
// normalized string, the content string, the n-gram table), in interleaved
// rounds, on a corpus repeated `repeat` times; and the fused pass's baseline
// build (no AVX2: the ASCII blocks' kept bytes moved one at a time) where
// Pipeline::Fingerprint takes the AVX2 one. Fails unless all give the same
// fingerprints. Prints the load average before and after (the machine
// is shared). doc/benchmarks.md has the figures.
//
//   build/bench/neardup_fingerprint_throughput_bench [CORPUS.jsonl [REPEAT [ROUNDS]]]
//
// Default corpus: ../shared/data/zh_thucnews1000.jsonl, 8 times, 7 rounds.

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "features/fused_ngram_simhash.h"
#include "neardup/features.h"
#include "neardup/pipeline.h"

namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void PrintLoad(const char* when) {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3)
    std::printf("load average %s: %.2f %.2f %.2f\n", when, load[0], load[1], load[2]);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1]
               : std::string(NEARDUP_SOURCE_DIR) + "/../shared/data/zh_thucnews1000.jsonl";
  const int repeat = argc > 2 ? std::atoi(argv[2]) : 8;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 7;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fingerprint_throughput_bench: %s is absent; nothing to measure\n",
                 path.c_str());
    return 0;
  }
  std::vector<std::string> docs;
  size_t bytes = 0;
  std::string line;
  while (std::getline(in, line)) {
    docs.push_back(nlohmann::json::parse(line).at("text"));
    bytes += docs.back().size();
  }
  const neardup::PipelineOptions options;  // the default method, chars5u
  auto pipeline = neardup::Pipeline::Create(options);
  auto extractor = neardup::FeatureExtractor::Create(options.features, nullptr, nullptr);
  if (!pipeline.ok() || !extractor.ok()) {
    std::fprintf(stderr, "cannot create the pipeline\n");
    return 1;
  }
  const neardup::Pipeline& p = **pipeline;
  const neardup::FeatureExtractor& e = **extractor;
  const auto baseline =
      neardup::FusedNgramSimHash::Create(options, neardup::FusedNgramSimHash::Simd::kBaseline);
  const auto best = neardup::FusedNgramSimHash::Create(options);
  // The baseline build, measured only where Pipeline::Fingerprint runs another.
  const bool compare_builds = baseline != nullptr && best != nullptr && best->UsesAvx2();
  std::vector<neardup::Fingerprint> general(docs.size()), fused(docs.size()),
      fused_baseline(docs.size());
  auto run_general = [&] {
    for (int r = 0; r < repeat; ++r) {
      for (size_t i = 0; i < docs.size(); ++i) {
        size_t features = 0;
        general[i] = e.SimHashOf(p.Normalize(docs[i]), {}, options.bits, options.hash, &features);
      }
    }
  };
  auto run_fused = [&] {
    for (int r = 0; r < repeat; ++r) {
      for (size_t i = 0; i < docs.size(); ++i) fused[i] = p.Fingerprint(docs[i]).fingerprint;
    }
  };
  auto run_baseline = [&] {
    for (int r = 0; r < repeat; ++r) {
      for (size_t i = 0; i < docs.size(); ++i) {
        neardup::DocumentFingerprint out;
        if (!baseline->Fingerprint(docs[i], &out)) out = p.Fingerprint(docs[i]);  // declined
        fused_baseline[i] = out.fingerprint;
      }
    }
  };
  run_general();  // warm-up (tables, caches)
  run_fused();
  if (compare_builds) run_baseline();
  PrintLoad("before");
  std::vector<double> t_general, t_fused, t_baseline, ratios, build_ratios;
  for (int round = 0; round < rounds; ++round) {
    double t0 = ThreadCpuSeconds();
    run_general();
    double t1 = ThreadCpuSeconds();
    run_fused();
    double t2 = ThreadCpuSeconds();
    t_general.push_back(t1 - t0);
    t_fused.push_back(t2 - t1);
    ratios.push_back((t1 - t0) / (t2 - t1));
    if (compare_builds) {
      run_baseline();
      const double t3 = ThreadCpuSeconds();
      t_baseline.push_back(t3 - t2);
      build_ratios.push_back((t3 - t2) / (t2 - t1));
    }
  }
  PrintLoad("after");
  if (general != fused || (compare_builds && general != fused_baseline)) {
    std::fprintf(stderr, "FAIL: the fused pass and the general path disagree\n");
    return 1;
  }
  const double mb = static_cast<double>(bytes) * repeat / 1e6;
  std::printf("%s x %d: %zu documents, %.2f MB per round, %d rounds, same fingerprints\n",
              path.c_str(), repeat, docs.size(), mb, rounds);
  std::printf("general path (normalize + SimHashOf): %.1f MB/CPU-s (median; best %.1f)\n",
              mb / Median(t_general), mb / *std::min_element(t_general.begin(), t_general.end()));
  std::printf("Pipeline::Fingerprint (fused):        %.1f MB/CPU-s (median; best %.1f)\n",
              mb / Median(t_fused), mb / *std::min_element(t_fused.begin(), t_fused.end()));
  std::printf("speed-up: %.2fx (median of the per-round ratios)\n", Median(ratios));
  if (compare_builds) {
    std::printf(
        "fused pass, baseline build (no AVX2):  %.1f MB/CPU-s (median); the AVX2 build "
        "%.2fx it\n",
        mb / Median(t_baseline), Median(build_ratios));
  }
  return 0;
}
