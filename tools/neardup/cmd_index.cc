// Copyright 2026 The neardup Authors.
//
// neardup index build|query|add|check|remove|stats...: a persistent
// near-duplicate index, a neardup::TextIndex (text_index.h): IDX, IDX.ids
// beside it with the document ids, the method (method.h: so that queries are
// fingerprinted the same way) and the boilerplate line counts, committed
// together (doc/index_format.md). This file only wires the library's calls
// to the command line.

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "index_open.h"
#include "neardup/document_index.h"
#include "neardup/text_index.h"

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
  EvictionOptions evict;      // compact: --max-age, --max-count
};

// Every input document's id and fingerprint, in input order: made by the
// index (text_index.h: its boilerplate lines left out, its method), or parsed
// with --fingerprints (malformed ones are reported and skipped).
struct Read {
  std::vector<std::string> ids;
  std::vector<DocumentFingerprint> fps;
};

Result<InputStats> ReadFingerprints(const IndexFlags& flags, const TextIndex& index, Read* read) {
  auto read_options = MakeReadOptions(flags.input);
  if (!read_options.ok()) return read_options.status();
  if (flags.fingerprints) {
    read_options->text_field = "fingerprint";
    read_options->format = InputFormat::kJsonl;
  }
  const int bits = index.bits();
  uint64_t bad = 0;
  // With --fingerprints the document's text is the fingerprint: parsed here.
  const std::function<DocumentFingerprint(const Document&)> process = [&](const Document& doc) {
    if (flags.fingerprints) return DocumentFingerprint{};
    return index.Fingerprint(doc.text, doc.title);
  };
  const std::function<void(const Document&, DocumentFingerprint&)> emit =
      [&](const Document& doc, DocumentFingerprint& computed) {
        if (!flags.fingerprints) {
          read->ids.push_back(doc.id);
          read->fps.push_back(computed);
          return;
        }
        auto fp = Fingerprint::FromHex(doc.text);
        if (!fp.ok() || fp->bits() != bits) {
          ++bad;
          std::cerr << "neardup: skipped: " << doc.source << ":" << doc.line << ": "
                    << (fp.ok() ? "a " + std::to_string(fp->bits()) + "-bit fingerprint in a " +
                                      std::to_string(bits) + "-bit index"
                                : fp.status().message())
                    << "\n";
          return;
        }
        read->ids.push_back(doc.id);
        read->fps.push_back(DocumentFingerprint{*fp, 1});
      };
  auto stats = ForEachDocumentAs<DocumentFingerprint>(flags.input, *read_options, process, emit);
  if (!stats.ok()) return stats.status();
  stats->malformed += bad;
  return stats;
}

size_t CountEmpty(const std::vector<DocumentFingerprint>& fps) {
  size_t n = 0;
  for (const DocumentFingerprint& fp : fps) n += fp.empty();
  return n;
}

// One output line: {"id", "matches": [{"id", "distance"}...]}, then
// "added" (check), and "empty": true for a document without features (the
// text index's policy: no matches, never added), as serve answers.
std::string ResultLine(const std::string& id, const TextIndexResult& r, bool with_added) {
  nlohmann::ordered_json matches = nlohmann::ordered_json::array();
  for (const DocumentMatch& m : r.matches) {
    matches.push_back({{"id", m.id}, {"distance", m.distance}});
  }
  nlohmann::ordered_json line = {{"id", id}, {"matches", std::move(matches)}};
  if (with_added) line["added"] = r.added;
  if (r.empty) line["empty"] = true;
  return JsonLine(line);
}

