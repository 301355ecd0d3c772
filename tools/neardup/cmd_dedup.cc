// Copyright 2026 The neardup Authors.
//
// neardup dedup: fingerprint every document, find the near-duplicates within
// k (minhash: at Jaccard >= threshold), cluster them and say which copy to
// keep. The stages are in dedup_stages.h (shared with neardup-mpi).

#include <chrono>

#include "boilerplate_pass.h"
#include "common.h"
#include "dedup_stages.h"
#include "neardup/dedup.h"
#include "neardup/minhash_dedup.h"

namespace neardup::cli {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int RunDedup(DedupFlags dedup_flags) {
  const auto start = std::chrono::steady_clock::now();
  // 1. Configure.
  auto resolved = ResolveDedupConfig(std::move(dedup_flags));
  if (!resolved.ok()) return Fail(resolved.status());
  DedupConfig& config = **resolved;
  DedupFlags& flags = config.flags;
  NEARDUP_RETURN_IF_ERROR_CLI(CheckInputsAndOutputs(
      flags.input.inputs, {flags.input.output, flags.unique_out, flags.duplicates_out,
                           flags.pairs_out, flags.clusters_out}));
  auto writer = DedupWriter::Open(config);
  if (!writer.ok()) return Fail(writer.status());

  // 2. Read and fingerprint (minhash: signatures), in parallel, kept in input
  // order; pass 0 counts the lines for boilerplate removal.
  BoilerplatePass boilerplate;
  NEARDUP_RETURN_IF_ERROR_CLI(boilerplate.Count(
      flags.input, config.read_options, config.boilerplate, config.method.pipeline.normalize));
  if (!flags.boilerplate.stats_out.empty()) {
    NEARDUP_RETURN_IF_ERROR_CLI(boilerplate.stats().Save(flags.boilerplate.stats_out));
  }
  flags.input.progress = true;
  const auto fingerprint_start = std::chrono::steady_clock::now();
  DedupCorpus corpus;
  const Result<InputStats> stats = FingerprintInputs(config, flags.input, boilerplate, &corpus);
  if (!stats.ok()) return Fail(stats.status());
  const int input_exit = InputExitCode(flags.input, *stats);
  if (NothingRead(*stats)) return input_exit;
  NEARDUP_RETURN_IF_ERROR_CLI(CheckScoreField(config, corpus, *stats));
  WarnBadScores(config, corpus.bad_scores);
  WarnDuplicateIds(corpus.ids);

  // 3 + 4. Join, cluster, keep policy. Pairs go straight to --pairs-out: a
  // cluster of n identical documents has n (n - 1) / 2 of them.
  NEARDUP_RETURN_IF_ERROR_CLI((*writer)->OpenPairs(corpus.ids));
  DedupOptions options = config.options;
  options.pair_sink = (*writer)->pair_sink();
  options.short_sets = corpus.short_sets;
  options.sketches = corpus.sketches;
  const double fingerprint_seconds = Since(fingerprint_start);
  ProgressLine progress(ProgressModeOf(flags.input));
  if (progress.enabled()) {
    options.progress = [&progress](std::string_view phase, size_t done, size_t total) {
      if (phase == "bands") {
        progress.Update("join (banded)", static_cast<double>(done), static_cast<double>(total),
                        "bands");
      } else if (phase == "cluster" || phase == "stream") {
        progress.Update(phase, static_cast<double>(done), static_cast<double>(total), "documents");
      } else if (done == 0) {
        progress.Update(phase == "index" ? "exact join: index" : "exact join", 0, 0, "");
      }
    };
  }
  const auto dedup_start = std::chrono::steady_clock::now();
  auto result = config.minhash ? MinHashDedup(corpus.docs, corpus.signatures, corpus.sets,
                                              config.method.minhash, options)
                               : Dedup(corpus.docs, options);
  progress.Clear();
  if (!result.ok()) return Fail(result.status());
  const double dedup_seconds = Since(dedup_start);

  // 5. Write.
  const auto output_start = std::chrono::steady_clock::now();
  NEARDUP_RETURN_IF_ERROR_CLI((*writer)->Finish(*result, corpus.docs, corpus.ids, corpus.records));
  DedupTimes times;
  times.fingerprint = fingerprint_seconds;
  times.dedup = dedup_seconds;
  times.output = Since(output_start);
  times.total = Since(start);
  NEARDUP_RETURN_IF_ERROR_CLI(WriteDedupReport(config, *result, times, boilerplate.Summary()));
  return input_exit;
}

}  // namespace

void AddDedupCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<DedupFlags>();
  CLI::App* cmd = app.add_subcommand(
      "dedup",
      "Find near-duplicate documents (Hamming distance <= k), cluster them and choose the copy "
      "to keep. One JSON record per document: {\"id\", \"fingerprint\", \"cluster\", "
      "\"duplicate\", \"nearest\", \"distance\"}. --method minhash: Jaccard >= the "
      "method's threshold (banded candidates, verified), {\"id\", \"cluster\", "
      "\"duplicate\", \"nearest\", \"jaccard\"}.");
  AddDedupOptions(cmd, flags.get());
  cmd->callback([flags, exit_code] { exit_code->value = RunDedup(*flags); });
}

}  // namespace neardup::cli
