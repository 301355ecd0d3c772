// Copyright 2026 The neardup Authors.
//
// DocumentIndex: a persistent near-duplicate index of documents named by
// string ids. It is a permuted-table HammingIndex (index.h) plus the document
// ids and the header that records how the fingerprints were made (the
// pipeline settings), kept together on disk as two files that are committed
// as one: PATH (the index file) and PATH.ids (the ids file). The format and
// the commit protocol are in doc/index_format.md.
//
// Usage:
//
//   neardup::DocumentIndexHeader header;
//   header.pipeline_json = R"({"bits": 64, ...})";
//   neardup::PermutedTableOptions options;  // bits, max_k, build_threads
//   auto index = neardup::DocumentIndex::Build("corpus.idx", header, options, ids, fps);
//   if (!index.ok()) return index.status();
//   NEARDUP_RETURN_IF_ERROR((*index)->Commit());  // nothing is on disk before
//
//   auto reader = neardup::DocumentIndex::Open("corpus.idx");  // read-only
//   std::vector<neardup::DocumentMatch> matches;
//   NEARDUP_RETURN_IF_ERROR((*reader)->Query(fp, 3, &matches));
//
//   auto writer = neardup::DocumentIndex::Open("corpus.idx", DocumentIndex::Mode::kReadWrite);
//   NEARDUP_RETURN_IF_ERROR((*writer)->Add("doc-17", fp));
//   NEARDUP_RETURN_IF_ERROR((*writer)->Commit());
//
//   // A crawler's resident index: changes logged (PATH.log), query-or-add.
//   neardup::DocumentIndexOptions logged;
//   logged.log = true;
//   auto live = neardup::DocumentIndex::Open("corpus.idx",
//                                            DocumentIndex::Mode::kReadWrite, logged);
//   std::vector<neardup::CheckResult> results;
//   NEARDUP_RETURN_IF_ERROR((*live)->Check(ids, fps, neardup::CheckOptions{}, &results));
//   // results[i].added: ids[i] had no match and is now indexed (and durable).
//
// Ids are unique: Add of an id that is present is an error unless `replace`
// is set. Documents with an empty fingerprint (no features) are not stored by
// callers; they can never be a near duplicate.
//
// Processes: a read-write DocumentIndex holds an exclusive flock(2) on
// PATH.lock from Open/Create/Build until it is destroyed, so concurrent
// writers (other processes or objects) run one after another, each seeing the
// previous one's commit. Readers take no lock and are never blocked: they see
// the last committed state, never a mix of two.
//
// Thread safety: every method may be called from many threads at once. A
// reader-writer mutex inside (writers preferred) makes each call one step:
// Query, Contains and Stats share it; Add, AddBatch, Remove and Commit hold
// it exclusively. Check queries under the shared side (so concurrent checks
// use every core) and takes the exclusive side only to bring each answer up
// to date with the changes made since its query and to add: a Check's answer
// and its add are atomic with respect to every other call on the same object
// (a server's many workers share one read-write DocumentIndex). With
// DocumentIndexOptions::sync, the fsync of the log runs after the lock is
// released and is shared by the calls that wait for it (group commit).

#ifndef NEARDUP_DOCUMENT_INDEX_H_
#define NEARDUP_DOCUMENT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup {

