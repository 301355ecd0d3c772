// Copyright 2026 The neardup Authors.
//
// DocumentIndex: the index file (index/index_file.cc) plus the ids file,
// committed together (doc/index_format.md, "The ids file" and "Committing").
// The façade: open, changes, queries and checks. Beside it, as leveldb keeps
// filename, log_writer and version_set apart from db_impl: the state behind
// it (document_rep.h), the commit protocol, snapshots and compaction
// (document_commit.cc), the files' names (document_files.h), the ids file and
// the reading of a committed pair (ids_file.h), the names of the documents
// (document_names.h) and the log (document_log.h).

#include "neardup/document_index.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "index/document_files.h"
#include "index/document_log.h"
#include "index/document_names.h"
#include "index/document_rep.h"
#include "index/ids_file.h"
#include "index/index_file.h"
#include "index/index_file_v2.h"
#include "index/table_index.h"
#include "util/file.h"

namespace neardup {
namespace {

using Json = nlohmann::ordered_json;
using namespace index_internal;  // ids_file.h, document_files.h, document_names.h, document_rep.h
using index_internal::LogOp;

bool ByDistanceThenId(const Neighbor& a, const Neighbor& b) {
  return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
}

}  // namespace

namespace {

Status CheckHeader(const DocumentIndexHeader& header, int bits) {
  if (!(header.tables.recall > 0 && header.tables.recall < 1)) {
    return Status::InvalidArgument("recall must be in (0, 1), got " +
                                   std::to_string(header.tables.recall));
  }
  Json pipeline = Json::parse(header.pipeline_json, nullptr, /*allow_exceptions=*/false);
  if (pipeline.is_discarded()) return Status::InvalidArgument("pipeline_json is not valid JSON");
  const std::string why = CheckPipeline(pipeline);
  if (!why.empty()) return Status::InvalidArgument(why);
  auto b = pipeline.find("bits");
  if (b != pipeline.end() && *b != bits) {
    return Status::InvalidArgument("pipeline.bits " + b->dump() + " differs from the index's " +
                                   std::to_string(bits));
  }
  return Status::OK();
}

}  // namespace

DocumentIndex::DocumentIndex(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
DocumentIndex::~DocumentIndex() = default;

Result<std::unique_ptr<DocumentIndex>> DocumentIndex::Open(const std::string& path, Mode mode,
                                                           const DocumentIndexOptions& options) {
  auto rep = std::make_unique<Rep>();
  rep->path = path;
  rep->mode = mode;
  rep->options = options;
  if (mode == Mode::kReadWrite) {
    if (!std::filesystem::exists(path)) return Status::NotFound(path + ": no such index");
    auto lock = file::FileLock::Acquire(
        LockPath(path), file::LockWait{options.lock_wait_seconds, options.on_lock_wait});
    if (!lock.ok()) return lock.status();
    rep->lock = std::move(*lock);
  }
  // The pair, then the log; read again if a writer committed in between
  // (its commit folded the log into a pair this reader has not read).
  RawPair raw;
  std::optional<std::string> log_bytes;
  bool log_from_pending = false;
  for (int attempt = 0;; ++attempt) {
    const FileId before = IdOf(path);
    NEARDUP_ASSIGN_OR_RETURN(raw, ReadCommittedPair(path, options.preload));
    auto bytes = file::ReadWholeFile(LogPath(path));
    if (!bytes.ok() && !bytes.status().IsNotFound()) return bytes.status();
    log_bytes.reset();
    log_from_pending = false;
    if (bytes.ok()) log_bytes = std::move(*bytes);
    // A background compaction may have stopped between its commit point and
    // the rename of its new log: that log waits under the file's checksum.
    const uint64_t checksum = index_internal::StoredChecksum(raw.index_bytes);
    if (!log_bytes || LogBase(*log_bytes) != checksum) {
      auto pending = file::ReadWholeFile(PendingLogPath(path, checksum));
      if (pending.ok() && LogBase(*pending) == checksum) {
        log_bytes = std::move(*pending);
        log_from_pending = true;
      } else if (auto again = file::ReadWholeFile(LogPath(path));
                 again.ok() && LogBase(*again) == checksum) {
        log_bytes = std::move(*again);  // renamed into place meanwhile
      }
    }
    if (IdOf(path) == before || attempt + 1 == kOpenAttempts) break;
    std::this_thread::sleep_for(kRetryDelay);
  }
  if (index_internal::IsMappedVersion(index_internal::IndexFileVersion(raw.index_bytes))) {
    // Versions 2 and 3: used in place; nothing is parsed beyond the metadata.
    NEARDUP_ASSIGN_OR_RETURN(std::shared_ptr<const index_internal::IndexFileV2> file,
                             index_internal::IndexFileV2::Open(raw.index_file, path));
    if (!raw.header.lines) {
      return Bad(raw.ids_file, 1, "a version 2 index file needs a version 2 ids file");
    }
    const auto ids = file->ids();
    if (!ids.empty() && ids.back() >= *raw.header.lines) {
      return Status::Corruption(
          raw.ids_file + ": the index holds numeric id " + std::to_string(ids.back()) +
          ", which has no line in the ids file (" + std::to_string(*raw.header.lines) + " lines)");
    }
    rep->names.Reset(file, *raw.header.lines);
    rep->index = index_internal::TableIndex::FromFile(std::move(file));
  } else {
    // Version 1: the entries are read and tabled in memory (the first commit
    // writes version 2).
    auto contents = index_internal::ParseIndexFile(raw.index_bytes, path);
    if (!contents.ok()) return contents.status();
    NEARDUP_ASSIGN_OR_RETURN(rep->index, index_internal::TableIndex::Create(
                                             contents->header.bits, contents->header.max_k,
                                             index_internal::TablesPolicy{}, contents->ids.size()));
    NEARDUP_RETURN_IF_ERROR(rep->index->AddBatch(contents->ids, contents->fps));
    std::vector<std::optional<std::string>> names;
    NEARDUP_RETURN_IF_ERROR(ParseIds(raw, *rep->index, &names));
    rep->names.Reset(nullptr, 0);
    for (auto& name : names) rep->names.Append(std::move(name));
  }
  // The add times: recorded since they exist; for a file written before,
  // its lines count as added when the file was (an upper bound).
  if (raw.header.added) {
    const std::string why = rep->times.FromJson(*raw.header.added, rep->names.lines());
    if (!why.empty()) return Bad(raw.ids_file, 1, why);
  } else if (rep->names.lines() > 0) {
    rep->times.Note(0, IdOf(path).mtime_ns / 1000000000);
  }
  if (auto b = raw.header.pipeline.find("bits");
      b != raw.header.pipeline.end() && *b != rep->index->bits()) {
    return Bad(raw.ids_file, 1,
               "says " + b->dump() + " bits, the index has " + std::to_string(rep->index->bits()));
  }
  rep->header.pipeline_json = raw.header.pipeline.dump();
  rep->header.fingerprints_input = raw.header.fingerprints_input;
  rep->header.attachment = std::move(raw.header.attachment);
  rep->bits = rep->index->bits();
  rep->max_k = rep->index->max_k();
  rep->NoteIndex();
  rep->file_bytes = static_cast<int64_t>(raw.index_bytes.size());
  rep->compact_basis = V1Bytes(rep->index->size(), rep->index->bits());
  if (const index_internal::IndexFileV2* base = rep->index->base()) {
    const index_internal::TablesPolicy& p = base->meta().policy;
    rep->header.tables.exact = p.exact;
    rep->header.tables.recall = p.recall;
    rep->header.tables.max_bytes_per_fingerprint = p.max_bytes_per_fingerprint;
    rep->header.tables.tables_only = p.tables_only;
  }
  rep->committed_checksum = index_internal::StoredChecksum(raw.index_bytes);
  rep->has_committed = true;
  // The log applies when it was written for this index file; a log written
  // for an older one was folded into this one by a commit (stale).
  std::optional<index_internal::ParsedLog> log;
  if (log_bytes) {
    NEARDUP_ASSIGN_OR_RETURN(auto parsed, index_internal::ParseLog(*log_bytes, LogPath(path)));
    if (parsed.good_bytes > 0 && parsed.base_checksum == rep->committed_checksum) {
      if (parsed.bits != rep->index->bits()) {
        return Status::Corruption(LogPath(path) + ": a " + std::to_string(parsed.bits) +
                                  "-bit log beside a " + std::to_string(rep->index->bits()) +
                                  "-bit index");
      }
      rep->replay_time =
          IdOf(log_from_pending ? PendingLogPath(path, rep->committed_checksum) : LogPath(path))
              .mtime_ns /
          1000000000;
      NEARDUP_RETURN_IF_ERROR(rep->Replay(parsed, LogPath(path)));
      rep->log_tail = parsed.tail;
      log = std::move(parsed);
    }
  }
  if (mode == Mode::kReadWrite) {
    if (raw.from_pending) {
      // Finish the interrupted commit: its commit point had passed.
      NEARDUP_RETURN_IF_ERROR(file::RenameFile(raw.ids_file, IdsPath(path)));
      NEARDUP_RETURN_IF_ERROR(file::SyncParentDir(path));
    }
    rep->RemoveLeftovers();
    if (log && log_from_pending) {
      // Finish the interrupted compaction: its commit point had passed.
      NEARDUP_RETURN_IF_ERROR(
          file::RenameFile(PendingLogPath(path, rep->committed_checksum), LogPath(path)));
      NEARDUP_RETURN_IF_ERROR(file::SyncParentDir(path));
    }
    if (log) {
      // Appends continue after the last whole record (a torn tail is cut).
      NEARDUP_ASSIGN_OR_RETURN(rep->log, index_internal::LogWriter::Reopen(
                                             LogPath(path), log->good_bytes, rep->index->bits()));
      rep->log_bytes = log->good_bytes;
    } else if (log_bytes) {
      NEARDUP_RETURN_IF_ERROR(file::RemoveFile(LogPath(path)));  // stale or empty
    }
  } else if (log) {
    rep->log_bytes = log->good_bytes;
  }
  return std::unique_ptr<DocumentIndex>(new DocumentIndex(std::move(rep)));
}

Result<std::unique_ptr<DocumentIndex>> DocumentIndex::Create(const std::string& path,
                                                             const DocumentIndexHeader& header,
                                                             const PermutedTableOptions& options) {
  return Build(path, header, options, {}, {});
}

Result<std::unique_ptr<DocumentIndex>> DocumentIndex::Build(const std::string& path,
                                                            const DocumentIndexHeader& header,
                                                            const PermutedTableOptions& options,
                                                            std::span<const std::string> ids,
                                                            std::span<const Fingerprint> fps) {
  if (path.empty() || path.back() == '/' || std::filesystem::is_directory(path)) {
    return Status::InvalidArgument("an index needs a file name to be written to, not \"" + path +
                                   "\"");
  }
  NEARDUP_RETURN_IF_ERROR(CheckHeader(header, options.bits));
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  auto rep = std::make_unique<Rep>();
  rep->path = path;
  rep->mode = Mode::kReadWrite;
  rep->header = header;
  rep->header.pipeline_json = Json::parse(header.pipeline_json).dump();
  // Validated first so that a bad layout fails before the lock is waited for.
  NEARDUP_ASSIGN_OR_RETURN(auto empty, PermutedTableIndex::Create(options));
  auto lock = file::FileLock::Acquire(LockPath(path));
  if (!lock.ok()) return lock.status();
  rep->lock = std::move(*lock);

  std::unordered_map<std::string_view, size_t> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!seen.emplace(ids[i], i).second) {
      return Status::InvalidArgument("document id '" + ids[i] + "' appears twice");
    }
  }
  if (header.tables.file_version < 1 || header.tables.file_version > 3) {
    return Status::InvalidArgument("index file version must be 1, 2 or 3");
  }
  std::vector<uint64_t> numeric(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) numeric[i] = rep->names.Append(ids[i]);
  if (!ids.empty()) rep->times.Note(0, rep->Now());
  NEARDUP_ASSIGN_OR_RETURN(rep->index,
                           index_internal::TableIndex::Create(
                               options.bits, options.max_k, PolicyOf(header.tables),
                               options.expected_size != 0 ? options.expected_size : ids.size()));
  // The delta's tables are built only if the index is queried before its
  // Commit replaces it with the file (`index build`: never).
  NEARDUP_RETURN_IF_ERROR(rep->index->AddBatchDeferTables(numeric, fps));
  rep->bits = rep->index->bits();
  rep->max_k = rep->index->max_k();
  rep->NoteIndex();
  // Leftovers are not removed here: until this index commits, a pending ids
  // file may still belong to the committed index file.
  rep->dirty = true;
  return std::unique_ptr<DocumentIndex>(new DocumentIndex(std::move(rep)));
}

