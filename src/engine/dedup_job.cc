// Copyright 2026 The neardup Authors.

#include "neardup/dedup_job.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <nlohmann/json.hpp>

#include "dedup/documents.h"
#include "dedup/sketch_store.h"
#include "engine/id_block.h"
#include "engine/read_pass.h"
#include "neardup/minhash.h"
#include "neardup/minhash_dedup.h"
#include "neardup/presets.h"
#include "util/thread_pool.h"

namespace neardup {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// One JSON Lines record: compact, invalid UTF-8 replaced, then '\n'.
std::string JsonLine(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

// A document's MinHash signature and, for exact verification, its feature set.
struct MinHashed {
  std::vector<uint32_t> signature;
  std::vector<uint64_t> set;
  size_t features = 0;
};

// A document's fingerprint with its verification sketch (verified pairs)
// and, for the short-document rule, its feature set.
struct SketchedFingerprint {
  DocumentFingerprint fp;
  JaccardSketch sketch;
  std::vector<uint64_t> short_set;
};

// A verified pair's estimated Jaccard (4 decimals; the estimate's error is
// larger), null when none was computed.
nlohmann::ordered_json VerifiedJaccard(double jaccard) {
  if (jaccard < 0) return nullptr;
  return std::round(jaccard * 1e4) / 1e4;
}

// FindRepeatedIds over any ids with size() and [i] (std::string or
// std::string_view): one rule for DedupCorpus::ids and Run's IdBlock. The
// documents sorted by (hash of the id, document): equal ids are neighbours,
// the first document of each id first among them. 16 bytes per document and
// one sort, where a hash map of the ids took a node (an allocation) each.
template <typename Ids>
RepeatedIds RepeatedIdsOf(const Ids& ids) {
  const size_t n = ids.size();
  std::vector<std::pair<uint64_t, size_t>> order(n);
  const std::hash<std::string_view> hash;
  for (size_t i = 0; i < n; ++i) order[i] = {hash(std::string_view(ids[i])), i};
  std::sort(order.begin(), order.end());
  RepeatedIds r;
  for (size_t s = 0; s < n;) {
    size_t e = s + 1;
    while (e < n && order[e].first == order[s].first) ++e;
    for (size_t x = s + 1; x < e; ++x) {
      const size_t i = order[x].second;
      for (size_t y = s; y < x; ++y) {  // the id's first document, if before i
        const size_t j = order[y].second;
        if (std::string_view(ids[j]) != std::string_view(ids[i])) continue;
        if (r.count++ == 0 || i < r.first) {
          r.first_of = j;
          r.first = i;
          r.id = ids[i];
        }
        break;
      }
    }
    s = e;
  }
  return r;
}

}  // namespace

// The default's one place (dedup_job.h). Sentence features, like a top-k
// method, would make nearly every document short: off for them too.
ShortRuleChoice ResolveShortRule(const DedupJobOptions& o) {
  ShortRuleChoice c;
  c.jaccard = o.short_jaccard.value_or(kDefaultGivenShortJaccard);
  if (o.short_features) {
    c.features = *o.short_features;
    c.rule = o.short_rule.value_or(ShortRule::kExact);
    return c;
  }
  c.by_default = true;
  c.rule = o.short_rule.value_or(kDefaultShortRule);
  const Method& m = o.method;
  const int k = o.k >= 0 ? o.k : m.default_k;
  if (m.is_minhash()) {
    c.off_because = "minhash";
  } else if (o.mode != DedupMode::kCluster) {
    c.off_because = "stream mode";
  } else if (m.pipeline.bits != 128) {
    c.off_because = std::to_string(m.pipeline.bits) + "-bit fingerprints";
  } else if (m.pipeline.features.top_k != 0) {
    c.off_because = "top-" + std::to_string(m.pipeline.features.top_k) + " features";
  } else if (m.pipeline.features.kind == FeatureKind::kSentences) {
    c.off_because = "sentence features";
  } else if (k < m.default_k) {
    c.off_because = "k below the method's " + std::to_string(m.default_k);
  } else if (k == 0) {
    // A method text's k = 0 (its own k): identical fingerprints asked for;
    // the rule over every document would pair copies at Jaccard 0.52.
    c.off_because = "k = 0";
  } else if (c.rule == ShortRule::kExact) {
    // The exact rule keeps its participants' feature sets: not every
    // document's.
    c.features = kDefaultExactShortFeatures;
  } else {
    c.features = kDefaultShortFeatures;
    // Not given: the default rule's threshold (a value given, 0.5 too, is
    // taken as given).
    c.jaccard = o.short_jaccard.value_or(kDefaultShortJaccard);
  }
  return c;
}

Result<std::optional<size_t>> ParseShortFeatures(std::string_view word) {
  if (word == "auto") return std::optional<size_t>();
  size_t value = 0;
  const char* end = word.data() + word.size();
  const auto [at, error] = std::from_chars(word.data(), end, value);
  if (word.empty() || error != std::errc() || at != end) {
    return Status::InvalidArgument("short features must be auto or a number of features, got '" +
                                   std::string(word) + "'");
  }
  return std::optional<size_t>(value);
}

Result<std::optional<ShortRule>> ParseShortRuleOption(std::string_view word) {
  if (word == "auto") return std::optional<ShortRule>();
  auto rule = ParseShortRule(word);
  if (!rule.ok()) {
    return Status::InvalidArgument("unknown short rule '" + std::string(word) +
                                   "' (expected auto, exact or sketch)");
  }
  return std::optional<ShortRule>(*rule);
}

std::string ShortRuleWords(const ShortRuleChoice& c) {
  std::string words;
  if (c.features == 0) {
    words = "off";
    if (c.by_default) {
      words += c.off_because.empty() ? " (default)" : " (default: " + c.off_because + ")";
    }
    return words;
  }
  words = std::string(ShortRuleName(c.rule));
  if (c.by_default && c.features == kDefaultShortFeatures && c.rule == ShortRule::kSketch) {
    words += ", every document";
  } else {
    words += ", < " + std::to_string(c.features) + " features";
  }
  if (c.jaccard != 0.5) {
    char t[32];
    std::snprintf(t, sizeof t, "%g", c.jaccard);
    words += ", Jaccard >= " + std::string(t);
  }
  if (c.by_default) words += " (default)";
  return words;
}

DedupJob::~DedupJob() = default;

Result<std::unique_ptr<DedupJob>> DedupJob::Create(DedupJobOptions o) {
  Method& method = o.method;
  // Boilerplate: lines unless the method's text names a mode itself.
  BoilerplateOptions& boilerplate = method.pipeline.boilerplate;
  if (o.boilerplate) {
    boilerplate.mode = *o.boilerplate;
  } else if (o.method_text.find("boilerplate=") == std::string::npos) {
    boilerplate.mode = BoilerplateMode::kLines;
  }
  if (o.boilerplate_min_docs > 0) boilerplate.min_docs = o.boilerplate_min_docs;
  if (boilerplate.min_docs < 2) {
    return Status::InvalidArgument("boilerplate min_docs must be >= 2, got " +
                                   std::to_string(boilerplate.min_docs));
  }
  const bool minhash = method.is_minhash();
  if (minhash && o.k >= 0) {
    return Status::InvalidArgument(
        "-k does not apply to the minhash method (set its threshold: --method "
        "minhash,threshold=T)");
  }
  if (minhash && o.mode != DedupMode::kCluster) {
    return Status::InvalidArgument("the minhash method supports --mode cluster only");
  }
  std::unique_ptr<DedupJob> job(new DedupJob(std::move(o)));
  const DedupJobOptions& opt = job->options_;
  const PipelineOptions& pipeline_options = job->options_.method.pipeline;
  DedupOptions& options = job->dedup_;
  options.k = minhash ? 0 : opt.k >= 0 ? opt.k : opt.method.default_k;
  options.threads = ResolveThreadCount(opt.threads);
  options.mode = opt.mode;
  options.keep = opt.keep;
  options.cluster_rule = opt.cluster_rule;
  if (opt.keep == KeepPolicy::kField && opt.score_field.empty()) {
    return Status::InvalidArgument("keep field:NAME needs a field name");
  }
  if (!minhash && (options.k < 0 || options.k > pipeline_options.bits / 4)) {
    return Status::InvalidArgument(KRangeMessage(options.k, pipeline_options.bits));
  }
  if (minhash && opt.join != DedupJoin::kAuto) {
    return Status::InvalidArgument(
        "--exact and --banded choose SimHash's join; the minhash method always joins its bands "
        "(set their recall with --method minhash,recall=R)");
  }
  options.join = opt.join;
  const ShortRuleChoice short_rule = ResolveShortRule(opt);
  if (short_rule.features > 0 && (minhash || options.mode != DedupMode::kCluster)) {
    return Status::InvalidArgument("--short-features applies to SimHash methods in cluster mode");
  }
  if (short_rule.features > 0 && !(short_rule.jaccard > 0 && short_rule.jaccard <= 1)) {
    return Status::InvalidArgument("--short-jaccard must be in (0, 1]");
  }
  job->short_rule_ = short_rule;
  options.short_features = short_rule.features;
  options.short_jaccard = short_rule.jaccard;
  options.short_rule = short_rule.rule;
  if (!(opt.verify_jaccard >= 0 && opt.verify_jaccard <= 1)) {
    return Status::InvalidArgument("--verify-jaccard must be in [0, 1]");
  }
  if (!(opt.verify_short_jaccard >= 0 && opt.verify_short_jaccard <= 1)) {
    return Status::InvalidArgument("--verify-short-jaccard must be in [0, 1]");
  }
  // Verified pairs: the thresholds apply when sketches are given (the
  // fingerprint stage computes them when verifies()).
  options.verify_jaccard = minhash ? 0 : opt.verify_jaccard;
  options.verify_short_features = opt.verify_short_features;
  options.verify_short_jaccard = opt.verify_short_jaccard;
  options.recall = opt.recall;
  options.band_seed = opt.band_seed;
  if (!(opt.recall > 0 && opt.recall < 1)) {
    return Status::InvalidArgument("--recall must be between 0 and 1 (exclusive)");
  }
  if (opt.threads < 0) return Status::InvalidArgument("threads must be >= 0 (0: all cores)");
  NEARDUP_ASSIGN_OR_RETURN(job->pipeline_, Pipeline::Create(pipeline_options));
  if (boilerplate.mode != BoilerplateMode::kOff && !pipeline_options.normalize.t2s.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(job->normalizer_, Normalizer::Create(pipeline_options.normalize));
  }
  return job;
}

const char* DedupJob::score_key() const {
  return options_.method.is_minhash() ? "jaccard" : "distance";
}

double DedupJob::ScoreOf(int distance) const {
  if (!options_.method.is_minhash()) return distance;
  return std::round(JaccardOfDistance(distance) * 1e6) / 1e6;
}

ReadOptions DedupJob::AdjustReadOptions(ReadOptions base) const {
  if (!options_.score_field.empty() && std::find(base.extra_fields.begin(), base.extra_fields.end(),
                                                 options_.score_field) == base.extra_fields.end()) {
    base.extra_fields.push_back(options_.score_field);
  }
  if (options_.keep_records) base.keep_records = true;
  return base;
}

Status DedupJob::CountLines(const DedupInput& input, const DedupProgress& progress) {
  if (boilerplate().mode == BoilerplateMode::kOff) return Status::OK();
  NEARDUP_ASSIGN_OR_RETURN(
      auto counted, engine_internal::CountInputLines(input, normalizer_.get(), options_.threads,
                                                     progress, options_.warn));
  held_ = !input.replayable;
  held_documents_ = std::move(counted.held);
  held_stats_ = counted.held_stats;
  return UseLineStats(std::move(counted.stats));
}

Status DedupJob::UseLineStats(LineStats stats) {
  if (boilerplate().mode == BoilerplateMode::kOff) return Status::OK();
  line_stats_ = std::move(stats);
  filter_ = std::make_unique<BoilerplateFilter>(line_stats_, boilerplate(), normalizer_.get());
  return Status::OK();
}

Result<LineStats> DedupJob::CountLineStats(DocumentReader& reader) const {
  LineCounter counter;
  Document doc;
  while (reader.Next(&doc)) counter.Add(doc.text, normalizer_.get());
  return std::move(counter).Finish();
}

size_t DedupJob::boilerplate_lines() const { return filter_ ? filter_->flagged_lines() : 0; }

std::string DedupJob::BoilerplateSummary(size_t dropped) const {
  if (!strips()) return "";
  return "; boilerplate: " + std::to_string(boilerplate_lines()) +
         " distinct lines in >= " + std::to_string(boilerplate().min_docs) + " of " +
         std::to_string(line_stats_.documents()) + " documents, " + std::to_string(dropped) +
         " line occurrences left out";
}

std::string_view DedupJob::Strip(const std::string& text) const {
  // The kept text, when lines are left out, in this thread's buffer (valid
  // until its next call): no copy, no allocation per document.
  thread_local std::string kept;
  size_t dropped = 0;
  if (!filter_->StripInto(text, &kept, &dropped)) return text;
  dropped_.fetch_add(dropped, std::memory_order_relaxed);
  return kept;
}

Result<InputStats> DedupJob::Fingerprint(const DedupInput& input, DedupCorpus* corpus,
                                         const DedupProgress& progress) {
  if (!held_) {
    NEARDUP_ASSIGN_OR_RETURN(auto reader, input.open(true));
    return Fingerprint(*reader, corpus, progress);
  }
  auto reader = engine_internal::VectorDocumentReader(
      std::make_shared<const std::vector<Document>>(std::move(held_documents_)));
  held_documents_.clear();
  held_ = false;
  NEARDUP_RETURN_IF_ERROR(Fingerprint(*reader, corpus, progress).status());
  return held_stats_;
}

Result<InputStats> DedupJob::Fingerprint(DocumentReader& reader, DedupCorpus* corpus,
                                         const DedupProgress& progress) {
  const std::string& score_field = options_.score_field;
  const bool keep_records = options_.keep_records;
  uint64_t text_bytes = 0;
  bool hold_texts = options_.hold_text_bytes > 0;
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
    if (docs_out_ != nullptr) {
      docs_out_->push_back(d);
    } else {
      corpus->docs.push_back(d);
    }
    if (ids_out_ != nullptr) {
      ids_out_->push_back(doc.id);
    } else {
      corpus->ids.push_back(doc.id);
    }
    if (keep_records) corpus->records.push_back(doc.record);
    if (hold_texts) {
      text_bytes += doc.text.size();
      hold_texts = text_bytes <= options_.hold_text_bytes;
      if (hold_texts) corpus->texts.push_back(doc.text);
      if (!hold_texts) std::vector<std::string>().swap(corpus->texts);
    }
  };
  ThreadPool pool(options_.threads);
  engine_internal::WarnFewerThreads(pool, options_.warn);
  constexpr std::string_view kPhase = "reading + fingerprints";
  const Pipeline& pipeline = *pipeline_;
  const bool strip = strips();
  if (options_.method.is_minhash()) {
    const MinHashOptions& mh = options_.method.minhash;
    const MinHasher hasher(mh.num_perm);
    engine_internal::ReadPass<MinHashed>(
        &pool, reader, kPhase, progress,
        [&](const Document& doc) {
          MinHashed m;
          m.signature.resize(static_cast<size_t>(mh.num_perm));
          m.features = pipeline.MinHashSignature(
              hasher, strip ? Strip(doc.text) : std::string_view(doc.text), doc.title,
              m.signature.data(), &m.set);
          if (!mh.exact) m.set = {};
          return m;
        },
        [&](Document& doc, MinHashed& m) {
          corpus->signatures.insert(corpus->signatures.end(), m.signature.begin(),
                                    m.signature.end());
          if (mh.exact) corpus->sets.push_back(std::move(m.set));
          DedupDocument d;
          d.empty = m.features == 0;
          add(doc, d);
        });
    return reader.stats();
  }
  // The short-document rule: the feature sets of the documents that may take
  // part; verified pairs: every document's Jaccard sketch. Both from the
  // elements the fingerprint's pass gives (one extraction).
  const double short_limit =
      static_cast<double>(dedup_.short_features) / std::max(dedup_.short_jaccard, 1e-9);
  // The sketch rule (ShortRule::kSketch) joins the sketches: no set is kept.
  const bool exact_rule = dedup_.short_features > 0 && dedup_.short_rule == ShortRule::kExact;
  const bool sketch = verifies() || (dedup_.short_features > 0 && !exact_rule);
  const bool with_set = sketch || exact_rule;
  engine_internal::ReadPass<SketchedFingerprint>(
      &pool, reader, kPhase, progress,
      [&](const Document& doc) {
        SketchedFingerprint f;
        const std::string_view text = strip ? Strip(doc.text) : std::string_view(doc.text);
        // The pass's hashes, in a buffer per thread (its capacity reused).
        thread_local std::vector<uint64_t> set;
        set.clear();
        f.fp = with_set ? pipeline.FingerprintAndFeatureSet(text, doc.title, &set)
                        : pipeline.Fingerprint(text, doc.title);
        if (sketch) {
          // The hashes come unsorted, with repeats: the set's size is the
          // fingerprint's feature count.
          f.sketch = MakeJaccardSketch(set);
          f.sketch.features = static_cast<uint32_t>(f.fp.features);
        }
        const bool short_doc =
            exact_rule && !f.fp.empty() && static_cast<double>(f.fp.features) < short_limit;
        if (short_doc) {
          // FeatureSet's set: sorted, each element once; kept at its size
          // (the pass's vector has room for repeats).
          std::sort(set.begin(), set.end());
          f.short_set.assign(set.begin(), std::unique(set.begin(), set.end()));
        }
        return f;
      },
      [&](Document& doc, SketchedFingerprint& f) {
        DedupDocument d;
        d.fingerprint = f.fp.fingerprint;
        d.empty = f.fp.empty();
        if (exact_rule) corpus->short_sets.push_back(std::move(f.short_set));
        if (sketch) {
          if (sketches_out_ != nullptr) {
            sketches_out_->push_back(f.sketch);
          } else {
            corpus->sketches.push_back(f.sketch);
          }
        }
        add(doc, d);
      });
  return reader.stats();
}

