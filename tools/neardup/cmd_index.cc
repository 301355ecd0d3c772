// Copyright 2026 The neardup Authors.
//
// neardup index build|query|add|remove|stats: a persistent near-duplicate
// index. IDX is the permuted-table index file (doc/index_format.md); IDX.ids
// beside it maps the index's numeric ids to document ids and records the
// pipeline settings, so that queries are fingerprinted the same way
// (doc/index_format.md, "The ids file").

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "common.h"
#include "neardup/index.h"

namespace neardup::cli {
namespace {

constexpr int kIdsFormatVersion = 1;

struct IndexFlags {
  InputFlags input;
  PipelineFlags pipeline;
  std::string index_path;
  bool fingerprints = false;  // inputs are `neardup fingerprint` JSONL
  int max_k = -1;             // build: the largest k queries may use
  int k = -1;                 // query
  std::vector<std::string> remove_ids;
  bool json = false;
};

// The ids file: a JSON header line, then one JSON line per numeric id (the
// document id as a string, or null once removed).
struct IdsFile {
  nlohmann::ordered_json header;
  std::vector<std::optional<std::string>> ids;

  static Result<IdsFile> Load(const std::string& path) {
    std::ifstream in(path);
    if (!in) return Status::NotFound(path + ": cannot open the ids file beside the index");
    IdsFile f;
    std::string line;
    uint64_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      nlohmann::ordered_json j;
      try {
        j = nlohmann::ordered_json::parse(line);
      } catch (const nlohmann::ordered_json::exception& e) {
        return Status::Corruption(path + ":" + std::to_string(n) + ": malformed JSON");
      }
      if (n == 1) {
        if (!j.is_object() || j.value("neardup_index_ids", 0) != kIdsFormatVersion) {
          return Status::Corruption(path + ":1: not a neardup ids file (version " +
                                    std::to_string(kIdsFormatVersion) + ")");
        }
        f.header = std::move(j);
      } else if (j.is_string()) {
        f.ids.push_back(j.get<std::string>());
      } else if (j.is_null()) {
        f.ids.push_back(std::nullopt);
      } else {
        return Status::Corruption(path + ":" + std::to_string(n) + ": expected a string or null");
      }
    }
    if (n == 0) return Status::Corruption(path + ": empty ids file");
    return f;
  }

