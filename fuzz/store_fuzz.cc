// Copyright 2026 The neardup Authors.
//
// libFuzzer target for what the store reads back from its database, all of
// it hostile input (a corrupted or crafted store file). The first input byte
// picks a mode, the rest is the payload:
//   0: a file recipe (DecodeRecipe): decoding must agree with a re-encoding
//      of what it decoded (canonical varints) and stop at the first bad entry;
//   1: a stored chunk (DecodeChunk) with codec raw or zstd and a recorded
//      size taken from the payload: a Corruption or exactly `size` bytes, and
//      a zstd chunk re-compressed must decode to the same bytes;
//   2: a whole store database file: Store::Open, Verify, List and Get of
//      every file must give a Status or content with the recorded SHA-256,
//      never a crash or a sanitizer report.
// Input is capped at 64 KiB; recorded chunk sizes above 64 MiB are skipped
// (DecodeChunk bounds them by the frame, the harness by memory).

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "neardup/store.h"
#include "store/chunk_codec.h"
#include "store/recipe.h"
#include "store/sha256.h"

namespace {

namespace si = neardup::store_internal;

void FuzzRecipe(std::string_view in) {
  std::vector<si::RecipeEntry> entries;
  const bool ok = si::DecodeRecipe(in, &entries);
  if (!ok) return;
  // Every entry holds a valid id; re-encoding and decoding is the identity.
  for (const si::RecipeEntry& e : entries) {
    if (e.chunk_id <= 0) __builtin_trap();
  }
  const std::string again = si::EncodeRecipe(entries);
  if (again.size() > in.size()) __builtin_trap();  // canonical varints are the shortest
  std::vector<si::RecipeEntry> round;
  if (!si::DecodeRecipe(again, &round) || round.size() != entries.size()) __builtin_trap();
  for (size_t i = 0; i < round.size(); ++i) {
    if (round[i].chunk_id != entries[i].chunk_id || round[i].offset != entries[i].offset ||
        round[i].length != entries[i].length) {
      __builtin_trap();
    }
  }
}

void FuzzChunk(std::string_view in) {
  static ZSTD_DCtx* dctx = ZSTD_createDCtx();
  static ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (in.size() < 5) return;
  const int64_t codec = static_cast<unsigned char>(in[0]) % 3;  // 2: an unknown codec
  uint32_t size32;
  std::memcpy(&size32, in.data() + 1, 4);
  const std::string_view data = in.substr(5);
  // Half the time the recorded size is the frame's own, to get past that check.
  int64_t size = static_cast<int64_t>(size32 >> 1);
  if ((size32 & 1) != 0) {
    const unsigned long long frame = ZSTD_getFrameContentSize(data.data(), data.size());
    if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != ZSTD_CONTENTSIZE_ERROR) {
      size = static_cast<int64_t>(frame & 0x7fffffffffffffffULL);
    }
  }
  if (size > (int64_t{64} << 20) &&
      size <= static_cast<int64_t>(si::MaxZstdContentSize(data.size()))) {
    return;
  }
  neardup::Result<std::string> out = si::DecodeChunk(dctx, "fuzz", size, codec, data);
  if (!out.ok()) {
    if (!out.status().IsCorruption()) __builtin_trap();
    return;
  }
  if (static_cast<int64_t>(out->size()) != size) __builtin_trap();
  if (codec == si::kCodecRaw && *out != data) __builtin_trap();
  if (codec == si::kCodecZstd) {
    std::string again(ZSTD_compressBound(out->size()), '\0');
    const size_t n =
        ZSTD_compressCCtx(cctx, again.data(), again.size(), out->data(), out->size(), 1);
    if (ZSTD_isError(n)) __builtin_trap();
    again.resize(n);
    neardup::Result<std::string> back = si::DecodeChunk(dctx, "fuzz", size, codec, again);
    if (!back.ok() || *back != *out) __builtin_trap();
  }
}

void FuzzStoreFile(std::string_view in) {
  const std::string path = neardup::fuzz::TempDir() + "/store.db";
  std::error_code ec;
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix, ec);
  neardup::fuzz::WriteTemp("store.db", in);
  neardup::StoreOptions options;
  options.create_if_missing = false;
  options.busy_timeout_ms = 0;
  auto store = neardup::Store::Open(path, options);
  if (!store.ok()) return;
  (void)(*store)->Verify();
  (void)(*store)->Stats();
  auto list = (*store)->List();
  if (!list.ok()) return;
  for (size_t i = 0; i < list->size() && i < 64; ++i) {
    const neardup::StoredFileInfo& info = (*list)[i];
    neardup::Result<std::string> content = (*store)->Get(info.name);
    if (!content.ok()) continue;
    // Get checks size and digest itself; check them once more here.
    if (content->size() != info.size) __builtin_trap();
    if (si::DigestHex(si::Sha256(*content)) != info.sha256_hex) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > (size_t{64} << 10)) return 0;
  const std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      FuzzRecipe(payload);
      break;
    case 1:
      FuzzChunk(payload);
      break;
    default:
      FuzzStoreFile(payload);
      break;
  }
  return 0;
}