Status DocumentIndex::Add(const std::string& id, const Fingerprint& fp, bool replace) {
  return AddBatch(std::span<const std::string>(&id, 1), std::span<const Fingerprint>(&fp, 1),
                  replace);
}

Status DocumentIndex::AddBatch(std::span<const std::string> ids, std::span<const Fingerprint> fps,
                               bool replace) {
  Rep::PendingSync pending;
  {
    std::unique_lock lock(rep_->mu);
    NEARDUP_RETURN_IF_ERROR(rep_->CheckChangeable());
    std::vector<LogOp> ops;
    NEARDUP_RETURN_IF_ERROR(rep_->AddBatch(ids, fps, replace, &ops));
    NEARDUP_RETURN_IF_ERROR(rep_->Persist(ops, &pending));
  }
  return rep_->Await(pending);
}

Status DocumentIndex::Rep::AddBatch(std::span<const std::string> ids,
                                    std::span<const Fingerprint> fps, bool replace,
                                    std::vector<LogOp>* ops) {
  Rep& r = *this;
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  // Validate everything before changing anything.
  std::unordered_map<std::string_view, size_t> last;  // id -> its last position in the batch
  for (size_t i = 0; i < ids.size(); ++i) {
    if (fps[i].bits() != r.index->bits()) {
      return Status::InvalidArgument("document '" + ids[i] + "': a " +
                                     std::to_string(fps[i].bits()) + "-bit fingerprint in a " +
                                     std::to_string(r.index->bits()) + "-bit index");
    }
    auto [it, fresh] = last.emplace(ids[i], i);
    if (!fresh) {
      if (!replace) {
        return Status::InvalidArgument("document id '" + ids[i] + "' appears twice in the input");
      }
      it->second = i;
    }
    if (!replace && r.names.Contains(ids[i])) {
      return Status::InvalidArgument("document id '" + ids[i] + "' is already in " + r.path);
    }
  }
  if (r.names.lines() + ids.size() > std::numeric_limits<uint32_t>::max() - 2) {
    return Status::ResourceExhausted(r.path + ": too many document ids");
  }
  std::vector<uint64_t> removed;
  if (replace) {
    for (const auto& entry : last) {
      for (uint64_t n : r.names.Find(entry.first)) removed.push_back(n);
    }
  }
  std::vector<uint64_t> numeric;
  std::vector<Fingerprint> kept;
  numeric.reserve(last.size());
  kept.reserve(last.size());
  uint64_t next = r.names.lines();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (last[ids[i]] != i) continue;  // an earlier occurrence replaced within the batch
    numeric.push_back(next++);
    kept.push_back(fps[i]);
  }
  NEARDUP_RETURN_IF_ERROR(r.index->AddBatch(numeric, kept));
  if (!removed.empty()) {
    r.index->RemoveBatch(removed);
    for (uint64_t n : removed) r.names.Erase(n);
  }
  if (!numeric.empty()) {
    const int64_t before = r.times.last();
    const int64_t t = r.times.Note(numeric.front(), r.replaying ? r.replay_time : r.Now());
    // Each record's adds are preceded by their time (once per record, and
    // again only when it changes).
    if (ops != nullptr && (ops->empty() || t != before)) {
      LogOp op;
      op.type = LogOp::Type::kTime;
      op.time = t;
      ops->push_back(std::move(op));
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (last[ids[i]] != i) continue;
    r.names.Append(ids[i]);
    if (ops != nullptr) {
      ops->push_back(LogOp{replace ? LogOp::Type::kAddReplace : LogOp::Type::kAdd, ids[i], fps[i]});
    }
  }
  if (!ids.empty()) r.dirty = true;
  return Status::OK();
}

