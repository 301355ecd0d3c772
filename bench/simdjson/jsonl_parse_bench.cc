// Copyright 2026 The neardup Authors.
//
// Is simdjson (Debian's libsimdjson-dev) worth adopting for JSONL input?
// The same JSONL file (THUCNews, ../shared/data/zh_thucnews1000.jsonl, or
// NEARDUP_BENCH_JSONL), read into Documents (id, text, source, line) on one
// thread:
//   BM_Reader            neardup's DocumentReader (its one-pass validating
//                        fast path; the repair path only for hostile lines)
//   BM_SimdjsonDom       simdjson's DOM parser per line (validates the whole
//                        line, as neardup must)
//   BM_SimdjsonOnDemand  simdjson's On-Demand parser per line (finds "id" and
//                        "text" without validating the rest of the line: NOT
//                        equivalent, an upper bound on what simdjson can give)
// Both simdjson sides read the file into one padded buffer per iteration
// (padded_string::load) and split lines with memchr; neither handles
// invalid UTF-8 or lone surrogates the way the reader must (U+FFFD and a
// warning, not a dropped line), so adopting simdjson would still need the
// reader's repair path behind it. Built only when simdjson is found (not a
// dependency of neardup):
//
//   build/bench/neardup_jsonl_parse_bench --benchmark_repetitions=5

#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "neardup/text.h"

namespace {

std::string CorpusPath() {
  const char* env = std::getenv("NEARDUP_BENCH_JSONL");
  if (env != nullptr && env[0] != '\0') return env;
  return std::string(NEARDUP_SOURCE_DIR) + "/../shared/data/zh_thucnews1000.jsonl";
}

// What the reader fills for a JSONL line without a title.
void Fill(std::string_view id, std::string_view text, const std::string& source, uint64_t line,
          neardup::Document* doc) {
  doc->id = id.empty() ? source + ":" + std::to_string(line) : std::string(id);
  doc->text = std::string(text);
  doc->source = source;
  doc->line = line;
}

void BM_Reader(benchmark::State& state) {
  const std::string path = CorpusPath();
  int64_t bytes = 0;
  for (auto _ : state) {
    auto reader = neardup::DocumentReader::Open({path}, neardup::ReadOptions{});
    if (!reader.ok()) {
      state.SkipWithError(reader.status().ToString().c_str());
      return;
    }
    neardup::Document doc;
    while ((*reader)->Next(&doc)) bytes += static_cast<int64_t>(doc.text.size());
    benchmark::DoNotOptimize(doc);
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_Reader)->Unit(benchmark::kMillisecond);

// Calls fn(line, capacity) for each non-empty line of the padded buffer.
template <typename Fn>
void ForEachLine(const simdjson::padded_string& buf, Fn&& fn) {
  const char* p = buf.data();
  const char* end = p + buf.size();
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* e = nl == nullptr ? end : nl;
    if (e > p) fn(p, static_cast<size_t>(e - p));
    p = e + 1;
  }
}

// Loads the corpus into simdjson's padded buffer on every iteration and hands
// each line to parse(p, n, buf_end, &id, &text), which returns false for a
// line it could not read; the readable ones become Documents.
template <typename Parse>
void RunSimdjson(benchmark::State& state, Parse parse) {
  const std::string path = CorpusPath();
  int64_t bytes = 0;
  for (auto _ : state) {
    simdjson::padded_string buf;
    if (simdjson::padded_string::load(path).get(buf) != simdjson::SUCCESS) {
      state.SkipWithError("cannot read the corpus");
      return;
    }
    neardup::Document doc;
    uint64_t line = 0;
    const char* const buf_end = buf.data() + buf.size() + simdjson::SIMDJSON_PADDING;
    ForEachLine(buf, [&](const char* p, size_t n) {
      ++line;
      std::string_view id, text;
      if (!parse(p, n, buf_end, &id, &text)) return;
      Fill(id, text, path, line, &doc);
      bytes += static_cast<int64_t>(doc.text.size());
    });
    benchmark::DoNotOptimize(doc);
  }
  state.SetBytesProcessed(bytes);
}

void BM_SimdjsonDom(benchmark::State& state) {
  simdjson::dom::parser parser;
  RunSimdjson(state, [&](const char* p, size_t n, const char*, std::string_view* id,
                         std::string_view* text) {
    simdjson::dom::element root;
    // realloc_if_needed = false: the rest of the buffer is the padding.
    if (parser.parse(p, n, false).get(root) != simdjson::SUCCESS) return false;
    if (root["text"].get(*text) != simdjson::SUCCESS) return false;
    if (root["id"].get(*id) != simdjson::SUCCESS) *id = {};
    return true;
  });
}
BENCHMARK(BM_SimdjsonDom)->Unit(benchmark::kMillisecond);

void BM_SimdjsonOnDemand(benchmark::State& state) {
  simdjson::ondemand::parser parser;
  RunSimdjson(state, [&](const char* p, size_t n, const char* buf_end, std::string_view* id,
                         std::string_view* text) {
    simdjson::ondemand::document d;
    if (parser.iterate(p, n, static_cast<size_t>(buf_end - p)).get(d) != simdjson::SUCCESS) {
      return false;
    }
    simdjson::ondemand::object object;
    if (d.get_object().get(object) != simdjson::SUCCESS) return false;
    // Fields in any order (find_field_unordered), as the reader accepts them.
    if (object.find_field_unordered("text").get_string().get(*text) != simdjson::SUCCESS) {
      return false;
    }
    if (object.find_field_unordered("id").get_string().get(*id) != simdjson::SUCCESS) *id = {};
    return true;
  });
}
BENCHMARK(BM_SimdjsonOnDemand)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