  Status Save(const std::string& path) const {
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << header.dump() << "\n";
      for (const auto& id : ids) out << (id ? nlohmann::ordered_json(*id).dump() : "null") << "\n";
      out.flush();
      if (!out) return Status::IOError("cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      return Status::IOError("cannot rename " + tmp + " to " + path);
    }
    return Status::OK();
  }
};

nlohmann::ordered_json PipelineHeader(const PipelineFlags& p) {
  return {{"normalize", p.normalize},
          {"t2s", p.t2s},
          {"user_dicts", p.user_dicts},
          {"idf", p.idf},
          {"no_hmm", p.no_hmm},
          {"bits", p.bits},
          {"features", p.features},
          {"weights", p.weights},
          {"topk", p.top_k},
          {"hash", p.hash}};
}

PipelineFlags PipelineFromHeader(const nlohmann::ordered_json& h, const std::string& jieba_dir) {
  PipelineFlags p;
  p.method = h.value("method", "");
  p.normalize = h.value("normalize", "nfkc");
  p.t2s = h.value("t2s", false);
  p.user_dicts = h.value("user_dicts", std::vector<std::string>{});
  p.idf = h.value("idf", "");
  p.no_hmm = h.value("no_hmm", false);
  p.bits = h.value("bits", 0);
  p.features = h.value("features", "");
  p.weights = h.value("weights", "");
  p.top_k = h.value("topk", -1);
  p.hash = h.value("hash", "");
  ResolvePipelineFlags(&p);  // an unknown method is reported when the pipeline is made
  p.jieba_dir = jieba_dir;
  return p;
}

// Fingerprints every input document (or parses fingerprint JSONL) and calls
// `sink` in input order. Malformed fingerprints are reported and skipped.
Result<InputStats> ReadFingerprints(
    const IndexFlags& flags, const PipelineFlags& pipeline_flags,
    const std::function<void(const std::string&, const DocumentFingerprint&)>& sink) {
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return read_options.status();
  std::unique_ptr<Pipeline> pipeline;
  if (flags.fingerprints) {
    read_options->text_field = "fingerprint";
    read_options->format = InputFormat::kJsonl;
  } else {
    auto options = MakePipelineOptions(pipeline_flags);
    if (!options.ok()) return options.status();
    auto created = Pipeline::Create(*options);
    if (!created.ok()) return created.status();
    pipeline = std::move(*created);
  }
  const int bits = pipeline_flags.bits;
  uint64_t bad = 0;
  const auto process = [&](const Document& doc) -> std::string {
    if (pipeline) {
      const DocumentFingerprint fp = pipeline->Fingerprint(doc.text, doc.title);
      return fp.fingerprint.ToHex() + " " + std::to_string(fp.features);
    }
    return doc.text + " 1";
  };
  const auto emit = [&](const Document& doc, std::string& packed) {
    const size_t space = packed.find(' ');
    auto fp = Fingerprint::FromHex(std::string_view(packed).substr(0, space));
    if (!fp.ok() || fp->bits() != bits) {
      ++bad;
      std::cerr << "neardup: skipped: " << doc.source << ":" << doc.line << ": "
                << (fp.ok() ? "a " + std::to_string(fp->bits()) + "-bit fingerprint in a " +
                                  std::to_string(bits) + "-bit index"
                            : fp.status().message())
                << "\n";
      return;
    }
    sink(doc.id, DocumentFingerprint{*fp, std::stoull(packed.substr(space + 1))});
  };
  auto stats = ForEachDocument(flags.input, *read_options, process, emit);
  if (!stats.ok()) return stats.status();
  stats->malformed += bad;
  return stats;
}

int RunBuild(IndexFlags flags) {
  NEARDUP_RETURN_IF_ERROR_CLI(ResolvePipelineFlags(&flags.pipeline));
  // -o names the index here (IDX and IDX.ids are written).
  flags.index_path = flags.input.output;
  if (flags.index_path.empty() || flags.index_path == "-") {
    return Fail(Status::InvalidArgument("index build needs -o IDX, the index file to write"));
  }
  NEARDUP_RETURN_IF_ERROR_CLI(
      CheckInputsAndOutputs(flags.input.inputs, {flags.index_path, flags.index_path + ".ids"}));
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  IdsFile file;
  uint64_t empty = 0;
  flags.input.progress = true;
  auto stats = ReadFingerprints(flags, flags.pipeline,
                                [&](const std::string& id, const DocumentFingerprint& fp) {
                                  const uint64_t n = file.ids.size();
                                  file.ids.push_back(id);
                                  if (fp.empty()) {
                                    ++empty;  // never a near duplicate: not indexed
                                    file.ids.back() = std::nullopt;
                                    return;
                                  }
                                  ids.push_back(n);
                                  fps.push_back(fp.fingerprint);
                                });
  if (!stats.ok()) return Fail(stats.status());
  PermutedTableOptions options;
  options.bits = flags.pipeline.bits;
  options.max_k = flags.max_k >= 0 ? flags.max_k : flags.pipeline.default_k;
  options.build_threads = flags.input.threads;
  auto index = PermutedTableIndex::Build(options, ids, fps);
  if (!index.ok()) return Fail(index.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->Save(flags.index_path));
  file.header = {{"neardup_index_ids", kIdsFormatVersion},
                 {"pipeline", PipelineHeader(flags.pipeline)},
                 {"fingerprints_input", flags.fingerprints}};
  NEARDUP_RETURN_IF_ERROR_CLI(file.Save(flags.index_path + ".ids"));
  if (!flags.input.quiet) {
    const TableLayout& l = (*index)->layout();
    std::fprintf(stderr,
                 "neardup: indexed %zu fingerprints (%llu empty documents not indexed) in %s: "
                 "%d bits, max k %d, %d blocks, %d tables\n",
                 fps.size(), static_cast<unsigned long long>(empty), flags.index_path.c_str(),
                 l.bits, l.max_k, l.blocks, l.tables);
  }
  return InputExitCode(flags.input, *stats);
}

struct OpenIndex {
  std::unique_ptr<HammingIndex> index;
  IdsFile ids;
  PipelineFlags pipeline;
};

Result<OpenIndex> Open(const IndexFlags& flags) {
  OpenIndex o;
  auto index = LoadIndex(flags.index_path);
  if (!index.ok()) return index.status();
  o.index = std::move(*index);
  auto ids = IdsFile::Load(flags.index_path + ".ids");
  if (!ids.ok()) return ids.status();
  o.ids = std::move(*ids);
  o.pipeline = PipelineFromHeader(o.ids.header.value("pipeline", nlohmann::ordered_json::object()),
                                  flags.pipeline.jieba_dir);
  if (o.pipeline.bits != o.index->bits()) {
    return Status::Corruption(flags.index_path + ".ids: says " + std::to_string(o.pipeline.bits) +
                              " bits, the index has " + std::to_string(o.index->bits()));
  }
  for (const IndexEntry& e : o.index->Entries()) {
    if (e.id >= o.ids.ids.size()) {
      return Status::Corruption(flags.index_path + ": id " + std::to_string(e.id) +
                                " has no line in the ids file");
    }
  }
  return o;
}

int RunQuery(const IndexFlags& flags) {
  auto o = Open(flags);
  if (!o.ok()) return Fail(o.status());
  const int k = flags.k >= 0 ? flags.k : o->index->max_k();
  if (k > o->index->max_k()) {
    return Fail(
        Status::InvalidArgument("-k " + std::to_string(k) + " is larger than the index's max k " +
                                std::to_string(o->index->max_k()) + " (rebuild with --max-k)"));
  }
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());
  std::vector<Neighbor> neighbors;
  auto stats = ReadFingerprints(
      flags, o->pipeline, [&](const std::string& id, const DocumentFingerprint& fp) {
        nlohmann::ordered_json matches = nlohmann::ordered_json::array();
        if (!fp.empty()) {
          const Status s = o->index->Search(fp.fingerprint, k, &neighbors);
          if (s.ok()) {
            for (const Neighbor& n : neighbors) {
              matches.push_back({{"id", *o->ids.ids[n.id]}, {"distance", n.distance}});
            }
          }
        }
        nlohmann::ordered_json line = {{"id", id}, {"matches", std::move(matches)}};
        (*out)->Write(JsonLine(line));
      });
  if (!stats.ok()) return Fail(stats.status());
  const Status closed = (*out)->Close();
  if (!closed.ok()) return Fail(closed);
  return InputExitCode(flags.input, *stats);
}

