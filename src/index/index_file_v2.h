// Copyright 2026 The neardup Authors.
//
// Internal: version 2 of the index file (doc/index_format.md, "Version 2"):
// rows, document ids and lookup tables laid out to be used in place from a
// read-only memory mapping. Opening reads and checks the fixed header and the
// trailer's metadata (a few kilobytes); each section's checksum is verified by
// Verify (`neardup index verify`), and every read through the sections is
// bounds-checked, so an unverified damaged file gives wrong answers or
// errors, never a crash.

#ifndef NEARDUP_INDEX_INDEX_FILE_V2_H_
#define NEARDUP_INDEX_INDEX_FILE_V2_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "index/mask_tables.h"
#include "neardup/status.h"

namespace neardup::index_internal {

inline constexpr uint32_t kIndexVersion2 = 2;
// Version 3: version 2 with each row's fingerprint words together and each
// table's rows and keys together (packed), so that a probe and a candidate
// cost one random read each fewer.
inline constexpr uint32_t kIndexVersion3 = 3;

// A read-only memory mapping of a whole file (an empty file maps nothing).
class MappedFile {
 public:
  // NotFound when absent; IOError when not a regular file or not mappable.
  // With `preload`, the whole file is read into anonymous memory advised to
  // use transparent huge pages (MADV_HUGEPAGE) and made read-only, instead
  // of being mapped.
  static Result<std::shared_ptr<MappedFile>> Open(const std::string& path, bool preload = false);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {data_, size_}; }

 private:
  MappedFile(const char* data, size_t size, size_t mapped)
      : data_(data), size_(size), mapped_(mapped) {}
  const char* data_;
  size_t size_;
  size_t mapped_;  // bytes to unmap
};

// The version of an index file image: 1, 2, 3, or 0 when it is not one (bad
// magic or too short to tell).
uint32_t IndexFileVersion(std::string_view bytes);

// What a version 2 or 3 file holds besides its tables.
struct IndexFileV2Meta {
  uint32_t version = kIndexVersion3;  // of the file: 2 or 3
  TablesSpec spec;
  TablesPolicy policy;
  uint64_t rows = 0;
};

// The rows to write, in numeric-id order (ids strictly ascending).
struct IndexFileV2Rows {
  std::span<const uint64_t> ids;
  std::span<const uint64_t> lo;
  std::span<const uint64_t> hi;  // empty for 64 bits
  std::span<const std::string_view> names;
};

// Writes a version meta.version (2 or 3) file to `path` (created or truncated), building the
// tables of meta.spec on `threads` threads, and fsyncs it; its checksum (the
// last 8 bytes) goes to *checksum. On failure the partial file is removed.
Status WriteIndexFileV2(const std::string& path, const IndexFileV2Meta& meta,
                        const IndexFileV2Rows& rows, int threads, uint64_t* checksum);

// True when a file of `version` holding tables of `kind` stores each row's
// words together: version 3, except the two-level filter's (kind kFilter),
// which keeps the lo words in one array and the hi words in another, so
// that its first level reads 8 bytes a row.
inline bool RowsPacked(uint32_t version, TablesKind kind) {
  return version == kIndexVersion3 && kind != TablesKind::kFilter;
}

// Sections of one table in a file of `version` holding tables of `kind`:
// directory, rows and keys (version 2), directory and packed entries
// (version 3); the probe tables (kind kProbe, either version): directory,
// rows and their half words.
inline uint64_t TableSections(uint32_t version, TablesKind kind) {
  if (kind == TablesKind::kProbe) return 3;
  return version == kIndexVersion3 ? 2 : 3;
}

// True for the versions IndexFileV2 reads (2 and 3).
inline bool IsMappedVersion(uint32_t version) {
  return version == kIndexVersion2 || version == kIndexVersion3;
}

// A version 2 or 3 file, opened in place.
class IndexFileV2 {
 public:
  // Checks the header and metadata (not the sections' checksums). Corruption
  // or NotSupported naming `name`.
  static Result<std::unique_ptr<IndexFileV2>> Open(std::shared_ptr<MappedFile> file,
                                                   const std::string& name);

  const IndexFileV2Meta& meta() const { return meta_; }
  size_t rows() const { return static_cast<size_t>(meta_.rows); }
  std::span<const uint64_t> ids() const { return ids_; }
  const TablesView& tables() const { return view_; }
  // The document id of row i; nullopt when its offsets are out of range (a
  // damaged file).
  std::optional<std::string_view> Name(size_t row) const;
  // The rows whose document id is `name` (at most one in a file written by
  // WriteIndexFileV2), by binary search over the name order.
  std::vector<uint32_t> FindName(std::string_view name) const;
  // The row holding numeric id `id`, if any (binary search).
  std::optional<size_t> FindId(uint64_t id) const;
  // Every section's checksum and the structure (ids ascending, name offsets
  // and directories monotone, rows in range, names sorted in the order).
  Status Verify() const;
  uint64_t checksum() const { return checksum_; }
  size_t file_bytes() const { return file_->bytes().size(); }

 private:
  IndexFileV2() = default;
  std::shared_ptr<MappedFile> file_;
  std::string name_;
  IndexFileV2Meta meta_;
  uint64_t checksum_ = 0;
  struct Section {
    uint64_t offset = 0, length = 0, checksum = 0;
  };
  std::vector<Section> sections_;
  std::vector<TableMask> masks_;
  std::span<const uint64_t> ids_;
  std::span<const uint64_t> name_offsets_;
  std::string_view names_;
  std::span<const uint32_t> order_;
  TablesView view_;
};

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_INDEX_FILE_V2_H_
