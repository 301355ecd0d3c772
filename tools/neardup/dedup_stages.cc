// Copyright 2026 The neardup Authors.

#include "dedup_stages.h"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "neardup/minhash_dedup.h"

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
  return buf;
}

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

// A pair's or duplicate's score: SimHash's Hamming distance, or minhash's
// Jaccard (6 decimals, as MinHashDistance keeps it).
nlohmann::ordered_json Score(bool minhash, int distance) {
  if (!minhash) return distance;
  return std::round(JaccardOfDistance(distance) * 1e6) / 1e6;
}

const char* ScoreKey(bool minhash) { return minhash ? "jaccard" : "distance"; }

// A verified pair's estimated Jaccard (4 decimals; the estimate's error is
// larger), null when none was computed.
nlohmann::ordered_json VerifiedJaccard(double jaccard) {
  if (jaccard < 0) return nullptr;
  return std::round(jaccard * 1e4) / 1e4;
}

}  // namespace

void AddDedupOptions(CLI::App* cmd, DedupFlags* flags) {
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
                  "Short-document rule (cluster mode; 0: off): a pair in which one document has "
                  "fewer than this many distinct features is also a near-duplicate when the exact "
                  "Jaccard of their feature sets is >= --short-jaccard")
      ->capture_default_str();
  cmd->add_option("--short-jaccard", flags->short_jaccard,
                  "Short-document rule: the feature-set Jaccard of a near-duplicate")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option(
         "--verify-jaccard", flags->verify_jaccard,
         "Verified pairs (SimHash methods): a pair within k is a near-duplicate only when "
         "the estimated Jaccard of its feature sets (a 128-slot sketch per document) is at "
         "least this; 0: off (pairs by distance alone)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--verify-short-features", flags->verify_short_features,
                  "Verified pairs: a pair whose smaller document has fewer features than this "
                  "uses --verify-short-jaccard instead (0: no separate rule)")
      ->capture_default_str();
  cmd->add_option("--verify-short-jaccard", flags->verify_short_jaccard,
                  "Verified pairs: the threshold of short documents (--verify-short-features)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--summary-json", flags->summary_json,
                  "Write the run's summary as JSON: counts, the join used (exact or banded r, L, "
                  "seed, recall guarantee, candidates, pairs) and seconds per phase");
}

Result<std::unique_ptr<DedupConfig>> ResolveDedupConfig(DedupFlags flags) {
  auto config = std::make_unique<DedupConfig>();
  NEARDUP_ASSIGN_OR_RETURN(config->read_options, MakeReadOptions(flags.input));
  // The input records as read, for --unique-out and --duplicates-out (set
  // before the boilerplate pass, which holds standard input's documents).
  config->read_options.keep_records = !flags.unique_out.empty() || !flags.duplicates_out.empty();
  // Before ResolvePipelineFlags, which keeps only the preset of --method.
  NEARDUP_ASSIGN_OR_RETURN(config->boilerplate,
                           BoilerplatePass::Options(flags.boilerplate, flags.pipeline));
  NEARDUP_RETURN_IF_ERROR(ResolvePipelineFlags(&flags.pipeline));
  NEARDUP_ASSIGN_OR_RETURN(config->method, MakeMethod(flags.pipeline));
  Method& method = config->method;
  method.pipeline.boilerplate = config->boilerplate;
  const bool minhash = method.is_minhash();
  config->minhash = minhash;
  if (minhash && flags.k >= 0) {
    return Status::InvalidArgument(
        "-k does not apply to the minhash method (set its threshold: --method "
        "minhash,threshold=T)");
  }
  if (minhash && flags.mode != "cluster") {
    return Status::InvalidArgument("the minhash method supports --mode cluster only");
  }
  const PipelineOptions& pipeline_options = method.pipeline;
  DedupOptions& options = config->options;
  options.k = minhash ? 0 : flags.k >= 0 ? flags.k : flags.pipeline.default_k;
  options.threads = ResolveThreadCount(flags.input.threads);
  if (flags.mode == "cluster") {
    options.mode = DedupMode::kCluster;
  } else if (flags.mode == "stream") {
    options.mode = DedupMode::kStream;
  } else {
    return Status::InvalidArgument("unknown --mode '" + flags.mode +
                                   "' (expected cluster or stream)");
  }
  NEARDUP_RETURN_IF_ERROR(ParseKeep(flags.keep, &options, &config->score_field));
  NEARDUP_ASSIGN_OR_RETURN(options.cluster_rule, ParseClusterRule(flags.cluster));
  if (!config->score_field.empty()) {
    config->read_options.extra_fields.push_back(config->score_field);
  }
  if (!minhash && (options.k < 0 || options.k > pipeline_options.bits / 4)) {
    return Status::InvalidArgument(KRangeMessage(options.k, pipeline_options.bits));
  }
  if (minhash && (flags.exact || flags.banded)) {
    return Status::InvalidArgument(
        "--exact and --banded choose SimHash's join; the minhash method always joins its bands "
        "(set their recall with --method minhash,recall=R)");
  }
  if (flags.exact && flags.banded) {
    return Status::InvalidArgument("--exact and --banded exclude each other");
  }
  options.join = flags.exact    ? DedupJoin::kExact
                 : flags.banded ? DedupJoin::kBanded
                                : DedupJoin::kAuto;
  if (flags.short_features > 0 && (minhash || options.mode != DedupMode::kCluster)) {
    return Status::InvalidArgument("--short-features applies to SimHash methods in cluster mode");
  }
  if (flags.short_features > 0 && !(flags.short_jaccard > 0)) {
    return Status::InvalidArgument("--short-jaccard must be in (0, 1]");
  }
  options.short_features = flags.short_features;
  options.short_jaccard = flags.short_jaccard;
  // Verified pairs: the thresholds apply when sketches are given
  // (FingerprintInputs computes them when DedupConfig::verify()).
  options.verify_jaccard = minhash ? 0 : flags.verify_jaccard;
  options.verify_short_features = flags.verify_short_features;
  options.verify_short_jaccard = flags.verify_short_jaccard;
  options.recall = flags.recall;
  options.band_seed = flags.band_seed;
  if (!(flags.recall > 0 && flags.recall < 1)) {
    return Status::InvalidArgument("--recall must be between 0 and 1 (exclusive)");
  }
  NEARDUP_ASSIGN_OR_RETURN(config->pipeline, Pipeline::Create(pipeline_options));
  config->flags = std::move(flags);
  return config;
}

