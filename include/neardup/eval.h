// Copyright 2026 The neardup Authors.
//
// The evaluation harness (SPEC section 10; seeds 000 and 003): seeded
// perturbation of a real corpus, the methods compared in one run (exact hash,
// character-shingle MinHash, every SimHash preset at each width), and the
// metrics: pair precision / recall / F1, seed 003's dedup rate, ROC AUC on
// labelled pairs, fingerprinting throughput.
//
//   std::vector<neardup::EvalDocument> docs = ...;   // {id, text}
//   neardup::DocsEvalOptions options;                // T = 5/10/15/20 %, 64 and 128 bits
//   auto report = neardup::EvaluateDocs(docs, options);
//   if (!report.ok()) ...;
//   NEARDUP_RETURN_IF_ERROR(neardup::WriteDocsReport(*report, "report/"));
//
// Definitions (doc/evaluation.md has them with the numbers):
//   edit ratio   1 - LCS(original, variant) / max(|original|, |variant|), in
//                code points: the share of characters that do not survive in
//                order. A moved sentence of L characters counts L.
//   pair metrics a predicted pair is two documents within the threshold
//                (Hamming distance <= k; estimated Jaccard >= t; equal exact
//                hash). True pairs are variant-original pairs. Predicted pairs
//                between documents of one natural-duplicate group (originals
//                with exact character 5-gram Jaccard >= 0.5, and their
//                variants) that are not a variant-original pair are neither
//                true nor false positives; they are counted separately.
//   natural duplicates  two originals whose exact character 5-gram Jaccard
//                (sets of the normalized text, NFKC + case folding) is >= 0.5
//                (DocsEvalOptions::natural_jaccard); found exactly by
//                JaccardJoin, not estimated.
//   dedup rate   the share of documents whose status is right: a document is
//                truly a duplicate when it belongs to a group of two or more
//                (a variant, its original, natural duplicates of either) and
//                predicted a duplicate when it has any predicted partner.
//
// Thread safety: the free functions are reentrant; a Perturber
// is immutable after construction and may be shared between threads.

#ifndef NEARDUP_EVAL_H_
#define NEARDUP_EVAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/boilerplate.h"
#include "neardup/dedup.h"
#include "neardup/dedup_job.h"
#include "neardup/minhash.h"
#include "neardup/pipeline.h"
#include "neardup/status.h"

namespace neardup {

// ---------------------------------------------------------------- edit ratio

// UTF-8 <-> code points. Decoding is strict (no overlong forms, surrogates or
// code points above U+10FFFF): every byte outside a valid sequence decodes to
// U+FFFD.
std::u32string DecodeUtf8(std::string_view text);
std::string EncodeUtf8(std::u32string_view text);

// Length of the longest common subsequence (bit-parallel, Hyyro 2004).
size_t LongestCommonSubsequence(std::u32string_view a, std::u32string_view b);

// 1 - LCS / max(|a|, |b|) over code points; 0 when both are empty.
double EditRatio(std::u32string_view original, std::u32string_view variant);
double EditRatio(std::string_view original, std::string_view variant);

// ---------------------------------------------------------- perturbation

enum class EditOp : int {
  kModify = 0,   // a span replaced with words drawn from the corpus
  kDelete = 1,   // a span removed
  kShift = 2,    // a sentence moved to another sentence boundary
  kReplace = 3,  // a sentence replaced with a sentence of another document
};
inline constexpr int kNumEditOps = 4;

struct PerturbResult {
  std::string text;
  double ratio = 0;                            // EditRatio(original, text)
  std::array<int, kNumEditOps> ops_applied{};  // how many operations of each kind
};

class Perturber {
 public:
  // `documents`: the corpus (replace draws sentences from documents other than
  // the one perturbed). `words`: the pool modify draws from; when empty,
  // single characters of the corpus are drawn instead.
  Perturber(std::vector<std::string> documents, std::vector<std::string> words);

  size_t size() const { return documents_.size(); }
  const std::string& document(size_t i) const { return documents_[i]; }

