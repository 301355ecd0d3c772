// Copyright 2026 The neardup Authors.
//
// neardup index build|query|add|remove|stats: a persistent near-duplicate
// index, a neardup::DocumentIndex (document_index.h): IDX, IDX.ids beside it
// with the document ids and the method (method.h: so that queries are
// fingerprinted the same way), committed together (doc/index_format.md).
// This file only wires the library's calls to the command line.

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "boilerplate_pass.h"
#include "common.h"
#include "index_open.h"
#include "neardup/document_index.h"

namespace neardup::cli {
namespace {

struct IndexFlags {
  InputFlags input;
  PipelineFlags pipeline;
  std::string index_path;
  bool fingerprints = false;  // inputs are `neardup fingerprint` JSONL
  int max_k = -1;             // build: the largest k queries may use
  int k = -1;                 // query
  std::vector<std::string> remove_ids;
  bool json = false;
  bool replace = false;       // add: replace documents already indexed
  bool add_new = false;       // check: add the documents that have no match
  double lock_wait = -1;      // writers: --wait SECONDS for the lock; < 0 none
  IndexTablesOptions tables;  // build: how the lookup tables are chosen
};

// The lookup tables and their recall guarantee, as stats and serve report
// them.
nlohmann::ordered_json TablesJson(const DocumentIndexStats& s) {
  const IndexTablesStats& t = s.tables;
  nlohmann::ordered_json j = {{"kind", t.kind}, {"tables", t.tables}};
  if (t.kind == "exact") {
    j["blocks"] = t.blocks;
  } else {
    j["band_bits"] = t.band_bits;
    j["probe_radius"] = t.probe_radius;
    j["seed"] = t.seed;
  }
  j["recall_at_k"] = t.recall_at_k;
  j["recall_at_k_minus_4"] = t.recall_at_k_minus_4;
  j["estimated_query_us"] = t.estimated_query_us;
  j["file_version"] = t.file_version;
  j["delta_entries"] = t.delta_entries;
  return j;
}

// The ids file's "pipeline" member: the method's text form (method.h), with
// its data files made absolute and identified by digest, so that the index
// is queried with exactly the settings it was built with, from any working
// directory; and the width, checked against the index file.
Result<nlohmann::ordered_json> PipelineHeader(const PipelineFlags& flags) {
  auto method = MakeMethod(flags);
  if (!method.ok()) return method.status();
  NEARDUP_RETURN_IF_ERROR(method->Resolve());
  return nlohmann::ordered_json{{"method", method->ToString()}, {"bits", method->pipeline.bits}};
}

// The method an index was built with. Indexes written before the method was
// stored (no "method" member) name their settings one by one.
Result<Method> MethodFromHeader(const nlohmann::ordered_json& h, const std::string& jieba_dir) {
  Result<Method> method = Status::InvalidArgument("no method");
  if (h.contains("method")) {
    method = Method::Parse(h.value("method", ""));
  } else {
    PipelineFlags p;
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
    method = MakeMethod(p);
  }
  if (!method.ok()) {
    return Status::Corruption("the index's method: " + method.status().message());
  }
  method->pipeline.segmenter.jieba_dir = jieba_dir;
  NEARDUP_RETURN_IF_ERROR(method->VerifyDataFiles());
  return method;
}

// Fingerprints every input document (or parses fingerprint JSONL) and calls
// `sink` in input order. Malformed fingerprints are reported and skipped.
Result<InputStats> ReadFingerprints(
    const IndexFlags& flags, const Method& method,
    const std::function<void(const std::string&, const DocumentFingerprint&)>& sink,
    BoilerplatePass& lines) {
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return read_options.status();
  std::unique_ptr<Pipeline> pipeline;
  if (flags.fingerprints) {
    read_options->text_field = "fingerprint";
    read_options->format = InputFormat::kJsonl;
  } else {
    auto created = Pipeline::Create(method.pipeline);
    if (!created.ok()) return created.status();
    pipeline = std::move(*created);
  }
  const int bits = method.pipeline.bits;
  uint64_t bad = 0;
  // With --fingerprints the document's text is the fingerprint: parsed here.
  const auto process = [&](const Document& doc) {
    if (!pipeline) return DocumentFingerprint{};
    if (lines.on()) return pipeline->Fingerprint(lines.Strip(doc.text), doc.title);
    return pipeline->Fingerprint(doc.text, doc.title);
  };
  const auto emit = [&](const Document& doc, DocumentFingerprint& computed) {
    auto fp = pipeline ? Result<Fingerprint>(computed.fingerprint) : Fingerprint::FromHex(doc.text);
    if (!fp.ok() || fp->bits() != bits) {
      ++bad;
      std::cerr << "neardup: skipped: " << doc.source << ":" << doc.line << ": "
                << (fp.ok() ? "a " + std::to_string(fp->bits()) + "-bit fingerprint in a " +
                                  std::to_string(bits) + "-bit index"
                            : fp.status().message())
                << "\n";
      return;
    }
    sink(doc.id, pipeline ? computed : DocumentFingerprint{*fp, 1});
  };
  auto stats = lines.ForEach<DocumentFingerprint>(flags.input, *read_options, process, emit);
  if (!stats.ok()) return stats.status();
  stats->malformed += bad;
  return stats;
}

// Reads the documents (or fingerprints) to index, skipping empty ones: a
// document without features is never a near duplicate.
struct Batch {
  std::vector<std::string> ids;
  std::vector<Fingerprint> fps;
  uint64_t empty = 0;
};

Result<InputStats> ReadBatch(const IndexFlags& flags, const Method& method, Batch* batch,
                             BoilerplatePass& lines) {
  return ReadFingerprints(
      flags, method,
      [&](const std::string& id, const DocumentFingerprint& fp) {
        if (fp.empty()) {
          ++batch->empty;
          return;
        }
        batch->ids.push_back(id);
        batch->fps.push_back(fp.fingerprint);
      },
      lines);
}

// No input may be one of the files the index at flags.index_path owns
// (DocumentIndex::OwnedFiles, IDX.lines, a crashed commit's leftovers):
// writing the index would replace or delete it.
Status CheckIndexInputs(const IndexFlags& flags) {
  std::vector<std::string> outputs = DocumentIndex::OwnedFiles(flags.index_path);
  outputs.push_back(IndexLinesPath(flags.index_path));
  NEARDUP_RETURN_IF_ERROR(CheckInputsAndOutputs(flags.input.inputs, outputs));
  std::error_code ec;
  const std::string index = std::filesystem::weakly_canonical(flags.index_path, ec).string();
  for (const std::string& input : flags.input.inputs) {
    if (input == "-") continue;
    const std::string file = std::filesystem::weakly_canonical(input, ec).string();
    if (!ec && DocumentIndex::IsOwnedFile(index, file)) {
      return Status::InvalidArgument("the input " + input + " is a file of the index " +
                                     flags.index_path + ": writing the index would replace it");
    }
  }
  return Status::OK();
}

int RunBuild(IndexFlags flags) {
  NEARDUP_RETURN_IF_ERROR_CLI(RequireSimHash(flags.pipeline, "index"));
  auto method = MakeMethod(flags.pipeline);
  if (!method.ok()) return Fail(method.status());
  auto pipeline_header = PipelineHeader(flags.pipeline);
  if (!pipeline_header.ok()) return Fail(pipeline_header.status());
  // -o names the index here (IDX and IDX.ids are written).
  flags.index_path = flags.input.output;
  if (flags.index_path.empty() || flags.index_path == "-") {
    return Fail(Status::InvalidArgument(
        "index build needs -o IDX, the index file to write (an index is two files, IDX and "
        "IDX.ids, so it cannot go to standard output)"));
  }
  NEARDUP_RETURN_IF_ERROR_CLI(CheckIndexInputs(flags));
  Batch batch;
  flags.input.progress = true;
  BoilerplatePass lines;  // boilerplate=lines: counted here, saved as IDX.lines
  if (!flags.fingerprints) {
    auto read_options = MakeReadOptions(flags.input);
    if (!read_options.ok()) return Fail(read_options.status());
    NEARDUP_RETURN_IF_ERROR_CLI(CountIndexLines(*method, flags.input, *read_options, &lines));
  }
  auto stats = ReadBatch(flags, *method, &batch, lines);
  if (!stats.ok()) return Fail(stats.status());
  PermutedTableOptions options;
  options.bits = method->pipeline.bits;
  options.max_k = flags.max_k >= 0 ? flags.max_k : method->default_k;
  options.build_threads = flags.input.threads;
  DocumentIndexHeader header;
  header.pipeline_json = pipeline_header->dump();
  header.fingerprints_input = flags.fingerprints;
  header.tables = flags.tables;
  auto index = DocumentIndex::Build(flags.index_path, header, options, batch.ids, batch.fps);
  if (!index.ok()) return Fail(index.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->Commit());
  NEARDUP_RETURN_IF_ERROR_CLI(SaveIndexLines(flags.index_path, lines));
  if (!flags.input.quiet) {
    const DocumentIndexStats s = (*index)->Stats();
    std::fprintf(stderr,
                 "neardup: indexed %zu fingerprints (%llu empty documents not indexed) in %s: "
                 "%d bits, max k %d, %d %s tables, guaranteed recall %.6f at distance %d\n",
                 s.documents, static_cast<unsigned long long>(batch.empty),
                 flags.index_path.c_str(), s.bits, s.max_k, s.tables.tables, s.tables.kind.c_str(),
                 s.tables.recall_at_k, s.max_k);
  }
  return InputExitCode(flags.input, *stats);
}

// The index, its method and (boilerplate=lines) its line counts, IDX.lines.
Result<std::unique_ptr<DocumentIndex>> Open(const IndexFlags& flags, DocumentIndex::Mode mode,
                                            Method* method, BoilerplatePass* lines = nullptr,
                                            DocumentIndexOptions options = {}) {
  SetLockWait(flags.index_path, flags.lock_wait, &options);
  NEARDUP_ASSIGN_OR_RETURN(
      auto index,
      OpenIndexAndMethod(flags.index_path, flags.pipeline.jieba_dir, mode, method, options));
  if (lines != nullptr && !flags.fingerprints) {
    NEARDUP_RETURN_IF_ERROR(LoadIndexLines(flags.index_path, *method, lines));
  }
  return index;
}

int RunQuery(const IndexFlags& flags) {
  Method method;
  BoilerplatePass lines;
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, &method, &lines);
  if (!index.ok()) return Fail(index.status());
  const DocumentIndex& idx = **index;
  const int k = flags.k >= 0 ? flags.k : idx.max_k();
  if (k > idx.max_k()) {
    return Fail(Status::InvalidArgument("-k " + std::to_string(k) +
                                        " is larger than the index's max k " +
                                        std::to_string(idx.max_k()) + " (rebuild with --max-k)"));
  }
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());
  std::vector<DocumentMatch> found;
  Status query_status;
  auto stats = ReadFingerprints(
      flags, method,
      [&](const std::string& id, const DocumentFingerprint& fp) {
        nlohmann::ordered_json matches = nlohmann::ordered_json::array();
        if (!fp.empty()) {
          const Status s = idx.Query(fp.fingerprint, k, &found);
          if (s.ok()) {
            for (const DocumentMatch& m : found) {
              matches.push_back({{"id", m.id}, {"distance", m.distance}});
            }
          } else if (query_status.ok()) {
            query_status = s;
          }
        }
        nlohmann::ordered_json line = {{"id", id}, {"matches", std::move(matches)}};
        (*out)->Write(JsonLine(line));
      },
      lines);
  if (!stats.ok()) return Fail(stats.status());
  const Status closed = (*out)->Close();
  if (!closed.ok()) return Fail(closed);
  if (!query_status.ok()) return Fail(query_status);
  if (!flags.input.quiet) {
    const IndexTablesStats t = idx.Stats().tables;
    std::fprintf(stderr,
                 "neardup: %s tables: a match at distance %d is found with probability >= %.6f\n",
                 t.kind.c_str(), idx.max_k(), t.recall_at_k);
  }
  return InputExitCode(flags.input, *stats);
}

