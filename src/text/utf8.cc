// Copyright 2026 The neardup Authors.

#include "neardup/text.h"

namespace neardup {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid. When
// invalid, *skip is the length of the maximal invalid subpart (at least 1), so
// that each subpart becomes one U+FFFD (the Unicode "best practice").
size_t ValidSequence(std::string_view s, size_t i, size_t* skip) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *skip = 1;
  if (b0 < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + k]);
    const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
    *skip = k + 1;
  }
  return len;
}

}  // namespace

Utf8Repair RepairUtf8(std::string* text, bool replace_nul) {
  Utf8Repair repair;
  const std::string_view s(*text);
  // Fast path: scan until the first byte that needs work.
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == 0 && replace_nul) break;
    if (b >= 0x80) {
      size_t skip;
      const size_t len = ValidSequence(s, i, &skip);
      if (len == 0) break;
      i += len - 1;
    }
  }
  if (i == s.size()) return repair;

  std::string out;
  out.reserve(s.size() + 16);
  out.append(s.substr(0, i));
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == 0 && replace_nul) {
      out.append(kReplacement);
      ++repair.nul;
      ++i;
      continue;
    }
    size_t skip;
    const size_t len = ValidSequence(s, i, &skip);
    if (len == 0) {
      out.append(kReplacement);
      ++repair.invalid;
      i += skip;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  *text = std::move(out);
  return repair;
}

}  // namespace neardup
