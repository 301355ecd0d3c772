// Copyright 2026 The neardup Authors.
//
// Adding a file (chunking; the seed 004 near-block path stores a block
// similar to one already stored as references to its sentences) and
// removing one.

#include <unordered_map>

#include "store/chunker.h"
#include "store/store_impl.h"

namespace neardup {

using store_internal::DecodeRecipe;
using store_internal::EncodeRecipe;
using Entry = store_internal::RecipeEntry;
using store_internal::RecipeBuilder;
using store_internal::Sha256;
using store_internal::Sha256Digest;
using store_internal::Span;

namespace {

constexpr size_t kMaxNameBytes = 4096;

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const {
    size_t h = 0;
    for (int i = 0; i < 8; ++i) h = (h << 8) | d[i];
    return h;
  }
};

}  // namespace

Status Store::Impl::AddSimilarBlock(std::string_view block,
                                    const std::vector<SentenceSpan>& sentences,
                                    const std::vector<Neighbor>& near, RecipeBuilder* recipe) {
  // Sentences of the near blocks, by digest: a sentence found there is a
  // reference into that block.
  std::unordered_map<Sha256Digest, Entry, DigestHash> known;
  for (const Neighbor& m : near) {
    const auto block_id = static_cast<int64_t>(m.id);
    Result<std::string> content = LoadChunk(block_id);
    if (!content.ok()) return content.status();
    for (const SentenceSpan& s : SplitSentenceSpans(*content)) {
      known.emplace(Sha256(std::string_view(*content).substr(s.begin, s.end - s.begin)),
                    Entry{block_id, s.begin, s.end - s.begin});
    }
  }
  for (const SentenceSpan& s : sentences) {
    const std::string_view sentence = block.substr(s.begin, s.end - s.begin);
    const Sha256Digest digest = Sha256(sentence);
    if (auto it = known.find(digest); it != known.end()) {
      recipe->Append(it->second.chunk_id, it->second.offset, it->second.length);
      continue;
    }
    Result<int64_t> id = FindChunk(digest);
    if (!id.ok()) return id.status();
    if (*id == 0) {
      id = InsertChunk(digest, sentence, nullptr);
      if (!id.ok()) return id.status();
    }
    recipe->Append(*id, 0, sentence.size());
  }
  return Status::OK();
}

Status Store::Impl::AddSimhash(std::string_view content, RecipeBuilder* recipe) {
  for (const Span& p : store_internal::SplitParagraphs(content)) {
    const std::string_view block = content.substr(p.offset, p.length);
    const Sha256Digest digest = Sha256(block);
    Result<int64_t> id = FindChunk(digest);
    if (!id.ok()) return id.status();
    if (*id != 0) {  // the same bytes are stored: reference them
      recipe->Append(*id, 0, block.size());
      continue;
    }
    const std::vector<SentenceSpan> sentences = SplitSentenceSpans(block);
    // One sentence: nothing to gain from splitting. No features: nothing to
    // compare.
    const std::optional<uint64_t> fp =
        sentences.size() < 2 ? std::nullopt : BlockFingerprint(block);
    if (!fp) {
      id = InsertChunk(digest, block, nullptr);
      if (!id.ok()) return id.status();
      recipe->Append(*id, 0, block.size());
      continue;
    }
    std::vector<Neighbor> near;  // nearest first; equal distances: lower chunk id first
    NEARDUP_RETURN_IF_ERROR(
        index_->Search(Fingerprint::From64(*fp), options_.near_threshold, &near));
    if (near.size() > static_cast<size_t>(options_.max_near_blocks)) {
      near.resize(static_cast<size_t>(options_.max_near_blocks));
    }
    if (!near.empty()) {
      NEARDUP_RETURN_IF_ERROR(AddSimilarBlock(block, sentences, near, recipe));
      continue;
    }
    id = InsertChunk(digest, block, &*fp);
    if (!id.ok()) return id.status();
    recipe->Append(*id, 0, block.size());
  }
  return Status::OK();
}

Status Store::Impl::RemoveFileLocked(int64_t file_id, std::string_view recipe_blob) {
  std::vector<Entry> entries;
  if (!DecodeRecipe(recipe_blob, &entries)) {
    return Status::Corruption(path_ + ": file " + std::to_string(file_id) + ": bad recipe");
  }
  NEARDUP_RETURN_IF_ERROR(ApplyRefs(entries, -1));
  NEARDUP_RETURN_IF_ERROR(delete_file_.BindInt(1, file_id));
  return delete_file_.Exec();
}

Status Store::Impl::Add(std::string_view name, std::string_view content) {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return Status::InvalidArgument(path_ + ": file name must have 1 to 4096 bytes");
  }
  if (content.size() > (uint64_t{1} << 40)) {
    return Status::ResourceExhausted(path_ + ": " + std::string(name) + ": file too large");
  }
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/true));

  // Adding a name again replaces the file.
  Result<std::optional<FileRow>> old = FindFile(name);
  if (!old.ok()) return old.status();
  if (old->has_value()) {
    NEARDUP_RETURN_IF_ERROR(RemoveFileLocked((*old)->id, (*old)->recipe));
  }

  RecipeBuilder recipe;
  const ChunkerSpec& chunker = options_.chunker;
  switch (chunker.kind) {
    case ChunkerKind::kSimhash:
      NEARDUP_RETURN_IF_ERROR(RefreshIndex());
      NEARDUP_RETURN_IF_ERROR(AddSimhash(content, &recipe));
      break;
    case ChunkerKind::kExactParagraph:
    case ChunkerKind::kFixedSize:
    case ChunkerKind::kContentDefined: {
      const std::vector<Span> spans =
          chunker.kind == ChunkerKind::kExactParagraph ? store_internal::SplitParagraphs(content)
          : chunker.kind == ChunkerKind::kFixedSize
              ? store_internal::SplitFixed(content, chunker.size)
              : store_internal::SplitContentDefined(content, chunker.size);
      for (const Span& s : spans) {
        Result<int64_t> id = PutChunk(content.substr(s.offset, s.length));
        if (!id.ok()) return id.status();
        recipe.Append(*id, 0, s.length);
      }
      break;
    }
  }

  const Sha256Digest digest = Sha256(content);
  const std::string blob = EncodeRecipe(recipe.entries());
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindText(1, name));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindInt(2, static_cast<int64_t>(content.size())));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindBlob(3, store_internal::DigestBytes(digest)));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindText(4, chunker.ToString()));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindInt(5, static_cast<int64_t>(recipe.entries().size())));
  NEARDUP_RETURN_IF_ERROR(insert_file_.BindBlob(6, blob, false));
  NEARDUP_RETURN_IF_ERROR(insert_file_.Exec());
  NEARDUP_RETURN_IF_ERROR(ApplyRefs(recipe.entries(), +1));
  return txn.Commit();
}

Status Store::Impl::Remove(std::string_view name) {
  Txn txn(this);
  NEARDUP_RETURN_IF_ERROR(txn.Begin(/*write=*/true));
  Result<std::optional<FileRow>> file = FindFile(name);
  if (!file.ok()) return file.status();
  if (!file->has_value()) {
    return Status::NotFound(path_ + ": no file named '" + std::string(name) + "'");
  }
  NEARDUP_RETURN_IF_ERROR(RemoveFileLocked((*file)->id, (*file)->recipe));
  return txn.Commit();
}

}  // namespace neardup