// How `index add`, `remove` and `check --add-new` write: each appends one
// record to the write-ahead log IDX.log, fsynced before it exits 0, instead of
// rewriting IDX; once the log is larger than half the index (and 1 MiB), the
// same process folds it into IDX before it exits (as `index compact`).
DocumentIndexOptions WriteAheadOptions() {
  DocumentIndexOptions o;
  o.log = true;
  o.sync = true;
  o.background_compaction = false;
  return o;
}

int RunAdd(const IndexFlags& flags) {
  NEARDUP_RETURN_IF_ERROR_CLI(CheckIndexInputs(flags));
  // Read-write: the index's lock is held from here to the exit, so
  // concurrent adds run one after another and none is lost.
  Method method;
  BoilerplatePass lines;
  auto index = Open(flags, DocumentIndex::Mode::kReadWrite, &method, &lines, WriteAheadOptions());
  if (!index.ok()) return Fail(index.status());
  Batch batch;
  auto stats = ReadBatch(flags, method, &batch, lines);
  if (!stats.ok()) return Fail(stats.status());
  Status added = (*index)->AddBatch(batch.ids, batch.fps, flags.replace);
  if (added.IsInvalidArgument() && !flags.replace) {
    added = Status::InvalidArgument(added.message() + "; --replace replaces it");
  }
  NEARDUP_RETURN_IF_ERROR_CLI(added);
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: added %zu fingerprints; the index holds %zu\n", batch.fps.size(),
                 (*index)->size());
  }
  return InputExitCode(flags.input, *stats);
}

