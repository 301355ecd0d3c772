// Copyright 2026 The neardup Authors.
//
// neardup eval docs | pairs | natural: the evaluation harness (SPEC section 10).

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>

#include "common.h"
#include "neardup/eval.h"
#include "neardup/parallel.h"

namespace neardup::cli {
namespace {

struct EvalFlags {
  std::string corpus;
  std::string pairs_file;
  size_t min_chars = 0;
  std::string edits = "5,10,15,20";
  double share = 0.75;
  std::string methods = "all";
  std::vector<std::string> custom;
  std::string bits = "64,128";
  uint64_t seed = 1;
  int threads = 0;
  std::string report;
  std::string write_dataset;
  bool no_plots = false;
  bool quiet = false;
  // eval natural
  std::vector<std::string> method_specs;
  std::string cluster = ClusterRuleName(DedupOptions{}.cluster_rule);
  bool t2s = false;
  std::string boilerplate = "lines";
  double truth_jaccard = 0.8;
  double natural_jaccard = 0.5;
  double verify_jaccard = DedupOptions{}.verify_jaccard;
  size_t verify_short_features = DedupOptions{}.verify_short_features;
  double verify_short_jaccard = DedupOptions{}.verify_short_jaccard;
  // eval docs: methods run through the dedup job
  std::vector<std::string> dedup_specs;
  std::string short_features = "auto";               // as dedup's: auto | a number
  double short_jaccard = kDefaultGivenShortJaccard;  // passed on only when given
  bool short_jaccard_given = false;
  std::string short_rule = "auto";
};

template <typename T>
Result<std::vector<T>> ParseList(const std::string& spec, const char* what) {
  std::vector<T> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    std::istringstream is(item);
    T v{};
    if (!(is >> v) || !is.eof()) {
      return Status::InvalidArgument(std::string("bad ") + what + " '" + item + "'");
    }
    out.push_back(v);
  }
  if (out.empty()) return Status::InvalidArgument(std::string("no ") + what + " given");
  return out;
}

enum class GnuplotRun { kDone, kMissing, kFailed };

// Runs `gnuplot SCRIPT` with `dir` as working directory and its output
// discarded; no shell, so names need no quoting. kMissing: no gnuplot on PATH.
GnuplotRun RunGnuplot(const std::string& dir, const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string program = "gnuplot";
  std::string argument = script;
  char* argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == ENOENT) return GnuplotRun::kMissing;
  if (spawned != 0) return GnuplotRun::kFailed;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return GnuplotRun::kFailed;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? GnuplotRun::kDone : GnuplotRun::kFailed;
}

// Draws the report's plots: runs gnuplot on each script the library wrote, in
// the report's directory. When plots were not requested, gnuplot is not
// installed or fails, says so at the end of report.md (the tables and
// results.csv hold every number) and, unless quiet, on stderr.
Status DrawPlots(const ReportFiles& files, bool requested, bool quiet) {
  if (files.plot_scripts.empty()) return Status::OK();
  std::string note;
  if (!requested) {
    note = "Plots were not requested; `gnuplot plots.gp` in this directory draws them.\n";
  } else {
    for (const std::string& script : files.plot_scripts) {
      const GnuplotRun run = RunGnuplot(files.dir, script);
      if (run == GnuplotRun::kMissing) {
        note =
            "gnuplot is not installed (Debian package `gnuplot-nox`), so this report has no "
            "plots; the tables above and results.csv hold every number.\n";
        break;
      }
      if (run == GnuplotRun::kFailed) {
        note = "gnuplot failed on " + script + "; no plots.\n";
        break;
      }
    }
  }
  if (note.empty()) return Status::OK();
  if (requested && !quiet) std::fprintf(stderr, "neardup: %s", note.c_str());
  return AppendReportNote(files, note);
}

// --bits, --methods and --custom, shared by `eval docs` and `eval pairs`.
template <typename Options>
Status ParseMethodFlags(const EvalFlags& flags, Options* options) {
  auto bits = ParseList<int>(flags.bits, "--bits");
  if (!bits.ok()) return bits.status();
  options->bits = *bits;
  if (flags.methods != "none") {
    auto methods = ParseEvalMethods(flags.methods);
    if (!methods.ok()) return methods.status();
    options->methods = *methods;
  }
  for (const std::string& spec : flags.custom) {
    auto custom = ParseCustomMethod(spec);
    if (!custom.ok()) return custom.status();
    options->custom.push_back(*custom);
  }
  if (options->methods.empty() && options->custom.empty() && flags.dedup_specs.empty()) {
    return Status::InvalidArgument("--methods none needs at least one --custom or --dedup");
  }
  return Status::OK();
}

