// Copyright 2026 The neardup Authors.
//
// neardup fingerprint: one SimHash fingerprint per document.

#include <atomic>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"

namespace neardup::cli {
namespace {

struct FingerprintFlags {
  InputFlags input;
  PipelineFlags pipeline;
};

int RunFingerprint(const FingerprintFlags& flags) {
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return Fail(read_options.status());
  NEARDUP_RETURN_IF_ERROR_CLI(RequireSimHash(flags.pipeline, "fingerprint"));
  auto pipeline_options = MakePipelineOptions(flags.pipeline);
  if (!pipeline_options.ok()) return Fail(pipeline_options.status());
  auto pipeline = Pipeline::Create(*pipeline_options);
  if (!pipeline.ok()) return Fail(pipeline.status());
  std::atomic<uint64_t> empty{0};
  const auto process = [&](const Document& doc) {
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(doc.text, doc.title);
    nlohmann::ordered_json line = {
        {"id", doc.id}, {"fingerprint", fp.fingerprint.ToHex()}, {"features", fp.features}};
    if (fp.empty()) {
      line["empty"] = true;
      ++empty;
    }
    return JsonLine(line);
  };
  const int exit_code = WriteLinePerDocument(flags.input, *read_options, process);
  if (empty > 0 && !flags.input.quiet) {
    std::cerr << "neardup: " << empty << " empty document" << (empty == 1 ? "" : "s")
              << " (no features): fingerprint 0, never a near duplicate of anything\n";
  }
  return exit_code;
}

}  // namespace

void AddFingerprintCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<FingerprintFlags>();
  CLI::App* cmd = app.add_subcommand(
      "fingerprint",
      "SimHash fingerprints; one JSON line per document: {\"id\": ..., \"fingerprint\": \"<hex, "
      "most significant bit first>\", \"features\": N} (and \"empty\": true when N = 0).");
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  cmd->callback([flags, exit_code] { exit_code->value = RunFingerprint(*flags); });
}

}  // namespace neardup::cli
