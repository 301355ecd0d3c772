// Copyright 2026 The neardup Authors.
//
// neardup dedup in explicit stages, shared by the single-process command
// (cmd_dedup.cc) and the distributed one (tools/neardup_mpi), so that both
// write their outputs with the same code:
//
//   1. configure  ResolveDedupConfig: flags -> pipeline, options, read options
//   2. read and fingerprint
//                 FingerprintInputs: documents -> DedupCorpus (in input order)
//   3. join       the band engine or the exact self-join (Dedup / MinHashDedup,
//                 or their stages in src/dedup/stages.h for band ranges)
//   4. cluster + keep policy (the same library calls)
//   5. write      DedupWriter: records, --pairs-out (streamed while clusters
//                 are assembled), --unique-out / --duplicates-out,
//                 --clusters-out; WriteDedupReport: --summary-json and the
//                 summary lines on stderr
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

#include "boilerplate_pass.h"
#include "common.h"
#include "neardup/dedup.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"

namespace neardup::cli {

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
  size_t short_features = 0;  // DedupOptions::short_features
  double short_jaccard = 0.5;
  double verify_jaccard = DedupOptions{}.verify_jaccard;
  size_t verify_short_features = DedupOptions{}.verify_short_features;
  double verify_short_jaccard = DedupOptions{}.verify_short_jaccard;
  std::string summary_json;
};

// Registers dedup's INPUT... and options on `cmd`.
void AddDedupOptions(CLI::App* cmd, DedupFlags* flags);

// Stage 1: everything the flags decide.
struct DedupConfig {
  DedupFlags flags;  // pipeline flags resolved
  ReadOptions read_options;
  BoilerplateOptions boilerplate;
  Method method;
  bool minhash = false;
  DedupOptions options;     // no pair_sink or progress yet
  std::string score_field;  // --keep field:NAME
  std::unique_ptr<Pipeline> pipeline;
  // Hold each document's text in DedupCorpus::texts while their total is at
  // most this many bytes (beyond it none is held); 0: never (calibrate).
  uint64_t hold_text_bytes = 0;
  // Hold the input records (--unique-out or --duplicates-out).
  bool keep_records() const { return !flags.unique_out.empty() || !flags.duplicates_out.empty(); }
  // Verified pairs: every document gets a Jaccard sketch (DedupCorpus::sketches).
  bool verify() const { return !minhash && options.verify_jaccard > 0; }
};

// InvalidArgument for a usage error (exit 2), else what went wrong.
Result<std::unique_ptr<DedupConfig>> ResolveDedupConfig(DedupFlags flags);

// Stage 2's result: one entry per document, in input order.
struct DedupCorpus {
  std::vector<DedupDocument> docs;
  std::vector<uint32_t> signatures;               // minhash: num_perm per document
  std::vector<std::vector<uint64_t>> sets;        // minhash with exact verification
  std::vector<std::vector<uint64_t>> short_sets;  // DedupOptions::short_sets, when the rule is on
  std::vector<JaccardSketch> sketches;            // DedupOptions::sketches, when verifying
  std::vector<std::string> ids;
  std::vector<std::string> records;  // when DedupConfig::keep_records()
  std::vector<std::string> texts;    // every text, or none (DedupConfig::hold_text_bytes)
  uint64_t bad_scores = 0;           // --keep field:NAME values that are no number
  uint64_t scored = 0;               // documents with the --keep field:NAME field (any value)
};

// Stage 2: reads `input` (its inputs; threads, quiet) and appends each
// document to *corpus. `boilerplate` has counted its lines already (or is
// off). Issues are printed as met (file, line, reason); the summary line
// unless input.quiet. `read_options`: instead of config.read_options (a
// byte range of a file).
Result<InputStats> FingerprintInputs(const DedupConfig& config, const InputFlags& input,
                                     BoilerplatePass& boilerplate, DedupCorpus* corpus,
                                     const ReadOptions* read_options = nullptr);

// --keep field:NAME when no document has the field: an error naming the
// fields the first records have (a keep policy that never applies is a
// mistake in the command line, not a choice of `first`).
Status CheckScoreField(const DedupConfig& config, const DedupCorpus& corpus,
                       const InputStats& stats);

// "neardup: warning: N document(s) with a non-numeric field..." when any.
void WarnBadScores(const DedupConfig& config, uint64_t bad_scores);

// "neardup: warning: N document(s) repeat an earlier document's id..." when
// any id repeats (the rule, README "dedup"): every document is deduplicated
// on its own, by its place in the input; records, pairs and "nearest" name
// documents by id, so a repeated id makes them ambiguous. Returns the count.
size_t WarnDuplicateIds(std::span<const std::string> ids);

// Stage 5: the outputs. Open() creates --output (before the input is read, so
// that a bad path fails early); OpenPairs() --pairs-out; pair_sink() is
// DedupOptions::pair_sink for it. `ids` must hold every document's id by
// the time a pair is written.
class DedupWriter {
 public:
  static Result<std::unique_ptr<DedupWriter>> Open(const DedupConfig& config);
  Status OpenPairs(std::span<const std::string> ids);
  // Empty without --pairs-out.
  std::function<void(const DedupPair&)> pair_sink();
  // Records to --output, then --unique-out / --duplicates-out (`records`,
  // one per document when the config keeps them), closes --pairs-out, then
  // --clusters-out.
  Status Finish(const DedupResult& result, std::span<const DedupDocument> docs,
                std::span<const std::string> ids, std::span<const std::string> records);

 private:
  explicit DedupWriter(const DedupConfig& config) : config_(config) {}
  const DedupConfig& config_;
  std::unique_ptr<Output> out_;
  std::unique_ptr<Output> pairs_;
  std::span<const std::string> pair_ids_;
};

// The pieces of DedupWriter::Finish, for writers that hold a part of the
// documents (neardup-mpi). One line of --output: document `doc` with record
// `r`, its id and its nearest kept document's id (used when r.duplicate).
std::string RecordLine(const DedupConfig& config, const DedupDocument& doc, const DedupRecord& r,
                       std::string_view id, std::string_view nearest_id);
// One line of --pairs-out.
std::string PairLine(const DedupConfig& config, std::string_view a, std::string_view b,
                     int distance, double jaccard = -1);
// --clusters-out (nothing without it): every cluster of two or more of
// `result`, `id` giving the id of each member. `positions` (when not empty):
// result.records[j] is document positions[j] (increasing), and the records'
// cluster numbers are indexes into it (neardup-mpi's clustered documents).
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
// `boilerplate_summary` is BoilerplatePass::Summary().
Status WriteDedupReport(const DedupConfig& config, const DedupResult& result,
                        const DedupTimes& times, const std::string& boilerplate_summary);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_DEDUP_STAGES_H_