// How the index file's lookup tables are chosen (doc/index_format.md,
// "Version 2"), recorded in the file so that every commit chooses the same
// way for its new size.
struct IndexTablesOptions {
  // Exact tables (the permuted tables of Manku et al.: every match within k
  // is found) whatever their cost. Default false: what has the lowest
  // estimated cost of a query in a batch: exact tables, bit-sampling bands
  // (band_join.h) that find a match at distance k with probability >=
  // `recall` (>= 1 - (1 - recall) / 100 at k - 4), or no tables at all (kind
  // "scan": every query is answered by the exact SIMD scan of the
  // fingerprints, recall 1; kind "filter", 128 bits only: the two-level
  // scan, the fingerprints' low 64 bits within a threshold first, stated
  // recall by the same targets, where it costs at most 3/4 of the exact
  // scan), or, 128 bits only, kind "probe": sorted probe tables keyed on
  // bits of the fingerprints with each row's half word inline, stated
  // recall by the same targets, within 128 table bytes per fingerprint
  // (e.g. the default method, 128 bits and k = 28, from 65,536 documents:
  // 8 tables of 14-bit keys at 1M; doc/index_format.md). Single queries and
  // batches take the same path, so they give the same answers;
  // DocumentIndexStats reports the guarantee.
  bool exact = false;
  double recall = 0.99;
  // Bytes per fingerprint the bands' tables may take (bands only).
  uint32_t max_bytes_per_fingerprint = 512;
  // Lookup tables (exact or bands, by cost) even where the scan is cheaper:
  // a query's cost then grows slower than the index (the scan's is linear
  // in it), at the tables' memory. Default false.
  bool tables_only = false;
  // The index file's version written by Commit: 3 (tables used in place,
  // each row's fingerprint and each table entry in one place), 2 (the same
  // tables in separate arrays, read by neardup before version 3), or 1
  // (entries only; tables rebuilt in memory on every Open), which older
  // neardup reads.
  int file_version = 3;
};

// What the ids file's header records besides the ids.
struct DocumentIndexHeader {
  // How the fingerprints were made: a JSON object, stored verbatim (as the
  // "pipeline" member of the ids file's header). On Open its known members
  // are type-checked (doc/index_format.md), and "bits" must equal the index's
  // width when present. Default: "{}".
  std::string pipeline_json = "{}";
  // True when the index was built from precomputed fingerprints rather than
  // documents. Default: false.
  bool fingerprints_input = false;
  // Opaque bytes committed with the index, in the ids file's header (member
  // "attachment", doc/index_format.md): every commit, compaction and snapshot
  // writes them with the ids, so they change only with the pair, at its
  // commit point. The text index (text_index.h) keeps its boilerplate line
  // statistics here. Keep them small (they are read on every Open; a header
  // line is at most 64 MiB). Default: none (the ids file is then version 2).
  std::string attachment;
  // Not in the ids file: in the index file (version 2).
  IndexTablesOptions tables;
};

// One indexed document within the query distance.
struct DocumentMatch {
  std::string id;
  int distance = 0;
  friend bool operator==(const DocumentMatch&, const DocumentMatch&) = default;
};

// What DocumentIndex::Check does with each document after querying it.
enum class CheckPolicy {
  kQueryOnly,  // add nothing (answers as Query)
  kAddIfNew,   // add the document when it has no match: "have I seen it?"
  kAddAlways,  // add every document; its matches are still reported
};

struct CheckOptions {
  // Largest distance of a match; -1 = the index's max_k.
  int k = -1;
  CheckPolicy policy = CheckPolicy::kAddIfNew;
  // An id already indexed: an error for the whole batch (false), or the new
  // document replaces the old entry when it is added (true; the old entry is
  // then never reported as the document's own match).
  bool replace = false;
  // Without replace, an id already indexed is an error for the whole batch
  // (false), or that item alone is left as it is (true): its result says
  // `exists`, it is not added, and the rest of the batch is checked as usual.
  bool skip_existing = false;
};

// The outcome of checking one document.
struct CheckResult {
  std::vector<DocumentMatch> matches;  // as Query returns them, before any add
  bool added = false;                  // the document was added
  // The id was already indexed and the document was left out
  // (CheckOptions::skip_existing); `matches` never lists the id itself.
  bool exists = false;
};

