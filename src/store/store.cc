// Copyright 2026 The neardup Authors.
//
// The SQLite-backed dedup store. Format: doc/store_format.md.

#include "neardup/store.h"

#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "neardup/features.h"
#include "neardup/index.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "neardup/text.h"
#include "store/chunk_codec.h"
#include "store/chunker.h"
#include "store/recipe.h"
#include "store/sha256.h"
#include "store/sqlite_db.h"
#include "util/fault.h"

namespace neardup {

using store_internal::Db;
using store_internal::Sha256;
using store_internal::Sha256Digest;
using store_internal::Span;
using store_internal::Stmt;

namespace {

// Version 2: chunks.simhash holds the `sentence` preset's fingerprint (the
// store's own sentence SimHash of version 1 is recomputed on open).
constexpr int kSchemaVersion = 2;
constexpr char kFormatName[] = "neardup-store";
constexpr size_t kMaxNameBytes = 4096;
// Get keeps decompressed chunks in memory while it assembles a file; past
// this many bytes the cache is dropped and refilled.
constexpr size_t kChunkCacheBytes = size_t{256} << 20;

constexpr char kSchemaSql[] = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE chunks(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sha256 BLOB NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  codec INTEGER NOT NULL,
  data BLOB NOT NULL,
  refs INTEGER NOT NULL,
  simhash INTEGER
);
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  sha256 BLOB NOT NULL,
  chunker TEXT NOT NULL,
  entries INTEGER NOT NULL,
  recipe BLOB NOT NULL
);
)sql";

using Entry = store_internal::RecipeEntry;
using store_internal::DecodeRecipe;
using store_internal::EncodeRecipe;
using store_internal::kCodecRaw;
using store_internal::kCodecZstd;

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const {
    size_t h = 0;
    for (int i = 0; i < 8; ++i) h = (h << 8) | d[i];
    return h;
  }
};

// Builds a recipe, merging a reference that continues the previous one.
class RecipeBuilder {
 public:
  void Append(int64_t chunk_id, uint64_t offset, uint64_t length) {
    if (length == 0) return;
    if (!entries_.empty()) {
      Entry& last = entries_.back();
      if (last.chunk_id == chunk_id && last.offset + last.length == offset) {
        last.length += length;
        return;
      }
    }
    entries_.push_back({chunk_id, offset, length});
  }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

struct ZstdCCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxDeleter {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};

uint64_t FileSizeOrZero(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

}  // namespace

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

class Store::Impl {
 public:
  Impl(std::string path, const StoreOptions& options, std::unique_ptr<Db> db)
      : path_(std::move(path)), options_(options), db_(std::move(db)) {}

  Status Init();
  Status Add(std::string_view name, std::string_view content);
  Result<std::string> Get(std::string_view name);
  Result<std::vector<StoredFileInfo>> List();
  Status Remove(std::string_view name);
  Result<StoreStats> Stats();
  Result<std::vector<VerifyProblem>> Verify();
  const std::string& path() const { return path_; }

 private:
  // A transaction that rolls back unless committed.
  class Txn {
   public:
    explicit Txn(Impl* impl) : impl_(impl) {}
    ~Txn() {
      if (active_) {
        (void)impl_->db_->Exec("ROLLBACK");
        impl_->index_valid_ = false;  // it may hold blocks that were rolled back
      }
    }
    Status Begin(bool write) {
      NEARDUP_RETURN_IF_ERROR(impl_->db_->Exec(write ? "BEGIN IMMEDIATE" : "BEGIN"));
      active_ = true;
      write_ = write;
      return Status::OK();
    }
    Status Commit() {
      if (write_ && fault::BeforeWriteStep("store.commit") != 0) {
        return Status::IOError("commit failed: no space left on device (injected)");
      }
      NEARDUP_RETURN_IF_ERROR(impl_->db_->Exec("COMMIT"));
      active_ = false;
      return Status::OK();
    }

   private:
    Impl* impl_;
    bool active_ = false;
    bool write_ = false;
  };