Status DedupJob::CheckScoreField(const DedupCorpus& corpus, const InputStats& stats) const {
  return CheckScoreField(corpus.docs.size(), corpus.scored, stats);
}

Status DedupJob::CheckScoreField(size_t documents, uint64_t scored, const InputStats& stats) const {
  const std::string& field = options_.score_field;
  if (field.empty() || documents == 0 || scored > 0) return Status::OK();
  std::string fields;
  for (const std::string& f : stats.first_fields) fields += (fields.empty() ? "" : ", ") + f;
  return Status::InvalidArgument(
      "--keep field:" + field + ": none of the " + std::to_string(documents) +
      " documents has a field \"" + field + "\"" +
      (fields.empty() ? "" : " (the first records have " + fields + ")") +
      "; name a numeric field that the records have, or use --keep first or longest");
}

Result<DedupResult> DedupJob::Join(const DedupCorpus& corpus,
                                   std::function<void(const DedupPair&)> pair_sink,
                                   const DedupProgress& progress, int k) const {
  return JoinWith(corpus, std::move(pair_sink), progress, k, {});
}

Result<DedupResult> DedupJob::JoinWith(const DedupCorpus& corpus,
                                       std::function<void(const DedupPair&)> pair_sink,
                                       const DedupProgress& progress, int k,
                                       std::function<void()> release_sketches,
                                       const dedup_internal::CompactDocuments* held) const {
  DedupOptions options = dedup_;
  options.release_sketches = std::move(release_sketches);
  if (k >= 0 && !options_.method.is_minhash()) options.k = k;
  options.pair_sink = std::move(pair_sink);
  options.short_sets = corpus.short_sets;
  options.sketches = corpus.sketches;
  if (sketches_out_ != nullptr && !sketches_out_->empty()) {
    options.packed_sketches = sketches_out_;
  }
  if (progress) {
    options.progress = [&progress](std::string_view phase, size_t done, size_t total) {
      progress(phase, static_cast<double>(done), static_cast<double>(total),
               phase == "bands" ? "bands" : "documents");
    };
  }
  if (options_.method.is_minhash()) {
    return MinHashDedup(corpus.docs, corpus.signatures, corpus.sets, options_.method.minhash,
                        options);
  }
  if (held != nullptr) return dedup_internal::DedupDocuments(*held, options);
  return Dedup(corpus.docs, options);
}

