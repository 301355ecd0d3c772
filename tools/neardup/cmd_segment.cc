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
  auto normalize = MakeNormalizeOptions(flags.pipeline);
  if (!normalize.ok()) return Fail(normalize.status());
  auto normalizer = Normalizer::Create(*normalize);
  if (!normalizer.ok()) return Fail(normalizer.status());
  auto segmenter = Segmenter::Open(*MakeSegmenterOptions(flags.pipeline));
  if (!segmenter.ok()) return Fail(segmenter.status());
  auto out = Output::Open(flags.input.output);
  if (!out.ok()) return Fail(out.status());

  const bool normalize_text =
      normalize->nfkc_casefold || !normalize->t2s.empty() || normalize->collapse_whitespace;
  const auto process = [&](const Document& doc) {
    const std::string normalized = normalize_text ? (*normalizer)->Normalize(doc.text) : "";
    const std::string_view text = normalize_text ? normalized : doc.text;
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
    nlohmann::ordered_json line = {{"id", doc.id}, {"tokens", std::move(tokens)}};
    return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  };
  const auto emit = [&](const Document&, std::string& line) { (*out)->Write(line); };
  auto stats = ForEachDocument(flags.input, *read_options, process, emit);
  if (!stats.ok()) return Fail(stats.status());
  const Status closed = (*out)->Close();
  if (!closed.ok()) return Fail(closed);
  return InputExitCode(flags.input, *stats);
}

}  // namespace

void AddSegmentCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<SegmentFlags>();
  CLI::App* cmd = app.add_subcommand(
      "segment",
      "Segment text into words exactly as jieba.lcut(text) does; one JSON line per document: "
      "{\"id\": ..., \"tokens\": [...]}. No normalization unless --normalize asks for it.");
  AddInputOptions(cmd, &flags->input);
  AddPipelineOptions(cmd, &flags->pipeline, "none", false);
  cmd->add_flag("--pos", flags->pos, "Emit [word, tag] pairs with the dictionary's POS tags");
  cmd->callback([flags, exit_code] { exit_code->value = RunSegment(*flags); });
}

}  // namespace neardup::cli
