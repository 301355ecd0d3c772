// Copyright 2026 The neardup Authors.
//
// The counting pass of boilerplate removal for the index commands (dedup's
// is the library's, neardup/dedup_job.h): reads the input once to count lines (boilerplate.h), then
// lets the fingerprint pass strip what is frequent. Files are read again by
// the fingerprint pass; documents from standard input, which cannot be read
// twice, are held in memory by the counting pass and replayed.

#ifndef NEARDUP_TOOLS_NEARDUP_BOILERPLATE_PASS_H_
#define NEARDUP_TOOLS_NEARDUP_BOILERPLATE_PASS_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "neardup/boilerplate.h"
#include "util/thread_pool.h"

namespace neardup::cli {

struct BoilerplateFlags {
  std::string mode;       // "": the method's; else off | lines
  int min_docs = 0;       // 0: the method's
  std::string stats_out;  // write the line statistics here
};

// Registers --boilerplate, --boilerplate-min-docs and --boilerplate-stats-out.
void AddBoilerplateOptions(CLI::App* cmd, BoilerplateFlags* flags);

class BoilerplatePass {
 public:
  // The method's boilerplate settings (from --method, before
  // ResolvePipelineFlags; lines when it names none) overridden by the flags.
  static Result<BoilerplateOptions> Options(const BoilerplateFlags& flags,
                                            const PipelineFlags& pipeline);

  // Counts the lines of every input document when options.mode is not off.
  // Lines are keyed after `normalize` when it converts Traditional to
  // Simplified Chinese (boilerplate.h), else raw.
  Status Count(const InputFlags& input, const ReadOptions& read_options,
               const BoilerplateOptions& options, const NormalizeOptions& normalize = {});

  // The line statistics of a whole corpus, counted elsewhere (an index's
  // INDEX.lines), used in place of Count().
  Status Use(LineStats stats, const BoilerplateOptions& options,
             const NormalizeOptions& normalize = {});

  bool on() const { return filter_ != nullptr; }
  // The text to fingerprint: `text` without its boilerplate lines.
  std::string Strip(const std::string& text) const;

  // The fingerprint pass: like ForEachDocumentAs, over the held documents
  // when standard input was read, else over the input again.
  template <typename T>
  Result<InputStats> ForEach(const InputFlags& input, const ReadOptions& read_options,
                             const std::function<T(const Document&)>& process,
                             const std::function<void(const Document&, T&)>& emit) {
    if (!held_) return ForEachDocumentAs<T>(input, read_options, process, emit);
    std::vector<T> results(documents_.size());
    ParallelFor(documents_.size(), input.threads,
                [&](size_t i, int) { results[i] = process(documents_[i]); });
    for (size_t i = 0; i < documents_.size(); ++i) emit(documents_[i], results[i]);
    PrintHeldSummary(input);
    return input_stats_;
  }

  size_t flagged_lines() const { return filter_ ? filter_->flagged_lines() : 0; }
  size_t dropped_lines() const { return dropped_.load(); }
  const LineStats& stats() const { return stats_; }
  // "; boilerplate: 12 lines in >= 5 of 200 documents, 2,000 occurrences left out", or "".
  std::string Summary() const { return Summary(dropped_lines()); }
  // The same with another count of left-out occurrences (the sum over the
  // processes of a distributed run).
  std::string Summary(size_t dropped) const;

 private:
  void PrintHeldSummary(const InputFlags& input) const;

  LineStats stats_;
  BoilerplateOptions options_;
  std::unique_ptr<Normalizer> normalizer_;  // null: raw line keys
  std::unique_ptr<BoilerplateFilter> filter_;
  bool held_ = false;
  std::vector<Document> documents_;  // when held_
  InputStats input_stats_;
  mutable std::atomic<size_t> dropped_{0};
};

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_BOILERPLATE_PASS_H_
