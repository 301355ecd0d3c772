// Copyright 2026 The neardup Authors.
//
// libFuzzer target: segments arbitrary bytes (Cut, CutWithPos) and extracts
// keywords, with python3-jieba's dictionary opened once. Checks that tokens
// are non-empty, in order and concatenate to the input, whatever the bytes.
// Inputs above 64 KiB are ignored (the per-input cost is linear; larger
// inputs only slow the fuzzer down).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/keywords.h"
#include "neardup/segmenter.h"

namespace {

constexpr size_t kMaxInput = 64 << 10;

struct State {
  std::unique_ptr<neardup::Segmenter> seg;
  neardup::IdfTable idf;
  // Made once: its constructor maps the IDF table onto the dictionary's word
  // ids (about 0.2 s under ASan), which per input held the fuzzer to a few
  // executions per second.
  std::unique_ptr<neardup::KeywordExtractor> extractor;
};

State* GetState() {
  static State* state = [] {
    auto* s = new State;
    auto seg = neardup::Segmenter::Open(neardup::SegmenterOptions());
    if (!seg.ok()) {
      std::fprintf(stderr, "segmenter_fuzz: %s\n", seg.status().ToString().c_str());
      std::abort();
    }
    s->seg = std::move(*seg);
    auto idf = neardup::IdfTable::LoadDefault();
    if (!idf.ok()) {
      std::fprintf(stderr, "segmenter_fuzz: %s\n", idf.status().ToString().c_str());
      std::abort();
    }
    s->idf = std::move(*idf);
    s->extractor = std::make_unique<neardup::KeywordExtractor>(s->seg.get(), &s->idf);
    return s;
  }();
  return state;
}

}  // namespace

// The dictionary and IDF table load once, before the first input: under
// ASan and coverage on a loaded machine the load took longer than the
// per-input timeout (-timeout=10) and was reported as a timeout of the first
// input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  GetState();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return 0;
  State* state = GetState();
  const std::string text(reinterpret_cast<const char*>(data), size);

  std::vector<std::string_view> words;
  state->seg->Cut(text, &words);
  const char* expected = text.data();
  for (std::string_view w : words) {
    if (w.empty() || w.data() != expected) std::abort();
    expected += w.size();
  }
  if (expected != text.data() + text.size()) std::abort();

  std::vector<neardup::Token> tokens;
  state->seg->CutWithPos(text, &tokens);
  if (tokens.size() != words.size()) std::abort();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].word != words[i] || tokens[i].pos.empty()) std::abort();
  }

  std::vector<neardup::Keyword> keywords;
  state->extractor->Extract(text, 20, &keywords);
  if (keywords.size() > 20) std::abort();
  for (size_t i = 1; i < keywords.size(); ++i) {
    if (keywords[i].weight > keywords[i - 1].weight) std::abort();
  }
  return 0;
}
