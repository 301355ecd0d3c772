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
// Thread safety: const methods may run concurrently from many threads;
// Add, AddBatch, Remove and Commit require exclusive access.

#ifndef NEARDUP_DOCUMENT_INDEX_H_
#define NEARDUP_DOCUMENT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup {

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
};

// One indexed document within the query distance.
struct DocumentMatch {
  std::string id;
  int distance = 0;
  friend bool operator==(const DocumentMatch&, const DocumentMatch&) = default;
};

struct DocumentIndexStats {
  size_t documents = 0;     // indexed documents (live entries)
  int bits = 0;             // fingerprint width
  int max_k = 0;            // largest query distance
  size_t memory_bytes = 0;  // heap bytes of the Hamming index
  TableLayout layout;       // the permuted tables' shape
  int64_t file_bytes = -1;  // size of PATH as opened or last committed; -1 if never written
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

  // Opens the committed index at `path` (and PATH.ids). Both files are read
  // as hostile input: Corruption or NotSupported with file:line: reason;
  // NotFound when PATH does not exist. In kReadWrite mode the lock is taken
  // first, an interrupted commit is completed and leftover temporary files
  // are removed.
  static Result<std::unique_ptr<DocumentIndex>> Open(const std::string& path,
                                                     Mode mode = Mode::kReadOnly);

  // A new empty index to be written at `path` (read-write; replaces whatever
  // is there on Commit). options.bits, max_k, blocks, expected_size and
  // build_threads are used. InvalidArgument for bad options or a
  // pipeline_json that is not a JSON object of the right member types.
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

  // Writes the current state as the new committed state, atomically and
  // durably (doc/index_format.md, "Committing"): on success every later Open
  // sees it; on failure (IOError, e.g. a full disk) the previous committed
  // state is intact and this object may Commit again. A no-op when nothing
  // changed since the last Commit or Open (except after Create/Build, which
  // always write). InvalidArgument in read-only mode.
  Status Commit();

  // Replaces *out with every indexed document within distance <= k of `fp`,
  // sorted by (distance, insertion order). InvalidArgument when k is outside
  // [0, max_k()] or fp.bits() != bits().
  Status Query(const Fingerprint& fp, int k, std::vector<DocumentMatch>* out) const;
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
