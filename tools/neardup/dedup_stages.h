// Copyright 2026 The neardup Authors.
//
// neardup dedup's command line over the library's dedup job
// (neardup/dedup_job.h), shared by the single-process command (cmd_dedup.cc,
// which runs DedupJob::Run), calibrate and the distributed one
// (tools/neardup_mpi, which runs the job's stages over its ranks):
//
//   1. configure  ResolveDedupConfig: flags -> the DedupJob, read options
//   2. boilerplate and fingerprints
//                 CountLines, FingerprintInputs: documents -> DedupCorpus
//   3. join, cluster, keep policy: DedupJob::Join
//   4. write      the job's lines (RecordLine, PairLine, ClusterLines) to the
//                 command line's Output files; WriteDedupReport:
//                 --summary-json and the summary lines on stderr
//
// Not thread-safe; one run at a time per object.

#ifndef NEARDUP_TOOLS_NEARDUP_DEDUP_STAGES_H_
#define NEARDUP_TOOLS_NEARDUP_DEDUP_STAGES_H_

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"
#include "neardup/dedup.h"
#include "neardup/dedup_job.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"

namespace neardup::cli {

// --boilerplate, --boilerplate-min-docs, --boilerplate-stats-out.
struct BoilerplateFlags {
  std::string mode;       // "": the default (DedupJobOptions::boilerplate); else off | lines
  int min_docs = 0;       // 0: the method's
  std::string stats_out;  // write the line statistics here
};

// Registers --boilerplate, --boilerplate-min-docs and --boilerplate-stats-out.
void AddBoilerplateOptions(CLI::App* cmd, BoilerplateFlags* flags);

struct DedupFlags {
  InputFlags input;
  PipelineFlags pipeline;
  int k = -1;  // -1 (not given; -k is >= 0): the method's
  std::string mode = "cluster";
  std::string keep = "first";
  std::string cluster = ClusterRuleName(DedupOptions{}.cluster_rule);
  std::string unique_out;
  std::string duplicates_out;
  std::string pairs_out;
  std::string clusters_out;
  BoilerplateFlags boilerplate;
  bool exact = false;
  bool banded = false;
  double recall = 0.99;
  uint64_t band_seed = kDefaultBandSeed;
  // The short-document rule: "auto" (the job's default, ResolveShortRule)
  // or a number of features (0: off); "auto", "exact" or "sketch".
  std::string short_features = "auto";
  // Shown as the rule's default; passed to the job only when given
  // (short_jaccard_given: the default rule's threshold is the job's).
  double short_jaccard = kDefaultGivenShortJaccard;
  bool short_jaccard_given = false;
  std::string short_rule = "auto";
  double verify_jaccard = DedupJobOptions{}.verify_jaccard;  // verified pairs
  size_t verify_short_features = DedupJobOptions{}.verify_short_features;
  double verify_short_jaccard = DedupJobOptions{}.verify_short_jaccard;
  std::string summary_json;
};

// Registers the verified-pairs options (--verify-jaccard,
// --verify-short-features, --verify-short-jaccard) on `cmd` (dedup, calibrate).
void AddVerifyOptions(CLI::App* cmd, double* verify_jaccard, size_t* verify_short_features,
                      double* verify_short_jaccard);
// Registers dedup's INPUT... and options on `cmd`.
void AddDedupOptions(CLI::App* cmd, DedupFlags* flags);

// Stage 1: everything the flags decide. The job (neardup/dedup_job.h) owns
// the method, its pipeline and the checks; the rest is the command line's.
struct DedupConfig {
  DedupFlags flags;  // pipeline flags resolved
  ReadOptions read_options;
  std::unique_ptr<DedupJob> job;
  // Copies of the job's, for the report and neardup-mpi.
  BoilerplateOptions boilerplate;
  Method method;
  bool minhash = false;
  DedupOptions options;                // no pair_sink or progress
  std::string score_field;             // --keep field:NAME
  const Pipeline* pipeline = nullptr;  // the job's
  // Hold each document's text in DedupCorpus::texts while their total is at
  // most this many bytes (beyond it none is held); 0: never (calibrate).
  uint64_t hold_text_bytes = 0;
  // Hold the input records (--unique-out or --duplicates-out).
  bool keep_records() const { return !flags.unique_out.empty() || !flags.duplicates_out.empty(); }
  // Verified pairs: every document gets a Jaccard sketch (DedupCorpus::sketches).
  bool verify() const { return job->verifies(); }
};

// InvalidArgument for a usage error (exit 2), else what went wrong.
Result<std::unique_ptr<DedupConfig>> ResolveDedupConfig(DedupFlags flags);

// Stage 1b: the boilerplate pass over `input` (nothing when off), and
// --boilerplate-stats-out.
Status CountLines(const DedupConfig& config, const InputFlags& input);

// Stage 2: reads `input` and appends each document to *corpus; the summary
// line unless input.quiet. `read_options`: instead of config.read_options (a
// byte range of a file).
Result<InputStats> FingerprintInputs(const DedupConfig& config, const InputFlags& input,
                                     DedupCorpus* corpus,
                                     const ReadOptions* read_options = nullptr);

// "neardup: warning: N document(s) with a non-numeric field..." when any.
void WarnBadScores(const DedupConfig& config, uint64_t bad_scores);

// "neardup: warning: N document(s) repeat an earlier document's id..." when
// any id repeats (the rule, README "dedup"): every document is deduplicated
// on its own, by its place in the input; records, pairs and "nearest" name
// documents by id, so a repeated id makes them ambiguous.
void WarnDuplicateIds(const RepeatedIds& repeats);

// --clusters-out (nothing without it): the job's cluster lines.
Status WriteClusters(const DedupConfig& config, const DedupResult& result,
                     const std::function<std::string_view(size_t)>& id,
                     std::span<const uint64_t> positions = {});

// Seconds of each stage, for --summary-json and the summary lines.
struct DedupTimes {
  double fingerprint = 0;
  double dedup = 0;
  double output = 0;
  double total = 0;
};

// --summary-json and (unless --quiet) the summary lines on stderr.
// `boilerplate_summary` is DedupJob::BoilerplateSummary().
Status WriteDedupReport(const DedupConfig& config, const DedupResult& result,
                        const DedupTimes& times, const std::string& boilerplate_summary);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_DEDUP_STAGES_H_