std::string DedupJob::RecordLine(const DedupDocument& doc, const DedupRecord& r,
                                 std::string_view id, std::string_view nearest_id) const {
  const bool minhash = options_.method.is_minhash();
  const char* key = score_key();
  nlohmann::ordered_json line = {{"id", id}};
  if (!minhash) line["fingerprint"] = doc.fingerprint.ToHex();
  line["cluster"] = r.cluster;
  line["duplicate"] = r.duplicate;
  line["nearest"] = nullptr;
  line[key] = nullptr;
  if (r.duplicate) {
    line["nearest"] = nearest_id;
    if (minhash) {
      line[key] = ScoreOf(r.distance);
    } else {
      line[key] = r.distance;
    }
  }
  if (verifies()) line["jaccard"] = r.duplicate ? VerifiedJaccard(r.jaccard) : nullptr;
  if (r.empty) line["empty"] = true;
  return JsonLine(line);
}

std::string DedupJob::PairLine(std::string_view a, std::string_view b, int distance,
                               double jaccard) const {
  nlohmann::ordered_json line = {{"a", a}, {"b", b}};
  if (options_.method.is_minhash()) {
    line[score_key()] = ScoreOf(distance);
  } else {
    line[score_key()] = distance;
  }
  if (verifies()) line["jaccard"] = VerifiedJaccard(jaccard);
  return JsonLine(line);
}

