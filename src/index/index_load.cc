// Copyright 2026 The neardup Authors.
//
// LoadIndex: parse the file (index/index_file.cc), then rebuild the index from
// its entries; tables are never read from disk, so they cannot be corrupt.

#include <filesystem>
#include <fstream>

#include "index/index_file.h"
#include "neardup/index.h"

namespace neardup {

Result<std::unique_ptr<HammingIndex>> LoadIndexFromMemory(std::string_view bytes,
                                                          std::string_view name) {
  NEARDUP_ASSIGN_OR_RETURN(auto parsed, index_internal::ParseIndexFile(bytes, name));
  index_internal::IndexFileContents& c = parsed;
  if (c.header.type == IndexType::kLinearScan) {
    auto index = LinearScanIndex::Build(c.header.bits, c.ids, c.fps);
    if (!index.ok()) return Status::Corruption(std::string(name) + ": " + index.status().message());
    return std::unique_ptr<HammingIndex>(std::move(*index));
  }
  PermutedTableOptions options;
  options.bits = c.header.bits;
  options.max_k = c.header.max_k;
  options.blocks = c.header.blocks;
  auto index = PermutedTableIndex::Build(options, c.ids, c.fps);
  if (!index.ok()) return Status::Corruption(std::string(name) + ": " + index.status().message());
  return std::unique_ptr<HammingIndex>(std::move(*index));
}

Result<std::unique_ptr<HammingIndex>> LoadIndex(const std::string& path) {
  // Only regular files: a directory or device would report a bogus size.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return Status::IOError(path + ": cannot open");
  if (!std::filesystem::is_regular_file(st)) {
    return Status::IOError(path + ": not a regular file");
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IOError(path + ": cannot determine size");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size) return Status::IOError(path + ": read failed");
  return LoadIndexFromMemory(bytes, path);
}

}  // namespace neardup
