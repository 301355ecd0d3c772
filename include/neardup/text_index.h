// Copyright 2026 The neardup Authors.
//
// TextIndex: a persistent near-duplicate index of texts, the one behind every
// door (`neardup index`, `neardup serve`, Python's neardup.Index). It owns
// the Method its fingerprints are made with, that method's Pipeline, the
// boilerplate line statistics of the corpus it was built from (when the
// method says boilerplate=lines) and the DocumentIndex (document_index.h)
// that stores the fingerprints:
//
//   - the method is stored in the index (the ids file's "pipeline" header)
//     and read back from every header version (MethodOfHeader);
//   - the line statistics are committed with the index, in the same commit
//     (DocumentIndexHeader::attachment: one commit point for all files), and
//     every query, check and add of a text leaves out the lines the build
//     left out;
//   - one empty-document policy: a document without features (empty, or
//     nothing left after normalization) is never a near duplicate of
//     anything, is never added and changes nothing: its result says
//     `empty`, with no matches and `added` false;
//   - one statistics struct, TextIndexStats, printed by TextIndexStatsJson
//     with one set of field names (`neardup index stats`, serve's /v1/stats,
//     Python's Index.stats()).
//
// Usage:
//
//   // A whole corpus at once (its boilerplate lines counted first):
//   auto built = neardup::TextIndex::Build("corpus.idx", method, {}, input);
//
//   // Or document by document:
//   neardup::LineStats lines = ...;  // the corpus's line counts (boilerplate.h), if any
//   auto index = neardup::TextIndex::Create("corpus.idx", method, {}, &lines);
//   std::vector<neardup::DocumentFingerprint> fps;
//   for (const Document& d : corpus) fps.push_back((*index)->Fingerprint(d.text, d.title));
//   NEARDUP_RETURN_IF_ERROR((*index)->Add(ids, fps, /*replace=*/false, nullptr));
//   NEARDUP_RETURN_IF_ERROR((*index)->Commit());
//
//   auto reader = neardup::TextIndex::Open("corpus.idx", {});
//   std::vector<neardup::TextIndexResult> results;
//   NEARDUP_RETURN_IF_ERROR((*reader)->Query({&fp, 1}, 3, &results));
//
// Thread safety: as DocumentIndex; Fingerprint may be called from any number
// of threads at once.

#ifndef NEARDUP_TEXT_INDEX_H_
#define NEARDUP_TEXT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/boilerplate.h"
#include "neardup/document_index.h"
#include "neardup/document_pass.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "neardup/status.h"

namespace neardup {

// How a text index is created (Create).
struct TextIndexOptions {
  int max_k = -1;            // the largest query distance; -1: the method's default k
  int threads = 0;           // threads that build the tables (0: every core)
  size_t expected_size = 0;  // documents the tables are laid out for (0: as added)
  IndexTablesOptions tables;
  // The fingerprints are precomputed (`neardup fingerprint` output), not
  // made from texts here: the index has no line statistics.
  bool fingerprints_input = false;
  // An index (PATH or PATH.ids) already at the path is replaced by the first
  // Commit (true), or Create refuses it with InvalidArgument (false).
  bool overwrite = false;
};

// How a text index is opened (Open).
struct TextIndexOpenOptions {
  DocumentIndex::Mode mode = DocumentIndex::Mode::kReadOnly;
  DocumentIndexOptions index;  // the log, the lock wait, preload...
  std::string jieba_dir;       // python3-jieba's data directory ("": the default)
  // Texts will be fingerprinted: the method's data files are verified, its
  // pipeline is built (the segmenter's dictionary: ~0.7 s) and the line
  // statistics are read. false for what needs none of that (stats, remove,
  // compact, fingerprint input): Fingerprint is then an error.
  bool texts = true;
};

// The answer for one document, the same at every door.
struct TextIndexResult {
  std::vector<DocumentMatch> matches;  // nearest first (as DocumentIndex::Query)
  bool added = false;                  // the document was added (never when empty)
  bool exists = false;  // CheckOptions::skip_existing: the id was indexed, left as it was
  bool empty = false;   // no features: no matches, not added, nothing changed
};

// An index's statistics; TextIndexStatsJson prints them.
struct TextIndexStats {
  std::string path;
  size_t documents = 0;  // indexed documents
  int bits = 0;
  int max_k = 0;
  size_t memory_bytes = 0;
  int64_t file_bytes = -1;
  uint64_t log_bytes = 0;
  uint64_t log_records = 0;
  uint64_t evicted = 0;  // DocumentIndexStats::evicted
  std::string method;    // the method's text form (method.h)
  bool fingerprints_input = false;
  BoilerplateMode boilerplate = BoilerplateMode::kOff;
  size_t boilerplate_lines = 0;  // distinct lines left out of every fingerprint
  IndexTablesStats tables;
};

// {"path", "documents", "bits", "max_k", "memory_bytes", "file_bytes",
// "log_bytes", "log_records", "evicted", "method", "fingerprints_input", "boilerplate":
// {"mode", "lines"}, "tables": {...}}: one line (indent < 0) or indented.
std::string TextIndexStatsJson(const TextIndexStats& stats, int indent = -1);

// What TextIndex::Build read and indexed.
struct TextIndexBuildSummary {
  InputStats input;      // the reader's
  size_t documents = 0;  // documents read
  size_t empty = 0;      // of them without features: not indexed
};

class TextIndex {
 public:
  ~TextIndex();
  TextIndex(const TextIndex&) = delete;
  TextIndex& operator=(const TextIndex&) = delete;