  // A variant of document `index` whose EditRatio to it is `ratio` (the
  // operations never lengthen the text and each is no larger than what is
  // missing, so the achieved ratio does not exceed ceil(ratio * n) / n and is
  // normally equal to it). A pure function of (index, ratio, seed).
  // REQUIRES: index < size(), 0 <= ratio <= 1
  PerturbResult Perturb(size_t index, double ratio, uint64_t seed) const;

 private:
  std::vector<std::string> documents_;
  std::vector<std::u32string> decoded_;
  std::vector<std::u32string> words_;
};

// ------------------------------------------------------------------ MinHash

// The method `minhash` (method.h, minhash.h) is the evaluation's MinHash: the
// character 3-gram sets of the pipeline, 128 permutations; natural duplicates
// are found with the band engine (band_join.h).

// ------------------------------------------------------------------ metrics

struct PairCounts {
  uint64_t true_positives = 0;
  uint64_t false_positives = 0;
  uint64_t false_negatives = 0;
  // 1 when nothing was predicted (no false positive was made).
  double precision() const;
  // 1 when there is nothing to find.
  double recall() const;
  // Harmonic mean of precision and recall; 0 when both are 0.
  double f1() const;
};

// The share of positions where truth[i] == predicted[i]; 0 for no documents.
// REQUIRES: same sizes
double DedupRate(const std::vector<bool>& truth, const std::vector<bool>& predicted);

// Area under the ROC curve of `scores` (larger = more likely positive):
// P(score of a random positive > score of a random negative) + 1/2 P(equal),
// i.e. the Mann-Whitney U statistic with average ranks for ties.
// InvalidArgument when the sizes differ or either class is empty.
Result<double> RocAuc(std::span<const double> scores, const std::vector<bool>& labels);

// ------------------------------------------------------------- length bands

// The length bands of the synthetic-edit figures: documents of < 300,
// 300-799 and >= 800 characters (code points of the original text). A
// variant-original pair is in its original's band, any other pair in its
// shorter document's.
inline constexpr size_t kLengthBands = 3;
inline constexpr std::array<size_t, kLengthBands - 1> kLengthBandBounds = {300, 800};
// The band of a document of `chars` code points, 0..kLengthBands-1.
size_t LengthBand(size_t chars);
// "< 300", "300-800", ">= 800".
std::string LengthBandName(size_t band);

// ------------------------------------------------------------ the dedup job

// What RunEvalDedupJob found: every pair the job reported (verified, within
// k), its per-document result, the k it ran at and its time.
struct EvalDedupRun {
  std::vector<DedupPair> pairs;
  DedupResult result;
  int k = 0;
  bool minhash = false;
  double seconds = 0;  // boilerplate pass, fingerprints, join
};

// The library's DedupJob (what `neardup dedup` runs: boilerplate pass,
// fingerprints, verification sketches, join, cluster rule) over `texts` in
// memory, document i being texts[i]. The evaluations run every dedup
// through it, so that they measure what the command line does.
Result<EvalDedupRun> RunEvalDedupJob(const std::vector<std::string>& texts,
                                     DedupJobOptions options);

// ------------------------------------------------------------------ harness

struct EvalDocument {
  std::string id;
  std::string text;
};

struct LabelledPair {
  std::string a;
  std::string b;
  bool positive = false;
};

// Reads a TSV with a header naming sentence1, sentence2 and label columns
// (PAWS-X: id, sentence1, sentence2, label). A file without such a header
// (LCQMC) is read as sentence1, sentence2, label. Label 1 = positive.
Result<std::vector<LabelledPair>> ReadLabelledPairs(const std::string& path);

// The method names EvaluateDocs/EvaluatePairs accept: "exact", "minhash" and
// every preset of Presets(). `spec` is "all" or a comma-separated list.
Result<std::vector<std::string>> ParseEvalMethods(std::string_view spec);

// An extra SimHash method for ablations: a name and its pipeline (the bits are
// overridden by each requested width).
struct CustomMethod {
  std::string name;
  PipelineOptions pipeline;
};

// "NAME=METHOD" with a method's text form (method.h), e.g.
// "c4=chargram,features=chars:4"; or the short form "NAME=FEATURES/WEIGHTS/TOPK",
// e.g. "c4=chars:4/tf/0" or "w10=words/tfidf/10": the tfidf preset with
// those three replaced (features as --features, TOPK 0 = all).
Result<CustomMethod> ParseCustomMethod(std::string_view spec);

struct DocsEvalOptions {
  size_t min_chars = 0;  // documents shorter (code points) are left out
  std::vector<double> edits = {0.05, 0.10, 0.15, 0.20};
  double share = 0.75;               // of the documents that get a variant
  std::vector<std::string> methods;  // empty: all (none when only dedup_methods)
  std::vector<CustomMethod> custom;  // run after `methods`
  std::vector<int> bits = {64, 128};
  uint64_t seed = 1;
  int threads = 0;  // 0: all cores
  std::vector<double> jaccard_thresholds = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  double natural_jaccard = 0.5;  // exact 5-gram Jaccard of natural duplicates
  int natural_shingle = 5;       // character n-gram length of that Jaccard
  // Non-empty: write originals.jsonl, variants_T<pct>.jsonl and labels there.
  std::string dataset_dir;
  // Method texts (method.h, e.g. "chars5u", "chars5u,k=32") each run through
  // the dedup job (RunEvalDedupJob) over originals + variants as `neardup
  // dedup` runs it with `dedup_job`'s options (verification, short rules,
  // boilerplate, ...; its method is replaced by each text's, its threads by
  // `threads`): one DocsEvalReport::dedup_rows entry per text and edit ratio,
  // scored on the pairs the job reports.
  std::vector<std::string> dedup_methods;
  DedupJobOptions dedup_job = DefaultEvalDedupJob();
  static DedupJobOptions DefaultEvalDedupJob() {
    DedupJobOptions o;
    o.join = DedupJoin::kExact;  // every pair within k, as the scans
    return o;
  }
};

// One row of results.csv. bits 0, threshold/edit/dedup_rate NaN: not applicable.
struct EvalRow {
  std::string method;
  int bits = 0;
  double threshold = 0;
  double edit = 0;
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  double dedup_rate = 0;
  double docs_per_s = 0;
  // Not in results.csv: counts behind the ratios.
  PairCounts counts;
  // The same counts by length band (LengthBand; bands.csv and report.md).
  std::array<PairCounts, kLengthBands> bands{};
  std::array<uint64_t, kLengthBands> band_variants{};  // variants per band
  uint64_t natural_found = 0;  // natural-group pairs predicted (excluded above)
  uint64_t natural_total = 0;  // natural-group pairs in the dataset
};

// Distance histograms of one method at one width and edit ratio (SimHash only):
// duplicate[d] = variant-original pairs at distance d, other[d] = pairs of
// documents in different groups at distance d, d = 0..bits.
struct DistanceHistogram {
  std::string method;
  int bits = 0;
  double edit = 0;
  std::vector<uint64_t> duplicate;
  std::vector<uint64_t> other;
};

struct DocsEvalReport {
  DocsEvalOptions options;
  size_t corpus_documents = 0;  // before the length filter
  size_t originals = 0;
  size_t variants = 0;                                             // per edit ratio
  std::vector<std::pair<std::string, std::string>> natural_pairs;  // ids
  std::vector<std::pair<double, double>> achieved_edit;            // (target, mean achieved)
  std::vector<EvalRow> rows;
  // DocsEvalOptions::dedup_methods: method = the text, bits, threshold = the
  // job's k, edit; counts and bands from the pairs the job reported.
  std::vector<EvalRow> dedup_rows;
  std::array<size_t, kLengthBands> band_originals{};  // originals per band
  std::vector<DistanceHistogram> histograms;
};

Result<DocsEvalReport> EvaluateDocs(const std::vector<EvalDocument>& corpus,
                                    const DocsEvalOptions& options);

struct PairsEvalOptions {
  std::vector<std::string> methods;  // empty: all
  std::vector<CustomMethod> custom;
  std::vector<int> bits = {64, 128};
  int threads = 0;
  std::vector<double> jaccard_thresholds = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
};

struct PairsEvalMethod {
  std::string method;
  int bits = 0;
  double auc = 0;
  std::vector<EvalRow> rows;            // one per threshold
  std::vector<uint64_t> positive_hist;  // SimHash: distances of positive pairs
  std::vector<uint64_t> negative_hist;
};

struct PairsEvalReport {
  std::string source;
  size_t pairs = 0;
  size_t positives = 0;
  std::vector<PairsEvalMethod> methods;
};

Result<PairsEvalReport> EvaluatePairs(const std::vector<LabelledPair>& pairs,
                                      const PairsEvalOptions& options);

// ------------------------------------------------------- natural duplicates

// The character n-gram set of a text as the evaluation compares documents:
// normalized (NFKC + case folding, then `t2s` when not empty, e.g. "tw2sp2"
// as --t2s; white space runs collapsed to one space and the ends trimmed),
// the sorted distinct 64-bit hashes (XXH3) of its n-grams of code points,
// over every character: letters, digits, punctuation and spaces alike (until
// 2026-11-26 only letters and digits, the `chars:n` features, so that two
// tables differing only in their numbers' punctuation looked identical). A
// non-empty text shorter than n is one n-gram.
class ShingleSets {
 public:
  // InvalidArgument unless 1 <= n <= 16 or when `t2s` is unknown to OpenCC.
  static Result<ShingleSets> Create(int n, const std::string& t2s = "");
  std::vector<uint64_t> Of(std::string_view text) const;
  // Of() of every text on `threads` threads.
  std::vector<std::vector<uint64_t>> OfAll(const std::vector<std::string>& texts,
                                           int threads) const;