Result<size_t> DocumentIndex::Remove(std::span<const std::string> ids,
                                     std::vector<std::string>* missing) {
  Rep::PendingSync pending;
  size_t removed = 0;
  {
    std::unique_lock lock(rep_->mu);
    NEARDUP_RETURN_IF_ERROR(rep_->CheckChangeable());
    std::vector<LogOp> ops;
    NEARDUP_ASSIGN_OR_RETURN(removed, rep_->Remove(ids, missing, &ops));
    NEARDUP_RETURN_IF_ERROR(rep_->Persist(ops, &pending));
  }
  NEARDUP_RETURN_IF_ERROR(rep_->Await(pending));
  return removed;
}

Result<size_t> DocumentIndex::Rep::Remove(std::span<const std::string> ids,
                                          std::vector<std::string>* missing,
                                          std::vector<LogOp>* ops) {
  Rep& r = *this;
  std::vector<uint64_t> numeric;
  for (const std::string& id : ids) {
    const std::vector<uint64_t> found = r.names.Find(id);
    if (found.empty()) {
      if (missing != nullptr) missing->push_back(id);
      continue;
    }
    for (uint64_t n : found) {
      numeric.push_back(n);
      r.names.Erase(n);
    }
    if (ops != nullptr) ops->push_back(LogOp{LogOp::Type::kRemove, id, Fingerprint()});
  }
  if (numeric.empty()) return size_t{0};
  r.dirty = true;
  return r.index->RemoveBatch(numeric);
}

