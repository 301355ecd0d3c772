// Copyright 2026 The neardup Authors.
//
// DocumentIndex's commit protocol (doc/index_format.md, "Committing"):
// snapshots of the entries, the index and ids files written from them, the
// publication of a new pair (the commit point), and the background
// compaction that folds the log into a new pair.

#include <algorithm>
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

void DocumentIndex::Rep::RunCompaction() {
  Snapshot snap;
  {
    // Readers go on; writers wait for the copy (milliseconds per 100k).
    std::shared_lock lock(mu);
    snap = TakeSnapshot();
    // Writers record their changes from here (they hold `mu` exclusively,
    // so none runs while this shared lock is held).
    recording = true;
  }
  const std::string tmp = path + ".tmp";
  uint64_t checksum = 0;
  Status s = WriteSnapshot(snap, tmp, &checksum);
  std::unique_lock lock(mu);
  if (s.ok() && !stop_compaction) {
    s = Publish(snap, tmp, checksum, since_snapshot);
  } else {
    (void)file::RemoveFile(tmp);
  }
  last_compaction = s;
  recording = false;
  since_snapshot.clear();
  compacting = false;
}

void DocumentIndex::Rep::JoinCompaction() {
  if (compactor.joinable()) compactor.join();
}

}  // namespace neardup
