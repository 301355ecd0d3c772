// Copyright 2026 The neardup Authors.
//
// The lock-wait option of the commands that open an index for writing
// (shared by `neardup index` and `neardup serve`; the index itself is a
// neardup::TextIndex, text_index.h).

#ifndef NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_
#define NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_

#include <CLI/CLI.hpp>
#include <cstdint>
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

// `--max-age DURATION` and `--max-count N` for `cmd` (index compact, serve):
// the eviction limits (DocumentIndex::Evict). DURATION is a non-negative
// integer of seconds, or with a unit: s, m, h, d (e.g. 30d).
void AddEvictionOptions(CLI::App* cmd, EvictionOptions* options);
// "" when `text` is a DURATION (*seconds set), else why not.
std::string ParseDuration(const std::string& text, int64_t* seconds);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_INDEX_OPEN_H_