int RunAdd(const IndexFlags& flags) {
  auto o = Open(flags);
  if (!o.ok()) return Fail(o.status());
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
  auto stats = ReadFingerprints(flags, o->pipeline,
                                [&](const std::string& id, const DocumentFingerprint& fp) {
                                  const uint64_t n = o->ids.ids.size();
                                  o->ids.ids.push_back(id);
                                  if (fp.empty()) {
                                    o->ids.ids.back() = std::nullopt;
                                    return;
                                  }
                                  ids.push_back(n);
                                  fps.push_back(fp.fingerprint);
                                });
  if (!stats.ok()) return Fail(stats.status());
  NEARDUP_RETURN_IF_ERROR_CLI(o->index->AddBatch(ids, fps));
  NEARDUP_RETURN_IF_ERROR_CLI(o->index->Save(flags.index_path));
  NEARDUP_RETURN_IF_ERROR_CLI(o->ids.Save(flags.index_path + ".ids"));
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: added %zu fingerprints; the index holds %zu\n", fps.size(),
                 o->index->size());
  }
  return InputExitCode(flags.input, *stats);
}

int RunRemove(const IndexFlags& flags) {
  auto o = Open(flags);
  if (!o.ok()) return Fail(o.status());
  std::unordered_multimap<std::string, uint64_t> by_id;
  for (uint64_t n = 0; n < o->ids.ids.size(); ++n) {
    if (o->ids.ids[n]) by_id.emplace(*o->ids.ids[n], n);
  }
  std::vector<uint64_t> numeric;
  size_t missing = 0;
  for (const std::string& id : flags.remove_ids) {
    auto [begin, end] = by_id.equal_range(id);
    if (begin == end) {
      std::cerr << "neardup: warning: no document '" << id << "' in " << flags.index_path << "\n";
      ++missing;
    }
    for (auto it = begin; it != end; ++it) {
      numeric.push_back(it->second);
      o->ids.ids[it->second] = std::nullopt;
    }
  }
  const size_t removed = o->index->RemoveBatch(numeric);
  NEARDUP_RETURN_IF_ERROR_CLI(o->index->Save(flags.index_path));
  NEARDUP_RETURN_IF_ERROR_CLI(o->ids.Save(flags.index_path + ".ids"));
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: removed %zu fingerprints; the index holds %zu\n", removed,
                 o->index->size());
  }
  return missing > 0 && flags.input.strict ? kExitBadInput : kExitOk;
}

