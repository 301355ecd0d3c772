// Copyright 2026 The neardup Authors.
//
// DocumentIndex::Rep, the state behind the facade (document_index.cc), shared
// with the commit protocol, snapshots and compaction (document_commit.cc).

#ifndef NEARDUP_INDEX_DOCUMENT_REP_H_
#define NEARDUP_INDEX_DOCUMENT_REP_H_

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "index/add_times.h"
#include "index/document_files.h"
#include "index/document_log.h"
#include "index/document_names.h"
#include "index/ids_file.h"
#include "index/index_file.h"
#include "index/index_file_v2.h"
#include "index/search_combiner.h"
#include "index/table_index.h"
#include "neardup/document_index.h"
#include "util/file.h"

namespace neardup {
namespace index_internal {

// The log triggers a compaction only past this size, whatever the fraction.
inline constexpr uint64_t kMinCompactLogBytes = uint64_t{1} << 20;

// The base checksum in a log's header (0 when too short to hold one).
inline uint64_t LogBase(std::string_view log) {
  if (log.size() < kLogHeaderSize) return 0;
  uint64_t base;
  std::memcpy(&base, log.data() + 16, 8);
  return base;
}

// The size of n entries as a version 1 index file.
inline double V1Bytes(size_t n, int bits) {
  return static_cast<double>(kIndexHeaderSize + kIndexFooterSize + n * (bits == 64 ? 16 : 24));
}

// How the index file's tables are chosen, from the header's options.
TablesPolicy PolicyOf(const IndexTablesOptions& o);

// A reader-writer mutex that prefers writers: a reader arriving while a
// writer waits queues behind it. std::shared_mutex (glibc's default rwlock)
// prefers readers, so a steady stream of queries (and of the query halves of
// concurrent Checks) could keep the writer's half of a Check waiting
// indefinitely.
class RwMutex {
 public:
  RwMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&rw_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~RwMutex() { pthread_rwlock_destroy(&rw_); }
  RwMutex(const RwMutex&) = delete;
  RwMutex& operator=(const RwMutex&) = delete;
  void lock() { pthread_rwlock_wrlock(&rw_); }
  void unlock() { pthread_rwlock_unlock(&rw_); }
  void lock_shared() { pthread_rwlock_rdlock(&rw_); }
  void unlock_shared() { pthread_rwlock_unlock(&rw_); }

