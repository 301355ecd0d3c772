// Copyright 2026 The neardup Authors.
//
// DocumentIndex's commit protocol (doc/index_format.md, "Committing"):
// snapshots of the entries, the index and ids files written from them, the
// publication of a new pair (the commit point), and the background
// compaction that folds the log into a new pair.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <shared_mutex>

#include "index/document_rep.h"

namespace neardup {

using namespace index_internal;  // NOLINT: the index's internal modules

TablesPolicy index_internal::PolicyOf(const IndexTablesOptions& o) {
  index_internal::TablesPolicy p;
  p.exact = o.exact;
  p.recall = o.recall;
  p.max_bytes_per_fingerprint = o.max_bytes_per_fingerprint;
  p.tables_only = o.tables_only;
  return p;
}

// The commit protocol of doc/index_format.md, "Committing".
DocumentIndex::Rep::Snapshot DocumentIndex::Rep::TakeSnapshot() const {
  Snapshot snap;
  snap.bits = index->bits();
  snap.max_k = index->max_k();
  snap.entries = index->Entries();
  const auto by_id = [](const IndexEntry& a, const IndexEntry& b) { return a.id < b.id; };
  if (!std::is_sorted(snap.entries.begin(), snap.entries.end(), by_id)) {
    std::sort(snap.entries.begin(), snap.entries.end(), by_id);
  }
  snap.names.reserve(snap.entries.size());
  for (const IndexEntry& e : snap.entries) {
    // Open checked that every entry has a name; kept as a check.
    snap.names.emplace_back(names.Get(e.id).value_or(std::string_view()));
  }
  snap.lines = names.lines();
  snap.ids_body = IdsBody();
  snap.added = times.ToJson(evict_floor);
  snap.times = times;
  return snap;
}

Status DocumentIndex::Rep::WriteSnapshot(const Snapshot& snap, const std::string& file,
                                         uint64_t* checksum) const {
  if (header.tables.file_version == 1) {
    index_internal::IndexFileHeader h;
    h.type = IndexType::kPermutedTable;
    h.bits = snap.bits;
    h.max_k = snap.max_k;
    h.blocks = PermutedTableIndex::ChooseLayout(h.bits, h.max_k, snap.entries.size(), 64).blocks;
    return index_internal::WriteIndexFileContents(file, h, snap.entries, checksum);
  }
  const size_t n = snap.entries.size();
  std::vector<uint64_t> ids(n), lo(n), hi(snap.bits == 128 ? n : 0);
  std::vector<std::string_view> doc_ids(snap.names.begin(), snap.names.end());
  for (size_t i = 0; i < n; ++i) {
    ids[i] = snap.entries[i].id;
    lo[i] = snap.entries[i].fingerprint.lo();
    if (!hi.empty()) hi[i] = snap.entries[i].fingerprint.hi();
  }
  index_internal::IndexFileV2Meta meta;
  meta.version = static_cast<uint32_t>(header.tables.file_version);
  meta.policy = PolicyOf(header.tables);
  meta.spec = index_internal::ChooseTables(n, snap.bits, snap.max_k, meta.policy);
  return index_internal::WriteIndexFileV2(file, meta, {ids, lo, hi, doc_ids}, /*threads=*/0,
                                          checksum);
}

Status DocumentIndex::Rep::WriteIds(const Snapshot& snap, const std::string& file,
                                    uint64_t checksum) const {
  NEARDUP_ASSIGN_OR_RETURN(auto out, file::WritableFile::Create(file));
  const std::string text = IdsHeader(checksum, snap.lines, snap.added) + snap.ids_body;
  constexpr size_t kChunk = size_t{1} << 20;
  for (size_t pos = 0; pos < text.size(); pos += kChunk) {
    NEARDUP_RETURN_IF_ERROR(out->Append(std::string_view(text).substr(pos, kChunk)));
  }
  NEARDUP_RETURN_IF_ERROR(out->Sync());
  return out->Close();
}

// A copy of the state as of the copy under the readers' lock (as a
// background compaction takes it), written beside nothing the index uses:
// the ids file first, then the index file renamed over DEST, so DEST and
// DEST.ids pair by checksum only once both are complete.
Status DocumentIndex::SaveSnapshot(const std::string& dest) const {
  Rep& r = *rep_;  // its lock, taken on the readers' side
  for (const std::string& name : {dest, IdsPath(dest), LogPath(dest)}) {
    if (std::filesystem::exists(name)) {
      return Status::InvalidArgument(name + ": already exists; a snapshot is written anew");
    }
  }
  Rep::Snapshot snap;
  {
    std::shared_lock lock(r.mu);
    snap = r.TakeSnapshot();
  }
  const std::string tmp = dest + ".tmp";
  const std::string ids_tmp = IdsPath(dest) + ".tmp";
  const auto abandon = [&](const Status& s) {
    (void)file::RemoveFile(tmp);
    (void)file::RemoveFile(ids_tmp);
    return s;
  };
  uint64_t checksum = 0;
  if (Status s = r.WriteSnapshot(snap, tmp, &checksum); !s.ok()) return abandon(s);
  if (Status s = r.WriteIds(snap, ids_tmp, checksum); !s.ok()) return abandon(s);
  if (Status s = file::RenameFile(ids_tmp, IdsPath(dest)); !s.ok()) return abandon(s);
  if (Status s = file::RenameFile(tmp, dest); !s.ok()) return abandon(s);
  return file::SyncParentDir(dest);
}

Status DocumentIndex::Rep::UseCommittedFile(const Snapshot& snap) {
  file_bytes = static_cast<int64_t>(V1Bytes(snap.entries.size(), snap.bits));
  compact_basis = static_cast<double>(file_bytes);
  // A version 1 file is not used in place: the memory holds the state already.
  if (header.tables.file_version == 1) return Status::OK();
  NEARDUP_ASSIGN_OR_RETURN(auto mapped, index_internal::MappedFile::Open(path, options.preload));
  NEARDUP_ASSIGN_OR_RETURN(std::shared_ptr<const index_internal::IndexFileV2> file,
                           index_internal::IndexFileV2::Open(std::move(mapped), path));
  if (file->checksum() != committed_checksum) {
    return Status::IOError(path + ": replaced by another writer after this commit");
  }
  file_bytes = static_cast<int64_t>(file->file_bytes());
  names.Reset(file, snap.lines);
  index = index_internal::TableIndex::FromFile(std::move(file));
  NoteIndex();
  ++epoch;
  return Status::OK();
}

Status DocumentIndex::Rep::Commit() {
  const Snapshot snap = TakeSnapshot();
  const std::string tmp = path + ".tmp";
  uint64_t checksum = 0;
  // 1. The index file, under a temporary name, synced.
  NEARDUP_RETURN_IF_ERROR(WriteSnapshot(snap, tmp, &checksum));
  return Publish(snap, tmp, checksum, {});
}

// Steps 2 to 6 of "Committing" for an index file written at `tmp`; `carry`
// holds the changes made since `snap` was taken (a background compaction's),
// which go to the new log and are applied again over the new file.
Status DocumentIndex::Rep::Publish(const Snapshot& snap, const std::string& tmp, uint64_t checksum,
                                   const std::vector<LogOp>& carry) {
  // 2. The ids file under the name PATH.ids.<checksum>, synced; the changes
  // made meanwhile in a new log PATH.log.<checksum>, synced.
  const std::string pending = PendingIdsPath(path, checksum);
  const std::string pending_log = PendingLogPath(path, checksum);
  const auto abandon = [&](const Status& s) {
    (void)file::RemoveFile(tmp);
    (void)file::RemoveFile(pending);
    (void)file::RemoveFile(pending_log);
    return s;
  };
  if (Status s = WriteIds(snap, pending, checksum); !s.ok()) return abandon(s);
  std::shared_ptr<index_internal::LogWriter> new_log;
  if (!carry.empty()) {
    auto created = index_internal::LogWriter::Create(pending_log, checksum, snap.bits);
    if (!created.ok()) return abandon(created.status());
    new_log = std::move(*created);
    if (Status s = new_log->Append(carry, /*sync=*/true); !s.ok()) return abandon(s);
  }
  // 3. Every new name durable before the commit point refers to them.
  if (Status s = file::SyncParentDir(path); !s.ok()) return abandon(s);
  // 4. The commit point: from here every reader pairs PATH with `pending`
  // (and its log with `pending_log`).
  if (Status s = file::RenameFile(tmp, path); !s.ok()) return abandon(s);
  dirty = !carry.empty();
  has_committed = true;
  ++compactions;
  log_failed = Status::OK();  // the pair (and the new log) hold every change now
  // The old log was written for the previous index file: stale from here on.
  log = new_log;
  log_bytes = new_log ? new_log->bytes() : 0;
  log_records = new_log ? 1 : 0;
  log_tail.clear();  // the log it described is stale
  committed_checksum = checksum;
  const auto after = [&](const Status& s) {
    return Status::IOError(path + ": committed, but " + s.message());
  };
  // The new file replaces the tables and names in memory; the carried
  // changes are applied over it again.
  if (Status s = UseCommittedFile(snap); !s.ok()) return after(s);
  if (header.tables.file_version != 1) {
    // The carried adds get their lines again, at the times they were made.
    times.TruncateTo(snap.lines);
    if (Status s = Apply(carry); !s.ok()) return after(s);
  }
  if (Status s = file::SyncParentDir(path); !s.ok()) return after(s);
  // 5. Tidy: the ids file and the log under their usual names. A crash before
  // this is completed by the next writer; readers find the pending names
  // meanwhile.
  if (Status s = file::RenameFile(pending, IdsPath(path)); !s.ok()) return after(s);
  if (new_log) {
    if (Status s = file::RenameFile(pending_log, LogPath(path)); !s.ok()) return after(s);
  }
  if (Status s = file::SyncParentDir(path); !s.ok()) return after(s);
  if (!new_log) {
    if (Status s = file::RemoveFile(LogPath(path)); !s.ok()) return after(s);
  }
  return Status::OK();
}

void DocumentIndex::Rep::StartCompaction() {
  if (compacting) return;
  if (compactor.joinable()) compactor.join();  // finished: it cleared `compacting`
  compacting = true;
  since_snapshot.clear();
  compactor = std::thread([this] { RunCompaction(); });
}

namespace {

// A background compaction's changes still to be carried under the writer's
// lock once the rounds outside it have caught up this close.
constexpr size_t kCarryUnderLock = 1024;
// Rounds of carrying outside the lock at most (the writers may add faster
// than a round applies; the rest is then carried under the lock).
constexpr int kCarryRounds = 16;

std::function<void(const CompactionProgress&)>& Hook() {
  static std::function<void(const CompactionProgress&)> hook;
  return hook;
}

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void index_internal::SetCompactionHookForTesting(
    std::function<void(const CompactionProgress&)> hook) {
  Hook() = std::move(hook);
}

// The changes made since the snapshot are applied over the new file in a
// state of its own (`staged`) without the lock, round after round, and
// appended to the new log; only the last few (kCarryUnderLock at most,
// unless the writers outrun kCarryRounds rounds) are carried under the
// writer's lock, where the new state is swapped in at the commit point.
void DocumentIndex::Rep::RunCompaction() {
  using Clock = std::chrono::steady_clock;
  Snapshot snap;
  {
    // Readers go on; writers wait for the copy (milliseconds per 100k).
    std::shared_lock lock(mu);
    snap = TakeSnapshot();
    // Writers record their changes from here (they hold `mu` exclusively,
    // so none runs while this shared lock is held).
    recording = true;
  }
  const auto t0 = Clock::now();
  const std::string tmp = path + ".tmp";
  uint64_t checksum = 0;
  Status s = WriteSnapshot(snap, tmp, &checksum);
  const auto t1 = Clock::now();
  CompactionProgress progress;
  std::unique_ptr<Rep> staged;
  std::shared_ptr<const index_internal::IndexFileV2> file;
  std::shared_ptr<index_internal::LogWriter> new_log;
  uint64_t new_records = 0;
  const std::string pending = PendingIdsPath(path, checksum);
  const std::string pending_log = PendingLogPath(path, checksum);
  const bool in_place = header.tables.file_version != 1;
  // Appends `ops` to the new log and applies them over the new file.
  const auto carry = [&](const std::vector<LogOp>& ops, bool sync) -> Status {
    if (ops.empty()) return sync ? new_log->Sync() : Status::OK();
    NEARDUP_RETURN_IF_ERROR(new_log->Append(ops, sync));
    ++new_records;
    return in_place ? staged->Apply(ops) : Status::OK();
  };
  progress.stage = CompactionProgress::Stage::kWritten;
  if (s.ok() && Hook()) Hook()(progress);
  if (s.ok()) s = WriteIds(snap, pending, checksum);
  if (s.ok() && in_place) {
    // The new file mapped (or read, with preload) and its tables and names
    // set up, as UseCommittedFile would under the lock.
    auto mapped = index_internal::MappedFile::Open(tmp, options.preload);
    if (!mapped.ok()) s = mapped.status();
    if (s.ok()) {
      auto opened = index_internal::IndexFileV2::Open(std::move(*mapped), path);
      if (opened.ok()) {
        file = std::move(*opened);
      } else {
        s = opened.status();
      }
    }
    if (s.ok() && file->checksum() != checksum) {
      s = Status::IOError(tmp + ": replaced while the compaction wrote it");
    }
    if (s.ok()) {
      staged = std::make_unique<Rep>();
      staged->path = path;
      staged->options = options;
      staged->header = header;
      staged->bits = bits;
      staged->max_k = max_k;
      staged->names.Reset(file, snap.lines);
      staged->index = index_internal::TableIndex::FromFile(file);
      staged->times = snap.times;
      staged->times.TruncateTo(snap.lines);
    }
  }
  if (s.ok()) {
    auto created = index_internal::LogWriter::Create(pending_log, checksum, snap.bits);
    if (created.ok()) {
      new_log = std::move(*created);
    } else {
      s = created.status();
    }
  }
  // The changes made meanwhile, carried without the lock while they are many.
  size_t carried = 0;
  for (int round = 0; s.ok() && round < kCarryRounds && !stop_compaction; ++round) {
    std::vector<LogOp> ops;
    {
      std::shared_lock lock(mu);
      ops.assign(since_snapshot.begin() + static_cast<ptrdiff_t>(carried), since_snapshot.end());
    }
    carried += ops.size();
    s = carry(ops, /*sync=*/false);
    if (ops.size() < kCarryUnderLock) break;
  }
  // Every new name durable before the commit point refers to them.
  if (s.ok()) s = new_log->Sync();
  if (s.ok()) s = file::SyncParentDir(path);
  progress.carried_outside = carried;
  progress.stage = CompactionProgress::Stage::kPrepared;
  if (s.ok() && Hook()) Hook()(progress);
  const auto t2 = Clock::now();
  // What the old state held, freed after the lock is released.
  std::unique_ptr<index_internal::TableIndex> old_index;
  Names old_names;
  AddTimes old_times;
  std::shared_ptr<index_internal::LogWriter> old_log;
  Clock::time_point t3, t4;
  bool committed = false;
  {
    std::unique_lock lock(mu);
    t3 = Clock::now();
    // Closing: the compaction is abandoned (the log holds every change).
    const bool go = s.ok() && !stop_compaction;
    if (go) {
      // The rest, now that no writer can add to it.
      const std::vector<LogOp> rest(since_snapshot.begin() + static_cast<ptrdiff_t>(carried),
                                    since_snapshot.end());
      progress.carried_locked = rest.size();
      // Synced here only when the writers' changes are (options.sync):
      // without, a power loss may lose the last changes anyway, and a
      // killed process loses nothing (the kernel has them).
      s = carry(rest, /*sync=*/options.sync);
    }
    // The commit point: from here every reader pairs PATH with `pending`
    // (and its log with `pending_log`).
    if (go && s.ok()) s = file::RenameFile(tmp, path);
    if (go && s.ok()) {
      committed = true;
      const bool carried_any = carried + progress.carried_locked > 0;
      dirty = carried_any;
      has_committed = true;
      ++compactions;
      log_failed = Status::OK();  // the pair and the new log hold every change now
      old_log = std::move(log);   // written for the previous index file: stale
      log = new_log;
      log_bytes = new_log->bytes();
      log_records = new_records;
      log_tail.clear();
      committed_checksum = checksum;
      file_bytes = static_cast<int64_t>(V1Bytes(snap.entries.size(), snap.bits));
      compact_basis = static_cast<double>(file_bytes);
      if (in_place) {
        file_bytes = static_cast<int64_t>(file->file_bytes());
        old_index = std::move(index);
        index = std::move(staged->index);
        std::swap(old_names, names);
        names = std::move(staged->names);
        std::swap(old_times, times);
        times = std::move(staged->times);
        NoteIndex();
        ++epoch;
      }
      // A crash from here on: the next writer pairs the new file with its
      // pending ids and log (Open finishes the renames).
      if (options.sync) s = file::SyncParentDir(path);
      if (!s.ok()) s = Status::IOError(path + ": committed, but " + s.message());
    }
    t4 = Clock::now();
    recording = false;
    since_snapshot.clear();
    since_snapshot.shrink_to_fit();
  }
  if (!committed) {
    (void)file::RemoveFile(tmp);
    (void)file::RemoveFile(pending);
    (void)file::RemoveFile(pending_log);
  } else if (s.ok()) {
    // Tidy: the ids file and the log under their usual names (the log's
    // writer appends through its descriptor whatever its name).
    if (!options.sync) s = new_log->Sync();
    if (s.ok()) s = file::RenameFile(pending, IdsPath(path));
    if (s.ok()) s = file::RenameFile(pending_log, LogPath(path));
    if (s.ok()) s = file::SyncParentDir(path);
    if (!s.ok()) s = Status::IOError(path + ": committed, but " + s.message());
  }
  progress.stage = CompactionProgress::Stage::kPublished;
  if (committed && Hook()) Hook()(progress);
  if (std::getenv("NEARDUP_COMPACTION_TRACE") != nullptr) {
    std::fprintf(stderr,
                 "neardup: compaction: %zu rows, write %.1f ms, prepare %.1f ms (%zu changes), "
                 "lock wait %.1f ms, held %.1f ms (%zu changes)\n",
                 snap.entries.size(), Ms(t0, t1), Ms(t1, t2), progress.carried_outside, Ms(t2, t3),
                 Ms(t3, t4), progress.carried_locked);
  }
  // The old state is freed here, without the lock (a large delta's maps, a
  // preloaded file's memory).
  old_index.reset();
  staged.reset();
  std::unique_lock lock(mu);
  last_compaction = s;
  compacting = false;
}

void DocumentIndex::Rep::JoinCompaction() {
  if (compactor.joinable()) compactor.join();
}

}  // namespace neardup