// No input may be one of the files the index at flags.index_path owns
// (TextIndex::OwnedFiles, a crashed commit's leftovers): writing the index
// would replace or delete it.
Status CheckIndexInputs(const IndexFlags& flags) {
  NEARDUP_RETURN_IF_ERROR(
      CheckInputsAndOutputs(flags.input.inputs, TextIndex::OwnedFiles(flags.index_path)));
  std::error_code ec;
  const std::string index = std::filesystem::weakly_canonical(flags.index_path, ec).string();
  for (const std::string& input : flags.input.inputs) {
    if (input == "-") continue;
    const std::string file = std::filesystem::weakly_canonical(input, ec).string();
    if (!ec && TextIndex::IsOwnedFile(index, file)) {
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
  if (flags.max_k > method->pipeline.bits / 4) {
    return Fail(
        Status::InvalidArgument(KRangeMessage(flags.max_k, method->pipeline.bits, "--max-k")));
  }
  // -o names the index here (IDX and IDX.ids are written).
  flags.index_path = flags.input.output;
  if (flags.index_path.empty() || flags.index_path == "-") {
    return Fail(Status::InvalidArgument(
        "index build needs -o IDX, the index file to write (an index is two files, IDX and "
        "IDX.ids, so it cannot go to standard output)"));
  }
  NEARDUP_RETURN_IF_ERROR_CLI(CheckIndexInputs(flags));
  flags.input.progress = true;
  TextIndexOptions options;
  options.max_k = flags.max_k;
  options.threads = flags.input.threads;
  options.tables = flags.tables;
  options.fingerprints_input = flags.fingerprints;
  options.overwrite = true;  // `index build -o IDX` replaces IDX
  std::unique_ptr<TextIndex> index;
  InputStats stats;
  size_t empty = 0;
  if (flags.fingerprints) {
    // Precomputed fingerprints: parsed here, loaded as they are.
    NEARDUP_ASSIGN_OR_RETURN_CLI(index, TextIndex::Create(flags.index_path, *method, options));
    Read read;
    NEARDUP_ASSIGN_OR_RETURN_CLI(stats, ReadFingerprints(flags, *index, &read));
    NEARDUP_RETURN_IF_ERROR_CLI(index->Load(read.ids, read.fps, nullptr));
    NEARDUP_RETURN_IF_ERROR_CLI(index->Commit());
  } else {
    // The library's build (text_index.h): boilerplate=lines counts the
    // corpus's lines first; the index keeps the counts in its commit.
    auto read_options = MakeReadOptions(flags.input);
    if (!read_options.ok()) return Fail(read_options.status());
    ProgressLine progress(ProgressModeOf(flags.input));
    TextIndexBuildSummary summary;
    auto built = TextIndex::Build(flags.index_path, *method, options,
                                  MakeDedupInput(flags.input, *read_options),
                                  ProgressOn(&progress, flags.input.inputs), &summary);
    progress.Clear();
    if (!built.ok()) return Fail(built.status());
    index = std::move(*built);
    stats = summary.input;
    empty = summary.empty;
    if (!flags.input.quiet) std::cerr << SummaryLine(stats) << "\n";
  }
  if (!flags.input.quiet) {
    const TextIndexStats s = index->Stats();
    std::fprintf(stderr,
                 "neardup: indexed %zu documents (%zu empty documents not indexed) in %s: "
                 "%d bits, max k %d, %s, guaranteed recall %.6f at distance %d\n",
                 s.documents, empty, flags.index_path.c_str(), s.bits, s.max_k,
                 s.tables.kind == "scan" ? "no tables (the exact scan)"
                 : s.tables.kind == "filter"
                     ? "no tables (the two-level scan)"
                     : (std::to_string(s.tables.tables) + " " + s.tables.kind + " tables").c_str(),
                 s.tables.recall_at_k, s.max_k);
  }
  return InputExitCode(flags.input, stats);
}

// The index with its method and line counts. `texts`: documents will be
// fingerprinted (not with --fingerprints, nor for commands that read none).
Result<std::unique_ptr<TextIndex>> Open(const IndexFlags& flags, DocumentIndex::Mode mode,
                                        bool texts, DocumentIndexOptions index_options = {}) {
  TextIndexOpenOptions options;
  options.mode = mode;
  options.index = std::move(index_options);
  options.jieba_dir = flags.pipeline.jieba_dir;
  options.texts = texts && !flags.fingerprints;
  SetLockWait(flags.index_path, flags.lock_wait, &options.index);
  return TextIndex::Open(flags.index_path, options);
}

Status CheckK(int k, const TextIndex& index) {
  if (k <= index.max_k()) return Status::OK();
  return Status::InvalidArgument("-k " + std::to_string(k) + " is larger than the index's max k " +
                                 std::to_string(index.max_k()) +
                                 ": its tables find matches up to the distance it was built for "
                                 "(rebuild it with index build --max-k " +
                                 std::to_string(k) + ")");
}

int RunQuery(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, true);
  if (!index.ok()) return Fail(index.status());
  const TextIndex& idx = **index;
  NEARDUP_RETURN_IF_ERROR_CLI(CheckK(flags.k, idx));
  Read read;
  auto stats = ReadFingerprints(flags, idx, &read);
  if (!stats.ok()) return Fail(stats.status());
  std::vector<TextIndexResult> results;
  NEARDUP_RETURN_IF_ERROR_CLI(idx.Query(read.fps, flags.k, &results));
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());
  for (size_t i = 0; i < results.size(); ++i) {
    (*out)->Write(ResultLine(read.ids[i], results[i], /*with_added=*/false));
  }
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
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
  auto index = Open(flags, DocumentIndex::Mode::kReadWrite, true, WriteAheadOptions());
  if (!index.ok()) return Fail(index.status());
  Read read;
  auto stats = ReadFingerprints(flags, **index, &read);
  if (!stats.ok()) return Fail(stats.status());
  Status added = (*index)->Add(read.ids, read.fps, flags.replace, nullptr);
  if (added.IsInvalidArgument() && !flags.replace) {
    added = Status::InvalidArgument(added.message() + "; --replace replaces it");
  }
  NEARDUP_RETURN_IF_ERROR_CLI(added);
  if (!flags.input.quiet) {
    std::fprintf(stderr,
                 "neardup: added %zu documents (%zu empty not added); the index holds %zu\n",
                 read.fps.size() - CountEmpty(read.fps), CountEmpty(read.fps), (*index)->size());
  }
  return InputExitCode(flags.input, *stats);
}

