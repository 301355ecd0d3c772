// Copyright 2026 The neardup Authors.
//
// The ways the store cuts content into pieces. Every function returns spans
// that tile its input exactly: in order, without gaps or overlaps, so that
// concatenating them gives the input back byte for byte. Empty input gives no
// spans.

#ifndef NEARDUP_STORE_CHUNKER_H_
#define NEARDUP_STORE_CHUNKER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"

namespace neardup::store_internal {

struct Span {
  size_t offset = 0;
  size_t length = 0;
};

// Paragraph blocks longer than this are cut into pieces of this size, so that
// one chunk never grows without bound (a file without line breaks).
inline constexpr size_t kMaxBlockBytes = size_t{4} << 20;

// Paragraph blocks: each ends just after a '\n' (so "\r\n" stays inside the
// block) or at the end of the input; longer ones are cut at kMaxBlockBytes.
std::vector<Span> SplitParagraphs(std::string_view text);

// Sentences of a block: a sentence ends after a run of terminators
// (。？！?! and '\n'), followed by any closing quotes or brackets
// (”’」』）)]). Bytes that are not valid UTF-8 are ordinary bytes.
std::vector<Span> SplitSentences(std::string_view block);

// Fixed-size chunks of `size` bytes (the last may be shorter). REQUIRES: size > 0
std::vector<Span> SplitFixed(std::string_view data, size_t size);

// Content-defined chunks (FastCDC-style): Gear rolling hash, min = avg / 4,
// max = avg * 8, normalized chunking (level 2: a harder cut mask before the
// average size, an easier one after it). REQUIRES: avg >= 64
std::vector<Span> SplitContentDefined(std::string_view data, size_t avg);

// Seed 004's block fingerprint: a 64-bit SimHash whose features are the
// block's sentences (trailing "\r\n" removed, empty ones skipped), each of
// weight 1, hashed with `algorithm`.
uint64_t BlockSimhash(std::string_view block, FeatureHashAlgorithm algorithm);

// BlockSimhash() given the block's SplitSentences() result.
uint64_t BlockSimhash(std::string_view block, const std::vector<Span>& sentences,
                      FeatureHashAlgorithm algorithm);

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_CHUNKER_H_
