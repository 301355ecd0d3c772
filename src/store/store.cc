// Copyright 2026 The neardup Authors.
//
// The SQLite-backed dedup store: Store::Open and the facade over Store::Impl
// (store/store_impl.h lists the files that implement it). Format:
// doc/store_format.md.

#include "neardup/store.h"

#include <zstd.h>

#include <charconv>
#include <filesystem>
#include <system_error>

#include "store/store_impl.h"

namespace neardup {

using store_internal::Db;

std::string ChunkerSpec::ToString() const {
  switch (kind) {
    case ChunkerKind::kSimhash:
      return "simhash";
    case ChunkerKind::kExactParagraph:
      return "exact-paragraph";
    case ChunkerKind::kFixedSize:
      return "fsp:" + std::to_string(size);
    case ChunkerKind::kContentDefined:
      return "cdc:" + std::to_string(size);
  }
  return "?";
}

Result<ChunkerSpec> ParseChunkerSpec(std::string_view spec) {
  ChunkerSpec out;
  if (spec == "simhash") return out;
  if (spec == "exact-paragraph") {
    out.kind = ChunkerKind::kExactParagraph;
    return out;
  }
  const size_t colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  if (colon == std::string_view::npos || (head != "fsp" && head != "cdc")) {
    return Status::InvalidArgument("unknown chunker '" + std::string(spec) +
                                   "' (expected simhash, exact-paragraph, fsp:SIZE or cdc:AVG)");
  }
  const std::string_view num = spec.substr(colon + 1);
  size_t value = 0;
  const auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), value);
  if (num.empty() || ec != std::errc() || ptr != num.data() + num.size()) {
    return Status::InvalidArgument("chunker '" + std::string(spec) + "': bad size");
  }
  if (head == "fsp") {
    if (value < 16 || value > (size_t{16} << 20)) {
      return Status::InvalidArgument("chunker '" + std::string(spec) +
                                     "': SIZE must be in [16, 16777216]");
    }
    out.kind = ChunkerKind::kFixedSize;
  } else {
    if (value < 64 || value > (size_t{4} << 20)) {
      return Status::InvalidArgument("chunker '" + std::string(spec) +
                                     "': AVG must be in [64, 4194304]");
    }
    out.kind = ChunkerKind::kContentDefined;
  }
  out.size = value;
  return out;
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& options) {
  if (options.near_threshold < 0 || options.near_threshold > 64) {
    return Status::InvalidArgument("near_threshold must be in [0, 64]");
  }
  if (options.max_near_blocks < 1) return Status::InvalidArgument("max_near_blocks must be >= 1");
  if (options.zstd_level < 1 || options.zstd_level > ZSTD_maxCLevel()) {
    return Status::InvalidArgument("zstd_level out of range");
  }
  if (options.busy_timeout_ms < 0) return Status::InvalidArgument("busy_timeout_ms must be >= 0");
  const ChunkerSpec& c = options.chunker;
  if ((c.kind == ChunkerKind::kFixedSize && (c.size < 16 || c.size > (size_t{16} << 20))) ||
      (c.kind == ChunkerKind::kContentDefined && (c.size < 64 || c.size > (size_t{4} << 20)))) {
    return Status::InvalidArgument("chunker " + c.ToString() + ": size out of range");
  }
  std::error_code ec;
  if (!options.create_if_missing && !std::filesystem::exists(path, ec)) {
    return Status::NotFound(path + ": no such store");
  }
  Result<std::unique_ptr<Db>> db = Db::Open(path, options.create_if_missing);
  if (!db.ok()) return db.status();
  auto impl = std::make_unique<Impl>(path, options, std::move(*db));
  NEARDUP_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Status Store::Add(std::string_view name, std::string_view content) {
  return impl_->Add(name, content);
}
Result<std::string> Store::Get(std::string_view name) { return impl_->Get(name); }
Result<std::vector<StoredFileInfo>> Store::List() { return impl_->List(); }
Status Store::Remove(std::string_view name) { return impl_->Remove(name); }
Result<StoreStats> Store::Stats() { return impl_->Stats(); }
Result<std::vector<VerifyProblem>> Store::Verify() { return impl_->Verify(); }
const std::string& Store::path() const { return impl_->path(); }

}  // namespace neardup
