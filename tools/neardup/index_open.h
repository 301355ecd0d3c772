// Copyright 2026 The neardup Authors.
//
// Opening a DocumentIndex together with the method its fingerprints were made
// with (shared by `neardup index` and `neardup serve`).

#ifndef NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_
#define NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "neardup/document_index.h"
#include "neardup/method.h"

namespace neardup::cli {

// Opens the index at `path`; when `method` is not null, recovers the stored
// method (its data files verified; `jieba_dir` overrides the dictionary
// directory) into *method. Corruption when the stored method is unreadable or
// its width differs from the index's.
Result<std::unique_ptr<DocumentIndex>> OpenIndexAndMethod(const std::string& path,
                                                          const std::string& jieba_dir,
                                                          DocumentIndex::Mode mode, Method* method,
                                                          const DocumentIndexOptions& options = {});

// `--wait SECONDS` for `cmd`, a command that opens an index for writing:
// how long to wait for another process's lock on IDX.lock (default: as long
// as it takes).
void AddLockWaitOption(CLI::App* cmd, double* seconds);

// Sets `options` to wait `seconds` (< 0: no limit) for the lock of the index
// at `path` and, after about a second, to say on standard error
// "waiting for the lock held by pid N".
void SetLockWait(const std::string& path, double seconds, DocumentIndexOptions* options);

// The "tables" object of `index stats` and serve's /v1/stats: the lookup
// tables and their guaranteed recall.
nlohmann::ordered_json IndexTablesJson(const DocumentIndexStats& stats);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_