Result<size_t> DocumentIndex::Evict(const EvictionOptions& options) {
  if (options.max_age_seconds && *options.max_age_seconds < 0) {
    return Status::InvalidArgument("the eviction age must not be negative");
  }
  Rep::PendingSync pending;
  size_t removed = 0;
  {
    std::unique_lock lock(rep_->mu);
    NEARDUP_RETURN_IF_ERROR(rep_->CheckChangeable());
    std::vector<LogOp> ops;
    NEARDUP_ASSIGN_OR_RETURN(removed, rep_->Evict(options, &ops));
    NEARDUP_RETURN_IF_ERROR(rep_->Persist(ops, &pending));
    rep_->evicted += removed;
  }
  NEARDUP_RETURN_IF_ERROR(rep_->Await(pending));
  return removed;
}

// Lines ascend with their add times, so the documents to evict are the live
// lines from the lowest up: those added before the cutoff, then as many more
// as the count limit needs.
Result<size_t> DocumentIndex::Rep::Evict(const EvictionOptions& e, std::vector<LogOp>* ops) {
  const uint64_t lines = names.lines();
  uint64_t age_end = 0;
  if (e.max_age_seconds) {
    const int64_t now = Now();
    int64_t cutoff;
    if (__builtin_sub_overflow(now, *e.max_age_seconds, &cutoff)) {
      cutoff = std::numeric_limits<int64_t>::min();
    }
    age_end = times.FirstLineAtOrAfter(cutoff, lines);
  }
  const size_t live = index->size();
  const size_t excess = e.max_count && live > *e.max_count ? live - *e.max_count : 0;
  std::vector<std::string> victims;
  uint64_t n = evict_floor;
  for (; n < lines; ++n) {
    const std::optional<std::string_view> name = names.Get(n);
    if (!name) continue;
    if (n >= age_end && victims.size() >= excess) break;
    victims.emplace_back(*name);
  }
  NEARDUP_ASSIGN_OR_RETURN(const size_t removed, Remove(victims, nullptr, ops));
  evict_floor = n;  // every line below is removed now
  return removed;
}

