// Copyright 2026 The neardup Authors.
//
// neardup idf build: trains an IDF table (jieba's idf.txt format) from a
// corpus with seed 003's or seed 000's formula (include/neardup/keywords.h).

#include <iostream>

#include "common.h"
#include "neardup/keywords.h"

namespace neardup::cli {
namespace {

struct IdfBuildFlags {
  InputFlags input;
  PipelineFlags pipeline;
  std::string formula = "seed003";
};

int RunIdfBuild(const IdfBuildFlags& flags) {
  auto formula = ParseIdfFormula(flags.formula);
  if (!formula.ok()) return Fail(formula.status());
  if (flags.input.output.empty() || flags.input.output == "-") {
    return Fail(Status::InvalidArgument("idf build needs -o FILE"));
  }
  NEARDUP_RETURN_IF_ERROR_CLI(CheckInputsAndOutputs(flags.input.inputs, {flags.input.output}));
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return Fail(read_options.status());
  auto normalize = MakeNormalizeOptions(flags.pipeline);
  if (!normalize.ok()) return Fail(normalize.status());
  auto normalizer = Normalizer::Create(*normalize);
  if (!normalizer.ok()) return Fail(normalizer.status());
  auto segmenter = Segmenter::Open(*MakeSegmenterOptions(flags.pipeline));
  if (!segmenter.ok()) return Fail(segmenter.status());

  IdfBuilder builder(segmenter->get());
  // Workers segment; the calling thread counts, in input order, so that the
  // table's word order does not depend on the thread count.
  const auto process = [&](const Document& doc) {
    const std::string text = (*normalizer)->Normalize(doc.text);
    std::vector<std::string_view> terms;
    DistinctTerms(**segmenter, text, &terms);
    std::string joined;
    for (std::string_view t : terms) {
      joined.append(t);
      joined.push_back('\n');
    }
    return joined;
  };
  std::vector<std::string_view> terms;
  const auto emit = [&](const Document&, std::string& joined) {
    terms.clear();
    size_t pos = 0;
    while (pos < joined.size()) {
      const size_t nl = joined.find('\n', pos);
      terms.push_back(std::string_view(joined).substr(pos, nl - pos));
      pos = nl + 1;
    }
    builder.AddTerms(terms);
  };
  auto stats = ForEachDocument(flags.input, *read_options, process, emit);
  if (!stats.ok()) return Fail(stats.status());
  if (builder.documents() == 0) return Fail(Status::InvalidArgument("idf build: no documents"));
  const IdfTable table = builder.Build(*formula);
  const Status saved = table.Save(flags.input.output);
  if (!saved.ok()) return Fail(saved);
  if (!flags.input.quiet) {
    std::cerr << "neardup: wrote " << table.size() << " words from " << builder.documents()
              << " documents (" << IdfFormulaName(*formula) << ") to " << flags.input.output
              << "\n";
  }
  return InputExitCode(flags.input, *stats);
}

}  // namespace

void AddIdfCommand(CLI::App& app, ExitCode* exit_code) {
  CLI::App* idf = app.add_subcommand("idf", "IDF tables");
  idf->require_subcommand(1);
  auto flags = std::make_shared<IdfBuildFlags>();
  CLI::App* cmd = idf->add_subcommand(
      "build",
      "Train an IDF table in jieba's idf.txt format from a corpus (use it with --idf). "
      "Terms: the jieba tokens extract_tags counts (>= 2 characters, not stop words) of the "
      "normalized text; df = documents containing the term; natural log.");
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "nfkc", false, /*with_idf=*/false);
  cmd->add_option("--formula", flags->formula,
                  "seed003: log(N / (df + 1)); seed000: log(N / df + 0.01)")
      ->capture_default_str();
  cmd->callback([flags, exit_code] { exit_code->value = RunIdfBuild(*flags); });
}

}  // namespace neardup::cli
