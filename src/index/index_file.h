// Copyright 2026 The neardup Authors.
//
// Internal: reading and writing the index file format (doc/index_format.md).

#ifndef NEARDUP_INDEX_INDEX_FILE_H_
#define NEARDUP_INDEX_INDEX_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup::index_internal {

inline constexpr char kIndexMagic[8] = {'N', 'D', 'U', 'P', 'I', 'D', 'X', '1'};
inline constexpr uint32_t kIndexVersion = 1;
inline constexpr size_t kIndexHeaderSize = 40;
inline constexpr size_t kIndexFooterSize = 8;

struct IndexFileHeader {
  IndexType type = IndexType::kLinearScan;
  int bits = 64;
  int max_k = 0;
  int blocks = 0;  // 0 for a linear scan
};

// The decoded contents of an index file; fingerprints as (hi, lo) columns
// (hi all 0 for 64 bits).
struct IndexFileContents {
  IndexFileHeader header;
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fps;
};

// Writes `entries` under `header` to `path` (created or truncated) and fsyncs
// it; the file's checksum (its last 8 bytes) goes to *checksum when not null.
// On failure the partial file is removed.
Status WriteIndexFileContents(const std::string& path, const IndexFileHeader& header,
                              const std::vector<IndexEntry>& entries, uint64_t* checksum);

// WriteIndexFileContents to path + ".tmp", then renames it over `path` and
// fsyncs the directory.
Status WriteIndexFile(const std::string& path, const IndexFileHeader& header,
                      const std::vector<IndexEntry>& entries);

// The checksum stored in a file image's last 8 bytes (0 when shorter); it
// identifies the file's contents (doc/index_format.md, "The ids file").
uint64_t StoredChecksum(std::string_view bytes);

// Parses and validates a whole file image. Checks, in order: size, magic,
// version, entry count against the size, checksum, then every field.
Result<IndexFileContents> ParseIndexFile(std::string_view bytes, std::string_view name);

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_INDEX_FILE_H_