Result<InputStats> FingerprintInputs(const DedupConfig& config, const InputFlags& input,
                                     BoilerplatePass& boilerplate, DedupCorpus* corpus,
                                     const ReadOptions* read_options) {
  const ReadOptions& options = read_options != nullptr ? *read_options : config.read_options;
  const std::string& score_field = config.score_field;
  const bool keep_records = config.keep_records();
  uint64_t text_bytes = 0;
  bool hold_texts = config.hold_text_bytes > 0;
  const auto add = [&](const Document& doc, DedupDocument d) {
    d.length = doc.text.size();
    if (!score_field.empty()) {
      const auto f = doc.fields.find(score_field);
      if (f != doc.fields.end()) {
        ++corpus->scored;
        char* end = nullptr;
        const double v = std::strtod(f->second.c_str(), &end);
        if (end != f->second.c_str() && *end == '\0' && std::isfinite(v)) {
          d.score = v;
        } else {
          ++corpus->bad_scores;
        }
      }
    }
    corpus->docs.push_back(d);
    corpus->ids.push_back(doc.id);
    if (keep_records) corpus->records.push_back(doc.record);
    if (hold_texts) {
      text_bytes += doc.text.size();
      hold_texts = text_bytes <= config.hold_text_bytes;
      if (hold_texts) corpus->texts.push_back(doc.text);
      if (!hold_texts) std::vector<std::string>().swap(corpus->texts);
    }
  };
  const Pipeline& pipeline = *config.pipeline;
  if (config.minhash) {
    const MinHashOptions& mh = config.method.minhash;
    const MinHasher hasher(mh.num_perm);
    return boilerplate.ForEach<MinHashedDocument>(
        input, options,
        [&](const Document& doc) {
          MinHashedDocument m;
          m.signature.resize(static_cast<size_t>(mh.num_perm));
          const std::string stripped = boilerplate.on() ? boilerplate.Strip(doc.text) : "";
          m.features = pipeline.MinHashSignature(
              hasher, boilerplate.on() ? std::string_view(stripped) : std::string_view(doc.text),
              doc.title, m.signature.data(), &m.set);
          if (!mh.exact) m.set = {};
          return m;
        },
        [&](const Document& doc, MinHashedDocument& m) {
          corpus->signatures.insert(corpus->signatures.end(), m.signature.begin(),
                                    m.signature.end());
          if (mh.exact) corpus->sets.push_back(std::move(m.set));
          DedupDocument d;
          d.empty = m.features == 0;
          add(doc, d);
        });
  }
  // The short-document rule: the feature sets of the documents that may take
  // part; verified pairs: every document's Jaccard sketch (of the same set).
  const double short_limit = static_cast<double>(config.options.short_features) /
                             std::max(config.options.short_jaccard, 1e-9);
  const bool sketch = config.verify();
  return boilerplate.ForEach<SketchedFingerprint>(
      input, options,
      [&](const Document& doc) {
        SketchedFingerprint f;
        const std::string stripped = boilerplate.on() ? boilerplate.Strip(doc.text) : "";
        const std::string_view text = boilerplate.on() ? std::string_view(stripped) : doc.text;
        std::vector<uint64_t> set;
        f.fp = sketch ? pipeline.FingerprintAndFeatureSet(text, doc.title, &set)
                      : pipeline.Fingerprint(text, doc.title);
        if (sketch) {
          // The hashes come unsorted, with repeats: the set's size is the
          // fingerprint's feature count.
          f.sketch = MakeJaccardSketch(set);
          f.sketch.features = static_cast<uint32_t>(f.fp.features);
        }
        const bool short_doc = config.options.short_features > 0 && !f.fp.empty() &&
                               static_cast<double>(f.fp.features) < short_limit;
        if (short_doc) pipeline.FeatureSet(text, doc.title, &f.short_set);
        return f;
      },
      [&](const Document& doc, SketchedFingerprint& f) {
        DedupDocument d;
        d.fingerprint = f.fp.fingerprint;
        d.empty = f.fp.empty();
        if (config.options.short_features > 0) corpus->short_sets.push_back(std::move(f.short_set));
        if (sketch) corpus->sketches.push_back(f.sketch);
        add(doc, d);
      });
}

