// Copyright 2026 The neardup Authors.
//
// Method presets: the seeds' combinations of features, weights, top-K,
// fingerprint width and default distance threshold, by name. Every
// subcommand that fingerprints takes --method NAME; explicit options
// (--bits, --features, --weights, --topk, --hash) override a preset's values.
// doc/methods.md has the table of every preset.
//
//   auto preset = neardup::FindPreset("tfidf");
//   if (!preset.ok()) ...;
//   auto pipeline = neardup::Pipeline::Create(preset->pipeline);
//
// Thread safety: Presets() is immutable static data.

#ifndef NEARDUP_PRESETS_H_
#define NEARDUP_PRESETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "neardup/pipeline.h"
#include "neardup/status.h"

namespace neardup {

struct Preset {
  std::string name;
  std::string seed;  // the source it reproduces, e.g. "seed 002 (classic SimHash, top-20 TF-IDF)"
  std::string description;   // one line for --help and doc/methods.md
  PipelineOptions pipeline;  // normalization left at PipelineOptions' defaults
  int default_k = 3;         // Hamming threshold used by dedup when -k is not given
};

// The name of the preset used when no --method is given (doc/evaluation.md,
// "The default"): distinct character 5-grams, uniform weights, k = 28. Until
// 2026-11-23 it was chars5 (5-grams weighted by count, k = 24), which is still
// a preset; chars5u keeps F1 >= 0.98 at a 10 % edit ratio and raises it at
// 20 % (THUCNews >= 800 / all / BBC: 0.902 / 0.831 / 0.853 against 0.797 /
// 0.707 / 0.843) with no false pair of repeated n-grams.
inline constexpr std::string_view kDefaultMethod = "chars5u";

// Every preset, in documentation order.
const std::vector<Preset>& Presets();

// InvalidArgument (listing the known names) when `name` is unknown.
Result<Preset> FindPreset(std::string_view name);

// "classic|tfidf|..." for help texts.
std::string PresetNames();

}  // namespace neardup

#endif  // NEARDUP_PRESETS_H_