Status DocumentIndex::Commit() {
  rep_->JoinCompaction();
  std::unique_lock lock(rep_->mu);
  NEARDUP_RETURN_IF_ERROR(rep_->CheckWritable());
  if (!rep_->dirty) return Status::OK();
  return rep_->Commit();
}

Status DocumentIndex::Compact() {
  rep_->JoinCompaction();
  std::unique_lock lock(rep_->mu);
  NEARDUP_RETURN_IF_ERROR(rep_->CheckWritable());
  return rep_->Commit();
}

Status DocumentIndex::Verify() const {
  std::shared_lock lock(rep_->mu);
  if (!rep_->log_tail.empty()) {
    return Status::Corruption(rep_->log_tail +
                              "; its batch is not applied (a read-write open cuts it)");
  }
  const index_internal::IndexFileV2* base = rep_->index->base();
  // A version 1 file's checksum was verified when it was read.
  return base != nullptr ? base->Verify() : Status::OK();
}

Status DocumentIndex::Sync() {
  std::unique_lock lock(rep_->mu);
  return rep_->log ? rep_->log->Sync() : Status::OK();
}

Status DocumentIndex::Rep::Apply(const std::vector<LogOp>& ops) {
  replaying = true;
  struct Done {
    bool* flag;
    ~Done() { *flag = false; }
  } done{&replaying};
  // A run of plain adds (one time, no replacement) goes in as one batch:
  // the same lines, times and errors as one at a time, at a fraction of
  // the cost (a compaction carries thousands).
  std::vector<std::string> run_ids;
  std::vector<Fingerprint> run_fps;
  const auto flush = [&]() -> Status {
    if (run_ids.empty()) return Status::OK();
    Status s = AddBatch(run_ids, run_fps, /*replace=*/false);
    run_ids.clear();
    run_fps.clear();
    return s;
  };
  for (const LogOp& op : ops) {
    if (op.type == LogOp::Type::kAdd) {
      run_ids.push_back(op.id);
      run_fps.push_back(op.fingerprint);
      continue;
    }
    NEARDUP_RETURN_IF_ERROR(flush());
    Status s;
    if (op.type == LogOp::Type::kTime) {
      replay_time = op.time;
    } else if (op.type == LogOp::Type::kRemove) {
      s = Remove(std::span<const std::string>(&op.id, 1), nullptr).status();
    } else {
      s = AddBatch(std::span<const std::string>(&op.id, 1),
                   std::span<const Fingerprint>(&op.fingerprint, 1),
                   op.type == LogOp::Type::kAddReplace);
    }
    NEARDUP_RETURN_IF_ERROR(s);
  }
  return flush();
}

Status DocumentIndex::Rep::Replay(const index_internal::ParsedLog& parsed,
                                  const std::string& file) {
  for (const index_internal::LogBatch& batch : parsed.batches) {
    if (Status s = Apply(batch.ops); !s.ok()) {
      return Status::Corruption(file + ": offset " + std::to_string(batch.offset) +
                                ": the record does not apply: " + s.message());
    }
    ++log_records;
  }
  // Replay changed memory, not the pair: dirty so that Commit folds it in.
  if (!parsed.batches.empty()) dirty = true;
  return Status::OK();
}

Status DocumentIndex::Rep::Persist(const std::vector<LogOp>& ops, PendingSync* pending) {
  if (!options.log || !has_committed) return Status::OK();
  if (ops.empty()) {
    // Nothing to log, but the answer may rest on records not yet durable.
    if (options.sync && log) *pending = PendingSync{log, log->bytes()};
    return Status::OK();
  }
  Status s;
  if (!log) {
    auto created =
        index_internal::LogWriter::Create(LogPath(path), committed_checksum, index->bits());
    if (created.ok()) {
      log = std::move(*created);
    } else {
      s = created.status();
    }
  }
  if (s.ok()) s = log->Append(ops, /*sync=*/false);
  if (!s.ok()) {
    log_failed = Status::IOError(path +
                                 ": the log could not be written, so changes are refused "
                                 "until the index is reopened: " +
                                 s.message());
    RestoreFromDisk();
    return s;
  }
  log_bytes = log->bytes();
  ++log_records;
  if (recording) since_snapshot.insert(since_snapshot.end(), ops.begin(), ops.end());
  if (options.sync) *pending = PendingSync{log, log_bytes};
  const double limit = std::max<double>(static_cast<double>(kMinCompactLogBytes),
                                        options.compact_fraction * compact_basis);
  // The change is durable in the log: a compaction that fails (a full disk)
  // leaves the log in place and is tried again after the next change.
  if (options.compact_fraction > 0 && static_cast<double>(log_bytes) > limit) {
    if (options.background_compaction) {
      StartCompaction();
    } else {
      (void)Commit();
    }
  }
  return Status::OK();
}

