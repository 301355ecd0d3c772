// Copyright 2026 The neardup Authors.
//
// How a chunk's bytes are kept in the chunks table (doc/store_format.md):
// raw, or one zstd frame that records its content size. A stored chunk is
// hostile input: DecodeChunk checks the codec, the recorded size against
// the frame and the frame against its data before it allocates.

#ifndef NEARDUP_STORE_CHUNK_CODEC_H_
#define NEARDUP_STORE_CHUNK_CODEC_H_

#include <zstd.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::store_internal {

enum ChunkCodec : int64_t { kCodecRaw = 0, kCodecZstd = 1 };

// The most bytes a zstd frame of `frame_bytes` bytes can decompress to: every
// block has a 3-byte header and at least one byte of content (an RLE block)
// and yields at most 128 KiB. A larger recorded size is corruption, caught
// before the output is allocated.
inline uint64_t MaxZstdContentSize(uint64_t frame_bytes) {
  return frame_bytes * (uint64_t{1} << 15);
}

// The `size` bytes that `data`, stored with `codec`, holds. Errors are
// Corruption: "<where>: <reason>" (negative size, unknown codec, size or
// frame mismatch, a zstd error). REQUIRES: dctx != nullptr
Result<std::string> DecodeChunk(ZSTD_DCtx* dctx, std::string_view where, int64_t size,
                                int64_t codec, std::string_view data);

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_CHUNK_CODEC_H_