 private:
  pthread_rwlock_t rw_;
};

}  // namespace index_internal

// Rep's inline members name the index's internal modules unqualified, as the
// two files that include this header (document_index.cc, document_commit.cc)
// do; no other file includes it.
using namespace index_internal;  // NOLINT

struct DocumentIndex::Rep {
  using Json = nlohmann::ordered_json;
  // Shared by Query, Contains, Stats and the queries of Check; exclusive for
  // every change.
  mutable RwMutex mu;
  // Check's searches of the index file and of the delta, combined across
  // the threads checking at once (search_combiner.h); needs no lock (the
  // delta's search takes `mu` shared, once a batch).
  FileSearchCombiner combiner;
  Rep() {
    combiner.SetDeltaSearch([this](std::span<const Fingerprint> queries, int k,
                                   std::vector<std::vector<Neighbor>>* out, DeltaMark* mark) {
      std::shared_lock lock(mu);
      mark->epoch = epoch;
      index->SearchDeltaBatchChunked(queries, k, out);
      mark->end = index->delta_size();
    });
  }
  // Incremented whenever `index` and `names` are replaced by a newly
  // committed file (the delta's positions start again); guarded by mu.
  uint64_t epoch = 0;
  std::string path;
  Mode mode = Mode::kReadOnly;
  std::unique_ptr<file::FileLock> lock;
  std::unique_ptr<index_internal::TableIndex> index;
  int bits = 0;   // index->bits(), fixed for the object's life
  int max_k = 0;  // index->max_k(), likewise
  // index->spec().recall_at_k, set (NoteIndex) whenever `index` is
  // replaced; read without the lock.
  std::atomic<double> recall_at_max_k{1};
  void NoteIndex() { recall_at_max_k.store(index->spec().recall_at_k, std::memory_order_relaxed); }
  DocumentIndexHeader header;
  // Line n of the ids (numeric id n): the document id, or nullopt once
  // removed. Numeric ids are never reused.
  Names names;
  bool dirty = false;
  int64_t file_bytes = -1;
  uint64_t committed_checksum = 0;
  bool has_committed = false;  // committed_checksum names a pair on disk
  DocumentIndexOptions options;
  // The log being appended to; null until the first logged change.
  std::shared_ptr<index_internal::LogWriter> log;
  uint64_t log_bytes = 0;
  uint64_t log_records = 0;
  uint64_t compactions = 0;  // index files published by this object
  // When each line was added (add_times.h); guarded by mu.
  AddTimes times;
  // While the log is replayed: the time of its adds (its last time
  // operation, or the log file's mtime before one).
  bool replaying = false;
  int64_t replay_time = 0;
  // Every line below it is removed (Evict starts there); guarded by mu.
  uint64_t evict_floor = 0;
  uint64_t evicted = 0;  // documents removed by Evict since Open
  int64_t Now() const {
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // The log's dropped tail when it was opened (ParsedLog::tail): Verify
  // reports it.
  std::string log_tail;
  // Set when a log append failed: the memory holds a change the log may
  // lack, so no further change is accepted (reopen the index).
  Status log_failed;

  Status CheckWritable() const {
    if (mode != Mode::kReadWrite) {
      return Status::InvalidArgument(path + ": opened read-only");
    }
    // A forked child shares its parent's lock and would write the files
    // under the parent's feet (one of the two losing its changes).
    if (lock && !lock->HeldByThisProcess()) {
      return Status::InvalidArgument(path +
                                     ": opened for writing by the parent of this forked process; "
                                     "changes are refused here (open it after the fork)");
    }
    return Status::OK();
  }

  std::string IdsHeader(uint64_t checksum, uint64_t lines, const Json& added) const {
    Json h = {{"neardup_index_ids",
               header.attachment.empty() ? kIdsFormatVersionWithoutAttachment : kIdsFormatVersion},
              {"pipeline", Json::parse(header.pipeline_json)},
              {"fingerprints_input", header.fingerprints_input},
              {"index_checksum", Hex64(checksum)},
              {"lines", lines}};
    if (!header.attachment.empty()) h["attachment"] = HexBytes(header.attachment);
    if (!added.empty()) h["added"] = added;
    return h.dump() + "\n";
  }
  std::string IdsBody() const {
    std::string text;
    for (uint64_t n = 0; n < names.lines(); ++n) {
      const std::optional<std::string_view> name = names.Get(n);
      text += name ? Json(std::string(*name)).dump(-1, ' ', false, Json::error_handler_t::replace)
                   : "null";
      text += '\n';
    }
    return text;
  }

  // Removes what an interrupted commit left (never the pending ids file of
  // the committed index file, which Open has already renamed).
  void RemoveLeftovers() {
    const std::filesystem::path p(path);
    std::filesystem::path dir = p.parent_path();
    if (dir.empty()) dir = ".";
    const std::string base = p.filename().string();
    std::error_code ec;
    std::vector<std::string> leftovers;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (IsLeftover(name, base, committed_checksum)) leftovers.push_back((dir / name).string());
    }
    // Best effort: a leftover that cannot be removed is ignored by readers.
    for (const std::string& f : leftovers) (void)file::RemoveFile(f);
  }