Status CheckScoreField(const DedupConfig& config, const DedupCorpus& corpus,
                       const InputStats& stats) {
  if (config.score_field.empty() || corpus.docs.empty() || corpus.scored > 0) return Status::OK();
  std::string fields;
  for (const std::string& f : stats.first_fields) fields += (fields.empty() ? "" : ", ") + f;
  return Status::InvalidArgument(
      "--keep field:" + config.score_field + ": none of the " + std::to_string(corpus.docs.size()) +
      " documents has a field \"" + config.score_field + "\"" +
      (fields.empty() ? "" : " (the first records have " + fields + ")") +
      "; name a numeric field that the records have, or use --keep first or longest");
}

void WarnBadScores(const DedupConfig& config, uint64_t bad_scores) {
  if (bad_scores == 0) return;
  std::cerr << "neardup: warning: " << bad_scores << " document(s) with a non-numeric \""
            << config.score_field << "\" field rank below every number\n";
}

size_t WarnDuplicateIds(std::span<const std::string> ids) {
  std::unordered_map<std::string_view, size_t> first;  // id -> its first document
  first.reserve(ids.size());
  size_t repeats = 0;
  size_t example_first = 0, example = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto [it, fresh] = first.emplace(ids[i], i);
    if (fresh) continue;
    if (repeats++ == 0) {
      example_first = it->second;
      example = i;
    }
  }
  if (repeats == 0) return 0;
  std::cerr << "neardup: warning: " << repeats
            << " document(s) repeat an earlier document's id (first: \"" << ids[example]
            << "\", documents " << example_first + 1 << " and " << example + 1
            << " of the input); each is deduplicated on its own, but the records, pairs and "
               "\"nearest\" name documents by id, which is ambiguous for these (a number id 5 "
               "and a string \"5\" are the same id)\n";
  return repeats;
}

Result<std::unique_ptr<DedupWriter>> DedupWriter::Open(const DedupConfig& config) {
  std::unique_ptr<DedupWriter> w(new DedupWriter(config));
  NEARDUP_ASSIGN_OR_RETURN(w->out_,
                           Output::Open(config.flags.input.output, config.flags.input.inputs));
  return w;
}

Status DedupWriter::OpenPairs(std::span<const std::string> ids) {
  pair_ids_ = ids;
  if (config_.flags.pairs_out.empty()) return Status::OK();
  NEARDUP_ASSIGN_OR_RETURN(pairs_,
                           Output::Open(config_.flags.pairs_out, config_.flags.input.inputs));
  return Status::OK();
}

