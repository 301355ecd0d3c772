// Copyright 2026 The neardup Authors.

#include "dedup_stages.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "neardup/minhash.h"
#include "neardup/options.h"

namespace neardup::cli {
namespace {

// The join's report as JSON (--summary-json) and as the summary line's words.
nlohmann::ordered_json JoinJson(const DedupJoinReport& j, int k) {
  nlohmann::ordered_json o = {{"algorithm", j.banded ? "banded" : "exact"},
                              {"distinct_fingerprints", j.distinct},
                              {"pairs_confirmed", j.confirmed}};
  if (j.banded) {
    o["band_bits"] = j.bands.band_bits;
    o["bands"] = j.bands.bands;
    o["band_seed"] = j.bands.seed;
    o["recall_at_k"] = j.bands.recall_at_k;
    o["recall_at_k_minus_4"] = j.bands.recall_at_k_minus_4;
    o["k_minus_4"] = std::max(k - 4, 0);
    o["candidates"] = j.candidates;
    o["tested"] = j.tested;
    o["large_buckets"] = j.large_buckets;
  } else {
    o["recall_at_k"] = 1.0;
  }
  if (j.short_join.used) {
    const auto& s = j.short_join;
    o["short_join"] = {{"short_fingerprints", s.short_groups},
                       {"medium_fingerprints", s.medium_groups},
                       {"keys", s.keys},
                       {"candidates", s.candidates},
                       {"tested", s.tested},
                       {"pairs_confirmed", s.confirmed},
                       {"largest_bucket", s.largest_bucket}};
  }
  if (j.short_pairs > 0) o["short_pairs"] = j.short_pairs;
  o["pairs_rejected"] = j.rejected;
  o["estimated_exact_seconds"] = j.estimated_exact_seconds;
  o["estimated_banded_seconds"] = j.estimated_banded_seconds;
  return o;
}

std::string JoinWords(const DedupJoinReport& j, int k) {
  char buf[256];
  if (!j.banded) {
    std::snprintf(buf, sizeof buf, "exact join, %zu pairs", j.confirmed);
  } else {
    std::snprintf(buf, sizeof buf,
                  "banded join r = %d, L = %d: recall >= %.4f at d = %d, %.6f at d = %d; "
                  "%zu candidates tested, %zu pairs confirmed",
                  j.bands.band_bits, j.bands.bands, j.bands.recall_at_k, k,
                  j.bands.recall_at_k_minus_4, std::max(k - 4, 0), j.tested, j.confirmed);
  }
  std::string words = buf;
  if (j.short_join.used) {
    std::snprintf(buf, sizeof buf,
                  "; short documents (%zu fingerprints) joined exactly by their sketches: "
                  "%zu candidates tested, %zu pairs",
                  j.short_join.short_groups, j.short_join.tested, j.short_join.confirmed);
    words += buf;
  }
  return words;
}

}  // namespace

void AddVerifyOptions(CLI::App* cmd, double* verify_jaccard, size_t* verify_short_features,
                      double* verify_short_jaccard) {
  cmd->add_option(
         "--verify-jaccard", *verify_jaccard,
         "Verified pairs (SimHash methods): a pair within k is a near-duplicate only when "
         "the estimated Jaccard of its feature sets (a 128-slot sketch per document) is at "
         "least this; 0: off (pairs by distance alone)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--verify-short-features", *verify_short_features,
                  "Verified pairs: a pair whose smaller document has fewer features than this "
                  "uses --verify-short-jaccard instead (0: no separate rule)")
      ->capture_default_str();
  cmd->add_option("--verify-short-jaccard", *verify_short_jaccard,
                  "Verified pairs: the threshold of short documents (--verify-short-features)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
}

void AddDedupOptions(CLI::App* cmd, DedupFlags* flags) {
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  AddBoilerplateOptions(cmd, &flags->boilerplate);
  cmd->add_option("-k", flags->k,
                  "Largest Hamming distance of a near-duplicate, 0 to bits/4 (default: the "
                  "method's)")
      // The upper bound depends on the method's width: the job's check says
      // so (KRangeMessage).
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--mode", flags->mode,
                  "cluster: connected components of all pairs within k; stream: keep a document "
                  "only if no kept one lies within k")
      ->capture_default_str();
  cmd->add_option("--cluster", flags->cluster,
                  "Cluster mode's rule: components (connected components of the pairs within "
                  "k; chains: a member can be far beyond k from the kept copy) | center (each "
                  "member within k of its cluster's kept copy; no chaining)")
      ->capture_default_str();
  cmd->add_option("--keep", flags->keep,
                  "Which copy a cluster keeps: first | longest | field:NAME (largest number)")
      ->capture_default_str();
  cmd->add_option("--unique-out", flags->unique_out,
                  "Write the input records of the kept documents, byte for byte: JSONL lines, "
                  "lines (--input-format lines) or file paths, one per line (held in memory)");
  cmd->add_option("--duplicates-out", flags->duplicates_out,
                  "Write the input records of the near-duplicates (the documents not kept), as "
                  "--unique-out does");
  cmd->add_option("--pairs-out", flags->pairs_out,
                  "Write every pair within k as JSONL {a, b, distance}");
  cmd->add_option("--clusters-out", flags->clusters_out,
                  "Write every cluster of two or more as JSONL {cluster, size, kept, members}");
  cmd->add_flag("--exact", flags->exact,
                "Find every pair within k (stream mode: every kept document within k) with the "
                "permuted tables, however long it takes. Default: exact where that is cheap, "
                "else banded (see --recall)");
  cmd->add_flag("--banded", flags->banded,
                "Always use bit-sampling bands (cluster mode: the banded join; stream mode: an "
                "incremental banded index); pairs verified, so never a false pair");
  cmd->add_option("--recall", flags->recall,
                  "Banded join: probability of finding a pair at distance exactly k (closer "
                  "pairs: higher; 0.99 gives >= 0.9999 at k - 4). SimHash only; minhash: "
                  "--method minhash,recall=R")
      ->capture_default_str();
  cmd->add_option("--band-seed", flags->band_seed,
                  "Banded join: seed of the sampled bit positions (same seed and input: same "
                  "result)")
      ->capture_default_str();
  cmd->add_option("--short-features", flags->short_features,
                  "Short-document rule: a pair in which one document has fewer than this many "
                  "distinct features is also a near-duplicate when the Jaccard of their feature "
                  "sets is >= --short-jaccard, whatever their distance (k does not limit it). "
                  "auto: every document (1000000) by the sketch rule at --short-jaccard 0.52 "
                  "(unless given) for 128-bit SimHash methods that keep every feature (chars5u, "
                  "chars5) in cluster mode at k >= the method's default, off otherwise "
                  "(minhash, stream mode, 64-bit and top-k methods, a smaller k); 0: off; a "
                  "number: on as given (--short-rule exact unless said). The summary names what "
                  "ran. Against the rule over < 300 features, the default costs about 1.15x "
                  "CPU and 2x memory on 1M long texts (2 threads); against the rule off, "
                  "about 1.3x CPU and the same memory on 1M one-line records, the exact "
                  "rule 3x and 3.5x "
                  "(doc/evaluation.md, doc/benchmarks.md)")
      ->capture_default_str();
  cmd->add_option("--short-jaccard", flags->short_jaccard,
                  "Short-document rule: the feature-set Jaccard of a near-duplicate; not given: "
                  "0.52 for --short-features auto's sketch rule, 0.5 for features or a rule "
                  "given; a value given is taken as given")
      ->check(CLI::Range(0.0, 1.0))
      ->each([flags](const std::string&) { flags->short_jaccard_given = true; })
      ->capture_default_str();
  cmd->add_option("--short-rule", flags->short_rule,
                  "Short-document rule: exact (the exact Jaccard of the kept feature sets) or "
                  "sketch (LSH bands over the verification sketches, each candidate's estimated "
                  "Jaccard >= --short-jaccard; no feature set kept; doc/evaluation.md states its "
                  "recall and cost); auto: sketch with --short-features auto, exact with a "
                  "number")
      ->check(CLI::IsMember({"auto", "exact", "sketch"}))
      ->capture_default_str();
  AddVerifyOptions(cmd, &flags->verify_jaccard, &flags->verify_short_features,
                   &flags->verify_short_jaccard);
  cmd->add_option("--summary-json", flags->summary_json,
                  "Write the run's summary as JSON: counts, the join used (exact or banded r, L, "
                  "seed, recall guarantee, candidates, pairs) and seconds per phase");
}

Result<std::unique_ptr<DedupConfig>> ResolveDedupConfig(DedupFlags flags) {
  auto config = std::make_unique<DedupConfig>();
  NEARDUP_ASSIGN_OR_RETURN(config->read_options, MakeReadOptions(flags.input));
  DedupJobOptions o;
  // Before ResolvePipelineFlags, which keeps only the preset of --method:
  // the method's text decides the boilerplate default.
  NEARDUP_ASSIGN_OR_RETURN(o.method, MakeMethod(flags.pipeline));
  o.method_text = flags.pipeline.method;
  if (!flags.boilerplate.mode.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(o.boilerplate, ParseBoilerplateMode(flags.boilerplate.mode));
  }
  o.boilerplate_min_docs = flags.boilerplate.min_docs;
  NEARDUP_RETURN_IF_ERROR(ResolvePipelineFlags(&flags.pipeline));
  o.k = flags.k;
  NEARDUP_ASSIGN_OR_RETURN(o.mode, ParseDedupMode(flags.mode));
  NEARDUP_ASSIGN_OR_RETURN(const KeepChoice keep, ParseKeepPolicy(flags.keep));
  o.keep = keep.policy;
  o.score_field = keep.field;
  NEARDUP_ASSIGN_OR_RETURN(o.cluster_rule, ParseClusterRule(flags.cluster));
  if (o.method.is_minhash() && (flags.exact || flags.banded)) {
    return Status::InvalidArgument(
        "--exact and --banded choose SimHash's join; the minhash method always joins its bands "
        "(set their recall with --method minhash,recall=R)");
  }
  if (flags.exact && flags.banded) {
    return Status::InvalidArgument("--exact and --banded exclude each other");
  }
  o.join = flags.exact ? DedupJoin::kExact : flags.banded ? DedupJoin::kBanded : DedupJoin::kAuto;
  o.recall = flags.recall;
  o.band_seed = flags.band_seed;
  NEARDUP_ASSIGN_OR_RETURN(o.short_features, ParseShortFeatures(flags.short_features));
  if (flags.short_jaccard_given) o.short_jaccard = flags.short_jaccard;
  NEARDUP_ASSIGN_OR_RETURN(o.short_rule, ParseShortRuleOption(flags.short_rule));
  o.verify_jaccard = flags.verify_jaccard;
  o.verify_short_features = flags.verify_short_features;
  o.verify_short_jaccard = flags.verify_short_jaccard;
  o.threads = flags.input.threads;
  o.warn = [](const std::string& message) { PrintErrorLine("neardup: warning: " + message); };
  // The input records as read, for --unique-out and --duplicates-out.
  o.keep_records = !flags.unique_out.empty() || !flags.duplicates_out.empty();
  o.keep_line_stats = !flags.boilerplate.stats_out.empty();
  NEARDUP_ASSIGN_OR_RETURN(config->job, DedupJob::Create(std::move(o)));
  const DedupJob& job = *config->job;
  if (!flags.boilerplate.stats_out.empty() && job.boilerplate().mode == BoilerplateMode::kOff) {
    return Status::InvalidArgument("--boilerplate-stats-out needs --boilerplate lines");
  }
  config->read_options = job.AdjustReadOptions(config->read_options);
  config->boilerplate = job.boilerplate();
  config->method = job.method();
  config->minhash = job.method().is_minhash();
  config->options = job.dedup_options();
  config->score_field = job.options().score_field;
  config->pipeline = &job.pipeline();
  config->flags = std::move(flags);
  return config;
}

void AddBoilerplateOptions(CLI::App* cmd, BoilerplateFlags* flags) {
  cmd->add_option("--boilerplate", flags->mode,
                  "Leave lines shared by many documents out of the fingerprints (never out of "
                  "the output): lines = a counting pass first, then every line found in >= "
                  "--boilerplate-min-docs groups of documents (near copies of one text are one "
                  "group) is ignored; off: every line counts "
                  "(default: lines, unless --method says boilerplate=...). Files are read "
                  "twice; standard input is held in memory")
      ->check(CLI::IsMember({"off", "lines"}));
  cmd->add_option("--boilerplate-min-docs", flags->min_docs,
                  "With --boilerplate lines: a line in at least this many groups of documents "
                  "is boilerplate (default: the method's, 5)")
      ->check(CLI::Range(2, 1 << 30));
  cmd->add_option("--boilerplate-stats-out", flags->stats_out,
                  "With --boilerplate lines: write the line counts (a binary file with a "
                  "checksum) here");
}

Status CountLines(const DedupConfig& config, const InputFlags& input) {
  ProgressLine progress(ProgressModeOf(input));
  NEARDUP_RETURN_IF_ERROR(config.job->CountLines(MakeDedupInput(input, config.read_options),
                                                 ProgressOn(&progress, input.inputs)));
  progress.Clear();
  if (!config.flags.boilerplate.stats_out.empty()) {
    NEARDUP_RETURN_IF_ERROR(config.job->line_stats().Save(config.flags.boilerplate.stats_out));
  }
  return Status::OK();
}

Result<InputStats> FingerprintInputs(const DedupConfig& config, const InputFlags& input,
                                     DedupCorpus* corpus, const ReadOptions* read_options) {
  DedupJob& job = *config.job;
  job.HoldTexts(config.hold_text_bytes);
  ProgressLine progress(input.progress ? ProgressModeOf(input) : ProgressMode::kOff);
  Result<InputStats> stats = job.Fingerprint(
      MakeDedupInput(input, read_options != nullptr ? *read_options : config.read_options), corpus,
      ProgressOn(&progress, input.inputs));
  progress.Clear();
  if (stats.ok() && !input.quiet) std::cerr << SummaryLine(*stats) << "\n";
  return stats;
}

void WarnBadScores(const DedupConfig& config, uint64_t bad_scores) {
  if (bad_scores == 0) return;
  std::cerr << "neardup: warning: " << bad_scores << " document(s) with a non-numeric \""
            << config.score_field << "\" field rank below every number\n";
}

void WarnDuplicateIds(const RepeatedIds& repeats) {
  if (repeats.count == 0) return;
  std::cerr << "neardup: warning: " << repeats.count
            << " document(s) repeat an earlier document's id (first: \"" << repeats.id
            << "\", documents " << repeats.first_of + 1 << " and " << repeats.first + 1
            << " of the input); each is deduplicated on its own, but the records, pairs and "
               "\"nearest\" name documents by id, which is ambiguous for these (a number id 5 "
               "and a string \"5\" are the same id)\n";
}

Status WriteClusters(const DedupConfig& config, const DedupResult& result,
                     const std::function<std::string_view(size_t)>& id,
                     std::span<const uint64_t> positions) {
  const DedupFlags& flags = config.flags;
  if (flags.clusters_out.empty()) return Status::OK();
  NEARDUP_ASSIGN_OR_RETURN(auto clusters, Output::Open(flags.clusters_out, flags.input.inputs));
  config.job->ClusterLines(
      result, id, [&](std::string_view line) { clusters->Write(line); }, positions);
  return clusters->Close();
}

Status WriteDedupReport(const DedupConfig& config, const DedupResult& result,
                        const DedupTimes& times, const std::string& boilerplate_summary) {
  const DedupFlags& flags = config.flags;
  const DedupOptions& options = config.options;
  const Method& method = config.method;
  const MinHashOptions& mh = method.minhash;
  const bool minhash = config.minhash;
  const int bits = method.pipeline.bits;
  const DedupSummary& s = result.summary;
  const DedupJoinReport& j = result.join;
  if (!flags.summary_json.empty()) {
    nlohmann::ordered_json o = {{"documents", s.documents},
                                {"kept", s.kept},
                                {"duplicates", s.duplicates},
                                {"clusters_with_duplicates", s.clusters_with_duplicates},
                                {"largest_cluster", s.largest_cluster},
                                {"cluster_rule", ClusterRuleName(options.cluster_rule)},
                                {"empty", s.empty},
                                {"method", flags.pipeline.method},
                                {"k", options.k},
                                {"bits", bits},
                                {"mode", flags.mode}};
    // The short-document rule that ran (the job's resolution of auto).
    const ShortRuleChoice& sr = config.job->short_rule();
    nlohmann::ordered_json rule = {{"rule", sr.features > 0 ? ShortRuleName(sr.rule) : "off"}};
    if (sr.features > 0) {
      rule["features"] = sr.features;
      rule["jaccard"] = options.short_jaccard;
    }
    rule["default"] = sr.by_default;
    if (!sr.off_because.empty()) rule["off_because"] = sr.off_because;
    o["short_rule"] = rule;
    if (minhash) {
      o.erase("k");
      o.erase("bits");
      o["method"] = method.ToString();
      o["join"] = {
          {"algorithm", "minhash bands"},
          {"distinct_signatures", j.distinct},
          {"pairs_confirmed", j.confirmed},
          {"threshold", mh.threshold},
          {"num_perm", mh.num_perm},
          {"bands", mh.bands},
          {"rows", mh.rows},
          {"recall_at_threshold", MinHashCandidateProbability(mh.threshold, mh.bands, mh.rows)},
          {"verify", mh.exact ? "exact" : "estimate"},
          {"candidates", j.candidates},
          {"tested", j.tested},
          {"large_buckets", j.large_buckets}};
    } else {
      o["join"] = JoinJson(j, options.k);
    }
    o["seconds"] = {{"fingerprint", times.fingerprint},
                    {"group", j.group_seconds},
                    {"join", j.join_seconds},
                    {"cluster", j.cluster_seconds},
                    {"dedup", times.dedup},
                    {"output", times.output},
                    {"total", times.total}};
    NEARDUP_ASSIGN_OR_RETURN(auto summary, Output::Open(flags.summary_json, flags.input.inputs));
    summary->Write(o.dump(2));
    NEARDUP_RETURN_IF_ERROR(summary->Close());
  }
  if (flags.input.quiet) return Status::OK();
  if (s.largest_cluster > kLargeClusterWarning) {
    std::fprintf(stderr,
                 "neardup: warning: the largest cluster has %zu documents (more than %zu; "
                 "%s rule): look at it in --clusters-out before trusting it\n",
                 s.largest_cluster, kLargeClusterWarning, ClusterRuleName(options.cluster_rule));
  }
  if (minhash) {
    std::fprintf(stderr,
                 "neardup: %zu documents: %zu kept, %zu near-duplicates in %zu clusters "
                 "(method %s: Jaccard >= %g, %d permutations, %d bands x %d rows, recall at "
                 "the threshold %.4f, %s Jaccard; %s clusters, largest %zu); %zu empty%s; "
                 "%.2f s\n",
                 s.documents, s.kept, s.duplicates, s.clusters_with_duplicates,
                 method.ShortName().c_str(), mh.threshold, mh.num_perm, mh.bands, mh.rows,
                 MinHashCandidateProbability(mh.threshold, mh.bands, mh.rows),
                 mh.exact ? "exact" : "estimated", ClusterRuleName(options.cluster_rule),
                 s.largest_cluster, s.empty, boilerplate_summary.c_str(), times.total);
    std::fprintf(stderr,
                 "neardup: %zu candidate pairs tested, %zu pairs of distinct signatures "
                 "confirmed; signatures %.2f s, join %.2f s, cluster %.2f s, output %.2f s\n",
                 j.tested, j.confirmed, times.fingerprint, j.group_seconds + j.join_seconds,
                 j.cluster_seconds, times.output);
    return Status::OK();
  }
  const std::string rule = options.mode == DedupMode::kCluster
                               ? std::string(", ") + ClusterRuleName(options.cluster_rule)
                               : std::string();
  std::fprintf(stderr,
               "neardup: %zu documents: %zu kept, %zu near-duplicates in %zu clusters "
               "(method %s, k = %d, %d bits, %s mode%s; largest cluster %zu); %zu empty%s; "
               "%.2f s\n",
               s.documents, s.kept, s.duplicates, s.clusters_with_duplicates,
               flags.pipeline.method.c_str(), options.k, bits, flags.mode.c_str(), rule.c_str(),
               s.largest_cluster, s.empty, boilerplate_summary.c_str(), times.total);
  if (s.documents > s.empty) {
    std::string words = JoinWords(j, options.k);
    if (options.mode == DedupMode::kCluster) {
      words += "; short-document rule " + ShortRuleWords(config.job->short_rule());
      if (options.short_features > 0)
        words += ": " + std::to_string(j.short_pairs) + " pairs beyond k";
    }
    std::fprintf(stderr,
                 "neardup: %s; fingerprints %.2f s, join %.2f s, cluster %.2f s, output "
                 "%.2f s\n",
                 words.c_str(), times.fingerprint, j.group_seconds + j.join_seconds,
                 j.cluster_seconds, times.output);
  }
  return Status::OK();
}

}  // namespace neardup::cli
