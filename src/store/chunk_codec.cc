// Copyright 2026 The neardup Authors.

#include "store/chunk_codec.h"

namespace neardup::store_internal {

Result<std::string> DecodeChunk(ZSTD_DCtx* dctx, std::string_view where, int64_t size,
                                int64_t codec, std::string_view data) {
  const std::string at(where);
  if (size < 0) return Status::Corruption(at + ": negative size");
  const auto usize = static_cast<uint64_t>(size);
  if (codec == kCodecRaw) {
    if (data.size() != usize) return Status::Corruption(at + ": size does not match its data");
    return std::string(data);
  }
  if (codec != kCodecZstd) return Status::Corruption(at + ": unknown codec");
  const unsigned long long frame = ZSTD_getFrameContentSize(data.data(), data.size());
  if (frame != usize) return Status::Corruption(at + ": zstd frame size does not match");
  if (usize > MaxZstdContentSize(data.size())) {
    return Status::Corruption(at + ": zstd frame claims more bytes than its data can hold");
  }
  std::string out(usize, '\0');
  const size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), data.data(), data.size());
  if (ZSTD_isError(n) || n != usize) {
    return Status::Corruption(
        at + ": zstd: " + (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output"));
  }
  return out;
}

}  // namespace neardup::store_internal