// The documents {id, text} of a JSONL corpus; issues on stderr.
Result<std::vector<EvalDocument>> ReadCorpus(const std::string& path) {
  ReadOptions read;
  read.format = InputFormat::kJsonl;
  read.on_issue = [](const InputIssue& issue) {
    std::fprintf(stderr, "neardup: %s\n", issue.ToString().c_str());
  };
  NEARDUP_ASSIGN_OR_RETURN(auto reader, DocumentReader::Open({path}, read));
  std::vector<EvalDocument> corpus;
  Document doc;
  while (reader->Next(&doc)) corpus.push_back({doc.id, doc.text});
  if (reader->stats().documents == 0) {
    return Status::InvalidArgument("no documents read from " + path);
  }
  return corpus;
}

int RunNatural(const EvalFlags& flags) {
  NaturalEvalOptions options;
  options.methods = flags.method_specs;
  options.truth_jaccard = flags.truth_jaccard;
  options.natural_jaccard = flags.natural_jaccard;
  options.verify_jaccard = flags.verify_jaccard;
  options.verify_short_features = flags.verify_short_features;
  options.verify_short_jaccard = flags.verify_short_jaccard;
  auto short_features = ParseShortFeatures(flags.short_features);
  if (!short_features.ok()) return Fail(short_features.status());
  options.short_features = *short_features;
  if (flags.short_jaccard_given) options.short_jaccard = flags.short_jaccard;
  auto short_rule = ParseShortRuleOption(flags.short_rule);
  if (!short_rule.ok()) return Fail(short_rule.status());
  options.short_rule = *short_rule;
  if (flags.t2s) options.t2s = kT2sFlagConversion;
  options.threads = ResolveThreadCount(flags.threads);
  auto mode = ParseBoilerplateMode(flags.boilerplate);
  if (!mode.ok()) return Fail(mode.status());
  options.boilerplate.mode = *mode;
  std::vector<ClusterRule> rules;
  if (flags.cluster == "both") {
    rules = {ClusterRule::kComponents, ClusterRule::kCenter};
  } else {
    auto rule = ParseClusterRule(flags.cluster);
    if (!rule.ok()) return Fail(rule.status());
    rules = {*rule};
  }
  auto corpus = ReadCorpus(flags.corpus);
  if (!corpus.ok()) return Fail(corpus.status());
  NaturalEvalReport all;
  for (ClusterRule rule : rules) {
    options.cluster_rule = rule;
    auto report = EvaluateNatural(*corpus, options);
    if (!report.ok()) return Fail(report.status());
    for (auto& w : report->worst) w.row += all.rows.size();
    if (all.rows.empty()) {
      all = std::move(*report);
    } else {
      all.rows.insert(all.rows.end(), report->rows.begin(), report->rows.end());
      all.worst.insert(all.worst.end(), report->worst.begin(), report->worst.end());
    }
  }
  auto files = WriteNaturalReport(all, flags.report);
  if (!files.ok()) return Fail(files.status());
  if (!flags.quiet) {
    std::fprintf(stderr,
                 "neardup: %zu documents, %llu true pairs (Jaccard >= %g), %zu result rows; "
                 "report in %s\n",
                 all.documents, static_cast<unsigned long long>(all.truth_pairs),
                 options.truth_jaccard, all.rows.size(), flags.report.c_str());
  }
  return kExitOk;
}

