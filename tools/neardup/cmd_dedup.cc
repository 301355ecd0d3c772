// Copyright 2026 The neardup Authors.
//
// neardup dedup: fingerprint every document, find the near-duplicates within
// k (minhash: at Jaccard >= threshold), cluster them and say which copy to
// keep.

#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "boilerplate_pass.h"
#include "common.h"
#include "neardup/band_join.h"
#include "neardup/dedup.h"
#include "neardup/minhash_dedup.h"
#include "util/thread_pool.h"

namespace neardup::cli {
namespace {

struct DedupFlags {
  InputFlags input;
  PipelineFlags pipeline;
  int k = -1;  // -1 (not given; -k is >= 0): the method's
  std::string mode = "cluster";
  std::string keep = "first";
  std::string cluster = "components";
  std::string unique_out;
  std::string duplicates_out;
  std::string pairs_out;
  std::string clusters_out;
  BoilerplateFlags boilerplate;
  bool exact = false;
  bool banded = false;
  double recall = 0.99;
  uint64_t band_seed = kDefaultBandSeed;
  std::string summary_json;
};

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

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
  return buf;
}

// What dedup keeps of each document while reading.
struct Seen {
  std::string id;
  std::string record;  // the input record (only with --unique-out or --duplicates-out)
};

Status ParseKeep(const std::string& keep, DedupOptions* options, std::string* field) {
  if (keep == "first") {
    options->keep = KeepPolicy::kFirst;
  } else if (keep == "longest") {
    options->keep = KeepPolicy::kLongest;
  } else if (keep.starts_with("field:") && keep.size() > 6) {
    options->keep = KeepPolicy::kField;
    *field = keep.substr(6);
  } else {
    return Status::InvalidArgument("unknown --keep '" + keep +
                                   "' (expected first, longest or field:NAME)");
  }
  return Status::OK();
}

int RunDedup(DedupFlags flags) {
  const auto start = std::chrono::steady_clock::now();
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return Fail(read_options.status());
  // The input records as read, for --unique-out and --duplicates-out (set
  // before the boilerplate pass, which holds standard input's documents).
  const bool keep_records = !flags.unique_out.empty() || !flags.duplicates_out.empty();
  read_options->keep_records = keep_records;
  // Before ResolvePipelineFlags, which keeps only the preset of --method.
  auto boilerplate_options = BoilerplatePass::Options(flags.boilerplate, flags.pipeline);
  if (!boilerplate_options.ok()) return Fail(boilerplate_options.status());
  NEARDUP_RETURN_IF_ERROR_CLI(ResolvePipelineFlags(&flags.pipeline));
  auto method = MakeMethod(flags.pipeline);
  if (!method.ok()) return Fail(method.status());
  method->pipeline.boilerplate = *boilerplate_options;
  const bool minhash = method->is_minhash();
  const MinHashOptions& mh = method->minhash;
  if (minhash && flags.k >= 0) {
    return Fail(Status::InvalidArgument(
        "-k does not apply to the minhash method (set its threshold: --method "
        "minhash,threshold=T)"));
  }
  if (minhash && flags.mode != "cluster") {
    return Fail(Status::InvalidArgument("the minhash method supports --mode cluster only"));
  }
  const PipelineOptions* pipeline_options = &method->pipeline;
  DedupOptions options;
  options.k = minhash ? 0 : flags.k >= 0 ? flags.k : flags.pipeline.default_k;
  options.threads = ResolveThreadCount(flags.input.threads);
  if (flags.mode == "cluster") {
    options.mode = DedupMode::kCluster;
  } else if (flags.mode == "stream") {
    options.mode = DedupMode::kStream;
  } else {
    return Fail(Status::InvalidArgument("unknown --mode '" + flags.mode +
                                        "' (expected cluster or stream)"));
  }
  std::string score_field;
  const Status keep = ParseKeep(flags.keep, &options, &score_field);
  if (!keep.ok()) return Fail(keep);
  auto rule = ParseClusterRule(flags.cluster);
  if (!rule.ok()) return Fail(rule.status());
  options.cluster_rule = *rule;
  if (!score_field.empty()) read_options->extra_fields.push_back(score_field);
  if (!minhash && (options.k < 0 || options.k > pipeline_options->bits / 4)) {
    return Fail(Status::InvalidArgument("-k must be between 0 and " +
                                        std::to_string(pipeline_options->bits / 4)));
  }
  if (minhash && (flags.exact || flags.banded)) {
    return Fail(Status::InvalidArgument(
        "--exact and --banded choose SimHash's join; the minhash method always joins its bands "
        "(set their recall with --method minhash,recall=R)"));
  }
  if (flags.exact && flags.banded) {
    return Fail(Status::InvalidArgument("--exact and --banded exclude each other"));
  }
  options.join = flags.exact    ? DedupJoin::kExact
                 : flags.banded ? DedupJoin::kBanded
                                : DedupJoin::kAuto;
  options.recall = flags.recall;
  options.band_seed = flags.band_seed;
  if (!(flags.recall > 0 && flags.recall < 1)) {
    return Fail(Status::InvalidArgument("--recall must be between 0 and 1 (exclusive)"));
  }
  auto pipeline = Pipeline::Create(*pipeline_options);
  if (!pipeline.ok()) return Fail(pipeline.status());
  NEARDUP_RETURN_IF_ERROR_CLI(CheckInputsAndOutputs(
      flags.input.inputs, {flags.input.output, flags.unique_out, flags.duplicates_out,
                           flags.pairs_out, flags.clusters_out}));
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());

