// Copyright 2026 The neardup Authors.
//
// UTF-8 decoding and the character classes of Python's str methods and of the
// regular expressions jieba uses. Internal to the segment module.

#ifndef NEARDUP_SEGMENT_UTF8_H_
#define NEARDUP_SEGMENT_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace neardup::segment {

// A byte that does not start a valid UTF-8 sequence decodes to
// kInvalidBase + byte: a value above U+10FFFF that belongs to no class below
// and to no dictionary word, so it is cut as a one-byte token.
inline constexpr uint32_t kInvalidBase = 0x110000;

// Decodes the code point at p[0] (p < end) strictly (no overlong forms, no
// surrogates, nothing above U+10FFFF) and stores its length in *len (1..4).
// Never reads at or beyond `end`.
inline uint32_t DecodeOne(const unsigned char* p, const unsigned char* end, int* len) {
  const uint32_t b0 = p[0];
  if (b0 < 0x80) {
    *len = 1;
    return b0;
  }
  const ptrdiff_t avail = end - p;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (avail >= 2 && (p[1] & 0xC0) == 0x80) {
      *len = 2;
      return ((b0 & 0x1F) << 6) | (p[1] & 0x3F);
    }
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (avail >= 3 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
      const uint32_t cp = ((b0 & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) {
        *len = 3;
        return cp;
      }
    }
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (avail >= 4 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
      const uint32_t cp =
          ((b0 & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
      if (cp >= 0x10000 && cp <= 0x10FFFF) {
        *len = 4;
        return cp;
      }
    }
  }
  *len = 1;
  return kInvalidBase + b0;
}

// True when `s` is entirely valid UTF-8.
inline bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    int len;
    if (DecodeOne(p, end, &len) >= kInvalidBase) return false;
    p += len;
  }
  return true;
}

// jieba's re_han_default: [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-].
inline bool IsHanBlockChar(uint32_t c) {
  if (c >= 0x4E00) return c <= 0x9FD5;
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '#' || c == '&' || c == '.' || c == '_' || c == '%' || c == '-';
}

// finalseg's re_han: [\u4E00-\u9FD5].
inline bool IsHan(uint32_t c) { return c >= 0x4E00 && c <= 0x9FD5; }

inline bool IsAsciiDigit(uint32_t c) { return c >= '0' && c <= '9'; }
inline bool IsAsciiAlpha(uint32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsAsciiAlnum(uint32_t c) { return IsAsciiDigit(c) || IsAsciiAlpha(c); }

// Python's str.isspace() == re's \s for str patterns == what str.strip()
// removes (checked against CPython 3.11 over all code points).
inline bool IsPyWhitespace(uint32_t c) {
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Python's len(s.strip()) for the UTF-8 string `s`, counting each invalid
// byte as one character.
inline size_t StrippedCodePointCount(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  size_t count = 0;
  size_t count_at_last_non_space = 0;
  bool seen_non_space = false;
  while (p < end) {
    int len;
    const uint32_t c = DecodeOne(p, end, &len);
    p += len;
    if (IsPyWhitespace(c)) {
      if (seen_non_space) ++count;
    } else {
      seen_non_space = true;
      ++count;
      count_at_last_non_space = count;
    }
  }
  return count_at_last_non_space;
}

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_UTF8_H_