// Query-or-add: each document's matches, and whether it was added, as one
// step under the index's lock (TextIndex::Check).
int RunCheck(const IndexFlags& flags) {
  NEARDUP_RETURN_IF_ERROR_CLI(CheckIndexInputs(flags));
  const auto mode =
      flags.add_new ? DocumentIndex::Mode::kReadWrite : DocumentIndex::Mode::kReadOnly;
  // The additions go to the log (one synced record), not a rewrite of IDX.
  auto index = Open(flags, mode, true, WriteAheadOptions());
  if (!index.ok()) return Fail(index.status());
  TextIndex& idx = **index;
  NEARDUP_RETURN_IF_ERROR_CLI(CheckK(flags.k, idx));
  CheckOptions options;
  options.k = flags.k;
  options.policy = flags.add_new ? CheckPolicy::kAddIfNew : CheckPolicy::kQueryOnly;
  options.replace = flags.replace;
  Read read;
  auto stats = ReadFingerprints(flags, idx, &read);
  if (!stats.ok()) return Fail(stats.status());
  std::vector<TextIndexResult> results;
  Status checked = idx.Check(read.ids, read.fps, options, &results);
  if (checked.IsInvalidArgument() && flags.add_new && !flags.replace &&
      checked.message().find("is already in") != std::string::npos) {
    checked = Status::InvalidArgument(checked.message() + "; --replace replaces it");
  }
  NEARDUP_RETURN_IF_ERROR_CLI(checked);
  auto out = Output::Open(flags.input.output, flags.input.inputs);
  if (!out.ok()) return Fail(out.status());
  size_t added = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    (*out)->Write(ResultLine(read.ids[i], results[i], /*with_added=*/true));
    added += results[i].added;
  }
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  if (!flags.input.quiet && flags.add_new) {
    std::fprintf(stderr, "neardup: checked %zu documents, added %zu; the index holds %zu\n",
                 results.size(), added, idx.size());
  }
  return InputExitCode(flags.input, *stats);
}

int RunRemove(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadWrite, false, WriteAheadOptions());
  if (!index.ok()) return Fail(index.status());
  std::vector<std::string> missing;
  auto removed = (*index)->Remove(flags.remove_ids, &missing);
  if (!removed.ok()) return Fail(removed.status());
  for (const std::string& id : missing) {
    std::cerr << "neardup: warning: no document '" << id << "' in " << flags.index_path << "\n";
  }
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: removed %zu documents; the index holds %zu\n", *removed,
                 (*index)->size());
  }
  return !missing.empty() && flags.input.strict ? kExitBadInput : kExitOk;
}

// A consistent copy of the index as a reader sees it (every acknowledged
// change, the log's included), taken without the writers' lock: a server
// goes on serving.
int RunSnapshot(const IndexFlags& flags, const std::string& dest) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, false);
  if (!index.ok()) return Fail(index.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->SaveSnapshot(dest));
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: wrote a snapshot of %s to %s: %zu documents\n",
                 flags.index_path.c_str(), dest.c_str(), (*index)->size());
  }
  return kExitOk;
}

int RunCompact(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadWrite, false);
  if (!index.ok()) return Fail(index.status());
  const uint64_t log_bytes = (*index)->Stats().log_bytes;
  // Evicted in memory (this open logs nothing), so the compaction's commit
  // is the one step that removes them from the files: old or new state.
  auto evicted = (*index)->documents().Evict(flags.evict);
  if (!evicted.ok()) return Fail(evicted.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->Compact());
  if (!flags.input.quiet) {
    std::fprintf(stderr,
                 "neardup: folded a %llu-byte log into %s, evicted %zu documents; it holds %zu "
                 "documents\n",
                 static_cast<unsigned long long>(log_bytes), flags.index_path.c_str(), *evicted,
                 (*index)->size());
  }
  return kExitOk;
}

