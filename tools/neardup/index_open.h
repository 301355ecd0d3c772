// Copyright 2026 The neardup Authors.
//
// The lock-wait option of the commands that open an index for writing
// (shared by `neardup index` and `neardup serve`; the index itself is a
// neardup::TextIndex, text_index.h).

#ifndef NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_
#define NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_

#include <CLI/CLI.hpp>
#include <string>

#include "neardup/document_index.h"

namespace neardup::cli {

// `--wait SECONDS` for `cmd`, a command that opens an index for writing:
// how long to wait for another process's lock on IDX.lock (default: as long
// as it takes).
void AddLockWaitOption(CLI::App* cmd, double* seconds);

// Sets `options` to wait `seconds` (< 0: no limit) for the lock of the index
// at `path` and, after about a second, to say on standard error
// "waiting for the lock held by pid N".
void SetLockWait(const std::string& path, double seconds, DocumentIndexOptions* options);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_
