// Copyright 2026 The neardup Authors.

#include "neardup/text_index.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "engine/read_pass.h"
#include "util/thread_pool.h"

namespace neardup {
namespace {

using Json = nlohmann::ordered_json;

// Where neardup before the line counts were committed with the index kept
// them: PATH.lines, written after the index's commit.
std::string LegacyLinesPath(const std::string& path) { return path + ".lines"; }

// The "pipeline" header: the method's text form and the width.
std::string PipelineHeader(const Method& method) {
  return Json{{"method", method.ToString()}, {"bits", method.pipeline.bits}}.dump();
}

// A header written before the method was stored names the command line's
// fingerprint options one by one (doc/index_format.md): the default preset
// with those overrides.
Result<Method> MethodOfSettings(const Json& h) {
  std::vector<std::pair<std::string, std::string>> more;
  std::string normalize = h.value("normalize", "nfkc");
  if (h.value("t2s", false) && normalize.find("t2s") == std::string::npos) normalize += ",t2s";
  more.emplace_back("normalize", normalize);
  if (const int bits = h.value("bits", 0); bits != 0)
    more.emplace_back("bits", std::to_string(bits));
  for (const char* key : {"features", "weights", "hash"}) {
    const std::string value = h.value(key, "");
    if (!value.empty()) more.emplace_back(key, value);
  }
  if (const int top_k = h.value("topk", -1); top_k >= 0) {
    more.emplace_back("topk", std::to_string(top_k));
  }
  if (h.value("no_hmm", false)) more.emplace_back("hmm", "0");
  for (const std::string& d : h.value("user_dicts", std::vector<std::string>{})) {
    more.emplace_back("user_dict", d);
  }
  // Headers of this form recorded the command line's --idf whatever the
  // weights; a method whose weights use no IDF ignored it when the index was
  // written (Method::Parse now refuses it), so it is left out here.
  Result<Method> method = Method::Parse("", more);
  const std::string idf = h.value("idf", "");
  if (idf.empty() || (method.ok() && !method->uses_idf())) return method;
  more.emplace_back("idf", idf);
  return Method::Parse("", more);
}

// InvalidArgument when an index (PATH or PATH.ids) is at `path`.
Status RefuseExisting(const std::string& path) {
  std::error_code ec;
  for (const std::string& file : {path, path + ".ids"}) {
    // (A path that names no file is DocumentIndex::Create's error.)
    if (std::filesystem::exists(file, ec) && !std::filesystem::is_directory(file, ec)) {
      return Status::InvalidArgument(
          file + " exists: an index is there (open it, or create with overwrite to replace it)");
    }
  }
  return Status::OK();
}

}  // namespace

std::string TextIndexStatsJson(const TextIndexStats& s, int indent) {
  const IndexTablesStats& t = s.tables;
  Json tables = {{"kind", t.kind}, {"tables", t.tables}};
  if (t.kind == "exact") {
    tables["blocks"] = t.blocks;
  } else if (t.kind == "bands") {
    tables["band_bits"] = t.band_bits;
    tables["probe_radius"] = t.probe_radius;
    tables["seed"] = t.seed;
  } else if (t.kind == "filter") {
    // The first level's threshold: rows whose low 64 bits are within it of
    // the query's are checked in full.
    tables["low_word_threshold"] = t.probe_radius;
  } else if (t.kind == "probe") {
    // L tables of b-bit keys, each key within r probed; a filter word
    // within t of the query's half survives (doc/index_format.md).
    tables["key_bits"] = t.band_bits;
    tables["probe_radius"] = t.probe_radius;
    tables["filter_threshold"] = t.filter_threshold;
  }
  if (t.kind != "scan" && t.kind != "filter") {
    tables["bytes_per_fingerprint"] = t.bytes_per_fingerprint;
  }
  tables["recall_at_k"] = t.recall_at_k;
  tables["recall_at_k_minus_4"] = t.recall_at_k_minus_4;
  tables["estimated_query_us"] = t.estimated_query_us;
  tables["file_version"] = t.file_version;
  tables["delta_entries"] = t.delta_entries;
  const Json j = {{"path", s.path},
                  {"documents", s.documents},
                  {"bits", s.bits},
                  {"max_k", s.max_k},
                  {"memory_bytes", s.memory_bytes},
                  {"file_bytes", s.file_bytes},
                  {"log_bytes", s.log_bytes},
                  {"log_records", s.log_records},
                  {"evicted", s.evicted},
                  {"method", s.method},
                  {"fingerprints_input", s.fingerprints_input},
                  {"boilerplate",
                   {{"mode", BoilerplateModeName(s.boilerplate)}, {"lines", s.boilerplate_lines}}},
                  {"tables", std::move(tables)}};
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

namespace {

// The non-empty documents of a batch.
struct NonEmpty {
  NonEmpty(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps) {
    for (size_t i = 0; i < ids.size() && i < fps.size(); ++i) {
      if (fps[i].empty()) continue;
      this->ids.push_back(ids[i]);
      this->fps.push_back(fps[i].fingerprint);
    }
  }
  std::vector<std::string> ids;
  std::vector<neardup::Fingerprint> fps;
};

// Add's and Load's answer: every non-empty document added.
void AddedResults(std::span<const DocumentFingerprint> fps, std::vector<TextIndexResult>* out) {
  if (out == nullptr) return;
  out->assign(fps.size(), TextIndexResult{});
  for (size_t i = 0; i < fps.size(); ++i) {
    (*out)[i].empty = fps[i].empty();
    (*out)[i].added = !fps[i].empty();
  }
}

}  // namespace

struct TextIndex::Rep {
  Method method;
  // Create's, for Load.
  std::optional<std::pair<DocumentIndexHeader, PermutedTableOptions>> created;
  std::unique_ptr<DocumentIndex> index;
  std::unique_ptr<Pipeline> pipeline;  // null: opened without texts
  // boilerplate=lines: the counts (only the lines left out), the normalizer
  // their keys were made with (t2s) and the filter over both.
  std::optional<LineStats> lines;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<BoilerplateFilter> filter;

  bool removes_boilerplate() const {
    return method.pipeline.boilerplate.mode != BoilerplateMode::kOff;
  }

  // Makes the filter over `stats` (the counts kept with the index).
  Status UseLines(LineStats stats) {
    if (!method.pipeline.normalize.t2s.empty()) {
      NEARDUP_ASSIGN_OR_RETURN(normalizer, Normalizer::Create(method.pipeline.normalize));
    }
    lines = std::move(stats);
    filter =
        std::make_unique<BoilerplateFilter>(*lines, method.pipeline.boilerplate, normalizer.get());
    return Status::OK();
  }
};

TextIndex::TextIndex(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
TextIndex::~TextIndex() = default;

std::vector<std::string> TextIndex::OwnedFiles(const std::string& path) {
  std::vector<std::string> files = DocumentIndex::OwnedFiles(path);
  files.push_back(LegacyLinesPath(path));
  return files;
}

bool TextIndex::IsOwnedFile(const std::string& path, const std::string& file) {
  return file == LegacyLinesPath(path) || DocumentIndex::IsOwnedFile(path, file);
}

Result<Method> TextIndex::MethodOfHeader(const std::string& pipeline_json) {
  const Json h = Json::parse(pipeline_json, nullptr, /*allow_exceptions=*/false);
  if (h.is_discarded() || !h.is_object()) {
    return Status::Corruption("the index's method: the header is not a JSON object");
  }
  Result<Method> method = Status::InvalidArgument("no method");
  try {
    if (auto m = h.find("method"); m != h.end()) {
      if (!m->is_string()) return Status::Corruption("the index's method: not a string");
      method = Method::Parse(m->get<std::string>());
    } else {
      method = MethodOfSettings(h);
    }
  } catch (const Json::exception& e) {
    // DocumentIndex checked the known members' types; a header given
    // directly may not have been.
    return Status::Corruption(std::string("the index's method: ") + e.what());
  }
  if (!method.ok()) {
    return Status::Corruption("the index's method: " + method.status().message());
  }
  return method;
}

Result<std::unique_ptr<TextIndex>> TextIndex::Create(const std::string& path, const Method& method,
                                                     const TextIndexOptions& options,
                                                     const LineStats* lines) {
  auto rep = std::make_unique<Rep>();
  rep->method = method;
  NEARDUP_RETURN_IF_ERROR(rep->method.RequireSimHash("a text index"));
  NEARDUP_RETURN_IF_ERROR(rep->method.Resolve());
  if (!options.overwrite) NEARDUP_RETURN_IF_ERROR(RefuseExisting(path));
  DocumentIndexHeader header;
  header.pipeline_json = PipelineHeader(rep->method);
  header.fingerprints_input = options.fingerprints_input;
  header.tables = options.tables;
  if (rep->removes_boilerplate() && !options.fingerprints_input) {
    // Only the lines the filter leaves out: it strips exactly as with all
    // the counts, and the header stays small.
    LineStats kept = lines != nullptr ? lines->AtLeast(static_cast<uint32_t>(
                                            std::max(rep->method.pipeline.boilerplate.min_docs, 1)))
                                      : LineStats();
    header.attachment = kept.Serialize();
    NEARDUP_RETURN_IF_ERROR(rep->UseLines(std::move(kept)));
  }
  PermutedTableOptions table_options;
  table_options.bits = rep->method.pipeline.bits;
  table_options.max_k = options.max_k >= 0 ? options.max_k : rep->method.default_k;
  table_options.build_threads = options.threads;
  table_options.expected_size = options.expected_size;
  if (!options.fingerprints_input) {
    NEARDUP_ASSIGN_OR_RETURN(rep->pipeline, Pipeline::Create(rep->method.pipeline));
  }
  NEARDUP_ASSIGN_OR_RETURN(rep->index, DocumentIndex::Create(path, header, table_options));
  rep->created.emplace(std::move(header), table_options);
  return std::unique_ptr<TextIndex>(new TextIndex(std::move(rep)));
}

Result<std::unique_ptr<TextIndex>> TextIndex::Build(const std::string& path, const Method& method,
                                                    const TextIndexOptions& options,
                                                    const DedupInput& input,
                                                    const DedupProgress& progress,
                                                    TextIndexBuildSummary* summary) {
  if (options.fingerprints_input) {
    return Status::InvalidArgument(
        "TextIndex::Build fingerprints texts; precomputed fingerprints are loaded with Create "
        "and Load");
  }
  NEARDUP_RETURN_IF_ERROR(method.RequireSimHash("a text index"));
  // Refused before the counting pass reads the whole input.
  if (!options.overwrite) NEARDUP_RETURN_IF_ERROR(RefuseExisting(path));
  // The boilerplate pass: the lines keyed as the filter keys them (after
  // the method's Traditional -> Simplified conversion, boilerplate.h).
  const bool count = method.pipeline.boilerplate.mode != BoilerplateMode::kOff;
  engine_internal::CountedLines counted;
  if (count) {
    std::unique_ptr<Normalizer> normalizer;
    if (!method.pipeline.normalize.t2s.empty()) {
      NEARDUP_ASSIGN_OR_RETURN(normalizer, Normalizer::Create(method.pipeline.normalize));
    }
    NEARDUP_ASSIGN_OR_RETURN(counted, engine_internal::CountInputLines(input, normalizer.get(),
                                                                       options.threads, progress));
  }
  NEARDUP_ASSIGN_OR_RETURN(auto index,
                           Create(path, method, options, count ? &counted.stats : nullptr));
  // The fingerprint pass: the held documents of standard input, else the
  // input read again.
  const bool held = count && !input.replayable;
  std::unique_ptr<DocumentReader> reader;
  if (held) {
    reader = engine_internal::VectorDocumentReader(
        std::make_shared<const std::vector<Document>>(std::move(counted.held)));
  } else {
    NEARDUP_ASSIGN_OR_RETURN(reader, input.open(true));
  }
  std::vector<std::string> ids;
  std::vector<DocumentFingerprint> fps;
  ThreadPool pool(options.threads);
  const TextIndex& built = *index;
  engine_internal::ReadPass<DocumentFingerprint>(
      &pool, *reader, "reading + fingerprints", progress,
      [&](const Document& doc) { return built.Fingerprint(doc.text, doc.title); },
      [&](Document& doc, DocumentFingerprint& fp) {
        ids.push_back(std::move(doc.id));
        fps.push_back(fp);
      });
  if (summary != nullptr) {
    summary->input = held ? counted.held_stats : reader->stats();
    summary->documents = fps.size();
    summary->empty = 0;
    for (const DocumentFingerprint& fp : fps) summary->empty += fp.empty();
  }
  NEARDUP_RETURN_IF_ERROR(index->Load(ids, fps, nullptr));
  NEARDUP_RETURN_IF_ERROR(index->Commit());
  return index;
}

Result<std::unique_ptr<TextIndex>> TextIndex::Open(const std::string& path,
                                                   const TextIndexOpenOptions& options) {
  auto rep = std::make_unique<Rep>();
  NEARDUP_ASSIGN_OR_RETURN(rep->index, DocumentIndex::Open(path, options.mode, options.index));
  const DocumentIndexHeader& header = rep->index->header();
  auto method = MethodOfHeader(header.pipeline_json);
  if (!method.ok()) return Status::Corruption(path + ".ids: " + method.status().message());
  rep->method = std::move(*method);
  rep->method.pipeline.segmenter.jieba_dir = options.jieba_dir;
  if (rep->method.pipeline.bits != rep->index->bits()) {
    return Status::Corruption(path + ".ids: says " + std::to_string(rep->method.pipeline.bits) +
                              " bits, the index has " + std::to_string(rep->index->bits()));
  }
  if (rep->removes_boilerplate() && !header.attachment.empty()) {
    auto stats = LineStats::Deserialize(header.attachment, path + ".ids: attachment");
    if (!stats.ok()) return stats.status();
    NEARDUP_RETURN_IF_ERROR(rep->UseLines(std::move(*stats)));
  }
  if (options.texts) {
    NEARDUP_RETURN_IF_ERROR(rep->method.VerifyDataFiles());
    if (rep->removes_boilerplate() && !rep->lines) {
      const std::string file = LegacyLinesPath(path);
      auto stats = LineStats::Load(file);
      if (!stats.ok()) {
        const std::string what =
            "the index's method removes boilerplate lines, but its line counts " + file +
            " cannot be read: " + stats.status().message();
        return stats.status().IsNotFound() ? Status::NotFound(what) : Status::Corruption(what);
      }
      NEARDUP_RETURN_IF_ERROR(rep->UseLines(std::move(*stats)));
    }
    NEARDUP_ASSIGN_OR_RETURN(rep->pipeline, Pipeline::Create(rep->method.pipeline));
  }
  return std::unique_ptr<TextIndex>(new TextIndex(std::move(rep)));
}

DocumentFingerprint TextIndex::Fingerprint(std::string_view text, std::string_view title) const {
  if (rep_->filter) return rep_->pipeline->Fingerprint(rep_->filter->Strip(text, nullptr), title);
  return rep_->pipeline->Fingerprint(text, title);
}

std::vector<DocumentFingerprint> TextIndex::FingerprintBatch(
    std::span<const std::string_view> texts, std::span<const std::string_view> titles,
    int threads) const {
  std::vector<DocumentFingerprint> out(texts.size());
  ParallelFor(texts.size(), threads, [&](size_t i, int) {
    out[i] = Fingerprint(texts[i], i < titles.size() ? titles[i] : std::string_view());
  });
  return out;
}

Status TextIndex::Query(std::span<const DocumentFingerprint> fps, int k,
                        std::vector<TextIndexResult>* out) const {
  out->assign(fps.size(), TextIndexResult{});
  if (k < 0) k = rep_->index->max_k();
  // The non-empty documents as one batch (DocumentIndex::QueryBatch).
  std::vector<neardup::Fingerprint> kept;
  std::vector<size_t> at;
  for (size_t i = 0; i < fps.size(); ++i) {
    if (fps[i].empty()) {
      (*out)[i].empty = true;
    } else {
      kept.push_back(fps[i].fingerprint);
      at.push_back(i);
    }
  }
  std::vector<std::vector<DocumentMatch>> matches;
  NEARDUP_RETURN_IF_ERROR(rep_->index->QueryBatch(kept, k, &matches));
  for (size_t j = 0; j < at.size(); ++j) (*out)[at[j]].matches = std::move(matches[j]);
  return Status::OK();
}

Status TextIndex::Check(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps,
                        const CheckOptions& options, std::vector<TextIndexResult>* out) {
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  const NonEmpty kept(ids, fps);
  std::vector<CheckResult> results;
  NEARDUP_RETURN_IF_ERROR(rep_->index->Check(kept.ids, kept.fps, options, &results));
  out->assign(ids.size(), TextIndexResult{});
  size_t next = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    TextIndexResult& r = (*out)[i];
    if (fps[i].empty()) {
      r.empty = true;
      continue;
    }
    r.matches = std::move(results[next].matches);
    r.added = results[next].added;
    r.exists = results[next].exists;
    ++next;
  }
  return Status::OK();
}

Status TextIndex::Load(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps,
                       std::vector<TextIndexResult>* out) {
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  if (!rep_->created || rep_->index->size() != 0) {
    return Status::InvalidArgument(rep_->index->path() +
                                   ": a bulk load needs an index just created, still empty");
  }
  const NonEmpty kept(ids, fps);
  const std::string path = rep_->index->path();
  // The empty index gives way (and its lock) to the loaded one.
  rep_->index.reset();
  const auto& [header, table_options] = *rep_->created;
  auto built = DocumentIndex::Build(path, header, table_options, kept.ids, kept.fps);
  if (!built.ok()) {
    // Bad input (an id twice): the empty index again, as before the call.
    auto empty = DocumentIndex::Create(path, header, table_options);
    if (!empty.ok()) return empty.status();
    rep_->index = std::move(*empty);
    return built.status();
  }
  rep_->index = std::move(*built);
  AddedResults(fps, out);
  return Status::OK();
}

Status TextIndex::Add(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps,
                      bool replace, std::vector<TextIndexResult>* out) {
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  const NonEmpty kept(ids, fps);
  NEARDUP_RETURN_IF_ERROR(rep_->index->AddBatch(kept.ids, kept.fps, replace));
  AddedResults(fps, out);
  return Status::OK();
}

Result<size_t> TextIndex::Remove(std::span<const std::string> ids,
                                 std::vector<std::string>* missing) {
  return rep_->index->Remove(ids, missing);
}

Status TextIndex::Commit() { return rep_->index->Commit(); }
Status TextIndex::Compact() { return rep_->index->Compact(); }
Status TextIndex::Verify() const { return rep_->index->Verify(); }
Status TextIndex::SaveSnapshot(const std::string& dest) const {
  return rep_->index->SaveSnapshot(dest);
}

const Method& TextIndex::method() const { return rep_->method; }
bool TextIndex::strips_boilerplate() const { return rep_->filter != nullptr; }
int TextIndex::bits() const { return rep_->index->bits(); }
int TextIndex::max_k() const { return rep_->index->max_k(); }
size_t TextIndex::size() const { return rep_->index->size(); }
bool TextIndex::Contains(const std::string& id) const { return rep_->index->Contains(id); }
const std::string& TextIndex::path() const { return rep_->index->path(); }
DocumentIndex& TextIndex::documents() { return *rep_->index; }
const DocumentIndex& TextIndex::documents() const { return *rep_->index; }

TextIndexStats TextIndex::Stats() const {
  const DocumentIndexStats d = rep_->index->Stats();
  TextIndexStats s;
  s.path = rep_->index->path();
  s.documents = d.documents;
  s.bits = d.bits;
  s.max_k = d.max_k;
  s.memory_bytes = d.memory_bytes;
  s.file_bytes = d.file_bytes;
  s.log_bytes = d.log_bytes;
  s.log_records = d.log_records;
  s.evicted = d.evicted;
  s.method = rep_->method.ToString();
  s.fingerprints_input = rep_->index->header().fingerprints_input;
  s.boilerplate = rep_->method.pipeline.boilerplate.mode;
  if (rep_->filter) s.boilerplate_lines = rep_->filter->flagged_lines();
  s.tables = d.tables;
  return s;
}

}  // namespace neardup