  // Pass 0 (boilerplate lines): count the lines of the corpus.
  BoilerplatePass boilerplate;
  NEARDUP_RETURN_IF_ERROR_CLI(boilerplate.Count(
      flags.input, *read_options, pipeline_options->boilerplate, pipeline_options->normalize));
  if (!flags.boilerplate.stats_out.empty()) {
    NEARDUP_RETURN_IF_ERROR_CLI(boilerplate.stats().Save(flags.boilerplate.stats_out));
  }

  // Pass 1: fingerprints (minhash: signatures), in parallel, kept in input
  // order.
  std::vector<DedupDocument> docs;
  std::vector<uint32_t> signatures;         // minhash: num_perm per document
  std::vector<std::vector<uint64_t>> sets;  // minhash with exact verification
  std::vector<Seen> seen;
  uint64_t bad_scores = 0;
  const MinHasher hasher(minhash ? mh.num_perm : 1);
  const auto add = [&](const Document& doc, DedupDocument d) {
    d.length = doc.text.size();
    if (!score_field.empty()) {
      const auto f = doc.fields.find(score_field);
      if (f != doc.fields.end()) {
        char* end = nullptr;
        const double v = std::strtod(f->second.c_str(), &end);
        if (end != f->second.c_str() && *end == '\0' && std::isfinite(v)) {
          d.score = v;
        } else {
          ++bad_scores;
        }
      }
    }
    docs.push_back(d);
    seen.push_back(Seen{doc.id, doc.record});
  };
  flags.input.progress = true;
  const auto fingerprint_start = std::chrono::steady_clock::now();
  Result<InputStats> stats = InputStats();
  if (minhash) {
    stats = boilerplate.ForEach<MinHashedDocument>(
        flags.input, *read_options,
        [&](const Document& doc) {
          MinHashedDocument m;
          m.signature.resize(static_cast<size_t>(mh.num_perm));
          const std::string stripped = boilerplate.on() ? boilerplate.Strip(doc.text) : "";
          m.features = (*pipeline)->MinHashSignature(
              hasher, boilerplate.on() ? std::string_view(stripped) : std::string_view(doc.text),
              doc.title, m.signature.data(), &m.set);
          if (!mh.exact) m.set = {};
          return m;
        },
        [&](const Document& doc, MinHashedDocument& m) {
          signatures.insert(signatures.end(), m.signature.begin(), m.signature.end());
          if (mh.exact) sets.push_back(std::move(m.set));
          DedupDocument d;
          d.empty = m.features == 0;
          add(doc, d);
        });
  } else {
    stats = boilerplate.ForEach<DocumentFingerprint>(
        flags.input, *read_options,
        [&](const Document& doc) {
          if (boilerplate.on()) {
            return (*pipeline)->Fingerprint(boilerplate.Strip(doc.text), doc.title);
          }
          return (*pipeline)->Fingerprint(doc.text, doc.title);
        },
        [&](const Document& doc, DocumentFingerprint& fp) {
          DedupDocument d;
          d.fingerprint = fp.fingerprint;
          d.empty = fp.empty();
          add(doc, d);
        });
  }
  if (!stats.ok()) return Fail(stats.status());
  if (bad_scores > 0) {
    std::cerr << "neardup: warning: " << bad_scores << " document(s) with a non-numeric \""
              << score_field << "\" field rank below every number\n";
  }

