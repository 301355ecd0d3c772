// Copyright 2026 The neardup Authors.
//
// The chunks table (find, insert, decode, reference counts) and the
// in-memory fingerprints of the blocks stored whole.

#include <zstd.h>

#include <algorithm>
#include <unordered_map>

#include "neardup/text.h"
#include "store/chunk_codec.h"
#include "store/store_impl.h"

namespace neardup {

using Entry = store_internal::RecipeEntry;
using store_internal::kCodecRaw;
using store_internal::kCodecZstd;
using store_internal::Sha256;
using store_internal::Sha256Digest;
using store_internal::Stmt;

std::optional<uint64_t> Store::Impl::BlockFingerprint(std::string_view block) const {
  std::string text(block);
  (void)RepairUtf8(&text, /*replace_nul=*/false);
  const DocumentFingerprint fp = fingerprinter_->Fingerprint(text);
  if (fp.empty()) return std::nullopt;
  return fp.fingerprint.lo();
}

// Brings the in-memory fingerprint table up to date with the database. Chunk
// ids only grow (AUTOINCREMENT), so new blocks are those above the largest id
// seen; a removal that dropped chunks bumps meta.generation and forces a full
// reload. REQUIRES: inside a transaction.
Status Store::Impl::RefreshIndex() {
  Result<bool> row = get_generation_.Step();
  if (!row.ok()) return row.status();
  const std::string generation = *row ? std::string(get_generation_.ColumnText(0)) : "";
  get_generation_.Reset();
  if (!index_ || !index_valid_ || generation != index_generation_) {
    Result<std::unique_ptr<LinearScanIndex>> index = LinearScanIndex::Create(64);
    if (!index.ok()) return index.status();
    index_ = std::move(*index);
    index_max_id_ = 0;
    index_generation_ = generation;
    index_valid_ = true;
  }
  Result<std::vector<std::pair<int64_t, uint64_t>>> loaded = LoadFingerprints(index_max_id_);
  if (!loaded.ok()) return loaded.status();
  std::vector<uint64_t> ids;
  std::vector<Fingerprint> fingerprints;
  ids.reserve(loaded->size());
  fingerprints.reserve(loaded->size());
  for (const auto& [id, fingerprint] : *loaded) {
    ids.push_back(static_cast<uint64_t>(id));
    fingerprints.push_back(Fingerprint::From64(fingerprint));
    index_max_id_ = std::max(index_max_id_, id);
  }
  return index_->AddBatch(ids, fingerprints);
}

Result<std::vector<std::pair<int64_t, uint64_t>>> Store::Impl::LoadFingerprints(int64_t after_id) {
  std::vector<std::pair<int64_t, uint64_t>> out;
  NEARDUP_RETURN_IF_ERROR(load_fingerprints_.BindInt(1, after_id));
  for (;;) {
    Result<bool> r = load_fingerprints_.Step();
    if (!r.ok()) {
      load_fingerprints_.Reset();
      return r.status();
    }
    if (!*r) break;
    out.emplace_back(load_fingerprints_.ColumnInt(0),
                     static_cast<uint64_t>(load_fingerprints_.ColumnInt(1)));
  }
  load_fingerprints_.Reset();
  return out;
}

Result<int64_t> Store::Impl::FindChunk(const Sha256Digest& digest) {
  NEARDUP_RETURN_IF_ERROR(find_chunk_.BindBlob(1, store_internal::DigestBytes(digest), false));
  Result<bool> row = find_chunk_.Step();
  const int64_t id = (row.ok() && *row) ? find_chunk_.ColumnInt(0) : 0;
  find_chunk_.Reset();
  if (!row.ok()) return row.status();
  return id;
}

Result<int64_t> Store::Impl::InsertChunk(const Sha256Digest& digest, std::string_view bytes,
                                         const uint64_t* simhash) {
  std::string compressed;
  int64_t codec = kCodecRaw;
  std::string_view data = bytes;
  if (options_.compression == StoreCompression::kZstd && bytes.size() >= 32) {
    compressed.resize(ZSTD_compressBound(bytes.size()));
    const size_t n = ZSTD_compressCCtx(cctx_.get(), compressed.data(), compressed.size(),
                                       bytes.data(), bytes.size(), options_.zstd_level);
    if (!ZSTD_isError(n) && n < bytes.size()) {
      compressed.resize(n);
      data = compressed;
      codec = kCodecZstd;
    }
  }
  Stmt& s = insert_chunk_;
  NEARDUP_RETURN_IF_ERROR(s.BindBlob(1, store_internal::DigestBytes(digest), false));
  NEARDUP_RETURN_IF_ERROR(s.BindInt(2, static_cast<int64_t>(bytes.size())));
  NEARDUP_RETURN_IF_ERROR(s.BindInt(3, codec));
  NEARDUP_RETURN_IF_ERROR(s.BindBlob(4, data, false));
  if (simhash) {
    NEARDUP_RETURN_IF_ERROR(s.BindInt(5, static_cast<int64_t>(*simhash)));
  } else {
    NEARDUP_RETURN_IF_ERROR(s.BindNull(5));
  }
  NEARDUP_RETURN_IF_ERROR(s.Exec());
  const int64_t id = db_->LastInsertRowid();
  if (simhash) {
    NEARDUP_RETURN_IF_ERROR(index_->Add(static_cast<uint64_t>(id), Fingerprint::From64(*simhash)));
    index_max_id_ = std::max(index_max_id_, id);
  }
  return id;
}

Result<int64_t> Store::Impl::PutChunk(std::string_view bytes) {
  const Sha256Digest digest = Sha256(bytes);
  Result<int64_t> id = FindChunk(digest);
  if (!id.ok() || *id != 0) return id;
  return InsertChunk(digest, bytes, nullptr);
}

Result<std::string> Store::Impl::Decode(int64_t id, int64_t size, int64_t codec,
                                        std::string_view data) {
  return store_internal::DecodeChunk(dctx_.get(), path_ + ": chunk " + std::to_string(id), size,
                                     codec, data);
}

Result<std::string> Store::Impl::LoadChunk(int64_t id) {
  NEARDUP_RETURN_IF_ERROR(get_chunk_.BindInt(1, id));
  Result<bool> row = get_chunk_.Step();
  if (!row.ok()) {
    get_chunk_.Reset();
    return row.status();
  }
  if (!*row) {
    get_chunk_.Reset();
    return Status::Corruption(path_ + ": missing chunk " + std::to_string(id));
  }
  Result<std::string> out =
      Decode(id, get_chunk_.ColumnInt(0), get_chunk_.ColumnInt(1), get_chunk_.ColumnBlob(2));
  get_chunk_.Reset();
  return out;
}

Status Store::Impl::ApplyRefs(const std::vector<Entry>& entries, int64_t sign) {
  std::unordered_map<int64_t, int64_t> counts;
  for (const Entry& e : entries) ++counts[e.chunk_id];
  for (const auto& [id, n] : counts) {
    NEARDUP_RETURN_IF_ERROR(add_refs_.BindInt(1, id));
    NEARDUP_RETURN_IF_ERROR(add_refs_.BindInt(2, sign * n));
    NEARDUP_RETURN_IF_ERROR(add_refs_.Exec());
    if (sqlite3_changes(db_->raw()) != 1) {
      return Status::Corruption(path_ + ": recipe refers to missing chunk " + std::to_string(id));
    }
  }
  if (sign > 0) return Status::OK();
  bool dropped = false;
  for (const auto& [id, n] : counts) {
    NEARDUP_RETURN_IF_ERROR(delete_unreferenced_.BindInt(1, id));
    NEARDUP_RETURN_IF_ERROR(delete_unreferenced_.Exec());
    dropped = dropped || sqlite3_changes(db_->raw()) > 0;
  }
  if (dropped) {
    NEARDUP_RETURN_IF_ERROR(bump_generation_.Exec());
    index_valid_ = false;
  }
  return Status::OK();
}

}  // namespace neardup