// How a read-write DocumentIndex persists its changes.
struct DocumentIndexOptions {
  // Each change (Add, AddBatch, Remove, the additions of a Check) is
  // appended to the write-ahead log PATH.log as one record before the call
  // returns, so nothing acknowledged is lost by a crash; Commit folds the
  // log into the pair (compaction). Default false: changes stay in memory
  // until Commit. The log is always replayed on Open, whatever this says.
  bool log = false;
  // fsync the log after every record (true) or only in Sync and Commit.
  bool sync = true;
  // Commit runs by itself after a logged change once the log is larger than
  // this fraction of the index file (and at least 1 MiB). 0 = never.
  double compact_fraction = 0.5;
  // That compaction runs on a thread of its own (true): the new index file is
  // written without any lock held, from a snapshot (readers and writers go
  // on), and is published under the writer's lock with the changes made
  // meanwhile carried into a new log. false: inline, in the call that
  // crossed the limit.
  bool background_compaction = true;
  // The committed index file (version 2 or 3) is read into anonymous memory
  // backed by transparent huge pages (madvise MADV_HUGEPAGE) instead of
  // being mapped: Open takes as long as reading the whole file and the
  // process holds all of it (~470 MB at 1M fingerprints), and a query then
  // makes far fewer TLB misses. For a long-running server (`neardup serve
  // --preload`). The page cache of a file mapping is not backed by huge
  // pages here, so madvise on the mapping itself does not help.
  bool preload = false;
  // Open in kReadWrite mode waits for another process's lock on PATH.lock
  // (a server or another writer): this many seconds at most, then IOError
  // naming the holder's pid; < 0 (the default): as long as it takes.
  double lock_wait_seconds = -1;
  // Called once, with the holder's pid (0 when unknown), when Open has
  // waited about a second for that lock (a front end says so). May be empty.
  std::function<void(int pid)> on_lock_wait;
  // The time recorded for each add (unix seconds, for eviction by age:
  // Evict) and the "now" of Evict. Empty (the default): the system clock.
  // Tests set it.
  std::function<int64_t()> clock;
};

// Which documents DocumentIndex::Evict removes, oldest first (by the time
// recorded when each was added; doc/index_format.md, "Add times").
struct EvictionOptions {
  // Every document added more than this many seconds before now.
  std::optional<int64_t> max_age_seconds;
  // The oldest documents beyond this many (the newest max_count stay).
  std::optional<size_t> max_count;
};

// The lookup tables of the committed index file and of the delta.
struct IndexTablesStats {
  std::string kind;          // "exact", "bands", "probe", "scan" or "filter" (no tables)
  int tables = 0;            // L (bands, probe) or C(b, k) (exact)
  int blocks = 0;            // exact: b
  int band_bits = 0;         // bands: r sampled bits per band; probe: key bits
  int probe_radius = 0;      // bands, probe: key bits flipped per probe; filter: t
  int filter_threshold = 0;  // probe: t, a filter word's distance to survive
  uint64_t seed = 0;         // bands: the positions' seed (kDefaultBandSeed)
  double recall_at_k = 1;    // guaranteed recall at d = max_k (1 when exact)
  double recall_at_k_minus_4 = 1;
  double estimated_query_us = 0;  // cost model, one thread
  // The tables' bytes per fingerprint as the layout states it (the cost
  // model's; 0 without tables), beyond the fingerprint itself.
  double bytes_per_fingerprint = 0;
  int file_version = 0;      // of the committed index file (0: never written)
  size_t delta_entries = 0;  // added since the index file was written (in memory)
};

struct DocumentIndexStats {
  size_t documents = 0;     // indexed documents (live entries)
  int bits = 0;             // fingerprint width
  int max_k = 0;            // largest query distance
  size_t memory_bytes = 0;  // heap bytes of the Hamming index
  TableLayout layout;       // exact tables: their shape (blocks, tables)
  IndexTablesStats tables;
  int64_t file_bytes = -1;   // size of PATH as opened or last committed; -1 if never written
  uint64_t log_bytes = 0;    // size of PATH.log (0 when there is none)
  uint64_t log_records = 0;  // records replayed on Open plus those appended since
  // Compactions (Commit, Compact, background) that published a new index
  // file since this object was opened.
  uint64_t compactions = 0;
  // Documents removed by Evict since this object was opened.
  uint64_t evicted = 0;
  // Searches of the index file by Check and QueryBatch calls since this
  // object was opened, and the batches they were searched in (fewer when
  // concurrent calls were combined into one batch of the scan).
  uint64_t file_search_calls = 0;
  uint64_t file_search_batches = 0;
};

class DocumentIndex {
 public:
  enum class Mode {
    kReadOnly,   // Query and Stats only; no lock
    kReadWrite,  // takes PATH.lock; Add, Remove and Commit allowed
  };

  ~DocumentIndex();
  DocumentIndex(const DocumentIndex&) = delete;
  DocumentIndex& operator=(const DocumentIndex&) = delete;