int RunStats(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, false);
  if (!index.ok()) return Fail(index.status());
  auto out = Output::Open("-", {});
  if (!out.ok()) return Fail(out.status());
  (*out)->Write(TextIndexStatsJson((*index)->Stats(), flags.json ? -1 : 2) + "\n");
  NEARDUP_RETURN_IF_ERROR_CLI((*out)->Close());
  return kExitOk;
}

int RunVerify(const IndexFlags& flags) {
  auto index = Open(flags, DocumentIndex::Mode::kReadOnly, false);
  if (!index.ok()) return Fail(index.status());
  NEARDUP_RETURN_IF_ERROR_CLI((*index)->Verify());
  if (!flags.input.quiet) {
    std::fprintf(stderr, "neardup: %s: verified, %zu documents\n", flags.index_path.c_str(),
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

std::string ParseDuration(const std::string& text, int64_t* seconds) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string unit = text.substr(digits);
  int64_t scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "m") scale = 60;
  if (unit == "h") scale = 3600;
  if (unit == "d") scale = 86400;
  if (digits == 0 || digits > 15 || scale == 0) {
    return "'" + text + "' is not a duration (seconds, or a number with s, m, h or d: 30d)";
  }
  *seconds = std::stoll(text.substr(0, digits)) * scale;
  return "";
}

void AddEvictionOptions(CLI::App* cmd, EvictionOptions* options) {
  cmd->add_option_function<std::string>(
         "--max-age",
         [options](const std::string& text) {
           int64_t seconds = 0;
           const std::string why = ParseDuration(text, &seconds);
           if (!why.empty()) throw CLI::ValidationError("--max-age", why);
           options->max_age_seconds = seconds;
         },
         "Evict the documents added more than DURATION ago (seconds, or 90m, 12h, 30d), by "
         "the time recorded at each add")
      ->type_name("DURATION");
  cmd->add_option_function<size_t>(
         "--max-count", [options](size_t n) { options->max_count = n; },
         "Evict the oldest documents beyond N (the newest N stay)")
      ->type_name("N");
}

void AddIndexCommand(CLI::App& app, ExitCode* exit_code) {
  CLI::App* index = app.add_subcommand(
      "index",
      "A persistent near-duplicate index (the exact SIMD scan, exact tables, or with a stated "
      "recall the two-level scan, sorted probe tables or bit-sampling bands: whichever is "
      "cheapest)");
  index->require_subcommand(1);

  auto build = std::make_shared<IndexFlags>();
  CLI::App* b = index->add_subcommand("build", "Fingerprint documents and index them");
  AddInputOptions(b, &build->input);
  AddPipelineOptions(b, &build->pipeline, "nfkc", true);
  b->add_flag("--fingerprints", build->fingerprints,
              "INPUT is `neardup fingerprint` JSONL ({id, fingerprint}), not documents");
  b->add_option("--max-k", build->max_k,
                "Largest k that queries may use, 0 to bits/4 (default: the method's k)")
      ->check(CLI::NonNegativeNumber);  // the upper bound is the method's: RunBuild
  b->add_flag("--exact", build->tables.exact,
              "Exact lookup tables (every match within k is found) whatever their cost; by "
              "default the cheapest of the exact scan (no tables), exact tables and, with "
              "--recall, the two-level scan (no tables, 128 bits), probe tables (128 bits) and "
              "bit-sampling bands");
  b->add_flag(
      "--tables", build->tables.tables_only,
      "Lookup tables (exact or bands) even where a scan (exact or two-level) is cheaper, so that a "
      "query's cost grows slower than the index");
  b->add_option(
       "--recall", build->tables.recall,
       "Bands, probe tables and the two-level scan: the guaranteed recall at distance max k "
       "(default 0.99; 1 - (1 - R) / 100 at max k - 4)")
      ->check(CLI::Range(1e-6, 0.999999999));
  b->add_option("--max-table-bytes", build->tables.max_bytes_per_fingerprint,
                "Bands and probe tables: bytes per fingerprint the tables may take (default 512; "
                "probe tables at most 128)")
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
      ->check(CLI::NonNegativeNumber);  // at most the index's max k: CheckK
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
      ->check(CLI::NonNegativeNumber);  // at most the index's max k: CheckK
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
      "folded in and tables chosen for the index's size; a version 1 or 2 index becomes version "
      "3 (the upgrade); with --max-age/--max-count, the evicted documents left out");
  co->add_option("IDX", compact->index_path, "The index")->required();
  co->add_flag("-q,--quiet", compact->input.quiet, "Print no summary");
  AddLockWaitOption(co, &compact->lock_wait);
  AddEvictionOptions(co, &compact->evict);
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