int RunStats(const IndexFlags& flags) {
  auto o = Open(flags);
  if (!o.ok()) return Fail(o.status());
  struct stat st;
  const long long file_bytes = stat(flags.index_path.c_str(), &st) == 0 ? st.st_size : -1;
  nlohmann::ordered_json j = {
      {"path", flags.index_path},
      {"fingerprints", o->index->size()},
      {"bits", o->index->bits()},
      {"max_k", o->index->max_k()},
      {"memory_bytes", o->index->MemoryBytes()},
      {"file_bytes", file_bytes},
      {"pipeline", o->ids.header.value("pipeline", nlohmann::ordered_json::object())}};
  if (o->index->type() == IndexType::kPermutedTable) {
    const TableLayout& l = static_cast<const PermutedTableIndex&>(*o->index).layout();
    j["layout"] = {{"blocks", l.blocks}, {"tables", l.tables}, {"min_key_bits", l.min_key_bits}};
  }
  if (flags.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << j.dump(2) << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddIndexCommand(CLI::App& app, ExitCode* exit_code) {
  CLI::App* index = app.add_subcommand(
      "index", "A persistent near-duplicate index (permuted tables; exact for any k <= max k)");
  index->require_subcommand(1);

  auto build = std::make_shared<IndexFlags>();
  CLI::App* b = index->add_subcommand("build", "Fingerprint documents and index them");
  AddInputOptions(b, &build->input);
  AddPipelineOptions(b, &build->pipeline, "nfkc", true);
  b->add_flag("--fingerprints", build->fingerprints,
              "INPUT is `neardup fingerprint` JSONL ({id, fingerprint}), not documents");
  b->add_option("--max-k", build->max_k,
                "Largest k that queries may use (default: the method's k)");
  b->callback([build, exit_code] { exit_code->value = RunBuild(*build); });

  auto query = std::make_shared<IndexFlags>();
  CLI::App* q =
      index->add_subcommand("query",
                            "Every indexed document within k of each input document: JSONL "
                            "{\"id\", \"matches\": [{\"id\", \"distance\"}, ...]}");
  q->add_option("IDX", query->index_path, "The index")->required();
  AddInputOptions(q, &query->input);
  q->add_option("-k", query->k, "Largest distance (default: the index's max k)");
  q->add_flag("--fingerprints", query->fingerprints, "INPUT is `neardup fingerprint` JSONL");
  q->add_option("--jieba-dir", query->pipeline.jieba_dir, "python3-jieba's data directory");
  q->callback([query, exit_code] { exit_code->value = RunQuery(*query); });

  auto add = std::make_shared<IndexFlags>();
  CLI::App* a = index->add_subcommand("add", "Fingerprint documents and add them to the index");
  a->add_option("IDX", add->index_path, "The index")->required();
  AddInputOptions(a, &add->input);
  a->add_flag("--fingerprints", add->fingerprints, "INPUT is `neardup fingerprint` JSONL");
  a->add_option("--jieba-dir", add->pipeline.jieba_dir, "python3-jieba's data directory");
  a->callback([add, exit_code] { exit_code->value = RunAdd(*add); });

  auto remove = std::make_shared<IndexFlags>();
  CLI::App* r = index->add_subcommand("remove", "Remove documents from the index by id");
  r->add_option("IDX", remove->index_path, "The index")->required();
  r->add_option("ID", remove->remove_ids, "Document ids")->required();
  r->add_flag("--strict", remove->input.strict, "Exit with status 3 if an id is not indexed");
  r->add_flag("-q,--quiet", remove->input.quiet, "Print no summary");
  r->callback([remove, exit_code] { exit_code->value = RunRemove(*remove); });

  auto stats = std::make_shared<IndexFlags>();
  CLI::App* s = index->add_subcommand("stats", "Size, layout, memory and settings of an index");
  s->add_option("IDX", stats->index_path, "The index")->required();
  s->add_flag("--json", stats->json, "One line of JSON");
  s->callback([stats, exit_code] { exit_code->value = RunStats(*stats); });
}

}  // namespace neardup::cli
