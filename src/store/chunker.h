// Copyright 2026 The neardup Authors.
//
// The ways the store cuts content into pieces. Every function returns spans
// that tile its input exactly: in order, without gaps or overlaps, so that
// concatenating them gives the input back byte for byte. Empty input gives no
// spans. Sentences are cut by the library's one splitter, SplitSentenceSpans
// (neardup/features.h).

#ifndef NEARDUP_STORE_CHUNKER_H_
#define NEARDUP_STORE_CHUNKER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

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

// Fixed-size chunks of `size` bytes (the last may be shorter). REQUIRES: size > 0
std::vector<Span> SplitFixed(std::string_view data, size_t size);

// Content-defined chunks (FastCDC-style): Gear rolling hash, min = avg / 4,
// max = avg * 8, normalized chunking (level 2: a harder cut mask before the
// average size, an easier one after it). REQUIRES: avg >= 64
std::vector<Span> SplitContentDefined(std::string_view data, size_t avg);

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_CHUNKER_H_
