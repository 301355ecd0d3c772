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
  std::vector<std::string> operands;
  bool text = false;
  bool json = false;
  std::string format = "auto";
  bool title_first_line = false;
  PipelineFlags pipeline;
};

int RunCompare(const CompareFlags& flags) {
  if (flags.operands.size() != 2) {
    return Fail(
        Status::InvalidArgument("compare takes exactly two files (or two texts with --text)"));
  }
  auto pipeline_options = MakePipelineOptions(flags.pipeline);
  if (!pipeline_options.ok()) return Fail(pipeline_options.status());
  auto pipeline = Pipeline::Create(*pipeline_options);
  if (!pipeline.ok()) return Fail(pipeline.status());
  DocumentFingerprint fps[2];
  for (int i = 0; i < 2; ++i) {
    auto doc = LoadOperand(flags.operands[i], flags.text, flags.format, flags.title_first_line);
    if (!doc.ok()) return Fail(doc.status());
    fps[i] = (*pipeline)->Fingerprint(doc->text, doc->title);
  }
  const int distance = HammingDistance(fps[0].fingerprint, fps[1].fingerprint);
  const double similarity = Similarity(fps[0].fingerprint, fps[1].fingerprint);
  if (flags.json) {
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
  cmd->add_option("A B", flags->operands, "Two files (or two texts with --text)")->expected(2);
  cmd->add_flag("--text", flags->text, "The operands are texts, not files");
  cmd->add_flag("--json", flags->json, "Print one JSON object");
  cmd->add_option("--input-format", flags->format, "auto|jsonl|text|lines|roff")
      ->capture_default_str();
  cmd->add_flag("--title-first-line", flags->title_first_line,
                "Plain text files: the first line is the document's title (improved weights)");
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  cmd->callback([flags, exit_code] { exit_code->value = RunCompare(*flags); });
}

}  // namespace neardup::cli
