// Copyright 2026 The neardup Authors.
//
// Reading a store: reassembling a file from its recipe, the file list, the
// stats and the full verification.

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <unordered_map>

#include "store/store_impl.h"

namespace neardup {

using store_internal::DecodeRecipe;
using Entry = store_internal::RecipeEntry;
using store_internal::Sha256;
using store_internal::Sha256Digest;
using store_internal::Stmt;

namespace {

// Get keeps decompressed chunks in memory while it assembles a file; past
// this many bytes the cache is dropped and refilled.
constexpr size_t kChunkCacheBytes = size_t{256} << 20;

uint64_t FileSizeOrZero(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

}  // namespace

Result<std::string> Store::Impl::Assemble(std::string_view name, int64_t size, std::string_view sha,
                                          std::string_view recipe_blob, int64_t entry_count) {
  const std::string where = path_ + ": " + std::string(name);
  std::vector<Entry> entries;
  if (!DecodeRecipe(recipe_blob, &entries)) return Status::Corruption(where + ": bad recipe");
  if (static_cast<int64_t>(entries.size()) != entry_count) {
    return Status::Corruption(where + ": recipe has " + std::to_string(entries.size()) +
                              " entries, expected " + std::to_string(entry_count));
  }
  if (size < 0) return Status::Corruption(where + ": negative size");
  std::string out;
  out.reserve(static_cast<size_t>(std::min<int64_t>(size, int64_t{1} << 32)));
  std::unordered_map<int64_t, std::string> cache;
  size_t cached_bytes = 0;
  for (const Entry& e : entries) {
    auto it = cache.find(e.chunk_id);
    if (it == cache.end()) {
      Result<std::string> chunk = LoadChunk(e.chunk_id);
      if (!chunk.ok()) return Status::Corruption(where + ": " + chunk.status().message());
      if (cached_bytes + chunk->size() > kChunkCacheBytes) {
        cache.clear();
        cached_bytes = 0;
      }
      cached_bytes += chunk->size();
      it = cache.emplace(e.chunk_id, std::move(*chunk)).first;
    }
    const std::string& chunk = it->second;
    if (e.offset > chunk.size() || e.length > chunk.size() - e.offset) {
      return Status::Corruption(where + ": recipe reads past the end of chunk " +
                                std::to_string(e.chunk_id));
    }
    if (out.size() + e.length > static_cast<uint64_t>(size)) {
      return Status::Corruption(where + ": recipe is longer than the file");
    }
    out.append(chunk, e.offset, e.length);
  }
  if (out.size() != static_cast<uint64_t>(size)) {
    return Status::Corruption(where + ": reassembled " + std::to_string(out.size()) +
                              " bytes, expected " + std::to_string(size));
  }
  if (store_internal::DigestBytes(Sha256(out)) != sha) {
    return Status::Corruption(where + ": SHA-256 mismatch");
  }
  return out;
}

Result<std::optional<Store::Impl::FileRow>> Store::Impl::FindFile(std::string_view name) {
  NEARDUP_RETURN_IF_ERROR(find_file_.BindText(1, name));
  Result<bool> row = find_file_.Step();
  if (!row.ok() || !*row) {
    find_file_.Reset();
    if (!row.ok()) return row.status();
    return std::optional<FileRow>();
  }
  if (find_file_.ColumnText(5) != name) {
    const std::string found(find_file_.ColumnText(5));
    find_file_.Reset();
    return Status::Corruption(path_ + ": looking up '" + std::string(name) +
                              "' found the row of '" + found +
                              "': the database's index of file names is damaged (neardup store "
                              "verify reports it)");
  }
  FileRow file;
  file.id = find_file_.ColumnInt(0);
  file.size = find_file_.ColumnInt(1);
  file.sha256 = std::string(find_file_.ColumnBlob(2));
  file.recipe = std::string(find_file_.ColumnBlob(3));
  file.entries = find_file_.ColumnInt(4);
  find_file_.Reset();
  return std::optional<FileRow>(std::move(file));
}

Result<std::string> Store::Impl::Get(std::string_view name) {
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/false));
  Result<std::optional<FileRow>> file = FindFile(name);
  if (!file.ok()) return file.status();
  if (!file->has_value()) {
    return Status::NotFound(path_ + ": no file named '" + std::string(name) + "'");
  }
  const FileRow& f = **file;
  Result<std::string> out = Assemble(name, f.size, f.sha256, f.recipe, f.entries);
  if (!out.ok()) return out;
  NEARDUP_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<std::vector<StoredFileInfo>> Store::Impl::List() {
  // The rows themselves (NOT INDEXED: a name and its size from one row even
  // when the name index is damaged), sorted by name.
  Result<Stmt> s = db_->Prepare(
      "SELECT name, size, sha256, chunker, entries FROM files NOT INDEXED ORDER BY name");
  if (!s.ok()) return s.status();
  std::vector<StoredFileInfo> out;
  for (;;) {
    Result<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    StoredFileInfo info;
    info.name = s->ColumnText(0);
    info.size = static_cast<uint64_t>(s->ColumnInt(1));
    const std::string_view sha = s->ColumnBlob(2);
    if (sha.size() == 32) {
      Sha256Digest d;
      std::copy(sha.begin(), sha.end(), d.begin());
      info.sha256_hex = store_internal::DigestHex(d);
    }
    info.chunker = s->ColumnText(3);
    info.entries = static_cast<uint64_t>(s->ColumnInt(4));
    if (!out.empty() && out.back().name == info.name) {
      return Status::Corruption(path_ + ": two files are named '" + info.name +
                                "': the database is damaged (neardup store verify reports it)");
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<StoreStats> Store::Impl::Stats() {
  StoreStats st;
  {
    Txn txn(this);
    NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/false));
    Result<Stmt> f = db_->Prepare("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM files");
    if (!f.ok()) return f.status();
    Result<bool> row = f->Step();
    if (!row.ok()) return row.status();
    st.files = static_cast<uint64_t>(f->ColumnInt(0));
    st.bytes_in = static_cast<uint64_t>(f->ColumnInt(1));
    Result<Stmt> c = db_->Prepare(
        "SELECT COUNT(*), COALESCE(SUM(size), 0), COALESCE(SUM(length(data)), 0) FROM chunks");
    if (!c.ok()) return c.status();
    row = c->Step();
    if (!row.ok()) return row.status();
    st.chunks = static_cast<uint64_t>(c->ColumnInt(0));
    st.bytes_out = static_cast<uint64_t>(c->ColumnInt(1));
    st.stored_bytes = static_cast<uint64_t>(c->ColumnInt(2));
    NEARDUP_RETURN_IF_ERROR(txn.Commit());
  }
  if (st.bytes_in > 0) {
    st.dedup_rate = (static_cast<double>(st.bytes_in) - static_cast<double>(st.bytes_out)) /
                    static_cast<double>(st.bytes_in);
  }
  st.db_bytes = FileSizeOrZero(path_) + FileSizeOrZero(path_ + "-wal");
  return st;
}

Result<std::vector<VerifyProblem>> Store::Impl::Verify() {
  std::vector<VerifyProblem> problems;
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/false));