  Status Prepare();
  // Schema 1 -> 2: recomputes every chunks.simhash with BlockFingerprint().
  Status MigrateFingerprints();
  Status RefreshIndex();
  // (chunk id, chunks.simhash) of every fingerprinted block with an id above
  // `after_id`, by id.
  Result<std::vector<std::pair<int64_t, uint64_t>>> LoadFingerprints(int64_t after_id);
  // Seed 004's block fingerprint: the `sentence` preset's 64-bit SimHash
  // (options_.feature_hash) of the block, invalid UTF-8 replaced with U+FFFD
  // first. nullopt when the block has no sentence features.
  std::optional<uint64_t> BlockFingerprint(std::string_view block) const;
  Result<int64_t> FindChunk(const Sha256Digest& digest);
  Result<int64_t> InsertChunk(const Sha256Digest& digest, std::string_view bytes,
                              const uint64_t* simhash);
  // The chunk's id for `bytes`, inserting it when absent.
  Result<int64_t> PutChunk(std::string_view bytes);
  // The uncompressed content of chunk `id` (size checked).
  Result<std::string> LoadChunk(int64_t id);
  Result<std::string> Decode(int64_t id, int64_t size, int64_t codec, std::string_view data);
  Status AddSimhash(std::string_view content, RecipeBuilder* recipe);
  Status AddSimilarBlock(std::string_view block, const std::vector<SentenceSpan>& sentences,
                         const std::vector<Neighbor>& near, RecipeBuilder* recipe);
  Status RemoveFileLocked(int64_t file_id, std::string_view recipe);
  Status ApplyRefs(const std::vector<Entry>& entries, int64_t sign);
  // Assembles a file from its recipe and checks size and SHA-256.
  Result<std::string> Assemble(std::string_view name, int64_t size, std::string_view sha,
                               std::string_view recipe_blob, int64_t entries);

  std::string path_;
  StoreOptions options_;
  std::unique_ptr<Db> db_;
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxDeleter> cctx_;
  std::unique_ptr<ZSTD_DCtx, ZstdDCtxDeleter> dctx_;

  Stmt find_chunk_, insert_chunk_, add_refs_, delete_unreferenced_, get_chunk_;
  Stmt find_file_, insert_file_, delete_file_, load_fingerprints_, get_generation_,
      bump_generation_;

