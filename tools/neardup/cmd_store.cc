// Copyright 2026 The neardup Authors.
//
// neardup store add|get|ls|rm|stats|verify: the block-level dedup store.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "neardup/extract.h"
#include "neardup/store.h"

namespace neardup::cli {
namespace {

struct StoreArgs {
  std::string store;
  // add
  std::string chunker = "simhash";
  int near_threshold = StoreOptions().near_threshold;
  std::string feature_hash = "md5";
  bool no_compress = false;
  bool no_sync = false;
  uint64_t max_uncompressed = ExtractOptions().max_uncompressed_bytes;
  std::vector<std::string> files;
  // get
  std::string name;
  std::string output;
  // ls
  bool long_format = false;
  // rm
  std::vector<std::string> names;
  // stats
  bool json = false;
};

Result<std::unique_ptr<Store>> OpenStore(const StoreArgs& args, bool create) {
  StoreOptions options;
  options.create_if_missing = create;
  Result<ChunkerSpec> chunker = ParseChunkerSpec(args.chunker);
  if (!chunker.ok()) return chunker.status();
  options.chunker = *chunker;
  options.near_threshold = args.near_threshold;
  if (args.feature_hash == "xxh3") {
    options.feature_hash = FeatureHashAlgorithm::kXxh3;
  } else if (args.feature_hash != "md5") {
    return Status::InvalidArgument("--feature-hash must be md5 or xxh3");
  }
  if (args.no_compress) options.compression = StoreCompression::kNone;
  if (args.no_sync) options.sync_every_commit = false;
  return Store::Open(args.store, options);
}

int Fail(const Status& s) {
  std::cerr << "neardup store: " << s.ToString() << "\n";
  return s.IsInvalidArgument() ? kExitUsage : kExitError;
}

int RunAdd(const StoreArgs& args) {
  auto store = OpenStore(args, /*create=*/true);
  if (!store.ok()) return Fail(store.status());
  ExtractOptions extract;
  extract.max_uncompressed_bytes = args.max_uncompressed;
  int rc = kExitOk;
  for (const std::string& path : args.files) {
    DocumentKind kind = DocumentKind::kPlainText;
    Result<std::string> text = ExtractText(path, extract, &kind);
    Status s = text.ok() ? (*store)->Add(path, *text) : text.status();
    if (!s.ok()) {
      std::cerr << "neardup store add: " << path << ": " << s.ToString() << "\n";
      rc = kExitError;
      continue;
    }
    // Printed after the commit: a line here means the file is in the store.
    std::cout << "added " << path << " (" << text->size() << " bytes"
              << (kind == DocumentKind::kDocx  ? ", docx text"
                  : kind == DocumentKind::kPdf ? ", pdf text"
                                               : "")
              << ")" << std::endl;
  }
  return rc;
}

int RunGet(const StoreArgs& args) {
  auto store = OpenStore(args, /*create=*/false);
  if (!store.ok()) return Fail(store.status());
  Result<std::string> content = (*store)->Get(args.name);
  if (!content.ok()) return Fail(content.status());
  if (args.output.empty() || args.output == "-") {
    std::cout.write(content->data(), static_cast<std::streamsize>(content->size()));
    std::cout.flush();
    if (!std::cout) return Fail(Status::IOError("cannot write to standard output"));
    return kExitOk;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out.write(content->data(), static_cast<std::streamsize>(content->size()));
  out.close();
  if (!out) return Fail(Status::IOError(args.output + ": cannot write"));
  return kExitOk;
}

// A stored name on one line, as `ls -b` shows it: backslash, tab, newline and
// the other control characters escaped (\\, \t, \n, \xNN), so that a name
// holding a newline cannot pass for two files.
std::string EscapeName(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

int RunLs(const StoreArgs& args) {
  auto store = OpenStore(args, /*create=*/false);
  if (!store.ok()) return Fail(store.status());
  auto files = (*store)->List();
  if (!files.ok()) return Fail(files.status());
  for (const StoredFileInfo& f : *files) {
    if (args.long_format) {
      std::cout << f.size << "\t" << f.sha256_hex << "\t" << f.chunker << "\t" << f.entries << "\t";
    }
    std::cout << EscapeName(f.name) << "\n";
  }
  return kExitOk;
}

int RunRm(const StoreArgs& args) {
  auto store = OpenStore(args, /*create=*/false);
  if (!store.ok()) return Fail(store.status());
  int rc = kExitOk;
  for (const std::string& name : args.names) {
    Status s = (*store)->Remove(name);
    if (!s.ok()) {
      std::cerr << "neardup store rm: " << name << ": " << s.ToString() << "\n";
      rc = kExitError;
    }
  }
  return rc;
}

int RunStats(const StoreArgs& args) {
  auto store = OpenStore(args, /*create=*/false);
  if (!store.ok()) return Fail(store.status());
  auto st = (*store)->Stats();
  if (!st.ok()) return Fail(st.status());
  if (args.json) {
    nlohmann::json j = {{"files", st->files},         {"bytes_in", st->bytes_in},
                        {"bytes_out", st->bytes_out}, {"dedup_rate", st->dedup_rate},
                        {"chunks", st->chunks},       {"stored_bytes", st->stored_bytes},
                        {"db_bytes", st->db_bytes}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "files:        " << st->files << "\n"
              << "bytes_in:     " << st->bytes_in << "\n"
              << "bytes_out:    " << st->bytes_out << "\n"
              << "dedup_rate:   " << st->dedup_rate << "\n"
              << "chunks:       " << st->chunks << "\n"
              << "stored_bytes: " << st->stored_bytes << "\n"
              << "db_bytes:     " << st->db_bytes << "\n";
  }
  return kExitOk;
}

int RunVerify(const StoreArgs& args) {
  auto store = OpenStore(args, /*create=*/false);
  if (!store.ok()) return Fail(store.status());
  auto problems = (*store)->Verify();
  if (!problems.ok()) return Fail(problems.status());
  for (const VerifyProblem& p : *problems) {
    std::cerr << "BAD " << (p.name.empty() ? "<store>" : p.name) << ": " << p.reason << "\n";
  }
  if (!problems->empty()) {
    std::cerr << "neardup store verify: " << problems->size() << " problem(s)\n";
    return kExitError;
  }
  auto files = (*store)->List();
  std::cout << "ok: " << (files.ok() ? files->size() : 0) << " file(s) verified\n";
  return kExitOk;
}

}  // namespace

void AddStoreCommand(CLI::App& app, ExitCode* exit_code) {
  auto args = std::make_shared<StoreArgs>();
  CLI::App* store =
      app.add_subcommand("store", "Block-level dedup store of text files in one SQLite file");
  store->require_subcommand(1);

  const auto add_store_option = [&](CLI::App* cmd) {
    cmd->add_option("--store,-s", args->store, "The store file (SQLite)")->required();
  };

  CLI::App* add = store->add_subcommand(
      "add", "Add files (docx and pdf are stored as their extracted text), one transaction each");
  add_store_option(add);
  add->add_option("--chunker", args->chunker, "simhash | exact-paragraph | fsp:SIZE | cdc:AVG")
      ->default_val("simhash");
  add->add_option("--near-threshold", args->near_threshold,
                  "simhash: max Hamming distance of a near block")
      ->check(CLI::Range(0, 64))
      ->default_val(StoreOptions().near_threshold);
  add->add_option("--feature-hash", args->feature_hash, "simhash sentence hash: md5 | xxh3")
      ->default_val("md5");
  add->add_flag("--no-compress", args->no_compress, "Store chunks without zstd");
  add->add_flag("--no-sync", args->no_sync,
                "No fsync per file (SQLite synchronous=NORMAL): a killed add still loses "
                "nothing committed, a power loss may lose the last files");
  add->add_option("--max-uncompressed", args->max_uncompressed,
                  "Bound on a docx member's uncompressed bytes")
      ->default_val(ExtractOptions().max_uncompressed_bytes);
  add->add_option("FILE", args->files,
                  "Regular files to add (stored under the path as given; at most 256 MiB each)")
      ->required();
  add->callback([args, exit_code] { exit_code->value = RunAdd(*args); });

  CLI::App* get = store->add_subcommand("get", "Write a stored file (SHA-256 verified)");
  add_store_option(get);
  get->add_option("NAME", args->name, "The stored name")->required();
  get->add_option("-o,--output", args->output, "Output file (default: standard output)");
  get->callback([args, exit_code] { exit_code->value = RunGet(*args); });

  CLI::App* ls = store->add_subcommand(
      "ls", "List stored files, one per line (control characters and \\ in names escaped)");
  add_store_option(ls);
  ls->add_flag("-l,--long", args->long_format, "Show size, SHA-256, chunker and entries");
  ls->callback([args, exit_code] { exit_code->value = RunLs(*args); });

  CLI::App* rm = store->add_subcommand("rm", "Remove files and the blocks only they used");
  add_store_option(rm);
  rm->add_option("NAME", args->names, "Stored names")->required();
  rm->callback([args, exit_code] { exit_code->value = RunRm(*args); });

  CLI::App* stats = store->add_subcommand(
      "stats", "Files, bytes in/out, dedup rate = (in - out) / in, size on disk");
  add_store_option(stats);
  stats->add_flag("--json", args->json, "Print one JSON object");
  stats->callback([args, exit_code] { exit_code->value = RunStats(*args); });

  CLI::App* verify = store->add_subcommand(
      "verify", "Re-assemble and check every file; non-zero exit on any problem");
  add_store_option(verify);
  verify->callback([args, exit_code] { exit_code->value = RunVerify(*args); });
}

}  // namespace neardup::cli
