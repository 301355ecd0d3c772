// Copyright 2026 The neardup Authors.
//
// The dedup store's implementation behind Store (include/neardup/store.h),
// shared by the files that implement it, one concern each:
//   store.cc         Store::Open, the facade, chunker specs
//   store_schema.cc  the SQL schema, opening and migrating a store, statements
//   store_chunks.cc  the chunks table and the in-memory block fingerprints
//   store_add.cc     adding and removing files (chunking, near-block sentences)
//   store_read.cc    reassembling files, listing, stats, verification
// Format: doc/store_format.md. Not thread-safe: a Store is used by one thread
// at a time (the database's locks serialize processes).

#ifndef NEARDUP_STORE_STORE_IMPL_H_
#define NEARDUP_STORE_STORE_IMPL_H_

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/features.h"
#include "neardup/index.h"
#include "neardup/pipeline.h"
#include "neardup/store.h"
#include "store/recipe.h"
#include "store/sha256.h"
#include "store/sqlite_db.h"
#include "util/fault.h"

namespace neardup {
namespace store_internal {

// Builds a recipe, merging a reference that continues the previous one.
class RecipeBuilder {
 public:
  void Append(int64_t chunk_id, uint64_t offset, uint64_t length) {
    if (length == 0) return;
    if (!entries_.empty()) {
      RecipeEntry& last = entries_.back();
      if (last.chunk_id == chunk_id && last.offset + last.length == offset) {
        last.length += length;
        return;
      }
    }
    entries_.push_back({chunk_id, offset, length});
  }
  const std::vector<RecipeEntry>& entries() const { return entries_; }

 private:
  std::vector<RecipeEntry> entries_;
};

struct ZstdCCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxDeleter {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};

}  // namespace store_internal

class Store::Impl {
 public:
  Impl(std::string path, const StoreOptions& options, std::unique_ptr<store_internal::Db> db)
      : path_(std::move(path)), options_(options), db_(std::move(db)) {}

  Status Init();
  Status Add(std::string_view name, std::string_view content);
  Result<std::string> Get(std::string_view name);
  Result<std::vector<StoredFileInfo>> List();
  Status Remove(std::string_view name);
  Result<StoreStats> Stats();
  Result<std::vector<VerifyProblem>> Verify();
  const std::string& path() const { return path_; }

 private:
  // A transaction that rolls back unless committed.
  class Txn {
   public:
    explicit Txn(Impl* impl) : impl_(impl) {}
    ~Txn() {
      if (active_) {
        (void)impl_->db_->Exec("ROLLBACK");
        impl_->index_valid_ = false;  // it may hold blocks that were rolled back
      }
    }
    Status Begin(bool write) {
      NEARDUP_RETURN_IF_ERROR(impl_->db_->Exec(write ? "BEGIN IMMEDIATE" : "BEGIN"));
      active_ = true;
      write_ = write;
      return Status::OK();
    }
    Status Commit() {
      if (write_ && fault::BeforeWriteStep("store.commit") != 0) {
        return Status::IOError("commit failed: no space left on device (injected)");
      }
      NEARDUP_RETURN_IF_ERROR(impl_->db_->Exec("COMMIT"));
      active_ = false;
      return Status::OK();
    }

   private:
    Impl* impl_;
    bool active_ = false;
    bool write_ = false;
  };

  Status Prepare();
  // Schema 1 -> 2: recomputes every chunks.simhash with BlockFingerprint().
  Status MigrateFingerprints();
  Status RefreshIndex();
  // (chunk id, chunks.simhash) of every fingerprinted block with an id above
  // `after_id`, by id.
  Result<std::vector<std::pair<int64_t, uint64_t>>> LoadFingerprints(int64_t after_id);
  // Seed 004's block fingerprint: the `sentence` preset's 64-bit SimHash
  // (options_.feature_hash) of the block, invalid UTF-8 replaced with U+FFFD
  // first. nullopt when the block has no sentence features.
  std::optional<uint64_t> BlockFingerprint(std::string_view block) const;
  Result<int64_t> FindChunk(const store_internal::Sha256Digest& digest);
  Result<int64_t> InsertChunk(const store_internal::Sha256Digest& digest, std::string_view bytes,
                              const uint64_t* simhash);
  // The chunk's id for `bytes`, inserting it when absent.
  Result<int64_t> PutChunk(std::string_view bytes);
  // The uncompressed content of chunk `id` (size checked).
  Result<std::string> LoadChunk(int64_t id);
  Result<std::string> Decode(int64_t id, int64_t size, int64_t codec, std::string_view data);
  Status AddSimhash(std::string_view content, store_internal::RecipeBuilder* recipe);
  Status AddSimilarBlock(std::string_view block, const std::vector<SentenceSpan>& sentences,
                         const std::vector<Neighbor>& near, store_internal::RecipeBuilder* recipe);
  Status RemoveFileLocked(int64_t file_id, std::string_view recipe);
  Status ApplyRefs(const std::vector<store_internal::RecipeEntry>& entries, int64_t sign);
  // One row of the files table, as find_file_ reads it.
  struct FileRow {
    int64_t id = 0;
    int64_t size = 0;
    std::string sha256;
    std::string recipe;
    int64_t entries = 0;
  };
  // The row of the file named `name`, nullopt when there is none;
  // find_file_ is reset before it returns. Corruption when a damaged name
  // index leads to another file's row, so that no call reads, replaces or
  // removes a file other than the one named.
  Result<std::optional<FileRow>> FindFile(std::string_view name);
  // Assembles a file from its recipe and checks size and SHA-256.
  Result<std::string> Assemble(std::string_view name, int64_t size, std::string_view sha,
                               std::string_view recipe_blob, int64_t entries);

  std::string path_;
  StoreOptions options_;
  std::unique_ptr<store_internal::Db> db_;
  std::unique_ptr<ZSTD_CCtx, store_internal::ZstdCCtxDeleter> cctx_;
  std::unique_ptr<ZSTD_DCtx, store_internal::ZstdDCtxDeleter> dctx_;

  store_internal::Stmt find_chunk_, insert_chunk_, add_refs_, delete_unreferenced_, get_chunk_;
  store_internal::Stmt find_file_, insert_file_, delete_file_, load_fingerprints_, get_generation_,
      bump_generation_;

  // The `sentence` preset with options_.feature_hash; set by Init.
  std::unique_ptr<Pipeline> fingerprinter_;
  // Fingerprints of the blocks stored whole (chunks.simhash), by chunk id: an
  // exact scan, because near_threshold may exceed what a permuted-table
  // index supports (bits / 4).
  std::unique_ptr<HammingIndex> index_;
  bool index_valid_ = false;
  int64_t index_max_id_ = 0;
  std::string index_generation_;
};

}  // namespace neardup

#endif  // NEARDUP_STORE_STORE_IMPL_H_
