// Copyright 2026 The neardup Authors.
//
// Text as code points, for what works on characters rather than bytes
// outside the pipeline (`neardup calibrate`'s character n-grams and its
// HTML report). The decoding is the library's (src/util/utf8.h), the one
// the reader's UTF-8 repair and the segmenter use.

#ifndef NEARDUP_CODE_POINTS_H_
#define NEARDUP_CODE_POINTS_H_

#include <string>
#include <string_view>

namespace neardup {

// The code points of `text`, each byte of an invalid UTF-8 sequence as
// U+FFFD.
std::u32string Utf8CodePoints(std::string_view text);

}  // namespace neardup

#endif  // NEARDUP_CODE_POINTS_H_
