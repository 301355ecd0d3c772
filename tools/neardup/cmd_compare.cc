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
  PipelineFlags pipeline;
};

// The text of the first document in `path`.
Result<std::string> ReadOneDocument(const std::string& path, const std::string& format) {
  ReadOptions options;
  auto parsed = ParseInputFormat(format);
  if (!parsed.ok()) return parsed.status();
  options.format = *parsed;
  std::string problem;
  options.on_issue = [&problem](const InputIssue& issue) {
    if (issue.dropped() && problem.empty()) problem = issue.ToString();
    std::cerr << "neardup: " << (issue.dropped() ? "skipped: " : "warning: ") << issue.ToString()
              << "\n";
  };
  auto reader = DocumentReader::Open({path}, options);
  if (!reader.ok()) return reader.status();
  Document doc;
  if (!(*reader)->Next(&doc)) {
    return Status::InvalidArgument(problem.empty() ? path + ": no document" : problem);
  }
  return doc.text;
}

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
    std::string text = flags.operands[i];
    if (!flags.text) {
      auto read = ReadOneDocument(flags.operands[i], flags.format);
      if (!read.ok()) return Fail(read.status());
      text = std::move(*read);
    } else {
      RepairUtf8(&text);
    }
    fps[i] = (*pipeline)->Fingerprint(text);
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
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  cmd->callback([flags, exit_code] { exit_code->value = RunCompare(*flags); });
}

}  // namespace neardup::cli
