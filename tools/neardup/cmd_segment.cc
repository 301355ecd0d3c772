// Copyright 2026 The neardup Authors.
//
// neardup segment: jieba-compatible word segmentation, one JSON line per document.

#include <nlohmann/json.hpp>

#include "common.h"

namespace neardup::cli {
namespace {

struct SegmentFlags {
  InputFlags input;
  PipelineFlags pipeline;
  bool pos = false;
};

int RunSegment(const SegmentFlags& flags) {
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return Fail(read_options.status());
  auto normalizer = MakeNormalizer(flags.pipeline);
  if (!normalizer.ok()) return Fail(normalizer.status());
  auto segmenter = Segmenter::Open(*MakeSegmenterOptions(flags.pipeline));
  if (!segmenter.ok()) return Fail(segmenter.status());

  const auto process = [&](const Document& doc) {
    const std::string normalized = *normalizer ? (*normalizer)->Normalize(doc.text) : "";
    const std::string_view text = *normalizer ? normalized : doc.text;
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    if (flags.pos) {
      std::vector<Token> words;
      (*segmenter)->CutWithPos(text, &words);
      for (const Token& t : words) tokens.push_back({std::string(t.word), std::string(t.pos)});
    } else {
      std::vector<std::string_view> words;
      (*segmenter)->Cut(text, &words);
      for (std::string_view w : words) tokens.push_back(std::string(w));
    }
    return JsonLine({{"id", doc.id}, {"tokens", std::move(tokens)}});
  };
  return WriteLinePerDocument(flags.input, *read_options, process);
}

}  // namespace

void AddSegmentCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<SegmentFlags>();
  CLI::App* cmd = app.add_subcommand(
      "segment",
      "Segment text into words exactly as jieba.lcut(text) does; one JSON line per document: "
      "{\"id\": ..., \"tokens\": [...]}. No normalization unless --normalize asks for it.");
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "none", false, /*with_idf=*/false);
  cmd->add_flag("--pos", flags->pos, "Emit [word, tag] pairs with the dictionary's POS tags");
  cmd->callback([flags, exit_code] { exit_code->value = RunSegment(*flags); });
}

}  // namespace neardup::cli
