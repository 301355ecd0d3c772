// Copyright 2026 The neardup Authors.
//
// The dedup job: what `neardup dedup`, Python's neardup.dedup(rows, ...) and
// neardup-mpi run, in one place, so that the same job gives the same answer
// at every door. A job is
//
//   inputs       any DocumentReader (DedupInput, document_pass.h; standard
//                input is read once)
//   method       SimHash or MinHash (one interface: no front end asks which)
//   boilerplate  lines shared by many documents left out of the fingerprints
//   join         exact or banded (SimHash), bands (MinHash); verification
//   cluster rule, keep policy
//   outputs      lines of JSON through sinks (DedupJobOutputs); a front end
//                puts them in files, on standard output or in Python values
//
// run as one call, DedupJob::Run, with a progress callback and a summary
// struct (DedupJobSummary). The stages are public too, for neardup-mpi,
// which runs them over the ranks of an MPI job:
//
//   DedupJob::Create       options -> method, pipeline, DedupOptions (checked)
//   CountLines / UseLineStats   the boilerplate pass (or the whole corpus's counts)
//   Fingerprint            documents -> DedupCorpus, in input order
//   Join                   join + cluster + keep policy (Dedup / MinHashDedup)
//   RecordLine, PairLine, ClusterLine   the output lines
//
// The defaults of DedupJobOptions are the command line's. A DedupJob is
// immutable after Create except for its boilerplate state (CountLines /
// UseLineStats, once, before Fingerprint).

#ifndef NEARDUP_DEDUP_JOB_H_
#define NEARDUP_DEDUP_JOB_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/boilerplate.h"
#include "neardup/dedup.h"
#include "neardup/document_pass.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup {
namespace engine_internal {
class IdBlock;
}  // namespace engine_internal
namespace dedup_internal {
class CompactDocuments;
class PackedSketches;
}  // namespace dedup_internal

// Everything a dedup job decides, with the command line's defaults.
struct DedupJobOptions {
  Method method = Method::Default();
  // The method as the user wrote it (--method, Python's method=), when given
  // as text: it decides the boilerplate default (below). "" when not given.
  std::string method_text;
  int k = -1;  // -1: the method's default k; must be -1 for minhash
  DedupMode mode = DedupMode::kCluster;
  ClusterRule cluster_rule = ClusterRule::kCenter;
  KeepPolicy keep = KeepPolicy::kFirst;
  std::string score_field;  // KeepPolicy::kField: the numeric field
  // Boilerplate removal: nullopt is the default, lines unless method_text
  // names boilerplate=... itself; else the mode given. min_docs 0: the
  // method's.
  std::optional<BoilerplateMode> boilerplate;
  int boilerplate_min_docs = 0;
  DedupJoin join = DedupJoin::kAuto;  // SimHash only (minhash: its bands)
  double recall = 0.99;               // SimHash's banded join; in (0, 1)
  uint64_t band_seed = kDefaultBandSeed;
  // The short-document rule (dedup.h, DedupOptions::short_features): a
  // pair with a document of fewer than M features is also a near-duplicate
  // when its feature sets' Jaccard is >= short_jaccard, whatever its
  // distance. nullopt: the job's default, resolved in one place
  // (ResolveShortRule, below): M = kDefaultShortFeatures (every document)
  // by the sketch rule at kDefaultShortJaccard where it applies, else off.
  // 0: off; M > 0: on as given (cluster mode, SimHash methods; anything else
  // is an error).
  std::optional<size_t> short_features;
  // nullopt: the rule's default (kDefaultShortJaccard for the default
  // sketch rule, kDefaultGivenShortJaccard otherwise); a value is taken as
  // given, whatever the rule.
  std::optional<double> short_jaccard;
  // How the rule finds its pairs (dedup.h, ShortRule): kSketch keeps no
  // feature set and needs verified pairs' sketches (made for it when
  // verify_jaccard is 0). nullopt: kSketch under the default rule, kExact
  // with short_features given (as before the default).
  std::optional<ShortRule> short_rule;
  // Verified pairs (SimHash methods; dedup.h, DedupOptions::sketches): a
  // pair within k is a near-duplicate only when the estimated Jaccard of its
  // feature sets is at least verify_jaccard (0: off); pairs whose smaller
  // document has fewer than verify_short_features features use
  // verify_short_jaccard (0: no separate rule). Minhash: ignored.
  double verify_jaccard = DedupOptions{}.verify_jaccard;
  size_t verify_short_features = DedupOptions{}.verify_short_features;
  double verify_short_jaccard = DedupOptions{}.verify_short_jaccard;
  int threads = 0;  // 0: every core
  // Hold the input records (Document::record) for DedupJobOutputs::unique
  // and duplicates (Run sets it when either is given).
  bool keep_records = false;
  // Run: keep the whole corpus's line counts for line_stats() after it
  // (--boilerplate-stats-out saves them). Otherwise Run keeps, after its
  // count, only the lines in at least min_docs documents (all that the
  // boilerplate filter reads: LineStats::AtLeast, the same documents()), so
  // that no count per distinct line is held through the join.
  bool keep_line_stats = false;
  // Hold each document's text in DedupCorpus::texts while their total is at
  // most this many bytes (beyond it none is held); 0: never.
  uint64_t hold_text_bytes = 0;
  // Receives what goes wrong without failing the job (the system refused
  // some worker threads: the job goes on with fewer); may be empty.
  std::function<void(const std::string&)> warn;
};

