// Copyright 2026 The neardup Authors.
//
// The files of a DocumentIndex at PATH and their names (doc/index_format.md):
// PATH.ids, PATH.lock, PATH.log, the pending PATH.ids.<checksum> and
// PATH.log.<checksum> of a commit, and the leftovers a crashed one leaves.

#ifndef NEARDUP_INDEX_DOCUMENT_FILES_H_
#define NEARDUP_INDEX_DOCUMENT_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace neardup::index_internal {

// 16 lowercase hexadecimal digits.
std::string Hex64(uint64_t v);
// Bytes as lowercase hexadecimal digit pairs, and back (nullopt when `hex`
// is not an even number of them).
std::string HexBytes(std::string_view bytes);
std::optional<std::string> BytesOfHex(std::string_view hex);

std::string IdsPath(const std::string& path);
// The ids file of the index file with this checksum, before the commit
// renames it to IdsPath.
std::string PendingIdsPath(const std::string& path, uint64_t checksum);
std::string LockPath(const std::string& path);
std::string LogPath(const std::string& path);
// A log written for the index file with this checksum, waiting for the
// commit that makes that file current (a background compaction's).
std::string PendingLogPath(const std::string& path, uint64_t checksum);

// True when `name` (a file in the index's directory, `base` the index's own
// path there) is what a crashed commit leaves: PATH.tmp, or
// PATH.ids.<16 hex> / PATH.log.<16 hex> of an index file other than `keep`.
bool IsLeftover(const std::string& name, const std::string& base, uint64_t keep);

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_DOCUMENT_FILES_H_