 private:
  int n_ = 5;
  std::shared_ptr<const Normalizer> normalizer_;
};

// JaccardPair and JaccardJoin (the exact prefix-filter join) are in dedup.h.

// The natural-duplicates evaluation: a real corpus without synthetic edits,
// exact Jaccard as the truth, and what each method's dedup reports.
struct NaturalEvalOptions {
  // Method text forms (method.h), each run as `neardup dedup` would run it:
  // SimHash at the method's k (e.g. "chars5", "chars5,k=28"), or "minhash...".
  // Empty: the default method.
  std::vector<std::string> methods;
  int shingle = 5;  // character n-grams of the Jaccard
  // Traditional -> Simplified conversion (NormalizeOptions::t2s, "tw2sp2" for
  // --t2s) of the truth's text, and of every method that names none, so that
  // the truth is computed on the text the methods see. "" : none.
  std::string t2s;
  double truth_jaccard = 0.8;    // a true pair: Jaccard >= this
  double natural_jaccard = 0.5;  // reported pairs in [this, truth): "near", neither true nor false
  double floor_jaccard = 0.3;    // reported pairs below this are counted on their own
  // Boilerplate removal before fingerprinting, as dedup's default (lines in
  // >= 5 documents left out); off: every line.
  BoilerplateOptions boilerplate{BoilerplateMode::kLines, 5};
  ClusterRule cluster_rule = DedupOptions{}.cluster_rule;  // dedup's default
  // Verified pairs (SimHash methods), as dedup's --verify-jaccard,
  // --verify-short-features, --verify-short-jaccard; verify_jaccard 0: off.
  double verify_jaccard = DedupOptions{}.verify_jaccard;
  size_t verify_short_features = DedupOptions{}.verify_short_features;
  double verify_short_jaccard = DedupOptions{}.verify_short_jaccard;
  // The short-document rule (SimHash methods), as dedup's --short-features,
  // --short-jaccard, --short-rule; 0: off; nullopt: the job's default
  // (ResolveShortRule, per method).
  std::optional<size_t> short_features = DedupJobOptions{}.short_features;
  std::optional<double> short_jaccard = DedupJobOptions{}.short_jaccard;
  std::optional<ShortRule> short_rule = DedupJobOptions{}.short_rule;
  int threads = 0;
};

struct NaturalEvalRow {
  std::string method;  // as given
  ClusterRule cluster_rule = DedupOptions{}.cluster_rule;
  uint64_t reported = 0;  // pairs within the method's threshold
  PairCounts counts;      // true: Jaccard >= truth; false: < natural
  uint64_t near = 0;      // reported with natural <= Jaccard < truth
  uint64_t below_floor = 0;
  double min_jaccard = 1;  // of the reported pairs (1 when none)
  double precision = 0, recall = 0, f1 = 0;
  // The same recall with every reported pair below truth_jaccard counted
  // false (strict), and with only those below floor_jaccard counted false.
  double precision_strict = 0, f1_strict = 0;
  double precision_floor = 0, f1_floor = 0;
  // Clusters of two or more: how many, the largest, and purity: the share
  // of their duplicates whose exact Jaccard with the cluster's kept document
  // is >= natural_jaccard.
  size_t clusters = 0;
  size_t largest_cluster = 0;
  double purity = 1;
  double seconds = 0;  // fingerprints + dedup
};

struct NaturalEvalReport {
  NaturalEvalOptions options;
  size_t documents = 0;
  uint64_t truth_pairs = 0;    // Jaccard >= truth_jaccard
  uint64_t natural_pairs = 0;  // Jaccard >= natural_jaccard
  // The largest cluster of the truth itself: the centre rule (documents in
  // input order, each one not yet in a cluster takes every unclustered
  // document with exact Jaccard >= truth_jaccard) over the true pairs; 1
  // when there is none. What a row's largest_cluster is to be read against:
  // the same order as --keep first, so a larger one puts in a cluster what
  // is not a true near-duplicate of its kept document.
  size_t truth_largest_cluster = 1;
  std::vector<NaturalEvalRow> rows;
  // The worst reported pairs of each row (lowest Jaccard, up to 5): row
  // index, ids, Jaccard, and what the method measured: the Hamming distance
  // (SimHash) or its Jaccard (MinHash; distance -1).
  struct Example {
    size_t row = 0;
    std::string a, b;
    double jaccard = 0;
    int distance = 0;
    double method_jaccard = 0;
  };
  std::vector<Example> worst;
};

Result<NaturalEvalReport> EvaluateNatural(const std::vector<EvalDocument>& corpus,
                                          const NaturalEvalOptions& options);

// What a report writer wrote. Paths are relative to `dir`.
struct ReportFiles {
  std::string dir;
  std::string report = "report.md";
  std::string results = "results.csv";
  std::string bands;              // bands.csv (WriteDocsReport): every row by length band
  std::vector<std::string> data;  // plot data (data/*.dat)
  // gnuplot scripts (plots.gp); each is meant to be run in `dir`, where it
  // reads `data` and writes `plots`. Empty when there is nothing to plot.
  std::vector<std::string> plot_scripts;
  std::vector<std::string> plots;  // the PNG files the scripts draw
};

// Write report.md, results.csv, the plot data and a gnuplot script into `dir`
// (created if missing) and say which files they wrote. They run no process:
// drawing the PNGs (`gnuplot plots.gp` in `dir`) is the caller's; the CLI does
// it when gnuplot is installed. report.md ends with its "Plots" section, which
// lists the plots the scripts draw, so that AppendReportNote can add there why
// they are missing.
Result<ReportFiles> WriteDocsReport(const DocsEvalReport& report, const std::string& dir);
Result<ReportFiles> WritePairsReport(const PairsEvalReport& report, const std::string& dir);
// report.md (one table row per method) and results.csv of EvaluateNatural.
Result<ReportFiles> WriteNaturalReport(const NaturalEvalReport& report, const std::string& dir);

// Appends `note` (Markdown; a newline is added when it has none) to the end of
// `files`' report.md.
Status AppendReportNote(const ReportFiles& files, std::string_view note);

// The header of results.csv.
inline constexpr std::string_view kResultsCsvHeader =
    "method,bits,threshold,edit,precision,recall,f1,dedup_rate,docs_per_s";
// The header of bands.csv (WriteDocsReport): source is "dedup" (a
// DocsEvalReport::dedup_rows row) or "scan"; variants: of originals in the band.
inline constexpr std::string_view kBandsCsvHeader =
    "source,method,bits,threshold,edit,band,variants,tp,fp,fn,precision,recall,f1";

}  // namespace neardup

#endif  // NEARDUP_EVAL_H_
