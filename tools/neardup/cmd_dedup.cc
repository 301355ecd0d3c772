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
  std::string unique_out;
  std::string duplicates_out;
  std::string pairs_out;
  std::string clusters_out;
  BoilerplateFlags boilerplate;
};

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
  if (!score_field.empty()) read_options->extra_fields.push_back(score_field);
  if (!minhash && (options.k < 0 || options.k > pipeline_options->bits / 4)) {
    return Fail(Status::InvalidArgument("-k must be between 0 and " +
                                        std::to_string(pipeline_options->bits / 4)));
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
  NEARDUP_RETURN_IF_ERROR_CLI(
      boilerplate.Count(flags.input, *read_options, pipeline_options->boilerplate));
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
  const bool keep_records = !flags.unique_out.empty() || !flags.duplicates_out.empty();
  read_options->keep_records = keep_records;
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
  auto result = minhash ? MinHashDedup(docs, signatures, sets, mh, options) : Dedup(docs, options);
  if (!result.ok()) return Fail(result.status());
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
  if (!flags.input.quiet) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (minhash) {
      std::fprintf(stderr,
                   "neardup: %zu documents: %zu kept, %zu near-duplicates in %zu clusters "
                   "(method %s: Jaccard >= %g, %d permutations, %d bands x %d rows, recall at "
                   "the threshold %.4f, %s Jaccard); %zu candidate pairs tested, %zu confirmed; "
                   "%zu empty%s; %.2f s\n",
                   s.documents, s.kept, s.duplicates, s.clusters_with_duplicates,
                   method->ShortName().c_str(), mh.threshold, mh.num_perm, mh.bands, mh.rows,
                   MinHashCandidateProbability(mh.threshold, mh.bands, mh.rows),
                   mh.exact ? "exact" : "estimated", result->join.tested, result->join.confirmed,
                   s.empty, boilerplate.Summary().c_str(), secs);
      return InputExitCode(flags.input, *stats);
    }
    std::fprintf(stderr,
                 "neardup: %zu documents: %zu kept, %zu near-duplicates in %zu clusters "
                 "(method %s, k = %d, %d bits, %s mode); %zu empty%s; %.2f s\n",
                 s.documents, s.kept, s.duplicates, s.clusters_with_duplicates,
                 flags.pipeline.method.c_str(), options.k, pipeline_options->bits,
                 flags.mode.c_str(), s.empty, boilerplate.Summary().c_str(), secs);
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
  cmd->callback([flags, exit_code] { exit_code->value = RunDedup(*flags); });
}

}  // namespace neardup::cli