void DedupJob::ClusterLines(const DedupResult& result,
                            const std::function<std::string_view(size_t)>& id,
                            const std::function<void(std::string_view)>& sink,
                            std::span<const uint64_t> positions) const {
  const ClusterRows rows = ClusterMembers(result);
  const auto at = [&](size_t j) { return positions.empty() ? j : positions[j]; };
  for (size_t c = 0; c < rows.size(); ++c) {
    nlohmann::ordered_json members = nlohmann::ordered_json::array();
    for (size_t m : rows.Members(c)) members.push_back(id(at(m)));
    nlohmann::ordered_json line = {{"cluster", at(rows.ids[c])},
                                   {"size", rows.Members(c).size()},
                                   {"kept", id(at(rows.kept[c]))},
                                   {"members", members}};
    sink(JsonLine(line));
  }
}

Result<DedupJobSummary> DedupJob::Run(const DedupInput& input, const DedupJobOutputs& outputs,
                                      const DedupProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (outputs.unique || outputs.duplicates) options_.keep_records = true;
  DedupJobSummary summary;
  NEARDUP_RETURN_IF_ERROR(CountLines(input, progress));
  if (strips() && !options_.keep_line_stats) {
    // The filter reads the lines at min_docs and above alone.
    NEARDUP_RETURN_IF_ERROR(UseLineStats(
        line_stats_.AtLeast(static_cast<uint32_t>(std::max(boilerplate().min_docs, 1)))));
  }
  DedupCorpus corpus;
  engine_internal::IdBlock ids;  // not corpus.ids: one block of bytes
  // Not corpus.sketches: packed by what they hold (MinHash has none).
  dedup_internal::PackedSketches packed;
  // Not corpus.docs (SimHash): compact columns, with the lengths only where
  // they are read (the longest policy; record_values passes them on).
  // MinHash keeps corpus.docs (its signatures, 4 bytes a permutation, dwarf
  // them).
  const bool compact = !options_.method.is_minhash();
  dedup_internal::CompactDocuments held(options_.keep == KeepPolicy::kLongest ||
                                        static_cast<bool>(outputs.record_values));
  if (strips()) {
    // The boilerplate pass counted the documents: the per-document arrays
    // are sized once instead of doubling as they grow (a doubling holds the
    // old and the new array at once).
    const size_t n = line_stats_.documents();
    if (compact) {
      held.reserve(n);
    } else {
      corpus.docs.reserve(n);
    }
    ids.reserve(n);
    if (verifies()) packed.reserve(n);
    if (options_.keep_records) corpus.records.reserve(n);
  }
  ids_out_ = &ids;
  docs_out_ = compact ? &held : nullptr;
  sketches_out_ = &packed;
  Result<InputStats> read = Fingerprint(input, &corpus, progress);
  ids_out_ = nullptr;
  docs_out_ = nullptr;
  sketches_out_ = nullptr;
  NEARDUP_ASSIGN_OR_RETURN(summary.input, std::move(read));
  summary.seconds.fingerprint = Since(start);
#if defined(__GLIBC__)
  // The reading pass's documents and buffers, freed in the worker threads'
  // arenas, are handed back before the join.
  malloc_trim(0);
#endif
  const size_t n = compact ? held.size() : corpus.docs.size();
  NEARDUP_RETURN_IF_ERROR(CheckScoreField(n, corpus.scored, summary.input));
  summary.bad_scores = corpus.bad_scores;
  summary.repeated_ids = RepeatedIdsOf(ids);

  // Join, cluster, keep policy. Pairs go straight to their sink: a cluster
  // of n identical documents has n (n - 1) / 2 of them.
  std::function<void(const DedupPair&)> pair_sink;
  if (outputs.pairs) {
    pair_sink = [&](const DedupPair& p) {
      outputs.pairs(PairLine(ids[p.i], ids[p.j], p.distance, p.jaccard));
    };
  }
  const auto dedup_start = std::chrono::steady_clock::now();
  // The sketches (152 bytes a document) are freed before the records are
  // built.
  sketches_out_ = &packed;  // JoinWith's DedupOptions::packed_sketches
  Result<DedupResult> joined = JoinWith(
      corpus, std::move(pair_sink), progress, -1,
      [&corpus, &packed] {
        std::vector<JaccardSketch>().swap(corpus.sketches);
        packed.clear();
      },
      compact ? &held : nullptr);
  sketches_out_ = nullptr;
  NEARDUP_ASSIGN_OR_RETURN(summary.result, std::move(joined));
  summary.seconds.dedup = Since(dedup_start);

  const auto output_start = std::chrono::steady_clock::now();
  const DedupResult& result = summary.result;
  const auto doc = [&](size_t i) { return compact ? held[i] : corpus.docs[i]; };
  if (outputs.records) {
    for (size_t i = 0; i < n; ++i) {
      if (progress && i % 4096 == 0) {
        progress("output", static_cast<double>(i), static_cast<double>(n), "records");
      }
      const DedupRecord& r = result.records[i];
      outputs.records(RecordLine(doc(i), r, ids[i], ids[r.nearest]));
    }
  }
  if (outputs.record_values) {
    for (size_t i = 0; i < n; ++i) outputs.record_values(i, doc(i), result.records[i]);
  }
  // The input records as they were read.
  for (const bool duplicates : {false, true}) {
    const auto& sink = duplicates ? outputs.duplicates : outputs.unique;
    if (!sink) continue;
    for (size_t i = 0; i < n; ++i) {
      if (result.records[i].duplicate != duplicates) continue;
      sink(corpus.records[i] + "\n");
    }
  }
  if (outputs.clusters) {
    ClusterLines(
        result, [&](size_t i) { return ids[i]; }, outputs.clusters);
  }
  summary.boilerplate_lines = boilerplate_lines();
  summary.boilerplate_dropped = dropped_lines();
  summary.seconds.output = Since(output_start);
  summary.seconds.total = Since(start);
  return summary;
}

std::string KRangeMessage(int k, int bits, std::string_view option) {
  std::string m = std::string(option) + " " + std::to_string(k) +
                  " is out of range: it must be between 0 and " + std::to_string(bits / 4) +
                  " because the method's fingerprints are " + std::to_string(bits) +
                  "-bit (the exact index takes k up to bits / 4)";
  if (bits < 128 && k <= 128 / 4) {
    m += "; for a larger k use a 128-bit method (--bits 128, or a method such as " +
         std::string(kDefaultMethod) + ")";
  }
  return m;
}

RepeatedIds FindRepeatedIds(std::span<const std::string> ids) { return RepeatedIdsOf(ids); }

}  // namespace neardup