// Query-or-add: each document's matches, and whether it was added, as one
// step under the index's lock (DocumentIndex::Check).
int RunCheck(const IndexFlags& flags) {
  NEARDUP_RETURN_IF_ERROR_CLI(CheckIndexInputs(flags));
  Method method;
  const auto mode =
      flags.add_new ? DocumentIndex::Mode::kReadWrite : DocumentIndex::Mode::kReadOnly;
  // The additions go to the log (one synced record), not a rewrite of IDX.
  BoilerplatePass lines;
  auto index = Open(flags, mode, &method, &lines, WriteAheadOptions());
  if (!index.ok()) return Fail(index.status());
  DocumentIndex& idx = **index;
  CheckOptions options;
  options.k = flags.k;
  options.policy = flags.add_new ? CheckPolicy::kAddIfNew : CheckPolicy::kQueryOnly;
  options.replace = flags.replace;
  if (options.k > idx.max_k()) {
    return Fail(Status::InvalidArgument("-k " + std::to_string(options.k) +
                                        " is larger than the index's max k " +
                                        std::to_string(idx.max_k()) + " (rebuild with --max-k)"));
  }
  // Every document in input order; the empty ones (no features) are never
  // checked nor added.
  std::vector<std::string> all_ids;
  std::vector<bool> empty;
  Batch batch;
  auto stats = ReadFingerprints(
      flags, method,
      [&](const std::string& id, const DocumentFingerprint& fp) {
        all_ids.push_back(id);
        empty.push_back(fp.empty());
        if (!fp.empty()) {
          batch.ids.push_back(id);
          batch.fps.push_back(fp.fingerprint);
        }
      },
      lines);
  if (!stats.ok()) return Fail(stats.status());
  std::vector<CheckResult> results;
  Status checked = idx.Check(batch.ids, batch.fps, options, &results);
  if (checked.IsInvalidArgument() && flags.add_new && !flags.replace &&
      checked.message().find("is already in") != std::string::npos) {
    checked = Status::InvalidArgument(checked.message() + "; --replace replaces it");
  }
  NEARDUP_RETURN_IF_ERROR_CLI(checked);
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());
  size_t next = 0, added = 0;
  for (size_t i = 0; i < all_ids.size(); ++i) {
    nlohmann::ordered_json matches = nlohmann::ordered_json::array();
    bool was_added = false;
    if (!empty[i]) {
      const CheckResult& r = results[next++];
      for (const DocumentMatch& m : r.matches) {
        matches.push_back({{"id", m.id}, {"distance", m.distance}});
      }
      was_added = r.added;
      added += r.added;
    }
    (*out)->Write(JsonLine(nlohmann::ordered_json{
        {"id", all_ids[i]}, {"matches", std::move(matches)}, {"added", was_added}}));
  }
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  if (!flags.input.quiet && flags.add_new) {
    std::fprintf(stderr, "neardup: checked %zu documents, added %zu; the index holds %zu\n",
                 all_ids.size(), added, idx.size());
  }
  return InputExitCode(flags.input, *stats);
}

