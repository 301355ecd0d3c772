// Copyright 2026 The neardup Authors.
//
// neardup dedup: fingerprint every document, find the near-duplicates within
// k (minhash: at Jaccard >= threshold), cluster them and say which copy to
// keep. The job is the library's (neardup/dedup_job.h: DedupJob::Run, as
// Python's neardup.dedup runs it); this file is its command line: the flags
// (dedup_stages.h), the output files (written under temporary names and put
// in place when the command succeeds, output_files.h), the progress line and
// the summary on stderr.

#include <chrono>

#include "common.h"
#include "dedup_stages.h"
#include "neardup/dedup_job.h"

namespace neardup::cli {
namespace {

int RunDedup(DedupFlags dedup_flags) {
  // 1. Configure.
  auto resolved = ResolveDedupConfig(std::move(dedup_flags));
  if (!resolved.ok()) return Fail(resolved.status());
  DedupConfig& config = **resolved;
  DedupFlags& flags = config.flags;
  NEARDUP_RETURN_IF_ERROR_CLI(CheckInputsAndOutputs(
      flags.input.inputs, {flags.input.output, flags.unique_out, flags.duplicates_out,
                           flags.pairs_out, flags.clusters_out}));
  // Every output is opened before the input is read, so that a bad path
  // fails early.
  const auto open = [&](const std::string& path) -> Result<std::unique_ptr<Output>> {
    if (path.empty()) return std::unique_ptr<Output>();
    return Output::Open(path, flags.input.inputs);
  };
  NEARDUP_ASSIGN_OR_RETURN_CLI(auto records, open(flags.input.output));
  NEARDUP_ASSIGN_OR_RETURN_CLI(auto pairs, open(flags.pairs_out));
  NEARDUP_ASSIGN_OR_RETURN_CLI(auto clusters, open(flags.clusters_out));
  NEARDUP_ASSIGN_OR_RETURN_CLI(auto unique, open(flags.unique_out));
  NEARDUP_ASSIGN_OR_RETURN_CLI(auto duplicates, open(flags.duplicates_out));
  const auto sink = [](const std::unique_ptr<Output>& out) {
    std::function<void(std::string_view)> f;
    if (out) f = [o = out.get()](std::string_view line) { o->Write(line); };
    return f;
  };
  DedupJobOutputs outputs{.records = sink(records),
                          .pairs = sink(pairs),
                          .clusters = sink(clusters),
                          .unique = sink(unique),
                          .duplicates = sink(duplicates)};

  // 2 - 4. The boilerplate pass, fingerprints, join, cluster, keep policy
  // and the lines of every output.
  ProgressLine progress(ProgressModeOf(flags.input));
  auto summary = config.job->Run(MakeDedupInput(flags.input, config.read_options), outputs,
                                 ProgressOn(&progress, flags.input.inputs));
  progress.Clear();
  if (!summary.ok()) return Fail(summary.status());
  const InputStats& stats = summary->input;
  if (!flags.input.quiet) std::cerr << SummaryLine(stats) << "\n";
  const int input_exit = InputExitCode(flags.input, stats);
  if (NothingRead(stats)) return input_exit;
  if (!flags.boilerplate.stats_out.empty()) {
    NEARDUP_RETURN_IF_ERROR_CLI(config.job->line_stats().Save(flags.boilerplate.stats_out));
  }
  WarnBadScores(config, summary->bad_scores);
  WarnDuplicateIds(summary->repeated_ids);

  // 5. Close the outputs (in place when the command succeeds) and report.
  for (auto* out : {&records, &unique, &duplicates, &pairs, &clusters}) {
    if (*out) NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  }
  DedupTimes times;
  times.fingerprint = summary->seconds.fingerprint;
  times.dedup = summary->seconds.dedup;
  times.output = summary->seconds.output;
  times.total = summary->seconds.total;
  NEARDUP_RETURN_IF_ERROR_CLI(
      WriteDedupReport(config, summary->result, times,
                       config.job->BoilerplateSummary(summary->boilerplate_dropped)));
  return input_exit;
}

}  // namespace

void AddDedupCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<DedupFlags>();
  CLI::App* cmd = app.add_subcommand(
      "dedup",
      "Find near-duplicate documents (Hamming distance <= k), cluster them and choose the copy "
      "to keep. One JSON record per document: {\"id\", \"fingerprint\", \"cluster\", "
      "\"duplicate\", \"nearest\", \"distance\", \"jaccard\" (the verified pair's "
      "estimated Jaccard; see --verify-jaccard)}. --method minhash: Jaccard >= the "
      "method's threshold (banded candidates, verified), {\"id\", \"cluster\", "
      "\"duplicate\", \"nearest\", \"jaccard\"}.");
  AddDedupOptions(cmd, flags.get());
  cmd->callback([flags, exit_code] { exit_code->value = RunDedup(*flags); });
}

}  // namespace neardup::cli