// The short-document rule's default (DedupJobOptions::short_features
// nullopt; doc/evaluation.md, "The sketch rule over every document"): the
// sketch rule at M = 1,000,000 features, so that every document of fewer
// than M / t (~1.9 million) features takes part (every document in
// practice: the rule is then an LSH over the 128-slot sketches that
// verification computes anyway, and a pair more than k apart is reported
// when its estimated Jaccard is >= kDefaultShortJaccard), at t = 0.52, not
// 0.5: over every document the estimate's error near 0.5 (sd ~0.044) let in
// pairs of exact Jaccard 0.45-0.5 (measured). The exact rule asked for with
// the features left to the default takes kDefaultExactShortFeatures (it
// keeps the participants' feature sets).
inline constexpr size_t kDefaultShortFeatures = 1'000'000;
inline constexpr double kDefaultShortJaccard = 0.52;
inline constexpr size_t kDefaultExactShortFeatures = 300;
// The threshold of a rule whose features or exact rule are given, when
// DedupJobOptions::short_jaccard is not.
inline constexpr double kDefaultGivenShortJaccard = 0.5;
inline constexpr ShortRule kDefaultShortRule = ShortRule::kSketch;

// The short-document rule a job runs, resolved from its options: what every
// front end (the CLI, Python, neardup-mpi, eval) shows and runs.
struct ShortRuleChoice {
  size_t features = 0;  // 0: off
  ShortRule rule = ShortRule::kExact;
  // The rule's threshold (DedupOptions::short_jaccard): short_jaccard as
  // given, or kDefaultShortJaccard for the default sketch rule when
  // short_jaccard is not given (kDefaultGivenShortJaccard for a rule given).
  double jaccard = 0.5;
  bool by_default = false;  // short_features was nullopt
  // Why the default is off when it is (by_default and features 0): "minhash",
  // "stream mode", "64-bit fingerprints", "top-20 features", "sentence
  // features", "k below the method's 28", "k = 0"; "" otherwise.
  std::string off_because;
};

// The one place the default is decided. With short_features nullopt the
// rule is on (kDefaultShortFeatures at kDefaultShortJaccard by
// kDefaultShortRule; kDefaultExactShortFeatures at short_jaccard when
// short_rule is kExact) for a SimHash method of 128 bits that keeps every
// feature (top_k 0) of words or character n-grams, in cluster mode at
// k >= the method's default k, and off otherwise: MinHash and stream mode do
// not take it; the 64-bit presets are for near-identical copies at k = 3; a
// top-k method (tfidf, esimhash: 20 words) or sentence features would make
// every document short; a k below the method's (or a method text's k = 0:
// identical fingerprints) asks for closer copies than the rule finds. A short_jaccard other than
// DedupJobOptions{}'s is taken as given. An explicit short_features is returned as given (rule:
// short_rule, else kExact; jaccard: short_jaccard). `k`: the job's k (-1: the method's).
ShortRuleChoice ResolveShortRule(const DedupJobOptions& options);

// The option words of the rule at every door: "auto" (nullopt: the
// default) or a count of features (0: off); "auto" (nullopt), "exact" or
// "sketch". InvalidArgument naming the option for anything else.
Result<std::optional<size_t>> ParseShortFeatures(std::string_view word);
Result<std::optional<ShortRule>> ParseShortRuleOption(std::string_view word);

// "sketch, every document, Jaccard >= 0.52 (default)" (the default's
// features), "off (default: 64-bit fingerprints)", "exact, < 200 features",
// "sketch, < 300 features, Jaccard >= 0.6" (a threshold other than 0.5
// named), "off": for summaries.
std::string ShortRuleWords(const ShortRuleChoice& choice);

// The fingerprint stage's result: one entry per document, in input order.
struct DedupCorpus {
  std::vector<DedupDocument> docs;
  std::vector<uint32_t> signatures;               // minhash: num_perm per document
  std::vector<std::vector<uint64_t>> sets;        // minhash with exact verification
  std::vector<std::vector<uint64_t>> short_sets;  // DedupOptions::short_sets, when the rule is on
  std::vector<JaccardSketch> sketches;            // DedupOptions::sketches, when verifying
  std::vector<std::string> ids;
  std::vector<std::string> records;  // when DedupJobOptions::keep_records
  std::vector<std::string> texts;    // every text, or none (hold_text_bytes)
  uint64_t bad_scores = 0;           // score_field values that are no number
  uint64_t scored = 0;               // documents with the score field (any value)
};