void DocumentIndex::Rep::RestoreFromDisk() {
  DocumentIndexOptions o = options;
  o.preload = false;
  auto fresh = DocumentIndex::Open(path, Mode::kReadOnly, o);
  if (!fresh.ok()) return;
  Rep& f = *(*fresh)->rep_;
  if (f.committed_checksum != committed_checksum) return;  // not the pair this object wrote
  index = std::move(f.index);
  NoteIndex();
  names = std::move(f.names);
  times = std::move(f.times);
  evict_floor = 0;  // the failed call may have been an eviction
  ++epoch;          // queries in flight search again
  dirty = f.dirty;
  log_records = f.log_records;
}

Status DocumentIndex::Rep::Await(const PendingSync& pending) {
  if (!pending.log) return Status::OK();
  const Status s = pending.log->SyncTo(pending.end);
  if (!s.ok()) {
    std::unique_lock lock(mu);
    log_failed = Status::IOError(path +
                                 ": the log could not be synced, so changes are refused "
                                 "until the index is reopened: " +
                                 s.message());
    // The record was written: a reader sees the change, a power loss may
    // lose it.
    return Status::IOError(path +
                           ": the change is in the log, but its fsync failed: " + s.message());
  }
  return s;
}

Status DocumentIndex::Query(const Fingerprint& fp, int k, std::vector<DocumentMatch>* out) const {
  std::shared_lock lock(rep_->mu);
  return rep_->Query(fp, k, out);
}

Status DocumentIndex::QueryBatch(std::span<const Fingerprint> fps, int k,
                                 std::vector<std::vector<DocumentMatch>>* out) const {
  Rep& r = *rep_;
  // As Check's readers' half: the index file without the lock, in one batch
  // with the other searches in flight (search_combiner.h), then the delta
  // under the shared lock; rows removed meanwhile are dropped by name.
  std::shared_ptr<const index_internal::IndexFileV2> file;
  uint64_t epoch = 0;
  {
    std::shared_lock lock(r.mu);
    NEARDUP_RETURN_IF_ERROR(r.index->CheckQueries(fps, k));
    epoch = r.epoch;
    file = r.index->base_file();
  }
  std::vector<std::vector<Neighbor>> neighbors(fps.size());
  if (file) r.combiner.Search(*file, fps, k, &neighbors);
  std::shared_lock lock(r.mu);
  if (r.epoch != epoch) {
    // A compaction replaced the file in between: all of it again.
    NEARDUP_RETURN_IF_ERROR(r.index->SearchEach(fps, k, &neighbors));
  } else {
    std::vector<std::vector<Neighbor>> delta(fps.size());
    r.index->SearchDeltaBatchChunked(fps, k, &delta);
    for (size_t j = 0; j < fps.size(); ++j) {
      std::vector<Neighbor>& found = neighbors[j];
      found.insert(found.end(), delta[j].begin(), delta[j].end());
      std::erase_if(found, [&](const Neighbor& n) { return !r.names.Get(n.id); });
      std::sort(found.begin(), found.end(), ByDistanceThenId);
    }
  }
  out->assign(fps.size(), {});
  for (size_t j = 0; j < fps.size(); ++j) {
    NEARDUP_RETURN_IF_ERROR(r.Name(neighbors[j], &(*out)[j]));
  }
  return Status::OK();
}

Status DocumentIndex::Rep::Query(const Fingerprint& fp, int k,
                                 std::vector<DocumentMatch>* out) const {
  std::vector<Neighbor> neighbors;
  NEARDUP_RETURN_IF_ERROR(index->Search(fp, k, &neighbors));
  return Name(neighbors, out);
}

Status DocumentIndex::Rep::Name(const std::vector<Neighbor>& neighbors,
                                std::vector<DocumentMatch>* out) const {
  out->clear();
  out->reserve(neighbors.size());
  for (const Neighbor& n : neighbors) {
    // Open checked that every entry has a non-null line; kept as a check.
    const std::optional<std::string_view> name = names.Get(n.id);
    if (!name) {
      return Status::Corruption(path + ": numeric id " + std::to_string(n.id) +
                                " has no document id");
    }
    out->push_back(DocumentMatch{std::string(*name), n.distance});
  }
  return Status::OK();
}