  // A new empty read-write index at `path` for `method` (a SimHash method;
  // its data files are resolved to absolute paths with digests, so that the
  // index is queried as it was built, from any directory). `lines`: the line
  // counts of the corpus when the method removes boilerplate (kept with the
  // index: only the lines it leaves out); null there means no counts yet
  // (nothing is left out). Nothing is on disk before Commit. Errors: those
  // of DocumentIndex::Create; InvalidArgument for an existing index without
  // options.overwrite, and for minhash.
  static Result<std::unique_ptr<TextIndex>> Create(const std::string& path, const Method& method,
                                                   const TextIndexOptions& options,
                                                   const LineStats* lines = nullptr);

  // `neardup index build`: a new index at `path` for `method` made from
  // every document of `input`, in one call: when the method removes
  // boilerplate lines, the counting pass first (holding the documents when
  // the input is not replayable), then every document fingerprinted as
  // Fingerprint makes them, bulk loaded (Load) and committed. Progress:
  // "counting lines (boilerplate)" then "reading + fingerprints", in MB of
  // input read as stored (document_pass.h). An input without documents is
  // an empty index. Errors: Create's, the reader's, Load's, Commit's;
  // InvalidArgument with options.fingerprints_input (load those with Load).
  static Result<std::unique_ptr<TextIndex>> Build(const std::string& path, const Method& method,
                                                  const TextIndexOptions& options,
                                                  const DedupInput& input,
                                                  const DedupProgress& progress = {},
                                                  TextIndexBuildSummary* summary = nullptr);

  // Opens the index at `path` and the method it was built with (any header
  // version: the method's text form, or the settings one by one as indexes
  // written before it was stored name them). Corruption when the stored
  // method is unreadable or its width is not the index's; NotFound or
  // Corruption naming the file when the method removes boilerplate and its
  // line counts cannot be read (an index whose counts are not in its commit,
  // written by neardup before they were, keeps them in PATH.lines: read
  // from there).
  static Result<std::unique_ptr<TextIndex>> Open(const std::string& path,
                                                 const TextIndexOpenOptions& options);

  // DocumentIndex::OwnedFiles and IsOwnedFile, and PATH.lines (the line
  // counts of an index written before they were committed with it).
  static std::vector<std::string> OwnedFiles(const std::string& path);
  static bool IsOwnedFile(const std::string& path, const std::string& file);

  // The method stored in a "pipeline" header (DocumentIndexHeader::
  // pipeline_json), of any version. Its data files are not verified.
  static Result<Method> MethodOfHeader(const std::string& pipeline_json);

  // The fingerprint of a text as this index makes them: its boilerplate
  // lines left out, then the method's pipeline. REQUIRES: opened with texts.
  DocumentFingerprint Fingerprint(std::string_view text, std::string_view title = {}) const;
  // The same for many texts, on `threads` threads (0: every core).
  std::vector<DocumentFingerprint> FingerprintBatch(std::span<const std::string_view> texts,
                                                    std::span<const std::string_view> titles,
                                                    int threads) const;

  // One result per fingerprint: its matches within k (-1: max_k()). Empty
  // documents are answered `empty`. InvalidArgument as DocumentIndex::Query.
  Status Query(std::span<const DocumentFingerprint> fps, int k,
               std::vector<TextIndexResult>* out) const;
  // DocumentIndex::Check over the non-empty documents (the empty ones are
  // answered `empty`), one result per document in order.
  Status Check(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps,
               const CheckOptions& options, std::vector<TextIndexResult>* out);
  // A bulk load (`index build`): the documents of an index just created,
  // to which nothing was added yet, with its tables laid out for their
  // number (DocumentIndex::Build). Empty documents are left out (*out as
  // Add's). InvalidArgument when the index is not new and empty.
  Status Load(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps,
              std::vector<TextIndexResult>* out);
  // Adds every non-empty document (DocumentIndex::AddBatch: all or nothing);
  // *out (when not null) says which were added and which were empty.
  Status Add(std::span<const std::string> ids, std::span<const DocumentFingerprint> fps,
             bool replace, std::vector<TextIndexResult>* out);
  Result<size_t> Remove(std::span<const std::string> ids, std::vector<std::string>* missing);

  Status Commit();
  Status Compact();
  Status Verify() const;
  Status SaveSnapshot(const std::string& dest) const;

  const Method& method() const;
  // The method removes boilerplate lines and the index has their counts.
  bool strips_boilerplate() const;
  int bits() const;
  int max_k() const;
  size_t size() const;
  bool Contains(const std::string& id) const;
  const std::string& path() const;
  TextIndexStats Stats() const;
  // The fingerprints' index itself (its Stats, Sync, ...).
  DocumentIndex& documents();
  const DocumentIndex& documents() const;

 private:
  struct Rep;
  explicit TextIndex(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

}  // namespace neardup

#endif  // NEARDUP_TEXT_INDEX_H_