int RunRemove(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadWrite, nullptr, nullptr, WriteAheadOptions());
  if (!index.ok()) return Fail(index.status());
  std::vector<std::string> missing;
  auto removed = (*index)->Remove(flags.remove_ids, &missing);
  if (!removed.ok()) return Fail(removed.status());
  for (const std::string& id : missing) {
    std::cerr << "neardup: warning: no document '" << id << "' in " << flags.index_path << "\n";
  }
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: removed %zu fingerprints; the index holds %zu\n", *removed,
                 (*index)->size());
  }
  return !missing.empty() && flags.input.strict ? kExitBadInput : kExitOk;
}

// A consistent copy of the index as a reader sees it (every acknowledged
// change, the log's included), taken without the writers' lock: a server
// goes on serving.
int RunSnapshot(const IndexFlags& flags, const std::string& dest) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, nullptr);
  if (!index.ok()) return Fail(index.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->SaveSnapshot(dest));
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: wrote a snapshot of %s to %s: %zu fingerprints\n",
                 flags.index_path.c_str(), dest.c_str(), (*index)->size());
  }
  return kExitOk;
}

int RunCompact(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadWrite, nullptr);
  if (!index.ok()) return Fail(index.status());
  const uint64_t log_bytes = (*index)->Stats().log_bytes;
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->Compact());
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: folded a %llu-byte log into %s; it holds %zu fingerprints\n",
                 static_cast<unsigned long long>(log_bytes), flags.index_path.c_str(),
                 (*index)->size());
  }
  return kExitOk;
}