// The outputs of Run, each a sink of whole lines (each ending in '\n'); an
// empty function is an output not asked for. records: one JSON line per
// document; pairs: one per pair found (streamed during the join); clusters:
// one per cluster of two or more; unique / duplicates: the input records of
// the kept documents / of the others, byte for byte.
struct DedupJobOutputs {
  std::function<void(std::string_view)> records;
  std::function<void(std::string_view)> pairs;
  std::function<void(std::string_view)> clusters;
  std::function<void(std::string_view)> unique;
  std::function<void(std::string_view)> duplicates;
  // The records as values (the Python module): document i, its fingerprint
  // stage's entry and its record, in input order.
  std::function<void(size_t i, const DedupDocument& doc, const DedupRecord& r)> record_values;
};

// The documents among `ids` whose id an earlier one has: their count, and
// the first such pair (positions), for a warning.
struct RepeatedIds {
  size_t count = 0;
  std::string id;  // the first repeated id
  size_t first = 0;
  size_t first_of = 0;
};
RepeatedIds FindRepeatedIds(std::span<const std::string> ids);

// What a run did.
struct DedupJobSummary {
  InputStats input;
  DedupResult result;  // per-document records, counts, the join's report
  uint64_t bad_scores = 0;
  RepeatedIds repeated_ids;        // documents whose id an earlier one has
  size_t boilerplate_lines = 0;    // distinct lines found frequent
  size_t boilerplate_dropped = 0;  // line occurrences left out of fingerprints
  struct Seconds {
    double fingerprint = 0;  // reading, the boilerplate pass and fingerprints
    double dedup = 0;        // join + cluster
    double output = 0;
    double total = 0;
  } seconds;
};

class DedupJob {
 public:
  // InvalidArgument for a combination that does not apply (k out of the
  // method's range, -k with minhash, stream mode with minhash, ...).
  static Result<std::unique_ptr<DedupJob>> Create(DedupJobOptions options);
  ~DedupJob();

  const DedupJobOptions& options() const { return options_; }
  // The method with the resolved boilerplate options.
  const Method& method() const { return options_.method; }
  const Pipeline& pipeline() const { return *pipeline_; }
  // The library options of the join (k resolved; no sinks).
  const DedupOptions& dedup_options() const { return dedup_; }
  // The short-document rule as resolved (ResolveShortRule): dedup_options()'s
  // short_features and short_rule, and whether they are the default's.
  const ShortRuleChoice& short_rule() const { return short_rule_; }
  const BoilerplateOptions& boilerplate() const { return options_.method.pipeline.boilerplate; }
  // How the records name a pair's score: "distance" (SimHash) or "jaccard".
  const char* score_key() const;
  // A DedupRecord's or DedupPair's distance as the outputs show it: the
  // Hamming distance, or minhash's Jaccard (6 decimals).
  double ScoreOf(int distance) const;
  // Verified pairs: every document gets a Jaccard sketch (DedupCorpus::
  // sketches), and records and pairs carry "jaccard".
  bool verifies() const { return !options_.method.is_minhash() && dedup_.verify_jaccard > 0; }
  // DedupJobOptions::hold_text_bytes, set after Create (calibrate decides
  // it from the input).
  void HoldTexts(uint64_t bytes) { options_.hold_text_bytes = bytes; }
  // `base` with what the job reads besides the text (the score field,
  // the records when held).
  ReadOptions AdjustReadOptions(ReadOptions base) const;

  // The boilerplate pass, when boilerplate() is not off: counts every
  // document's lines (holding the documents when the input is not
  // replayable) ...
  Status CountLines(const DedupInput& input, const DedupProgress& progress = {});
  // ... or takes the whole corpus's counts made elsewhere (neardup-mpi).
  Status UseLineStats(LineStats stats);
  // The line counts of the documents `reader` gives, keyed as CountLines
  // keys them (the method's normalization), to be merged (neardup-mpi).
  Result<LineStats> CountLineStats(DocumentReader& reader) const;
  const LineStats& line_stats() const { return line_stats_; }
  bool strips() const { return filter_ != nullptr; }
  size_t boilerplate_lines() const;
  size_t dropped_lines() const { return dropped_.load(); }
  // "; boilerplate: 12 distinct lines in >= 5 of 200 documents, 2000 line
  // occurrences left out", or "" (off); `dropped`: the occurrences left out.
  std::string BoilerplateSummary(size_t dropped) const;

