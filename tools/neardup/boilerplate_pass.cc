// Copyright 2026 The neardup Authors.

#include "boilerplate_pass.h"

#include <algorithm>
#include <iostream>

#include "util/thread_pool.h"

namespace neardup::cli {

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

Result<BoilerplateOptions> BoilerplatePass::Options(const BoilerplateFlags& flags,
                                                    const PipelineFlags& pipeline) {
  NEARDUP_ASSIGN_OR_RETURN(auto method, MakeMethod(pipeline));
  BoilerplateOptions options = method.pipeline.boilerplate;
  // The default: lines, unless --method names a boilerplate mode itself.
  if (flags.mode.empty() && pipeline.method.find("boilerplate=") == std::string::npos) {
    options.mode = BoilerplateMode::kLines;
  }
  if (!flags.mode.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(auto mode, ParseBoilerplateMode(flags.mode));
    options.mode = mode;
  }
  if (flags.min_docs > 0) options.min_docs = flags.min_docs;
  if (!flags.stats_out.empty() && options.mode == BoilerplateMode::kOff) {
    return Status::InvalidArgument("--boilerplate-stats-out needs --boilerplate lines");
  }
  return options;
}

Status BoilerplatePass::Count(const InputFlags& input, const ReadOptions& read_options,
                              const BoilerplateOptions& options,
                              const NormalizeOptions& normalize) {
  options_ = options;
  if (options.mode == BoilerplateMode::kOff) return Status::OK();
  if (!normalize.t2s.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(normalizer_, Normalizer::Create(normalize));
  }
  // No input named is standard input (DocumentReader::Open), which cannot be
  // read twice either.
  held_ = input.inputs.empty() ||
          std::find(input.inputs.begin(), input.inputs.end(), "-") != input.inputs.end();
  ReadOptions r = read_options;
  // Issues are reported by the pass that reads for good: this one only when
  // it holds the documents.
  if (held_) {
    r.on_issue = [](const InputIssue& issue) {
      if (issue.kind == InputIssue::Kind::kSkipped) return;
      PrintIssue(issue);
    };
  } else {
    r.on_issue = [](const InputIssue&) {};
  }
  NEARDUP_RETURN_IF_ERROR(CheckInputsAndOutputs(input.inputs, {}));
  NEARDUP_ASSIGN_OR_RETURN(auto reader, DocumentReader::Open(input.inputs, r));
  // The line keys on the pool (reading ahead), counted in input order: a
  // serial pass here was a third of dedup's time at one thread and kept two
  // threads below 1.5x one (doc/benchmarks.md, text core).
  LineCounter counter;
  ThreadPool pool(input.threads);
  ProgressLine progress(ProgressModeOf(input));
  const double total_bytes = progress.enabled() ? InputSizeEstimate(input.inputs) : 0;
  uint64_t done_docs = 0, done_bytes = 0;
  OrderedParallelMap<Document, std::vector<uint64_t>>(
      &pool, BatchLimits{.max_items = 512, .max_cost = size_t{8} << 20, .read_ahead = true},
      [&](Document* doc) { return reader->Next(doc); },
      [](const Document& doc) { return doc.text.size(); },
      [&](const Document& doc) { return DocumentLineKeys(doc.text, normalizer_.get()); },
      [&](Document& doc, std::vector<uint64_t>& keys) {
        counter.AddKeys(keys);
        done_bytes += doc.text.size();
        if (progress.enabled() && ++done_docs % 512 == 0) {
          progress.Update(
              "counting lines (boilerplate)", static_cast<double>(done_bytes) / 1e6,
              total_bytes > 0 ? std::max(total_bytes, static_cast<double>(done_bytes)) / 1e6 : 0,
              "MB");
        }
        if (held_) documents_.push_back(std::move(doc));
      });
  progress.Clear();
  input_stats_ = reader->stats();
  stats_ = std::move(counter).Finish();
  filter_ = std::make_unique<BoilerplateFilter>(stats_, options_, normalizer_.get());
  return Status::OK();
}

Status BoilerplatePass::Use(LineStats stats, const BoilerplateOptions& options,
                            const NormalizeOptions& normalize) {
  options_ = options;
  if (options.mode == BoilerplateMode::kOff) return Status::OK();
  if (!normalize.t2s.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(normalizer_, Normalizer::Create(normalize));
  }
  stats_ = std::move(stats);
  filter_ = std::make_unique<BoilerplateFilter>(stats_, options_, normalizer_.get());
  return Status::OK();
}

std::string BoilerplatePass::Strip(const std::string& text) const {
  size_t dropped = 0;
  std::string out = filter_->Strip(text, &dropped);
  dropped_.fetch_add(dropped, std::memory_order_relaxed);
  return out;
}

void BoilerplatePass::PrintHeldSummary(const InputFlags& input) const {
  if (!input.quiet) std::cerr << SummaryLine(input_stats_) << "\n";
}

std::string BoilerplatePass::Summary(size_t dropped) const {
  if (!on()) return "";
  return "; boilerplate: " + std::to_string(flagged_lines()) +
         " distinct lines in >= " + std::to_string(options_.min_docs) + " of " +
         std::to_string(stats_.documents()) + " documents, " + std::to_string(dropped) +
         " line occurrences left out";
}

}  // namespace neardup::cli
