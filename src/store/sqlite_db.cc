// Copyright 2026 The neardup Authors.

#include "store/sqlite_db.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <thread>

#include "store/fault_vfs.h"

namespace neardup::store_internal {

Status Db::Error(int rc, std::string_view what) const {
  std::string msg = path_ + ": " + std::string(what) + ": ";
  const int primary = rc & 0xff;
  // sqlite3_errmsg describes the most recent failure on this connection.
  msg += (db_ && sqlite3_errcode(db_.get()) == rc) ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc);
  switch (primary) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG:
      return Status::ResourceExhausted(msg);
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
      return Status::InvalidArgument(msg);
    default:
      return Status::IOError(msg);
  }
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, bool create) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (create) flags |= SQLITE_OPEN_CREATE;
  // Through the fault-injection shim: a test can kill the process before any
  // write step (util/fault.h).
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, FaultVfsName());
  std::unique_ptr<Db> db(new Db(path, raw));  // owns raw even on failure
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return Status::ResourceExhausted(path + ": cannot open: out of memory");
    if ((rc & 0xff) == SQLITE_CANTOPEN) {
      return Status::IOError(path + ": cannot open: " + sqlite3_errmsg(raw));
    }
    return db->Error(rc, "cannot open");
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status Db::Exec(std::string_view sql) {
  std::string copy(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_.get(), copy.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return Error(rc, copy);
  return Status::OK();
}

Status Db::EnableWal(int timeout_ms) {
  // The one-column result of a PRAGMA, lower-cased by SQLite already.
  auto first_value = [](void* out, int columns, char** values, char**) {
    if (columns > 0 && values[0] != nullptr) *static_cast<std::string*>(out) = values[0];
    return 0;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    std::string mode;
    int rc = sqlite3_exec(db_.get(), "PRAGMA journal_mode", first_value, &mode, nullptr);
    if (rc == SQLITE_OK && mode == "wal") return Status::OK();
    if (rc == SQLITE_OK) {
      rc = sqlite3_exec(db_.get(), "PRAGMA journal_mode=WAL", first_value, &mode, nullptr);
      if (rc == SQLITE_OK) return Status::OK();
    }
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() + pause > deadline) {
      return Error(rc, "PRAGMA journal_mode=WAL");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return Error(rc, "prepare: " + std::string(sql));
  }
  return Stmt(this, raw);
}

Status Stmt::BindInt(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Status Stmt::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_.get(), index);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Status Stmt::BindBlob(int index, std::string_view bytes, bool copy) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::ResourceExhausted(db_->path() + ": blob of " + std::to_string(bytes.size()) +
                                     " bytes is too large for SQLite");
  }
  // A zero-length blob must not be bound as NULL: give SQLite a valid pointer.
  static const char kEmpty = 0;
  const char* data = bytes.empty() ? &kEmpty : bytes.data();
  const int rc = sqlite3_bind_blob(stmt_.get(), index, data, static_cast<int>(bytes.size()),
                                   copy ? SQLITE_TRANSIENT : SQLITE_STATIC);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Status Stmt::BindText(int index, std::string_view text) {
  const int rc = sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT,
                                     SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::OK() : db_->Error(rc, "bind");
}

Result<bool> Stmt::Step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, std::string("step: ") + sqlite3_sql(stmt_.get()));
}

Status Stmt::Exec() {
  Result<bool> r = Step();
  Reset();
  if (!r.ok()) return r.status();
  return Status::OK();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::string_view Stmt::ColumnBlob(int col) const {
  const void* p = sqlite3_column_blob(stmt_.get(), col);
  const int n = sqlite3_column_bytes(stmt_.get(), col);
  if (p == nullptr || n <= 0) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(n)};
}

std::string_view Stmt::ColumnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), col);
  const int n = sqlite3_column_bytes(stmt_.get(), col);
  if (p == nullptr || n <= 0) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
}

}  // namespace neardup::store_internal