  // The fingerprint stage: every document of `input` (the held ones after
  // CountLines on an input that is not replayable) appended to *corpus.
  Result<InputStats> Fingerprint(const DedupInput& input, DedupCorpus* corpus,
                                 const DedupProgress& progress = {});
  // The same over one reader (neardup-mpi's byte ranges).
  Result<InputStats> Fingerprint(DocumentReader& reader, DedupCorpus* corpus,
                                 const DedupProgress& progress = {});
  // score_field when no document has it: an error naming the fields the
  // first records have.
  Status CheckScoreField(const DedupCorpus& corpus, const InputStats& stats) const;

  // Join, cluster and keep policy over `corpus`: Dedup or MinHashDedup,
  // pairs verified when verifies(). `k` >= 0 (SimHash): join at this k
  // instead of the job's (calibrate's scan), verified the same way; -1: the
  // job's.
  Result<DedupResult> Join(const DedupCorpus& corpus,
                           std::function<void(const DedupPair&)> pair_sink = {},
                           const DedupProgress& progress = {}, int k = -1) const;

  // The output lines (each ending in '\n'). A document's record: its id,
  // fingerprint (SimHash), cluster, duplicate, nearest (the nearest kept
  // document's id when a duplicate, else null), the score, "jaccard" (when
  // verifies(): the verified estimate, 4 decimals; null when none) and
  // "empty".
  std::string RecordLine(const DedupDocument& doc, const DedupRecord& r, std::string_view id,
                         std::string_view nearest_id) const;
  // A pair: a, b, the score and (when verifies()) "jaccard" (DedupPair::jaccard).
  std::string PairLine(std::string_view a, std::string_view b, int distance,
                       double jaccard = -1) const;
  // Every cluster of two or more of `result`: {cluster, size, kept,
  // members}; `id(j)` names document j. `positions` (when not empty):
  // result.records[j] is document positions[j] and cluster numbers index it.
  void ClusterLines(const DedupResult& result, const std::function<std::string_view(size_t)>& id,
                    const std::function<void(std::string_view)>& sink,
                    std::span<const uint64_t> positions = {}) const;

  // All of it: the boilerplate pass, fingerprints, join, cluster, outputs.
  // An input that gives no document is an empty result (the outputs get
  // nothing). Errors: the reader's, CheckScoreField's, the join's.
  Result<DedupJobSummary> Run(const DedupInput& input, const DedupJobOutputs& outputs,
                              const DedupProgress& progress = {});

 private:
  explicit DedupJob(DedupJobOptions options) : options_(std::move(options)) {}
  // Join, with DedupOptions::release_sketches; `held`, when not null: the
  // documents (SimHash) instead of corpus.docs.
  Result<DedupResult> JoinWith(const DedupCorpus& corpus,
                               std::function<void(const DedupPair&)> pair_sink,
                               const DedupProgress& progress, int k,
                               std::function<void()> release_sketches,
                               const dedup_internal::CompactDocuments* held = nullptr) const;
  // CheckScoreField for `documents` documents of which `scored` have the field.
  Status CheckScoreField(size_t documents, uint64_t scored, const InputStats& stats) const;
  // `text` without its boilerplate lines; a view of `text` itself or of a
  // buffer of the calling thread, valid until its next call.
  std::string_view Strip(const std::string& text) const;

  DedupJobOptions options_;
  DedupOptions dedup_;
  ShortRuleChoice short_rule_;
  std::unique_ptr<Pipeline> pipeline_;
  LineStats line_stats_;
  std::unique_ptr<Normalizer> normalizer_;  // null: raw line keys
  std::unique_ptr<BoilerplateFilter> filter_;
  bool held_ = false;
  std::vector<Document> held_documents_;
  // Run's ids: Fingerprint appends them here instead of DedupCorpus::ids
  // while set (one block of bytes: no std::string per document).
  engine_internal::IdBlock* ids_out_ = nullptr;
  // Run's documents (SimHash methods): Fingerprint appends them here instead
  // of DedupCorpus::docs while set (24 bytes a document instead of 56).
  dedup_internal::CompactDocuments* docs_out_ = nullptr;
  // Run's sketches: Fingerprint appends them here, packed, instead of
  // DedupCorpus::sketches while set, and JoinWith passes them on
  // (DedupOptions::packed_sketches; ~30 bytes a short document, not 152).
  dedup_internal::PackedSketches* sketches_out_ = nullptr;
  InputStats held_stats_;
  mutable std::atomic<size_t> dropped_{0};
};

// "-k 28 is out of range: it must be between 0 and 16 because the method's
// fingerprints are 64-bit (the exact index takes k up to bits / 4); ..."
// `option` names the option in the message (--max-k for an index build).
std::string KRangeMessage(int k, int bits, std::string_view option = "-k");

}  // namespace neardup

#endif  // NEARDUP_DEDUP_JOB_H_