  // integrity_check, not quick_check: it also checks that every index
  // matches its table (a damaged name index sends a lookup to another file).
  Result<Stmt> check = db_->Prepare("PRAGMA integrity_check");
  if (!check.ok()) return check.status();
  for (;;) {
    Result<bool> row = check->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (check->ColumnText(0) != "ok") {
      problems.push_back({"", "sqlite integrity_check: " + std::string(check->ColumnText(0))});
    }
  }

  // Every chunk: its data decodes to `size` bytes with the recorded digest.
  std::unordered_map<int64_t, int64_t> stored_refs;
  Result<Stmt> chunks = db_->Prepare("SELECT id, sha256, size, codec, data, refs FROM chunks");
  if (!chunks.ok()) return chunks.status();
  for (;;) {
    Result<bool> row = chunks->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const int64_t id = chunks->ColumnInt(0);
    stored_refs[id] = chunks->ColumnInt(5);
    Result<std::string> content =
        Decode(id, chunks->ColumnInt(2), chunks->ColumnInt(3), chunks->ColumnBlob(4));
    if (!content.ok()) {
      problems.push_back({"", content.status().message()});
    } else if (store_internal::DigestBytes(Sha256(*content)) != chunks->ColumnBlob(1)) {
      problems.push_back({"", path_ + ": chunk " + std::to_string(id) + ": SHA-256 mismatch"});
    }
  }

  // Every file: reassembles to its size and digest; count the references.
  std::unordered_map<int64_t, int64_t> counted_refs;
  Result<Stmt> files =
      db_->Prepare("SELECT name, size, sha256, recipe, entries FROM files ORDER BY name");
  if (!files.ok()) return files.status();
  std::vector<Entry> entries;
  for (;;) {
    Result<bool> row = files->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::string name(files->ColumnText(0));
    const std::string recipe(files->ColumnBlob(3));
    if (DecodeRecipe(recipe, &entries)) {
      for (const Entry& e : entries) ++counted_refs[e.chunk_id];
    }
    Result<std::string> content =
        Assemble(name, files->ColumnInt(1), files->ColumnBlob(2), recipe, files->ColumnInt(4));
    if (!content.ok()) problems.push_back({name, content.status().message()});
  }
  for (const auto& [id, refs] : stored_refs) {
    const auto it = counted_refs.find(id);
    const int64_t counted = it == counted_refs.end() ? 0 : it->second;
    if (counted != refs) {
      problems.push_back({"", path_ + ": chunk " + std::to_string(id) + " records " +
                                  std::to_string(refs) + " references, recipes hold " +
                                  std::to_string(counted)});
    }
  }
  NEARDUP_RETURN_IF_ERROR(txn.Commit());
  return problems;
}

}  // namespace neardup
