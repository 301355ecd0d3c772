// Copyright 2026 The neardup Authors.
//
// Internal: neardup's own strict UTF-8 decoder (no overlong forms, no
// surrogates, nothing above U+10FFFF), used by the reader's repair and JSON
// validation, the segmenter (beside its inline fast path for the common
// three-byte sequences), keyword extraction, the evaluation and calibrate.
// Feature extraction, the normalizer and the Traditional-to-Simplified
// converter decode with ICU's U8_NEXT instead: they see text the reader has
// already repaired to valid UTF-8, on which the two decoders agree.
//
// Invalid input is never an error here: a byte that does not start a valid
// sequence decodes to kInvalidBase + byte with length 1, a value above
// U+10FFFF that belongs to no character class; callers choose what it becomes
// (a one-byte token, U+FFFD, an escaped byte).
//
// Thread safety: pure functions.

#ifndef NEARDUP_UTIL_UTF8_H_
#define NEARDUP_UTIL_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::utf8 {

inline constexpr uint32_t kInvalidBase = 0x110000;

// Decodes the code point at p[0] (p < end) and stores its length (1..4) in
// *len; never reads at or beyond `end`. An invalid byte gives
// kInvalidBase + p[0] and *len = 1; then, when `subpart` is not null,
// *subpart is the length of the maximal invalid subpart starting at p (the
// lead byte and the continuation bytes that could still have completed it:
// the unit that Unicode's "best practice" replaces by one U+FFFD).
inline uint32_t Decode(const unsigned char* p, const unsigned char* end, int* len,
                       int* subpart = nullptr) {
  const uint32_t b0 = p[0];
  *len = 1;
  if (b0 < 0x80) return b0;
  int n;
  uint32_t cp;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    if (subpart != nullptr) *subpart = 1;
    return kInvalidBase + b0;
  }
  for (int k = 1; k < n; ++k) {
    const bool in_range =
        p + k < end && p[k] >= (k == 1 ? lo : 0x80) && p[k] <= (k == 1 ? hi : 0xBF);
    if (!in_range) {
      if (subpart != nullptr) *subpart = k;
      return kInvalidBase + b0;
    }
    cp = (cp << 6) | (p[k] & 0x3F);
  }
  *len = n;
  return cp;
}

// Decode over the bytes of a string_view at offset i (i < s.size()).
inline uint32_t DecodeAt(std::string_view s, size_t i, int* len, int* subpart = nullptr) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  return Decode(p + i, p + s.size(), len, subpart);
}

// Length of the valid sequence at s[i] (i < s.size()), or 0 when s[i] starts
// none.
inline size_t SequenceLength(std::string_view s, size_t i) {
  int len;
  return DecodeAt(s, i, &len) >= kInvalidBase ? 0 : static_cast<size_t>(len);
}

// Calls fn(code point) for every code point of `s` (invalid bytes as above)
// until fn returns false; returns false when fn did.
template <typename Fn>
bool ForEachCodePoint(std::string_view s, Fn&& fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    int len;
    const uint32_t c = Decode(p, end, &len);
    p += len;
    if (!fn(c)) return false;
  }
  return true;
}

// True when `s` is entirely valid UTF-8.
inline bool IsValid(std::string_view s) {
  return ForEachCodePoint(s, [](uint32_t c) { return c < kInvalidBase; });
}

// Number of code points (each invalid byte counts as one).
inline size_t CodePointCount(std::string_view s) {
  size_t n = 0;
  ForEachCodePoint(s, [&n](uint32_t) { return ++n, true; });
  return n;
}

// What an error message may show of data it did not write itself (a line of
// a data file, a token): at most `max_bytes` bytes of `s`, printable and on
// one line. A backslash becomes "\\", a control character or an invalid byte
// "\xNN"; valid multi-byte characters stay; "..." marks a cut. Messages quote
// no more than this, so that a data file named by an untrusted source (an
// index header) does not have its content echoed.
inline std::string Excerpt(std::string_view s, size_t max_bytes = 24) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  size_t used = 0;
  while (p < end) {
    int len;
    const uint32_t cp = Decode(p, end, &len);
    if (used + static_cast<size_t>(len) > max_bytes) {
      out += "...";
      break;
    }
    used += static_cast<size_t>(len);
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp < 0x20 || cp == 0x7f || cp >= kInvalidBase) {
      const unsigned char b = p[0];
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    } else {
      out.append(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
    }
    p += len;
  }
  return out;
}

}  // namespace neardup::utf8

#endif  // NEARDUP_UTIL_UTF8_H_