std::function<void(const DedupPair&)> DedupWriter::pair_sink() {
  if (!pairs_) return {};
  return [this](const DedupPair& p) {
    pairs_->Write(PairLine(config_, pair_ids_[p.i], pair_ids_[p.j], p.distance, p.jaccard));
  };
}

std::string RecordLine(const DedupConfig& config, const DedupDocument& doc, const DedupRecord& r,
                       std::string_view id, std::string_view nearest_id) {
  const bool minhash = config.minhash;
  const char* score_key = ScoreKey(minhash);
  nlohmann::ordered_json line = {{"id", id}};
  if (!minhash) line["fingerprint"] = doc.fingerprint.ToHex();
  line["cluster"] = r.cluster;
  line["duplicate"] = r.duplicate;
  line["nearest"] = nullptr;
  line[score_key] = nullptr;
  if (config.verify()) line["jaccard"] = nullptr;
  if (r.duplicate) {
    line["nearest"] = nearest_id;
    line[score_key] = Score(minhash, r.distance);
    if (config.verify()) line["jaccard"] = VerifiedJaccard(r.jaccard);
  }
  if (r.empty) line["empty"] = true;
  return JsonLine(line);
}

std::string PairLine(const DedupConfig& config, std::string_view a, std::string_view b,
                     int distance, double jaccard) {
  const bool minhash = config.minhash;
  nlohmann::ordered_json line = {{"a", a}, {"b", b}, {ScoreKey(minhash), Score(minhash, distance)}};
  if (config.verify()) line["jaccard"] = VerifiedJaccard(jaccard);
  return JsonLine(line);
}

Status WriteClusters(const DedupConfig& config, const DedupResult& result,
                     const std::function<std::string_view(size_t)>& id,
                     std::span<const uint64_t> positions) {
  const DedupFlags& flags = config.flags;
  if (flags.clusters_out.empty()) return Status::OK();
  NEARDUP_ASSIGN_OR_RETURN(auto clusters, Output::Open(flags.clusters_out, flags.input.inputs));
  const ClusterRows rows = ClusterMembers(result);
  const auto at = [&](size_t j) { return positions.empty() ? j : positions[j]; };
  for (size_t c = 0; c < rows.size(); ++c) {
    nlohmann::ordered_json members = nlohmann::ordered_json::array();
    for (size_t m : rows.Members(c)) members.push_back(id(at(m)));
    nlohmann::ordered_json line = {{"cluster", at(rows.ids[c])},
                                   {"size", rows.Members(c).size()},
                                   {"kept", id(at(rows.kept[c]))},
                                   {"members", members}};
    clusters->Write(JsonLine(line));
  }
  return clusters->Close();
}

Status DedupWriter::Finish(const DedupResult& result, std::span<const DedupDocument> docs,
                           std::span<const std::string> ids, std::span<const std::string> records) {
  ProgressLine progress(ProgressModeOf(config_.flags.input));
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i % 4096 == 0) {
      progress.Update("output", static_cast<double>(i), static_cast<double>(docs.size()),
                      "records");
    }
    const DedupRecord& r = result.records[i];
    out_->Write(RecordLine(config_, docs[i], r, ids[i], ids[r.nearest]));
  }
  progress.Clear();
  NEARDUP_RETURN_IF_ERROR(out_->Close());

  // --unique-out / --duplicates-out: the input records as they were read.
  const DedupFlags& flags = config_.flags;
  const auto record = [&](size_t i) -> const std::string& { return records[i]; };
  for (const bool duplicates : {false, true}) {
    const std::string& path = duplicates ? flags.duplicates_out : flags.unique_out;
    if (path.empty()) continue;
    NEARDUP_RETURN_IF_ERROR(
        WriteRecords(path, flags.input.inputs, docs.size(), record,
                     [&](size_t i) { return result.records[i].duplicate == duplicates; }));
  }
  if (pairs_) NEARDUP_RETURN_IF_ERROR(pairs_->Close());
  return WriteClusters(config_, result, [&](size_t i) { return std::string_view(ids[i]); });
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
    std::fprintf(stderr,
                 "neardup: %s; fingerprints %.2f s, join %.2f s, cluster %.2f s, output "
                 "%.2f s\n",
                 JoinWords(j, options.k).c_str(), times.fingerprint,
                 j.group_seconds + j.join_seconds, j.cluster_seconds, times.output);
  }
  return Status::OK();
}

}  // namespace neardup::cli