  // Opens the committed index at `path` (and PATH.ids), then replays the
  // log PATH.log written for it, if any. All three files are read as hostile
  // input: Corruption or NotSupported with file:line (file: offset N for the
  // log): reason; a torn last log record (a crash while it was written, so
  // never acknowledged) is dropped. NotFound when PATH does not exist. In
  // kReadWrite mode the lock is taken first, an interrupted commit is
  // completed, a torn log tail is cut and leftover temporary files and a
  // stale log are removed.
  static Result<std::unique_ptr<DocumentIndex>> Open(const std::string& path,
                                                     Mode mode = Mode::kReadOnly,
                                                     const DocumentIndexOptions& options = {});

  // The files beside an index at `path` that it owns: Build, Commit, Compact
  // and Open write, replace or delete them (PATH, PATH.ids, PATH.log,
  // PATH.lock, PATH.tmp). A crashed commit can also leave PATH.ids.<hex> and
  // PATH.log.<hex>: IsOwnedFile says whether `file` is any of them (names
  // compared as given: pass both paths in the same canonical form).
  static std::vector<std::string> OwnedFiles(const std::string& path);
  static bool IsOwnedFile(const std::string& path, const std::string& file);

  // A new empty index to be written at `path` (read-write; replaces whatever
  // is there on Commit). options.bits, max_k, blocks, expected_size and
  // build_threads are used. InvalidArgument for bad options, a pipeline_json
  // that is not a JSON object of the right member types, or a `path` that
  // names no file (empty, ending in '/', a directory).
  static Result<std::unique_ptr<DocumentIndex>> Create(const std::string& path,
                                                       const DocumentIndexHeader& header,
                                                       const PermutedTableOptions& options);
  // Create + AddBatch as a bulk load; with options.expected_size == 0 the
  // table layout is chosen for ids.size(). Same errors as both.
  static Result<std::unique_ptr<DocumentIndex>> Build(const std::string& path,
                                                      const DocumentIndexHeader& header,
                                                      const PermutedTableOptions& options,
                                                      std::span<const std::string> ids,
                                                      std::span<const Fingerprint> fps);

  // Adds one document. InvalidArgument when `id` is already present and
  // !replace (with replace, its old entry is removed), when
  // fp.bits() != bits(), or in read-only mode. Takes effect in memory; Commit
  // writes it.
  Status Add(const std::string& id, const Fingerprint& fp, bool replace = false);
  // Adds ids[i] with fps[i] for every i, all or nothing: nothing changes when
  // any argument is invalid (an id present, or repeated within the batch,
  // without `replace`; with `replace` the last occurrence wins).
  // REQUIRES: ids.size() == fps.size() (else InvalidArgument).
  Status AddBatch(std::span<const std::string> ids, std::span<const Fingerprint> fps,
                  bool replace = false);
  // Removes every listed id that is present; ids not present are appended to
  // *missing when it is not null. Returns the number of documents removed.
  // InvalidArgument in read-only mode.
  Result<size_t> Remove(std::span<const std::string> ids, std::vector<std::string>* missing);

  // For each document in order: its matches within options.k among the
  // indexed documents (including those added earlier in this batch: a
  // document near an earlier one of the same batch that was added reports
  // it, exactly as when the two are checked one call after the other), then,
  // by options.policy, adds it. Each document is queried without the
  // writer's lock; then, as one step under it, every answer of the batch is
  // brought up to date and the adds are made: the outcome is that of the
  // whole batch checked at that moment, so two concurrent Checks of near
  // duplicates never both add. The committed file's tables are probed for the
  // whole batch through one pipeline (as QueryBatch).
  // *out gets one CheckResult per document. Validated before anything
  // changes (nothing is added on error): InvalidArgument when ids.size() !=
  // fps.size(), k is outside [0, max_k()], a fingerprint has the wrong width,
  // an id repeats within the batch, an id is indexed and neither
  // options.replace nor options.skip_existing (only when the policy may
  // add), or a policy that adds in read-only mode.
  Status Check(std::span<const std::string> ids, std::span<const Fingerprint> fps,
               const CheckOptions& options, std::vector<CheckResult>* out);

