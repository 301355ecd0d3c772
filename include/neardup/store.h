// Copyright 2026 The neardup Authors.
//
// A block-level deduplicating store of text files in one SQLite file (seed 004).
//
//   neardup::StoreOptions options;                 // simhash chunker, zstd on
//   auto store = neardup::Store::Open("docs.ndstore", options);
//   if (!store.ok()) return store.status();
//   neardup::Status s = (*store)->Add("a.txt", bytes);
//   neardup::Result<std::string> back = (*store)->Get("a.txt");   // SHA-256 checked
//   neardup::Result<neardup::StoreStats> st = (*store)->Stats();
//
// Every Add is one SQLite transaction (WAL journal): a process killed in the
// middle of Add leaves the store as it was before that Add; what was committed
// stays. Several processes may open one store: writers take the write lock for
// the whole Add and wait up to StoreOptions::busy_timeout_ms for it.
//
// Chunkers (StoreOptions::chunker, see ParseChunkerSpec):
//   "simhash"          seed 004: a paragraph (a line, with its line break) is a
//                      block. A block whose SHA-256 is stored is referenced. A
//                      block whose 64-bit sentence SimHash (the `sentence`
//                      method preset's fingerprint of the block) is within
//                      near_threshold bits of a stored block is split into
//                      sentences; sentences found in the near blocks or stored
//                      as chunks (SHA-256) are referenced, only new ones are
//                      stored. Any other block is stored whole.
//   "exact-paragraph"  paragraph blocks, SHA-256 dedup only.
//   "fsp:SIZE"         fixed-size chunks of SIZE bytes, SHA-256 dedup.
//   "cdc:AVG"          FastCDC-style content-defined chunks (Gear hash,
//                      normalized chunking, min AVG/4, max AVG*8), SHA-256 dedup.
// SimHash distance 0 alone is never taken as equality: bytes are only shared
// when their SHA-256 digests are equal.
//
// The on-disk format is described in doc/store_format.md.
//
// Thread safety: a Store object is not thread-safe; use one per thread (or
// external locking). Distinct Store objects on one file, in one process or in
// several, are safe.

#ifndef NEARDUP_STORE_H_
#define NEARDUP_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/status.h"

namespace neardup {

enum class ChunkerKind {
  kSimhash,         // seed 004 paragraph / sentence scheme (the default)
  kExactParagraph,  // paragraph blocks, SHA-256 only
  kFixedSize,       // FSP
  kContentDefined,  // FastCDC-style CDC with a Gear rolling hash
};

struct ChunkerSpec {
  ChunkerKind kind = ChunkerKind::kSimhash;
  // kFixedSize: the chunk size; kContentDefined: the average (target) size.
  // Ignored for the paragraph chunkers.
  size_t size = 0;

  // "simhash", "exact-paragraph", "fsp:4096", "cdc:1024".
  std::string ToString() const;
};

// Parses "simhash", "exact-paragraph", "fsp:SIZE" or "cdc:AVG".
// SIZE is in [16, 16 MiB]; AVG is in [64, 4 MiB].
Result<ChunkerSpec> ParseChunkerSpec(std::string_view spec);

enum class StoreCompression {
  kNone,
  kZstd,  // each chunk zstd-compressed when that makes it smaller
};

struct StoreOptions {
  // How Add splits files. Default: simhash (seed 004).
  ChunkerSpec chunker;
  // simhash chunker: a block is "near" a stored block when the Hamming distance
  // of their 64-bit sentence SimHashes is <= near_threshold. Default 24: with
  // few sentence features per block, small thresholds (3) almost never fire;
  // see doc/store_format.md for the measurement. Range [0, 64].
  int near_threshold = 24;
  // simhash chunker: how many near blocks (nearest first) lend their
  // sentences to a new block. Default 4.
  int max_near_blocks = 4;
  // simhash chunker: the hash of each sentence feature. Seed 004 uses MD5.
  FeatureHashAlgorithm feature_hash = FeatureHashAlgorithm::kMd5;
  // Default zstd (level 3); see doc/benchmarks.md, "zstd: on by default", for
  // the measurement.
  StoreCompression compression = StoreCompression::kZstd;
  int zstd_level = 3;
  // Open creates the store when the file does not exist. Default true.
  bool create_if_missing = true;
  // true (default): SQLite synchronous=FULL, each committed Add is on disk
  // (one fsync per Add) and survives power loss. false: synchronous=NORMAL in
  // WAL mode: a killed process still loses nothing committed and the store
  // stays consistent, but a power loss may drop the last commits. Ingest of
  // many small files is fsync-bound with true.
  bool sync_every_commit = true;
  // How long a writer waits for another process's transaction. Default 30 s.
  int busy_timeout_ms = 30000;
};

struct StoreStats {
  uint64_t files = 0;
  uint64_t bytes_in = 0;      // sum of the sizes of the stored files' contents
  uint64_t bytes_out = 0;     // content bytes the store holds (uncompressed chunk sizes)
  double dedup_rate = 0;      // (bytes_in - bytes_out) / bytes_in; 0 when bytes_in == 0
  uint64_t chunks = 0;        // distinct stored chunks
  uint64_t stored_bytes = 0;  // chunk bytes as kept in the database (after zstd)
  uint64_t db_bytes = 0;      // size of the SQLite file (+ its -wal file) on disk
};

struct StoredFileInfo {
  std::string name;
  uint64_t size = 0;
  std::string sha256_hex;  // of the content Get returns
  std::string chunker;     // ChunkerSpec::ToString() used by Add
  uint64_t entries = 0;    // references in the file's recipe
};

struct VerifyProblem {
  std::string name;  // the file, or "" for a store-wide problem
  std::string reason;
};

class Store {
 public:
  // Opens (or creates) the store at `path`. Errors: IOError (cannot open),
  // Corruption (not a neardup store / bad schema), NotSupported (newer schema),
  // InvalidArgument (bad options).
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = StoreOptions());

  virtual ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Stores `content` under `name` (a non-empty string, at most 4096 bytes),
  // in one transaction. Adding an existing name replaces that file.
  Status Add(std::string_view name, std::string_view content);

  // The content stored under `name`, checked against its SHA-256
  // (Corruption on mismatch). NotFound when there is no such file.
  Result<std::string> Get(std::string_view name);

  // Every stored file, sorted by name.
  Result<std::vector<StoredFileInfo>> List();

  // Removes `name` and every chunk no longer referenced, in one transaction.
  // NotFound when there is no such file.
  Status Remove(std::string_view name);

  Result<StoreStats> Stats();

  // Re-assembles every file and checks its SHA-256, the chunks' digests and
  // the reference counts. Returns the problems found (empty: the store is
  // sound); a non-OK status only when the check itself could not run.
  Result<std::vector<VerifyProblem>> Verify();

  const std::string& path() const;

 private:
  class Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup

#endif  // NEARDUP_STORE_H_
