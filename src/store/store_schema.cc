// Copyright 2026 The neardup Authors.
//
// Opening a store: its SQL schema (doc/store_format.md), the checks of its
// meta table, the migration from schema 1, and the prepared statements.

#include <string>

#include "neardup/presets.h"
#include "neardup/text.h"
#include "store/store_impl.h"

namespace neardup {

using store_internal::Stmt;

namespace {

// Version 2: chunks.simhash holds the `sentence` preset's fingerprint (the
// store's own sentence SimHash of version 1 is recomputed on open).
constexpr int kSchemaVersion = 2;
constexpr char kFormatName[] = "neardup-store";

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

}  // namespace

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
      {&find_file_, "SELECT id, size, sha256, recipe, entries, name FROM files WHERE name = ?1"},
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

}  // namespace neardup