  // Removes the documents `options` names (none when it names no limit),
  // as Remove does: logged when the index logs, and gone from the files at
  // the next Commit or Compact (`neardup index compact --max-age/--max-count`
  // evicts, then compacts, so that the new pair is written without them).
  // Times are those recorded at each add; documents of files written before
  // neardup recorded them count as added when their file or log was last
  // written (never evicted early). Returns the number removed (also counted
  // in Stats().evicted). InvalidArgument in read-only mode or for a negative
  // age.
  Result<size_t> Evict(const EvictionOptions& options);

  // Writes a copy of the current state (every change made before the call,
  // the log's included) as a committed index at `dest` (DEST and DEST.ids,
  // synced; no log), for a backup while the index is in use: changes wait
  // only while the entries are copied in memory, queries not at all. Works
  // in either mode (a read-only open sees every change acknowledged by the
  // writer, so `neardup index snapshot` needs no server). InvalidArgument
  // when DEST, DEST.ids or DEST.log exists; IOError when it cannot be
  // written (nothing is left at DEST then).
  Status SaveSnapshot(const std::string& dest) const;

  // Writes the current state as the new committed state, atomically and
  // durably (doc/index_format.md, "Committing"), and drops the log, whose
  // changes it now holds: on success every later Open
  // sees it; on failure (IOError, e.g. a full disk) the previous committed
  // state is intact and this object may Commit again. A no-op when nothing
  // changed since the last Commit or Open (except after Create/Build, which
  // always write). InvalidArgument in read-only mode.
  Status Commit();

  // Commit, even when nothing changed: rewrites the index file with tables
  // chosen for its current size (a version 1 file becomes
  // header().tables.file_version, by default 3). InvalidArgument in read-only
  // mode.
  Status Compact();

  // Reads the whole committed index file and checks every section's
  // checksum and its structure (a version 2 file's sections are not read on
  // Open, only when queries touch them). Corruption naming the file; also
  // when the log's last record was dropped on Open (cut short, or failing
  // its checksum: a torn write or a damaged batch), with its offset.
  Status Verify() const;

  // fsyncs the log (with options.sync == false, what was appended since the
  // last Sync is not durable before this). OK when there is no log.
  Status Sync();

  // Replaces *out with every indexed document within distance <= k of `fp`,
  // sorted by (distance, insertion order). InvalidArgument when k is outside
  // [0, max_k()] or fp.bits() != bits().
  Status Query(const Fingerprint& fp, int k, std::vector<DocumentMatch>* out) const;
  // Query for each of `fps`: (*out)[j] is exactly what Query(fps[j], k)
  // gives at the same moment (one step under the readers' lock), found
  // through the tables' batch pipeline (many probes in flight at once:
  // TableIndex::SearchFileBatch), or by the scan tiled over the batch where
  // the index has no tables. The file's search is combined with those of
  // the other QueryBatch and Check calls in flight (one batch of the scan,
  // as Check's; the same rows). Errors as Query's, for the whole batch.
  Status QueryBatch(std::span<const Fingerprint> fps, int k,
                    std::vector<std::vector<DocumentMatch>>* out) const;
  // True when `id` is indexed.
  bool Contains(const std::string& id) const;

  // Query-or-add, the streaming dedup step: replaces *out with the indexed
  // documents within distance <= k of `fp` (as Query); when there are none,
  // adds `id` with `fp` (as Add, without replace) and returns true. Returns
  // false, adding nothing, when a near duplicate is indexed. Errors: those of
  // Query and Add (read-only mode, a present id, k or width out of range).
  Result<bool> CheckOrAdd(const std::string& id, const Fingerprint& fp, int k,
                          std::vector<DocumentMatch>* out);

  int bits() const;
  int max_k() const;
  // Stats().tables.recall_at_k (the recall guaranteed at d = max_k), read
  // without the index's lock: a server answers every request with it.
  double recall_at_max_k() const;
  size_t size() const;
  const DocumentIndexHeader& header() const;
  const std::string& path() const;
  DocumentIndexStats Stats() const;

 private:
  struct Rep;
  explicit DocumentIndex(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace neardup

#endif  // NEARDUP_DOCUMENT_INDEX_H_