int RunDocs(const EvalFlags& flags) {
  DocsEvalOptions options;
  auto edits = ParseList<double>(flags.edits, "--edits");
  if (!edits.ok()) return Fail(edits.status());
  options.edits.clear();
  for (double e : *edits) options.edits.push_back(e / 100.0);
  NEARDUP_RETURN_IF_ERROR_CLI(ParseMethodFlags(flags, &options));
  options.min_chars = flags.min_chars;
  options.share = flags.share;
  options.seed = flags.seed;
  options.threads = ResolveThreadCount(flags.threads);
  options.dataset_dir = flags.write_dataset;
  options.dedup_methods = flags.dedup_specs;
  DedupJobOptions& job = options.dedup_job;
  auto mode = ParseBoilerplateMode(flags.boilerplate);
  if (!mode.ok()) return Fail(mode.status());
  job.boilerplate = *mode;
  auto rule = ParseClusterRule(flags.cluster);
  if (!rule.ok()) return Fail(rule.status());
  job.cluster_rule = *rule;
  job.verify_jaccard = flags.verify_jaccard;
  job.verify_short_features = flags.verify_short_features;
  job.verify_short_jaccard = flags.verify_short_jaccard;
  auto short_features = ParseShortFeatures(flags.short_features);
  if (!short_features.ok()) return Fail(short_features.status());
  job.short_features = *short_features;
  if (flags.short_jaccard_given) job.short_jaccard = flags.short_jaccard;
  auto short_rule = ParseShortRuleOption(flags.short_rule);
  if (!short_rule.ok()) return Fail(short_rule.status());
  job.short_rule = *short_rule;

  auto corpus = ReadCorpus(flags.corpus);
  if (!corpus.ok()) return Fail(corpus.status());
  auto report = EvaluateDocs(*corpus, options);
  if (!report.ok()) return Fail(report.status());
  auto files = WriteDocsReport(*report, flags.report);
  if (!files.ok()) return Fail(files.status());
  NEARDUP_RETURN_IF_ERROR_CLI(DrawPlots(*files, !flags.no_plots, flags.quiet));
  if (!flags.quiet) {
    std::fprintf(stderr,
                 "neardup: %zu originals, %zu variants per edit ratio, %zu result rows; report "
                 "in %s\n",
                 report->originals, report->variants, report->rows.size(), flags.report.c_str());
  }
  return kExitOk;
}

int RunPairs(const EvalFlags& flags) {
  PairsEvalOptions options;
  NEARDUP_RETURN_IF_ERROR_CLI(ParseMethodFlags(flags, &options));
  options.threads = ResolveThreadCount(flags.threads);
  auto pairs = ReadLabelledPairs(flags.pairs_file);
  if (!pairs.ok()) return Fail(pairs.status());
  auto report = EvaluatePairs(*pairs, options);
  if (!report.ok()) return Fail(report.status());
  report->source = flags.pairs_file;
  auto files = WritePairsReport(*report, flags.report);
  if (!files.ok()) return Fail(files.status());
  NEARDUP_RETURN_IF_ERROR_CLI(DrawPlots(*files, !flags.no_plots, flags.quiet));
  if (!flags.quiet) {
    std::fprintf(stderr, "neardup: %zu pairs (%zu positive), %zu methods; report in %s\n",
                 report->pairs, report->positives, report->methods.size(), flags.report.c_str());
  }
  return kExitOk;
}

// How the dedup job runs (eval docs --dedup, eval natural): boilerplate,
// cluster rule and verification, with dedup's defaults.
void AddJobOptions(CLI::App* cmd, EvalFlags* flags) {
  cmd->add_option("--cluster", flags->cluster, "components | center (eval natural: or both)")
      ->capture_default_str();
  cmd->add_option("--boilerplate", flags->boilerplate,
                  "lines (dedup's default: lines in >= 5 documents not fingerprinted) | off")
      ->capture_default_str();
  cmd->add_option("--verify-jaccard", flags->verify_jaccard,
                  "Verified pairs, as dedup's --verify-jaccard (0: off)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--verify-short-features", flags->verify_short_features,
                  "As dedup's --verify-short-features")
      ->capture_default_str();
  cmd->add_option("--verify-short-jaccard", flags->verify_short_jaccard,
                  "As dedup's --verify-short-jaccard")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--short-features", flags->short_features,
                  "As dedup's --short-features (auto: the job's default for each method)")
      ->capture_default_str();
  cmd->add_option("--short-jaccard", flags->short_jaccard, "As dedup's --short-jaccard")
      ->check(CLI::Range(0.0, 1.0))
      ->each([flags](const std::string&) { flags->short_jaccard_given = true; })
      ->capture_default_str();
  cmd->add_option("--short-rule", flags->short_rule, "As dedup's --short-rule")
      ->check(CLI::IsMember({"auto", "exact", "sketch"}))
      ->capture_default_str();
}