// Check in two halves, so that checks use every core: each document is
// queried under the readers' side of the lock (as Query, concurrently with
// other checks), remembering where the delta ended; then, under the writer's
// lock, its answer is brought up to date (matches removed meanwhile dropped,
// documents added meanwhile, this batch's earlier ones included, scanned)
// before it is added or not. The result is that of a query made at the
// moment of the add, so two concurrent checks of near duplicates never both
// add. A compaction that replaced the index in between (rare) makes the
// writer's half query again.
Status DocumentIndex::Check(std::span<const std::string> ids, std::span<const Fingerprint> fps,
                            const CheckOptions& options, std::vector<CheckResult>* out) {
  Rep& r = *rep_;
  out->clear();
  const bool may_add = options.policy != CheckPolicy::kQueryOnly;
  if (may_add) NEARDUP_RETURN_IF_ERROR(r.CheckWritable());
  if (ids.size() != fps.size()) {
    return Status::InvalidArgument("ids and fingerprints differ in number");
  }
  const int k = options.k < 0 ? r.max_k : options.k;
  if (k > r.max_k) {
    return Status::InvalidArgument("k " + std::to_string(k) + " is larger than the index's max k " +
                                   std::to_string(r.max_k));
  }
  // Validate everything that does not depend on the index's state first.
  std::unordered_map<std::string_view, size_t> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (fps[i].bits() != r.bits) {
      return Status::InvalidArgument("document '" + ids[i] + "': a " +
                                     std::to_string(fps[i].bits()) + "-bit fingerprint in a " +
                                     std::to_string(r.bits) + "-bit index");
    }
    if (!seen.emplace(ids[i], i).second) {
      return Status::InvalidArgument("document id '" + ids[i] + "' appears twice in the input");
    }
  }
  out->resize(ids.size());
  // The readers' half. The index file's tables (the bulk of a query's
  // cache misses) are queried without any lock: the file never changes, and
  // the pointer held keeps it mapped through a compaction. The delta (small,
  // in memory) under the shared lock, briefly. Removed rows are dropped when
  // the answer is named.
  struct Found {
    uint64_t epoch = 0;
    bool stale = false;    // a compaction replaced the index in between
    bool exists = false;   // the id is indexed and skip_existing leaves it out
    size_t delta_end = 0;  // the delta's size when it was queried
    std::vector<Neighbor> neighbors;
  };
  std::vector<Found> found(ids.size());
  std::shared_ptr<const index_internal::IndexFileV2> file;
  uint64_t epoch = 0;
  {
    std::shared_lock lock(r.mu);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (may_add && !options.replace && r.names.Contains(ids[i])) {
        if (!options.skip_existing) {
          return Status::InvalidArgument("document id '" + ids[i] + "' is already in " + r.path);
        }
        found[i].exists = true;
      }
    }
    epoch = r.epoch;
    file = r.index->base_file();
  }
  // The whole batch through the tables' pipeline (the same rows as one
  // query at a time), in one batch with those of the other checks in
  // flight (the tables cost less a query in a larger batch); the delta for
  // the whole batch too (its levels' pipelines, the tail's tiled scan: the
  // same entries as SearchDelta query by query), in the same batch, which
  // tells where it searched the delta (`mark`).
  std::vector<std::vector<Neighbor>> delta(ids.size());
  index_internal::DeltaMark mark;
  if (file) {
    std::vector<std::vector<Neighbor>> rows(ids.size());
    r.combiner.Search(*file, fps, k, &rows, &delta, &mark);
    for (size_t i = 0; i < ids.size(); ++i) found[i].neighbors = std::move(rows[i]);
  }
  if (file && may_add) {
    // No lock: the writer's half drops the rows removed since, scans the
    // delta from mark.end and sorts; a compaction meanwhile (another
    // epoch) makes it query again.
    for (size_t i = 0; i < ids.size(); ++i) {
      found[i].epoch = epoch;
      if (mark.epoch != epoch) {
        found[i].stale = true;
        continue;
      }
      found[i].delta_end = mark.end;
      std::vector<Neighbor>& neighbors = found[i].neighbors;
      neighbors.insert(neighbors.end(), delta[i].begin(), delta[i].end());
    }
  } else {
    std::shared_lock lock(r.mu);
    if (!file) {
      // No index file (an index not committed yet): the delta here.
      mark.epoch = r.epoch;
      if (r.epoch == epoch) r.index->SearchDeltaBatchChunked(fps, k, &delta);
      mark.end = r.index->delta_size();
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      found[i].epoch = epoch;
      std::vector<Neighbor>& neighbors = found[i].neighbors;
      if (r.epoch != epoch || mark.epoch != epoch) {
        found[i].stale = true;
        if (may_add) continue;  // the writer's half queries again
        NEARDUP_RETURN_IF_ERROR(r.index->Search(fps[i], k, &neighbors));
      } else {
        found[i].delta_end = mark.end;
        neighbors.insert(neighbors.end(), delta[i].begin(), delta[i].end());
        std::erase_if(neighbors, [&](const Neighbor& n) { return !r.names.Get(n.id); });
        std::sort(neighbors.begin(), neighbors.end(), ByDistanceThenId);
      }
      if (!may_add) NEARDUP_RETURN_IF_ERROR(r.Name(neighbors, &(*out)[i].matches));
    }
  }
  if (!may_add) return Status::OK();

  // The writer's half.
  Rep::PendingSync pending;
  std::unique_lock lock(r.mu);
  NEARDUP_RETURN_IF_ERROR(r.CheckChangeable());
  if (!options.replace) {
    // Again, as of now: another writer may have added or removed one.
    for (size_t i = 0; i < ids.size(); ++i) {
      found[i].exists = r.names.Contains(ids[i]);
      if (found[i].exists && !options.skip_existing) {
        return Status::InvalidArgument("document id '" + ids[i] + "' is already in " + r.path);
      }
    }
  }
  std::vector<LogOp> ops;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<Neighbor>& neighbors = found[i].neighbors;
    if (found[i].stale || found[i].epoch != r.epoch) {
      NEARDUP_RETURN_IF_ERROR(r.index->Search(fps[i], k, &neighbors));
    } else {
      // Removed since the query: gone from the names too.
      std::erase_if(neighbors, [&](const Neighbor& n) { return !r.names.Get(n.id); });
      r.index->SearchDeltaSince(found[i].delta_end, fps[i], k, &neighbors);
      std::sort(neighbors.begin(), neighbors.end(), ByDistanceThenId);
    }
    CheckResult& result = (*out)[i];
    NEARDUP_RETURN_IF_ERROR(r.Name(neighbors, &result.matches));
    // With replace, the entry this document replaces is not its duplicate;
    // an id left out as existing is not its own either.
    std::erase_if(result.matches, [&](const DocumentMatch& m) { return m.id == ids[i]; });
    if (found[i].exists) {
      result.exists = true;
      continue;
    }
    result.added = options.policy == CheckPolicy::kAddAlways ||
                   (options.policy == CheckPolicy::kAddIfNew && result.matches.empty());
    if (result.added) {
      NEARDUP_RETURN_IF_ERROR(
          r.AddBatch(ids.subspan(i, 1), fps.subspan(i, 1), options.replace, &ops));
    }
  }
  NEARDUP_RETURN_IF_ERROR(r.Persist(ops, &pending));
  lock.unlock();
  return r.Await(pending);
}