  // The `sentence` preset with options_.feature_hash; set by Init.
  std::unique_ptr<Pipeline> fingerprinter_;
  // Fingerprints of the blocks stored whole (chunks.simhash), by chunk id: an
  // exact scan, because near_threshold may exceed what a permuted-table
  // index supports (bits / 4).
  std::unique_ptr<HammingIndex> index_;
  bool index_valid_ = false;
  int64_t index_max_id_ = 0;
  std::string index_generation_;
};

Status Store::Impl::Init() {
  Result<Preset> preset = FindPreset("sentence");
  if (!preset.ok()) return preset.status();
  PipelineOptions pipeline = preset->pipeline;
  pipeline.hash = options_.feature_hash;
  Result<std::unique_ptr<Pipeline>> fingerprinter = Pipeline::Create(pipeline);
  if (!fingerprinter.ok()) return fingerprinter.status();
  fingerprinter_ = std::move(*fingerprinter);
  bool migrate = false;
  sqlite3_busy_timeout(db_->raw(), options_.busy_timeout_ms);
  NEARDUP_RETURN_IF_ERROR(db_->EnableWal(options_.busy_timeout_ms));
  // FULL: a committed Add survives power loss too, not only a killed process.
  // NORMAL (WAL): a killed process loses nothing committed; power loss may
  // lose the last commits, never consistency.
  NEARDUP_RETURN_IF_ERROR(db_->Exec(options_.sync_every_commit ? "PRAGMA synchronous=FULL"
                                                               : "PRAGMA synchronous=NORMAL"));
  {
    Txn txn(this);
    NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
    Result<Stmt> tables = db_->Prepare(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'");
    if (!tables.ok()) return tables.status();
    bool has_meta = false, has_other = false;
    for (;;) {
      Result<bool> row = tables->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      if (tables->ColumnText(0) == "meta") {
        has_meta = true;
      } else {
        has_other = true;
      }
    }
    if (!has_meta) {
      if (has_other) return Status::Corruption(path_ + ": not a neardup store (no meta table)");
      NEARDUP_RETURN_IF_ERROR(db_->Exec(kSchemaSql));
      NEARDUP_RETURN_IF_ERROR(db_->Exec(
          std::string("INSERT INTO meta(key, value) VALUES ('format', '") + kFormatName +
          "'), ('schema_version', '" + std::to_string(kSchemaVersion) + "'), ('generation', '0')"));
    } else {
      Result<Stmt> meta = db_->Prepare("SELECT key, value FROM meta");
      if (!meta.ok()) return meta.status();
      std::string format, version;
      for (;;) {
        Result<bool> row = meta->Step();
        if (!row.ok()) return row.status();
        if (!*row) break;
        if (meta->ColumnText(0) == "format") format = meta->ColumnText(1);
        if (meta->ColumnText(0) == "schema_version") version = meta->ColumnText(1);
      }
      if (format != kFormatName) {
        return Status::Corruption(path_ + ": not a neardup store (format '" + format + "')");
      }
      migrate = version == "1";
      if (!migrate && version != std::to_string(kSchemaVersion)) {
        return Status::NotSupported(path_ + ": store schema version '" + version +
                                    "' (this build reads version " +
                                    std::to_string(kSchemaVersion) + ")");
      }
    }
    NEARDUP_RETURN_IF_ERROR(txn.Commit());
  }
  NEARDUP_RETURN_IF_ERROR(Prepare());
  return migrate ? MigrateFingerprints() : Status::OK();
}

Status Store::Impl::MigrateFingerprints() {
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  NEARDUP_RETURN_IF_ERROR(db_->Exec("UPDATE meta SET value = '" + std::to_string(kSchemaVersion) +
                                    "' WHERE key = 'schema_version' AND value = '1'"));
  if (sqlite3_changes(db_->raw()) == 0) return txn.Commit();  // another process migrated it
  Result<std::vector<std::pair<int64_t, uint64_t>>> blocks = LoadFingerprints(0);
  if (!blocks.ok()) return blocks.status();
  Result<Stmt> update = db_->Prepare("UPDATE chunks SET simhash = ?2 WHERE id = ?1");
  if (!update.ok()) return update.status();
  for (const auto& block : *blocks) {  // block.second: the old fingerprint
    const int64_t id = block.first;
    Result<std::string> content = LoadChunk(id);
    if (!content.ok()) return content.status();
    const std::optional<uint64_t> fp = BlockFingerprint(*content);
    NEARDUP_RETURN_IF_ERROR(update->BindInt(1, id));
    if (fp) {
      NEARDUP_RETURN_IF_ERROR(update->BindInt(2, static_cast<int64_t>(*fp)));
    } else {
      NEARDUP_RETURN_IF_ERROR(update->BindNull(2));
    }
    NEARDUP_RETURN_IF_ERROR(update->Exec());
  }
  NEARDUP_RETURN_IF_ERROR(bump_generation_.Exec());  // holders of old fingerprints reload
  return txn.Commit();
}

std::optional<uint64_t> Store::Impl::BlockFingerprint(std::string_view block) const {
  std::string text(block);
  (void)RepairUtf8(&text, /*replace_nul=*/false);
  const DocumentFingerprint fp = fingerprinter_->Fingerprint(text);
  if (fp.empty()) return std::nullopt;
  return fp.fingerprint.lo();
}

Status Store::Impl::Prepare() {
  struct Item {
    Stmt* stmt;
    const char* sql;
  };
  const Item items[] = {
      {&find_chunk_, "SELECT id FROM chunks WHERE sha256 = ?1"},
      {&insert_chunk_,
       "INSERT INTO chunks(sha256, size, codec, data, refs, simhash) VALUES (?1, ?2, ?3, ?4, 0, "
       "?5)"},
      {&add_refs_, "UPDATE chunks SET refs = refs + ?2 WHERE id = ?1"},
      {&delete_unreferenced_, "DELETE FROM chunks WHERE id = ?1 AND refs <= 0"},
      {&get_chunk_, "SELECT size, codec, data FROM chunks WHERE id = ?1"},
      {&find_file_, "SELECT id, size, sha256, recipe, entries FROM files WHERE name = ?1"},
      {&insert_file_,
       "INSERT INTO files(name, size, sha256, chunker, entries, recipe) VALUES (?1, ?2, ?3, ?4, "
       "?5, ?6)"},
      {&delete_file_, "DELETE FROM files WHERE id = ?1"},
      {&load_fingerprints_,
       "SELECT id, simhash FROM chunks WHERE simhash IS NOT NULL AND id > ?1 ORDER BY id"},
      {&get_generation_, "SELECT value FROM meta WHERE key = 'generation'"},
      {&bump_generation_,
       "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = "
       "'generation'"},
  };
  for (const Item& item : items) {
    Result<Stmt> s = db_->Prepare(item.sql);
    if (!s.ok()) return s.status();
    *item.stmt = std::move(*s);
  }
  cctx_.reset(ZSTD_createCCtx());
  dctx_.reset(ZSTD_createDCtx());
  if (!cctx_ || !dctx_) return Status::ResourceExhausted(path_ + ": cannot create zstd context");
  return Status::OK();
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

Status Store::Impl::AddSimilarBlock(std::string_view block,
                                    const std::vector<SentenceSpan>& sentences,
                                    const std::vector<Neighbor>& near, RecipeBuilder* recipe) {
  // Sentences of the near blocks, by digest: a sentence found there is a
  // reference into that block.
  std::unordered_map<Sha256Digest, Entry, DigestHash> known;
  for (const Neighbor& m : near) {
    const auto block_id = static_cast<int64_t>(m.id);
    Result<std::string> content = LoadChunk(block_id);
    if (!content.ok()) return content.status();
    for (const SentenceSpan& s : SplitSentenceSpans(*content)) {
      known.emplace(Sha256(std::string_view(*content).substr(s.begin, s.end - s.begin)),
                    Entry{block_id, s.begin, s.end - s.begin});
    }
  }
  for (const SentenceSpan& s : sentences) {
    const std::string_view sentence = block.substr(s.begin, s.end - s.begin);
    const Sha256Digest digest = Sha256(sentence);
    if (auto it = known.find(digest); it != known.end()) {
      recipe->Append(it->second.chunk_id, it->second.offset, it->second.length);
      continue;
    }
    Result<int64_t> id = FindChunk(digest);
    if (!id.ok()) return id.status();
    if (*id == 0) {
      id = InsertChunk(digest, sentence, nullptr);
      if (!id.ok()) return id.status();
    }
    recipe->Append(*id, 0, sentence.size());
  }
  return Status::OK();
}

Status Store::Impl::AddSimhash(std::string_view content, RecipeBuilder* recipe) {
  for (const Span& p : store_internal::SplitParagraphs(content)) {
    const std::string_view block = content.substr(p.offset, p.length);
    const Sha256Digest digest = Sha256(block);
    Result<int64_t> id = FindChunk(digest);
    if (!id.ok()) return id.status();
    if (*id != 0) {  // the same bytes are stored: reference them
      recipe->Append(*id, 0, block.size());
      continue;
    }
    const std::vector<SentenceSpan> sentences = SplitSentenceSpans(block);
    // One sentence: nothing to gain from splitting. No features: nothing to
    // compare.
    const std::optional<uint64_t> fp =
        sentences.size() < 2 ? std::nullopt : BlockFingerprint(block);
    if (!fp) {
      id = InsertChunk(digest, block, nullptr);
      if (!id.ok()) return id.status();
      recipe->Append(*id, 0, block.size());
      continue;
    }
    std::vector<Neighbor> near;  // nearest first; equal distances: lower chunk id first
    NEARDUP_RETURN_IF_ERROR(
        index_->Search(Fingerprint::From64(*fp), options_.near_threshold, &near));
    if (near.size() > static_cast<size_t>(options_.max_near_blocks)) {
      near.resize(static_cast<size_t>(options_.max_near_blocks));
    }
    if (!near.empty()) {
      NEARDUP_RETURN_IF_ERROR(AddSimilarBlock(block, sentences, near, recipe));
      continue;
    }
    id = InsertChunk(digest, block, &*fp);
    if (!id.ok()) return id.status();
    recipe->Append(*id, 0, block.size());
  }
  return Status::OK();
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

Status Store::Impl::RemoveFileLocked(int64_t file_id, std::string_view recipe_blob) {
  std::vector<Entry> entries;
  if (!DecodeRecipe(recipe_blob, &entries)) {
    return Status::Corruption(path_ + ": file " + std::to_string(file_id) + ": bad recipe");
  }
  NEARDUP_RETURN_IF_ERROR(ApplyRefs(entries, -1));
  NEARDUP_RETURN_IF_ERROR(delete_file_.BindInt(1, file_id));
  return delete_file_.Exec();
}

Status Store::Impl::Add(std::string_view name, std::string_view content) {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return Status::InvalidArgument(path_ + ": file name must have 1 to 4096 bytes");
  }
  if (content.size() > (uint64_t{1} << 40)) {
    return Status::ResourceExhausted(path_ + ": " + std::string(name) + ": file too large");
  }
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/true));

  // Adding a name again replaces the file.
  NEARDUP_RETURN_IF_ERROR(find_file_.BindText(1, name));
  Result<bool> row = find_file_.Step();
  if (!row.ok()) {
    find_file_.Reset();
    return row.status();
  }
  if (*row) {
    const int64_t old_id = find_file_.ColumnInt(0);
    const std::string old_recipe(find_file_.ColumnBlob(3));
    find_file_.Reset();
    NEARDUP_RETURN_IF_ERROR(RemoveFileLocked(old_id, old_recipe));
  } else {
    find_file_.Reset();
  }

  RecipeBuilder recipe;
  const ChunkerSpec& chunker = options_.chunker;
  switch (chunker.kind) {
    case ChunkerKind::kSimhash:
      NEARDUP_RETURN_IF_ERROR(RefreshIndex());
      NEARDUP_RETURN_IF_ERROR(AddSimhash(content, &recipe));
      break;
    case ChunkerKind::kExactParagraph:
    case ChunkerKind::kFixedSize:
    case ChunkerKind::kContentDefined: {
      const std::vector<Span> spans =
          chunker.kind == ChunkerKind::kExactParagraph ? store_internal::SplitParagraphs(content)
          : chunker.kind == ChunkerKind::kFixedSize
              ? store_internal::SplitFixed(content, chunker.size)
              : store_internal::SplitContentDefined(content, chunker.size);
      for (const Span& s : spans) {
        Result<int64_t> id = PutChunk(content.substr(s.offset, s.length));
        if (!id.ok()) return id.status();
        recipe.Append(*id, 0, s.length);
      }
      break;
    }
  }

  const Sha256Digest digest = Sha256(content);
  const std::string blob = EncodeRecipe(recipe.entries());
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindText(1, name));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindInt(2, static_cast<int64_t>(content.size())));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindBlob(3, store_internal::DigestBytes(digest)));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindText(4, chunker.ToString()));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindInt(5, static_cast<int64_t>(recipe.entries().size())));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindBlob(6, blob, false));
  NEARDUP_RETURN_IF_ERROR(insert_file_.Exec());
  NEARDUP_RETURN_IF_ERROR(ApplyRefs(recipe.entries(), +1));
  return txn.Commit();
}

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

