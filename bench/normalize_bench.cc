// Copyright 2026 The neardup Authors.
//
// Normalization throughput, single thread, each with its reference in the
// same run:
//   BM_Nfkc/neardup vs BM_Nfkc/icu_utf16: NFKC_Casefold of THUCNews
//     (../shared/data/zh_thucnews1000.jsonl), the library's UTF-8 path vs ICU
//     normalizing through UTF-16 (the library's code before).
//   BM_T2s/neardup vs BM_T2s/opencc: tw2sp on the text of the zh_TW man pages
//     (/usr/share/man/zh_TW, read as the quick start reads them), the
//     library's tables vs opencc::SimpleConverter.
//
//   build/bench/neardup_normalize_bench [--benchmark_repetitions=5]

#include <benchmark/benchmark.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencc/SimpleConverter.hpp>
#include <string>
#include <vector>

#include "neardup/text.h"
#include "text/t2s_converter.h"

namespace {

struct Texts {
  std::vector<std::string> docs;
  size_t bytes = 0;
};

const Texts& Thucnews() {
  static const Texts* texts = [] {
    auto* t = new Texts;
    std::ifstream in(std::string(NEARDUP_SOURCE_DIR) + "/../shared/data/zh_thucnews1000.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      t->docs.push_back(nlohmann::json::parse(line).at("text"));
      t->bytes += t->docs.back().size();
    }
    return t;
  }();
  return *texts;
}

const Texts& ManPages() {
  static const Texts* texts = [] {
    auto* t = new Texts;
    if (!std::filesystem::is_directory("/usr/share/man/zh_TW")) return t;
    neardup::ReadOptions options;
    auto reader = neardup::DocumentReader::Open({"/usr/share/man/zh_TW"}, options);
    if (!reader.ok()) return t;
    neardup::Document doc;
    while ((*reader)->Next(&doc)) {
      t->docs.push_back(doc.text);
      t->bytes += doc.text.size();
    }
    return t;
  }();
  return *texts;
}

void BM_Nfkc(benchmark::State& state, bool reference) {
  const Texts& t = Thucnews();
  if (t.docs.empty()) {
    state.SkipWithError("zh_thucnews1000.jsonl is absent");
    return;
  }
  auto norm = neardup::Normalizer::Create({});
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* icu_nfkc = icu::Normalizer2::getNFKCCasefoldInstance(status);
  size_t x = 0;
  for (auto _ : state) {
    for (const std::string& d : t.docs) {
      if (reference) {
        UErrorCode s = U_ZERO_ERROR;
        std::string out;
        icu_nfkc->normalize(icu::UnicodeString::fromUTF8(d), s).toUTF8String(out);
        x += out.size();
      } else {
        x += (*norm)->Normalize(d).size();
      }
    }
  }
  benchmark::DoNotOptimize(x);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.bytes));
}
BENCHMARK_CAPTURE(BM_Nfkc, neardup, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Nfkc, icu_utf16, true)->Unit(benchmark::kMillisecond);

void BM_T2s(benchmark::State& state, bool reference) {
  const Texts& t = ManPages();
  if (t.docs.empty()) {
    state.SkipWithError("/usr/share/man/zh_TW is absent (manpages-zh)");
    return;
  }
  auto fast = neardup::text::T2sConverter::Create("tw2sp.json");
  if (!fast.ok()) {
    state.SkipWithError(fast.status().ToString().c_str());
    return;
  }
  opencc::SimpleConverter opencc("tw2sp.json");
  size_t x = 0;
  for (auto _ : state) {
    for (const std::string& d : t.docs) {
      x += reference ? opencc.Convert(d).size() : (*fast)->Convert(d).size();
    }
  }
  benchmark::DoNotOptimize(x);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * t.bytes));
}
BENCHMARK_CAPTURE(BM_T2s, neardup, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_T2s, opencc, true)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