bool DocumentIndex::Contains(const std::string& id) const {
  std::shared_lock lock(rep_->mu);
  return rep_->names.Contains(id);
}

Result<bool> DocumentIndex::CheckOrAdd(const std::string& id, const Fingerprint& fp, int k,
                                       std::vector<DocumentMatch>* out) {
  CheckOptions options;
  options.k = k;
  options.policy = CheckPolicy::kAddIfNew;
  std::vector<CheckResult> results;
  NEARDUP_RETURN_IF_ERROR(Check(std::span<const std::string>(&id, 1),
                                std::span<const Fingerprint>(&fp, 1), options, &results));
  *out = std::move(results[0].matches);
  return results[0].added;
}
// Read without the lock: a background compaction replaces `index`, never its
// width or max k, which are kept apart.
int DocumentIndex::bits() const { return rep_->bits; }
int DocumentIndex::max_k() const { return rep_->max_k; }
double DocumentIndex::recall_at_max_k() const {
  return rep_->recall_at_max_k.load(std::memory_order_relaxed);
}
size_t DocumentIndex::size() const {
  std::shared_lock lock(rep_->mu);
  return rep_->index->size();
}
const DocumentIndexHeader& DocumentIndex::header() const { return rep_->header; }
const std::string& DocumentIndex::path() const { return rep_->path; }

DocumentIndexStats DocumentIndex::Stats() const {
  std::shared_lock lock(rep_->mu);
  DocumentIndexStats s;
  s.documents = rep_->index->size();
  s.bits = rep_->index->bits();
  s.max_k = rep_->index->max_k();
  s.memory_bytes = rep_->index->MemoryBytes();
  s.file_bytes = rep_->file_bytes;
  s.log_bytes = rep_->log_bytes;
  s.log_records = rep_->log_records;
  s.compactions = rep_->compactions;
  s.evicted = rep_->evicted;
  const index_internal::FileSearchCombiner::Counts searches = rep_->combiner.counts();
  s.file_search_calls = searches.calls;
  s.file_search_batches = searches.batches;
  const index_internal::TablesSpec& spec = rep_->index->spec();
  s.layout.bits = s.bits;
  s.layout.max_k = s.max_k;
  s.layout.blocks = spec.kind == index_internal::TablesKind::kExact ? spec.blocks : 0;
  s.layout.tables =
      spec.kind == index_internal::TablesKind::kExact ? static_cast<int>(spec.masks.size()) : 0;
  s.layout.bytes_per_fingerprint = static_cast<size_t>(spec.bytes_per_fingerprint);
  IndexTablesStats& t = s.tables;
  t.kind = index_internal::TablesKindName(spec.kind);
  t.tables = static_cast<int>(spec.masks.size());
  t.blocks = spec.blocks;
  t.band_bits = spec.band_bits;
  t.probe_radius = spec.radius;
  if (spec.kind == index_internal::TablesKind::kProbe && !spec.masks.empty()) {
    // The probe tables: their keys' bits, probe radius and the filter
    // words' threshold t (the spec's radius, doc/index_format.md).
    t.band_bits = spec.dir_bits;
    t.probe_radius = static_cast<int>(spec.masks[0].radius);
    t.filter_threshold = spec.radius;
  }
  t.seed = spec.seed;
  t.recall_at_k = spec.recall_at_k;
  t.recall_at_k_minus_4 = spec.recall_at_k_minus_4;
  t.estimated_query_us = spec.estimated_query_us;
  t.bytes_per_fingerprint = spec.bytes_per_fingerprint;
  const index_internal::IndexFileV2* base = rep_->index->base();
  t.file_version = !rep_->has_committed ? 0
                   : base != nullptr    ? static_cast<int>(base->meta().version)
                                        : 1;
  t.delta_entries = rep_->index->delta_size();
  return s;
}

}  // namespace neardup
