// Copyright 2026 The neardup Authors.
//
// neardup keywords: TF-IDF keywords, as jieba.analyse.extract_tags(text, topK, withWeight=True).

#include <nlohmann/json.hpp>

#include "common.h"
#include "neardup/keywords.h"

namespace neardup::cli {
namespace {

struct KeywordsFlags {
  InputFlags input;
  PipelineFlags pipeline;
  int top_k = 20;
};

int RunKeywords(const KeywordsFlags& flags) {
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return Fail(read_options.status());
  auto normalizer = MakeNormalizer(flags.pipeline);
  if (!normalizer.ok()) return Fail(normalizer.status());
  auto segmenter = Segmenter::Open(*MakeSegmenterOptions(flags.pipeline));
  if (!segmenter.ok()) return Fail(segmenter.status());
  auto idf = flags.pipeline.idf.empty() ? IdfTable::LoadDefault(flags.pipeline.jieba_dir)
                                        : IdfTable::Load(flags.pipeline.idf);
  if (!idf.ok()) return Fail(idf.status());
  const KeywordExtractor extractor(segmenter->get(), &*idf);

  const auto process = [&](const Document& doc) {
    const std::string text = *normalizer ? (*normalizer)->Normalize(doc.text) : doc.text;
    std::vector<Keyword> keywords;
    extractor.Extract(text, flags.top_k, &keywords);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Keyword& k : keywords) list.push_back({k.word, k.weight});
    return JsonLine({{"id", doc.id}, {"keywords", std::move(list)}});
  };
  return WriteLinePerDocument(flags.input, *read_options, process);
}

}  // namespace

void AddKeywordsCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<KeywordsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "keywords",
      "TF-IDF keywords exactly as jieba.analyse.extract_tags(text, topK, withWeight=True); one "
      "JSON line per document: {\"id\": ..., \"keywords\": [[word, weight], ...]}. No "
      "normalization unless --normalize asks for it.");
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "none", false);
  cmd->add_option("--topk", flags->top_k, "Number of keywords (0 = all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->callback([flags, exit_code] { exit_code->value = RunKeywords(*flags); });
}

}  // namespace neardup::cli
