// Copyright 2026 The neardup Authors.
//
// The character classes of Python's str methods and of the
// regular expressions jieba uses. Internal to the segment module.

#ifndef NEARDUP_SEGMENT_CHAR_CLASS_H_
#define NEARDUP_SEGMENT_CHAR_CLASS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/utf8.h"

namespace neardup::segment {

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
    const uint32_t c = utf8::Decode(p, end, &len);
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

// True when every code point of `s` is (Python) white space.
inline bool IsAllPyWhitespace(std::string_view s) {
  return utf8::ForEachCodePoint(s, [](uint32_t c) { return IsPyWhitespace(c); });
}

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_CHAR_CLASS_H_