int RunStats(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, nullptr);
  if (!index.ok()) return Fail(index.status());
  const DocumentIndexStats s = (*index)->Stats();
  nlohmann::ordered_json j = {
      {"path", flags.index_path},
      {"fingerprints", s.documents},
      {"bits", s.bits},
      {"max_k", s.max_k},
      {"memory_bytes", s.memory_bytes},
      {"file_bytes", s.file_bytes},
      {"log_bytes", s.log_bytes},
      {"log_records", s.log_records},
      {"pipeline", nlohmann::ordered_json::parse((*index)->header().pipeline_json)}};
  j["tables"] = TablesJson(s);
  auto out = Output::Open("-", {});
  if (!out.ok()) return Fail(out.status());
  (*out)->Write(flags.json ? j.dump() + "\n" : j.dump(2) + "\n");
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  return kExitOk;
}

int RunVerify(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, nullptr);
  if (!index.ok()) return Fail(index.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->Verify());
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: %s: verified, %zu fingerprints\n", flags.index_path.c_str(),
                 (*index)->size());
  }
  return kExitOk;
}

}  // namespace

void AddLockWaitOption(CLI::App* cmd, double* seconds) {
  cmd->add_option("--wait", *seconds,
                  "Seconds to wait for another process holding the index's lock (a server, "
                  "another writer) before giving up with exit status 1 (default: as long as it "
                  "takes; \"waiting for the lock held by pid N\" is printed after a second)")
      ->check(CLI::NonNegativeNumber);
}

void SetLockWait(const std::string& path, double seconds, DocumentIndexOptions* options) {
  options->lock_wait_seconds = seconds;
  options->on_lock_wait = [path](int pid) {
    if (pid > 0) {
      std::fprintf(stderr, "neardup: waiting for the lock held by pid %d (%s.lock)\n", pid,
                   path.c_str());
    } else {
      std::fprintf(stderr, "neardup: waiting for the lock on %s.lock\n", path.c_str());
    }
  };
}

nlohmann::ordered_json IndexTablesJson(const DocumentIndexStats& stats) {
  return TablesJson(stats);
}

Result<std::unique_ptr<DocumentIndex>> OpenIndexAndMethod(const std::string& path,
                                                          const std::string& jieba_dir,
                                                          DocumentIndex::Mode mode, Method* method,
                                                          const DocumentIndexOptions& options) {
  auto index = DocumentIndex::Open(path, mode, options);
  if (!index.ok()) return index.status();
  if (method != nullptr) {
    // The library checked the members' types, so value() cannot throw.
    const auto h = nlohmann::ordered_json::parse((*index)->header().pipeline_json);
    auto m = MethodFromHeader(h, jieba_dir);
    if (!m.ok() && m.status().IsCorruption()) {
      return Status::Corruption(path + ".ids: " + m.status().message());
    }
    if (!m.ok()) return m.status();
    *method = std::move(*m);
    if (method->pipeline.bits != (*index)->bits()) {
      return Status::Corruption(path + ".ids: says " + std::to_string(method->pipeline.bits) +
                                " bits, the index has " + std::to_string((*index)->bits()));
    }
  }
  return index;
}

