// Copyright 2026 The neardup Authors.
//
// Thin RAII wrappers over the SQLite C API that turn every error into a
// Status naming the database file and SQLite's reason.

#ifndef NEARDUP_STORE_SQLITE_DB_H_
#define NEARDUP_STORE_SQLITE_DB_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::store_internal {

class Db;

// A prepared statement. Reset() makes it reusable.
class Stmt {
 public:
  Stmt() = default;

  bool valid() const { return stmt_ != nullptr; }
  // Parameters are 1-based, as in SQLite.
  Status BindInt(int index, int64_t value);
  Status BindNull(int index);
  // The bytes are copied (SQLITE_TRANSIENT) unless `copy` is false, in which
  // case they must outlive the next Step().
  Status BindBlob(int index, std::string_view bytes, bool copy = true);
  Status BindText(int index, std::string_view text);

  // True when a row is ready, false when the statement is done.
  Result<bool> Step();
  // Step() expecting no row.
  Status Exec();
  void Reset();

  int64_t ColumnInt(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  bool ColumnIsNull(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }
  // Valid until the next Step() or Reset().
  std::string_view ColumnBlob(int col) const;
  std::string_view ColumnText(int col) const;

 private:
  friend class Db;
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  Stmt(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  Db* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

class Db {
 public:
  // Opens `path` (read-write; created when `create` is true).
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool create);

  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_.get(); }

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);

  // Puts the file in WAL journal mode (persistent: a no-op once done).
  // SQLite does not run the busy handler for the conversion, so a store
  // opened by two processes at once would fail with "database is locked";
  // this retries with backoff for up to `timeout_ms`.
  Status EnableWal(int timeout_ms);
  int64_t LastInsertRowid() const { return sqlite3_last_insert_rowid(db_.get()); }

  // An error Status for SQLite result code `rc` while doing `what`.
  Status Error(int rc, std::string_view what) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  Db(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  std::string path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_SQLITE_DB_H_
