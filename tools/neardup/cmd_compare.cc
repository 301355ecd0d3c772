// Copyright 2026 The neardup Authors.
//
// neardup compare: the Hamming distance and similarity of two documents.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"

namespace neardup::cli {
namespace {

struct CompareFlags {
  OperandFlags operands;
  PipelineFlags pipeline;
};

int RunCompare(const CompareFlags& flags) {
  auto docs = LoadOperands(flags.operands, "compare");
  if (!docs.ok()) return Fail(docs.status());
  NEARDUP_RETURN_IF_ERROR_CLI(RequireSimHash(flags.pipeline, "compare"));
  auto pipeline_options = MakePipelineOptions(flags.pipeline);
  if (!pipeline_options.ok()) return Fail(pipeline_options.status());
  auto pipeline = Pipeline::Create(*pipeline_options);
  if (!pipeline.ok()) return Fail(pipeline.status());
  DocumentFingerprint fps[2];
  for (int i = 0; i < 2; ++i) {
    const Document& doc = (*docs)[static_cast<size_t>(i)];
    fps[i] = (*pipeline)->Fingerprint(doc.text, doc.title);
  }
  const int distance = HammingDistance(fps[0].fingerprint, fps[1].fingerprint);
  const double similarity = Similarity(fps[0].fingerprint, fps[1].fingerprint);
  if (flags.operands.json) {
    nlohmann::ordered_json out = {
        {"a", {{"fingerprint", fps[0].fingerprint.ToHex()}, {"features", fps[0].features}}},
        {"b", {{"fingerprint", fps[1].fingerprint.ToHex()}, {"features", fps[1].features}}},
        {"bits", pipeline_options->bits},
        {"distance", distance},
        {"similarity", similarity}};
    std::cout << out.dump() << "\n";
  } else {
    std::printf(
        "a: %s (%zu features)\nb: %s (%zu features)\ndistance: %d of %d bits\n"
        "similarity: %.4f\n",
        fps[0].fingerprint.ToHex().c_str(), fps[0].features, fps[1].fingerprint.ToHex().c_str(),
        fps[1].features, distance, pipeline_options->bits, similarity);
  }
  if (fps[0].empty() || fps[1].empty()) {
    std::cerr << "neardup: note: an empty document (no features) is never a near duplicate\n";
  }
  return kExitOk;
}

}  // namespace

void AddCompareCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Fingerprint two documents and print their Hamming distance and similarity");
  AddOperandOptions(cmd, &flags->operands);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  cmd->callback([flags, exit_code] { exit_code->value = RunCompare(*flags); });
}

}  // namespace neardup::cli