Result<std::string> Store::Impl::Get(std::string_view name) {
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/false));
  NEARDUP_RETURN_IF_ERROR(find_file_.BindText(1, name));
  Result<bool> row = find_file_.Step();
  if (!row.ok()) {
    find_file_.Reset();
    return row.status();
  }
  if (!*row) {
    find_file_.Reset();
    return Status::NotFound(path_ + ": no file named '" + std::string(name) + "'");
  }
  const int64_t size = find_file_.ColumnInt(1);
  const std::string sha(find_file_.ColumnBlob(2));
  const std::string recipe(find_file_.ColumnBlob(3));
  const int64_t entries = find_file_.ColumnInt(4);
  find_file_.Reset();
  Result<std::string> out = Assemble(name, size, sha, recipe, entries);
  if (!out.ok()) return out;
  NEARDUP_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<std::vector<StoredFileInfo>> Store::Impl::List() {
  Result<Stmt> s =
      db_->Prepare("SELECT name, size, sha256, chunker, entries FROM files ORDER BY name");
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
    out.push_back(std::move(info));
  }
  return out;
}

Status Store::Impl::Remove(std::string_view name) {
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  NEARDUP_RETURN_IF_ERROR(find_file_.BindText(1, name));
  Result<bool> row = find_file_.Step();
  if (!row.ok() || !*row) {
    find_file_.Reset();
    if (!row.ok()) return row.status();
    return Status::NotFound(path_ + ": no file named '" + std::string(name) + "'");
  }
  const int64_t id = find_file_.ColumnInt(0);
  const std::string recipe(find_file_.ColumnBlob(3));
  find_file_.Reset();
  NEARDUP_RETURN_IF_ERROR(RemoveFileLocked(id, recipe));
  return txn.Commit();
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

  Result<Stmt> check = db_->Prepare("PRAGMA quick_check");
  if (!check.ok()) return check.status();
  for (;;) {
    Result<bool> row = check->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (check->ColumnText(0) != "ok") {
      problems.push_back({"", "sqlite quick_check: " + std::string(check->ColumnText(0))});
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