  // What a commit writes: the live entries in numeric-id order with their
  // document ids, and the ids file's lines.
  struct Snapshot {
    int bits = 64;
    int max_k = 0;
    std::vector<IndexEntry> entries;
    std::vector<std::string> names;
    uint64_t lines = 0;
    std::string ids_body;
    Json added = Json::array();  // the add times (AddTimes::ToJson)
    AddTimes times;              // as they were
  };
  // REQUIRES: `mu` held (shared is enough).
  Snapshot TakeSnapshot() const;
  // Writes the index file of `snap` (version header.tables.file_version) to
  // `file`, fsynced. No lock needed.
  Status WriteSnapshot(const Snapshot& snap, const std::string& file, uint64_t* checksum) const;
  // The ids file of `snap` for an index file with `checksum`, synced.
  Status WriteIds(const Snapshot& snap, const std::string& file, uint64_t checksum) const;
  Status Publish(const Snapshot& snap, const std::string& tmp, uint64_t checksum,
                 const std::vector<LogOp>& carry);
  // After the commit point: maps the new version 2 file (the delta is in it).
  Status UseCommittedFile(const Snapshot& snap);
  Status Commit();

  // Background compaction (DocumentIndexOptions::background_compaction): a
  // thread writes the new index file from a snapshot without any lock, maps
  // it, sets up its tables and names and applies the changes made meanwhile
  // over it (and into a new log) in a state of its own, still without the
  // lock, round after round; under the writer's lock it carries only the
  // last few changes, renames the file (the commit point) and swaps the new
  // state in (document_commit.cc, RunCompaction).
  std::thread compactor;
  bool compacting = false;            // guarded by mu
  bool recording = false;             // since_snapshot is being filled; guarded by mu
  std::vector<LogOp> since_snapshot;  // guarded by mu
  std::atomic<bool> stop_compaction{false};
  Status last_compaction;  // guarded by mu
  // REQUIRES: `mu` held exclusively.
  void StartCompaction();
  void RunCompaction();
  // REQUIRES: `mu` not held.
  void JoinCompaction();
  ~Rep() {
    stop_compaction = true;
    JoinCompaction();
  }
  // The log's size that triggers a compaction is compact_fraction of this:
  // the size of the committed state as a version 1 file.
  double compact_basis = 0;
  // The public calls' bodies, run with `mu` held. What took effect is
  // appended to *ops when it is not null.
  Status AddBatch(std::span<const std::string> ids, std::span<const Fingerprint> fps, bool replace,
                  std::vector<LogOp>* ops = nullptr);
  Result<size_t> Remove(std::span<const std::string> ids, std::vector<std::string>* missing,
                        std::vector<LogOp>* ops = nullptr);
  Result<size_t> Evict(const EvictionOptions& e, std::vector<LogOp>* ops);
  // Applies logged changes again (a log replayed, a compaction's carried
  // changes), each add at the time its record gives.
  Status Apply(const std::vector<LogOp>& ops);
  // Replays the log read by Open; Corruption when a change does not apply.
  Status Replay(const index_internal::ParsedLog& parsed, const std::string& file);
  // Checks that a change may be made (writable, no earlier log failure).
  Status CheckChangeable() const {
    NEARDUP_RETURN_IF_ERROR(CheckWritable());
    return log_failed;
  }
  // Appends `ops` (already applied in memory) to the log when logging, then
  // compacts when the log has grown past its share. With options.sync, sets
  // *pending to the log bytes the caller must see durable (Await) before it
  // answers: its own record and every record it may have read (group
  // commit: the fsync runs after `mu` is released, shared by the callers
  // waiting meanwhile).
  struct PendingSync {
    std::shared_ptr<index_internal::LogWriter> log;
    uint64_t end = 0;
  };
  Status Persist(const std::vector<LogOp>& ops, PendingSync* pending);
  // After a failed log append the memory holds changes the log lacks: the
  // committed pair and the log as written are read again in their place, so
  // that a failed call changes nothing a reader sees (Query, Contains,
  // Stats). Best effort: when they cannot be read, the memory stays as it
  // is (changes are refused either way, log_failed).
  void RestoreFromDisk();
  // Waits for *pending; REQUIRES: `mu` not held.
  Status Await(const PendingSync& pending);
  Status Query(const Fingerprint& fp, int k, std::vector<DocumentMatch>* out) const;
  // The document ids of `neighbors`, in order.
  Status Name(const std::vector<Neighbor>& neighbors, std::vector<DocumentMatch>* out) const;
};

}  // namespace neardup

#endif  // NEARDUP_INDEX_DOCUMENT_REP_H_
