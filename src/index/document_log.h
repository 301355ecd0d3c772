// Copyright 2026 The neardup Authors.
//
// Internal: the write-ahead log of a DocumentIndex, IDX.log: batches of adds
// and removals appended after the committed pair, replayed on open, folded
// into the pair by the next commit (doc/index_format.md, "The log").
//
// Thread safety: Append is called by one thread at a time (the index's
// writer); SyncTo, Sync and bytes may run at the same time as Append from
// other threads (group commit). ParseLog is a pure function.

#ifndef NEARDUP_INDEX_DOCUMENT_LOG_H_
#define NEARDUP_INDEX_DOCUMENT_LOG_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/status.h"
#include "util/file.h"

namespace neardup::index_internal {

inline constexpr size_t kLogHeaderSize = 32;
inline constexpr size_t kLogRecordHeaderSize = 16;

// One change, as it was applied.
struct LogOp {
  // kTime: the adds after it in its record were made at `time` (unix
  // seconds); records written before it existed have none.
  enum class Type : uint8_t { kAdd = 1, kAddReplace = 2, kRemove = 3, kTime = 4 };
  Type type = Type::kAdd;
  std::string id;
  Fingerprint fingerprint;  // adds only
  int64_t time = 0;         // kTime only
};

// One record: the changes of one call, applied together.
struct LogBatch {
  uint64_t offset = 0;  // of the record in the file (for messages)
  std::vector<LogOp> ops;
};

struct ParsedLog {
  uint64_t base_checksum = 0;  // the index file the log applies to
  int bits = 0;
  std::vector<LogBatch> batches;
  uint64_t good_bytes = 0;  // header + every complete record
  bool torn_tail = false;   // bytes after good_bytes were dropped
  // Why they were dropped, "FILE: offset N: reason" (empty when none were):
  // a record cut short, or a last record of its full length that fails its
  // checksum (a torn write, or damage to an acknowledged batch).
  std::string tail;
};

// Parses a whole log. `bytes` shorter than the header: an empty log with
// base_checksum 0 (a crash while it was created). A torn last record (short,
// or failing its checksum and ending exactly at the end of the file) is
// dropped and described in ParsedLog::tail; anything else is Corruption
// "FILE: offset N: reason".
Result<ParsedLog> ParseLog(std::string_view bytes, const std::string& file);

// The bytes of one record holding `ops` (fingerprints of width `bits`).
std::string EncodeLogRecord(const std::vector<LogOp>& ops, int bits);

// Appends records to a log. Create writes a new log (header for the index
// file with checksum `base`) and makes its name durable.
class LogWriter {
 public:
  static Result<std::unique_ptr<LogWriter>> Create(const std::string& path, uint64_t base,
                                                   int bits);
  // The existing log at `path`, `good_bytes` long after truncating a torn tail.
  static Result<std::unique_ptr<LogWriter>> Reopen(const std::string& path, uint64_t good_bytes,
                                                   int bits);

  // Appends one record; synced when `sync`. On failure the log is cut back
  // to its previous length (best effort) and the error returned.
  Status Append(const std::vector<LogOp>& ops, bool sync);
  // Makes the first `end` bytes durable: returns at once when an fsync that
  // started after they were appended has completed; otherwise fsyncs (which
  // covers every record appended so far, so concurrent callers share it).
  Status SyncTo(uint64_t end);
  Status Sync() { return SyncTo(bytes()); }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  LogWriter(std::unique_ptr<file::WritableFile> file, uint64_t bytes, int bits)
      : file_(std::move(file)), bytes_(bytes), bits_(bits) {}
  std::unique_ptr<file::WritableFile> file_;
  std::atomic<uint64_t> bytes_;
  int bits_;
  std::mutex sync_mu_;
  uint64_t synced_ = 0;  // guarded by sync_mu_
};

// Test hook: where a DocumentIndex's background compaction stands.
struct CompactionProgress {
  enum class Stage {
    // The new index file written, without the lock: the changes carried are
    // those made before this returns.
    kWritten,
    // The new file written, mapped and set up and the changes made since its
    // snapshot carried over it, without the index's lock; the lock is taken
    // next (for the rest of the changes, the commit point and the swap).
    kPrepared,
    kPublished,  // the new file is the index's (the lock released)
  };
  Stage stage = Stage::kPrepared;
  size_t carried_outside = 0;  // changes carried without the lock
  size_t carried_locked = 0;   // changes carried under the writer's lock
};
// Called by every background compaction at each stage, on its thread, with
// no lock held. Empty: none. Set by tests only, while no index is open.
void SetCompactionHookForTesting(std::function<void(const CompactionProgress&)> hook);

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_DOCUMENT_LOG_H_