void AddIndexCommand(CLI::App& app, ExitCode* exit_code) {
  CLI::App* index = app.add_subcommand(
      "index",
      "A persistent near-duplicate index (exact tables, or bit-sampling bands with a stated recall "
      "where they are cheaper)");
  index->require_subcommand(1);

  auto build = std::make_shared<IndexFlags>();
  CLI::App* b = index->add_subcommand("build", "Fingerprint documents and index them");
  AddInputOptions(b, &build->input);
  AddPipelineOptions(b, &build->pipeline, "nfkc", true);
  b->add_flag("--fingerprints", build->fingerprints,
              "INPUT is `neardup fingerprint` JSONL ({id, fingerprint}), not documents");
  b->add_option("--max-k", build->max_k, "Largest k that queries may use (default: the method's k)")
      ->check(CLI::Range(0, 32));
  b->add_flag("--exact", build->tables.exact,
              "Exact lookup tables (every match within k is found) whatever their cost; by "
              "default the cheaper of exact tables and bit-sampling bands with --recall");
  b->add_option("--recall", build->tables.recall,
                "Bands: the guaranteed recall at distance max k (default 0.99; 1 - (1 - R) / 100 "
                "at max k - 4)")
      ->check(CLI::Range(1e-6, 0.999999999));
  b->add_option("--max-table-bytes", build->tables.max_bytes_per_fingerprint,
                "Bands: bytes per fingerprint the tables may take (default 512)")
      ->check(CLI::Range(8, 65536));
  b->add_option("--index-version", build->tables.file_version,
                "Index file version to write: 3 (tables used in place, default), 2 (read by "
                "neardup before version 3) or 1 (read by older neardup; tables rebuilt on every "
                "open)")
      ->check(CLI::Range(1, 3));
  b->get_option("-o")->description(
      "The index to write: IDX (IDX.ids and IDX.lock go beside it); required, not -");
  b->callback([build, exit_code] { exit_code->value = RunBuild(*build); });

  auto query = std::make_shared<IndexFlags>();
  CLI::App* q =
      index->add_subcommand("query",
                            "Every indexed document within k of each input document: JSONL "
                            "{\"id\", \"matches\": [{\"id\", \"distance\"}, ...]}");
  q->add_option("IDX", query->index_path, "The index")->required();
  AddInputOptions(q, &query->input);
  q->add_option("-k", query->k, "Largest distance (default: the index's max k)")
      ->check(CLI::Range(0, 32));
  q->add_flag("--fingerprints", query->fingerprints, "INPUT is `neardup fingerprint` JSONL");
  q->add_option("--jieba-dir", query->pipeline.jieba_dir, "python3-jieba's data directory");
  q->callback([query, exit_code] { exit_code->value = RunQuery(*query); });

  auto add = std::make_shared<IndexFlags>();
  CLI::App* a = index->add_subcommand(
      "add",
      "Fingerprint documents and add them to the index (one fsynced record appended to IDX.log; "
      "IDX is rewritten once the log outgrows half of it, or by `index compact`)");
  a->add_option("IDX", add->index_path, "The index")->required();
  AddInputOptions(a, &add->input);
  a->add_flag("--fingerprints", add->fingerprints, "INPUT is `neardup fingerprint` JSONL");
  a->add_option("--jieba-dir", add->pipeline.jieba_dir, "python3-jieba's data directory");
  a->add_flag("--replace", add->replace,
              "Replace documents whose id is already indexed (default: an error, exit 2)");
  a->get_option("-o")->description("Not accepted: the index IDX is updated in place");
  AddLockWaitOption(a, &add->lock_wait);
  a->callback([a, add, exit_code] {
    if (a->get_option("-o")->count() > 0) {
      exit_code->value = Fail(Status::InvalidArgument(
          "index add updates IDX in place and writes no output; -o is not accepted"));
      return;
    }
    exit_code->value = RunAdd(*add);
  });

  auto check = std::make_shared<IndexFlags>();
  CLI::App* c = index->add_subcommand(
      "check",
      "Query-or-add: each document's matches within k and whether it was added, JSONL "
      "{\"id\", \"matches\": [{\"id\", \"distance\"}, ...], \"added\"}; with --add-new the "
      "documents without a match are added, atomically (under the index's lock)");
  c->add_option("IDX", check->index_path, "The index")->required();
  AddInputOptions(c, &check->input);
  c->add_option("-k", check->k, "Largest distance (default: the index's max k)")
      ->check(CLI::Range(0, 32));
  c->add_flag("--add-new", check->add_new,
              "Add every document that has no match within k (earlier documents of the same run "
              "count as indexed)");
  c->add_flag("--replace", check->replace,
              "With --add-new: a document whose id is indexed replaces it when added (default: "
              "an error, exit 2)");
  c->add_flag("--fingerprints", check->fingerprints, "INPUT is `neardup fingerprint` JSONL");
  AddLockWaitOption(c, &check->lock_wait);
  c->add_option("--jieba-dir", check->pipeline.jieba_dir, "python3-jieba's data directory");
  c->callback([check, exit_code] { exit_code->value = RunCheck(*check); });

  auto remove = std::make_shared<IndexFlags>();
  CLI::App* r = index->add_subcommand(
      "remove", "Remove documents from the index by id (one fsynced record appended to IDX.log)");
  r->add_option("IDX", remove->index_path, "The index")->required();
  r->add_option("ID", remove->remove_ids, "Document ids")->required();
  r->add_flag("--strict", remove->input.strict, "Exit with status 3 if an id is not indexed");
  r->add_flag("-q,--quiet", remove->input.quiet, "Print no summary");
  AddLockWaitOption(r, &remove->lock_wait);
  r->callback([remove, exit_code] { exit_code->value = RunRemove(*remove); });

  auto compact = std::make_shared<IndexFlags>();
  CLI::App* co = index->add_subcommand(
      "compact",
      "Rewrite IDX and IDX.ids with the log IDX.log (written by add, remove, check --add-new "
      "and serve) "
      "folded in and tables chosen for the index's size; a version 1 index becomes version 2 "
      "(the upgrade)");
  co->add_option("IDX", compact->index_path, "The index")->required();
  co->add_flag("-q,--quiet", compact->input.quiet, "Print no summary");
  AddLockWaitOption(co, &compact->lock_wait);
  co->callback([compact, exit_code] { exit_code->value = RunCompact(*compact); });

  auto snapshot = std::make_shared<IndexFlags>();
  auto snapshot_dest = std::make_shared<std::string>();
  CLI::App* sn = index->add_subcommand(
      "snapshot",
      "Write a consistent copy of IDX (every change acknowledged before it started, the log's "
      "included) as a new index DEST and DEST.ids, while a server or writer goes on; DEST must "
      "not exist");
  sn->add_option("IDX", snapshot->index_path, "The index")->required();
  sn->add_option("DEST", *snapshot_dest, "The copy's path")->required();
  sn->add_flag("-q,--quiet", snapshot->input.quiet, "Print no summary");
  sn->callback([snapshot, snapshot_dest, exit_code] {
    exit_code->value = RunSnapshot(*snapshot, *snapshot_dest);
  });

  auto verify = std::make_shared<IndexFlags>();
  CLI::App* v = index->add_subcommand(
      "verify", "Read the whole index and check every section's checksum and structure");
  v->add_option("IDX", verify->index_path, "The index")->required();
  v->add_flag("-q,--quiet", verify->input.quiet, "Print no summary");
  v->callback([verify, exit_code] { exit_code->value = RunVerify(*verify); });

  auto stats = std::make_shared<IndexFlags>();
  CLI::App* s = index->add_subcommand("stats", "Size, layout, memory and settings of an index");
  s->add_option("IDX", stats->index_path, "The index")->required();
  s->add_flag("--json", stats->json, "One line of JSON");
  s->callback([stats, exit_code] { exit_code->value = RunStats(*stats); });
}

}  // namespace neardup::cli