void AddCommon(CLI::App* cmd, EvalFlags* flags) {
  cmd->add_option("--methods", flags->methods,
                  "all, none, or a comma-separated list of exact, minhash and presets")
      ->capture_default_str();
  cmd->add_option(
      "--custom", flags->custom,
      "An extra SimHash method NAME=METHOD (a method text, e.g. "
      "c4=chargram,features=chars:4) or NAME=FEATURES/WEIGHTS/TOPK (e.g. c4=chars:4/tf/0); "
      "repeatable");
  cmd->add_option("--bits", flags->bits, "SimHash widths, comma-separated (64, 128)")
      ->capture_default_str();
  AddThreadsOption(cmd, &flags->threads);
  cmd->add_option("--report", flags->report, "Directory for report.md, results.csv and plots")
      ->required();
  cmd->add_flag("--no-plots", flags->no_plots, "Do not run gnuplot");
  cmd->add_flag("-q,--quiet", flags->quiet, "No summary line");
}

}  // namespace

void AddEvalCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Evaluate the methods: perturbed copies of a corpus (docs) or labelled pairs (pairs)");
  cmd->require_subcommand(1);

  CLI::App* docs = cmd->add_subcommand(
      "docs",
      "Perturb a share of a JSONL corpus at each edit ratio and measure pair precision, recall, "
      "F1, dedup rate and throughput of every method at every threshold");
  docs->add_option("--corpus", flags->corpus, "JSONL corpus {id, text}")->required();
  docs->add_option("--min-chars", flags->min_chars,
                   "Leave out documents shorter than this many characters")
      ->capture_default_str();
  docs->add_option("--edits", flags->edits, "Edit ratios in percent, comma-separated")
      ->capture_default_str();
  docs->add_option("--share", flags->share, "Share of the documents that get a variant")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  docs->add_option("--seed", flags->seed, "Seed of the perturbation")->capture_default_str();
  docs->add_option("--write-dataset", flags->write_dataset,
                   "Write originals, variants and labels (JSONL/CSV) into this directory");
  docs->add_option("--dedup", flags->dedup_specs,
                   "A method text run through the dedup job over originals + variants as "
                   "`neardup dedup` runs it (e.g. chars5u, chars5u,k=32): P/R/F1 of the pairs "
                   "it reports, in all and by length band; repeatable (--methods none: only "
                   "these)");
  AddJobOptions(docs, flags.get());
  AddCommon(docs, flags.get());
  docs->callback([flags, exit_code] { exit_code->value = RunDocs(*flags); });

  CLI::App* pairs = cmd->add_subcommand(
      "pairs",
      "Score labelled sentence pairs (TSV: sentence1, sentence2, label) by distance: precision "
      "and recall at each threshold and ROC AUC per method");
  pairs->add_option("FILE", flags->pairs_file, "TSV of labelled pairs")->required();
  AddCommon(pairs, flags.get());
  pairs->callback([flags, exit_code] { exit_code->value = RunPairs(*flags); });

  CLI::App* natural = cmd->add_subcommand(
      "natural",
      "Natural duplicates of a JSONL corpus (no synthetic edits): exact character 5-gram "
      "Jaccard of every pair is the truth; each method's dedup pairs are scored (precision, "
      "recall, F1, pairs below Jaccard 0.3, cluster purity, largest cluster)");
  natural->add_option("--corpus", flags->corpus, "JSONL corpus {id, text}")->required();
  natural->add_option("--method", flags->method_specs,
                      "A method text as dedup's --method, run at its k (e.g. chars5, "
                      "chars5,k=28, minhash); repeatable; default: the default method");
  AddJobOptions(natural, flags.get());
  natural->add_flag("--t2s", flags->t2s,
                    "Traditional -> Simplified (tw2sp2, as dedup --t2s) for the truth's text and "
                    "every method that names no conversion");
  natural->add_option("--truth", flags->truth_jaccard, "A true pair: Jaccard >= this")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  natural
      ->add_option("--natural", flags->natural_jaccard,
                   "Reported pairs with Jaccard in [this, --truth) count as neither true nor "
                   "false")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  AddThreadsOption(natural, &flags->threads);
  natural->add_option("--report", flags->report, "Directory for report.md and results.csv")
      ->required();
  natural->add_flag("-q,--quiet", flags->quiet, "No summary line");
  natural->callback([flags, exit_code] { exit_code->value = RunNatural(*flags); });
}

}  // namespace neardup::cli
