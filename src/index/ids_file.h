// Copyright 2026 The neardup Authors.
//
// The ids file of a DocumentIndex (doc/index_format.md, "The ids file"): its
// header, its lines, and the reading of a committed pair (the index file and
// the ids file that belongs to it, "Reading").

#ifndef NEARDUP_INDEX_IDS_FILE_H_
#define NEARDUP_INDEX_IDS_FILE_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "index/index_file_v2.h"
#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup::index_internal {

// Version 2 added index_checksum and lines (both required in it). Version 1
// files, written before the commit protocol, are still read; an older neardup
// refuses version 2 files instead of rewriting them with a stale checksum.
// Version 3 is version 2 with an "attachment" (DocumentIndexHeader): written
// only when there is one, so that an older neardup, which would rewrite the
// header without it, refuses the file instead.
inline constexpr int kIdsFormatVersion = 3;
inline constexpr int kIdsFormatVersionWithoutAttachment = 2;
inline constexpr int kOldestIdsFormatVersion = 1;
// A reader that finds the two files out of step while one of them was
// replaced meanwhile (a writer committed between the reader's reads) reads
// them again; a writer's window is milliseconds, so a few attempts suffice.
inline constexpr int kOpenAttempts = 20;
inline constexpr auto kRetryDelay = std::chrono::milliseconds(20);

// Corruption "FILE:LINE: why".
Status Bad(const std::string& file, uint64_t line, const std::string& why);

// "" when the "pipeline" header's known members have their types, else why
// not.
std::string CheckPipeline(const nlohmann::ordered_json& pipeline);

// The header line of an ids file, checked.
struct IdsHeader {
  nlohmann::ordered_json pipeline = nlohmann::ordered_json::object();
  bool fingerprints_input = false;
  std::optional<uint64_t> index_checksum;  // absent in files written before it existed
  std::optional<uint64_t> lines;
  std::string attachment;  // DocumentIndexHeader::attachment (version 3)
  // "added": the add times (add_times.h), checked against `lines` on Open;
  // absent in files written before they were recorded.
  std::optional<nlohmann::ordered_json> added;
};
Result<IdsHeader> ParseIdsHeader(std::string_view line, const std::string& file);

// A committed pair as read from disk, not yet parsed beyond the ids header.
struct RawPair {
  std::shared_ptr<MappedFile> index_file;
  std::string_view index_bytes;  // of index_file
  // The whole ids file for a version 1 index file; its header line for a
  // version 2 one (whose ids are in the index file itself).
  std::string ids_text;
  std::string ids_file;       // which file ids_text came from
  bool from_pending = false;  // ids_file is PATH.ids.<checksum>: the commit was interrupted
  IdsHeader header;
};

// What identifies one version of a file name: a writer replaces the files
// only by rename, which gives the name a new inode.
struct FileId {
  bool exists = false;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  friend bool operator==(const FileId&, const FileId&) = default;
};
FileId IdOf(const std::string& path);

// Reads PATH and the ids file that belongs to it (see "Reading" in
// doc/index_format.md).
Result<RawPair> ReadCommittedPair(const std::string& path, bool preload);

// The document ids of the lines of a version 1 ids file, checked against
// the entries of `index` (by numeric id; a line whose entry is gone is
// removed: nullopt).
Status ParseIds(const RawPair& raw, const HammingIndex& index,
                std::vector<std::optional<std::string>>* names);

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_IDS_FILE_H_