  // A pair's or duplicate's score: SimHash's Hamming distance, or minhash's
  // Jaccard (6 decimals, as MinHashDistance keeps it).
  const char* score_key = minhash ? "jaccard" : "distance";
  const auto score = [minhash](int distance) -> nlohmann::ordered_json {
    if (!minhash) return distance;
    return std::round(JaccardOfDistance(distance) * 1e6) / 1e6;
  };

  // Pass 2: pairs, clusters, decisions. Pairs go straight to --pairs-out:
  // a cluster of n identical documents has n (n - 1) / 2 of them.
  std::unique_ptr<Output> pairs_out;
  if (!flags.pairs_out.empty()) {
    auto pairs = Output::Open(flags.pairs_out, flags.input.inputs);
    if (!pairs.ok()) return Fail(pairs.status());
    pairs_out = std::move(*pairs);
    options.pair_sink = [&](const DedupPair& p) {
      const nlohmann::ordered_json line = {
          {"a", seen[p.i].id}, {"b", seen[p.j].id}, {score_key, score(p.distance)}};
      pairs_out->Write(JsonLine(line));
    };
  }
  const double fingerprint_seconds = Since(fingerprint_start);
  ProgressLine progress(ProgressEnabled(flags.input));
  if (progress.enabled()) {
    options.progress = [&progress](std::string_view phase, size_t done, size_t total) {
      if (phase == "bands") {
        progress.Update("join (banded)", static_cast<double>(done), static_cast<double>(total),
                        "bands");
      } else if (phase == "cluster") {
        progress.Update("cluster", static_cast<double>(done), static_cast<double>(total),
                        "documents");
      } else if (done == 0) {
        progress.Update(phase == "index" ? "exact join: index" : "exact join", 0, 0, "");
      }
    };
  }
  const auto dedup_start = std::chrono::steady_clock::now();
  auto result = minhash ? MinHashDedup(docs, signatures, sets, mh, options) : Dedup(docs, options);
  progress.Clear();
  if (!result.ok()) return Fail(result.status());
  const double dedup_seconds = Since(dedup_start);
  const auto output_start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < docs.size(); ++i) {
    const DedupRecord& r = result->records[i];
    nlohmann::ordered_json line = {{"id", seen[i].id}};
    if (!minhash) line["fingerprint"] = docs[i].fingerprint.ToHex();
    line["cluster"] = r.cluster;
    line["duplicate"] = r.duplicate;
    line["nearest"] = nullptr;
    line[score_key] = nullptr;
    if (r.duplicate) {
      line["nearest"] = seen[r.nearest].id;
      line[score_key] = score(r.distance);
    }
    if (r.empty) line["empty"] = true;
    (*out)->Write(JsonLine(line));
  }
  Status closed = (*out)->Close();
  if (!closed.ok()) return Fail(closed);

  // --unique-out / --duplicates-out: the input records as they were read.
  const auto record = [&](size_t i) -> const std::string& { return seen[i].record; };
  for (const bool duplicates : {false, true}) {
    const std::string& path = duplicates ? flags.duplicates_out : flags.unique_out;
    if (path.empty()) continue;
    NEARDUP_RETURN_IF_ERROR_CLI(
        WriteRecords(path, flags.input.inputs, docs.size(), record,
                     [&](size_t i) { return result->records[i].duplicate == duplicates; }));
  }
  if (pairs_out) {
    closed = pairs_out->Close();
    if (!closed.ok()) return Fail(closed);
  }
  if (!flags.clusters_out.empty()) {
    auto clusters = Output::Open(flags.clusters_out, flags.input.inputs);
    if (!clusters.ok()) return Fail(clusters.status());
    const ClusterRows rows = ClusterMembers(*result);
    for (size_t c = 0; c < rows.size(); ++c) {
      nlohmann::ordered_json ids = nlohmann::ordered_json::array();
      for (size_t m : rows.Members(c)) ids.push_back(seen[m].id);
      nlohmann::ordered_json line = {{"cluster", rows.ids[c]},
                                     {"size", rows.Members(c).size()},
                                     {"kept", seen[rows.kept[c]].id},
                                     {"members", ids}};
      (*clusters)->Write(JsonLine(line));
    }
    closed = (*clusters)->Close();
    if (!closed.ok()) return Fail(closed);
  }

  const DedupSummary& s = result->summary;
  const DedupJoinReport& j = result->join;
  const double output_seconds = Since(output_start);
  const double secs = Since(start);
  if (!flags.summary_json.empty()) {
    nlohmann::ordered_json o = {{"documents", s.documents},
                                {"kept", s.kept},
                                {"duplicates", s.duplicates},
                                {"clusters_with_duplicates", s.clusters_with_duplicates},
                                {"empty", s.empty},
                                {"method", flags.pipeline.method},
                                {"k", options.k},
                                {"bits", pipeline_options->bits},
                                {"mode", flags.mode}};
    if (minhash) {
      o.erase("k");
      o.erase("bits");
      o["method"] = method->ToString();
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
    } else if (options.mode == DedupMode::kCluster) {
      o["join"] = JoinJson(j, options.k);
    }
    o["seconds"] = {{"fingerprint", fingerprint_seconds},
                    {"group", j.group_seconds},
                    {"join", j.join_seconds},
                    {"cluster", j.cluster_seconds},
                    {"dedup", dedup_seconds},
                    {"output", output_seconds},
                    {"total", secs}};
    auto summary = Output::Open(flags.summary_json, flags.input.inputs);
    if (!summary.ok()) return Fail(summary.status());
    (*summary)->Write(o.dump(2));
    closed = (*summary)->Close();
    if (!closed.ok()) return Fail(closed);
  }
  if (!flags.input.quiet) {
    if (minhash) {
      std::fprintf(stderr,
                   "neardup: %zu documents: %zu kept, %zu near-duplicates in %zu clusters "
                   "(method %s: Jaccard >= %g, %d permutations, %d bands x %d rows, recall at "
                   "the threshold %.4f, %s Jaccard); %zu empty%s; %.2f s\n",
                   s.documents, s.kept, s.duplicates, s.clusters_with_duplicates,
                   method->ShortName().c_str(), mh.threshold, mh.num_perm, mh.bands, mh.rows,
                   MinHashCandidateProbability(mh.threshold, mh.bands, mh.rows),
                   mh.exact ? "exact" : "estimated", s.empty, boilerplate.Summary().c_str(), secs);
      std::fprintf(stderr,
                   "neardup: %zu candidate pairs tested, %zu pairs of distinct signatures "
                   "confirmed; signatures %.2f s, join %.2f s, cluster %.2f s, output %.2f s\n",
                   j.tested, j.confirmed, fingerprint_seconds, j.group_seconds + j.join_seconds,
                   j.cluster_seconds, output_seconds);
      return InputExitCode(flags.input, *stats);
    }
    std::fprintf(stderr,
                 "neardup: %zu documents: %zu kept, %zu near-duplicates in %zu clusters "
                 "(method %s, k = %d, %d bits, %s mode); %zu empty%s; %.2f s\n",
                 s.documents, s.kept, s.duplicates, s.clusters_with_duplicates,
                 flags.pipeline.method.c_str(), options.k, pipeline_options->bits,
                 flags.mode.c_str(), s.empty, boilerplate.Summary().c_str(), secs);
    if (options.mode == DedupMode::kCluster && s.documents > s.empty) {
      std::fprintf(stderr,
                   "neardup: %s; fingerprints %.2f s, join %.2f s, cluster %.2f s, output "
                   "%.2f s\n",
                   JoinWords(j, options.k).c_str(), fingerprint_seconds,
                   j.group_seconds + j.join_seconds, j.cluster_seconds, output_seconds);
    }
  }
  return InputExitCode(flags.input, *stats);
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
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", true);
  AddBoilerplateOptions(cmd, &flags->boilerplate);
  cmd->add_option("-k", flags->k,
                  "Largest Hamming distance of a near-duplicate, 0 to bits/4 (default: the "
                  "method's)")
      ->check(CLI::Range(0, 32));
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
                "Cluster mode: find every pair within k (permuted tables), however long it "
                "takes. Default: exact where that is cheap, else banded (see --recall)");
  cmd->add_flag("--banded", flags->banded,
                "Cluster mode: always use the banded join (bit-sampling bands; pairs verified, "
                "so never a false pair)");
  cmd->add_option("--recall", flags->recall,
                  "Banded join: probability of finding a pair at distance exactly k (closer "
                  "pairs: higher; 0.99 gives >= 0.9999 at k - 4). SimHash only; minhash: "
                  "--method minhash,recall=R")
      ->capture_default_str();
  cmd->add_option("--band-seed", flags->band_seed,
                  "Banded join: seed of the sampled bit positions (same seed and input: same "
                  "result)")
      ->capture_default_str();
  cmd->add_option("--summary-json", flags->summary_json,
                  "Write the run's summary as JSON: counts, the join used (exact or banded r, L, "
                  "seed, recall guarantee, candidates, pairs) and seconds per phase");
  cmd->callback([flags, exit_code] { exit_code->value = RunDedup(*flags); });
}

}  // namespace neardup::cli
