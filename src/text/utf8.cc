// Copyright 2026 The neardup Authors.

#include "util/utf8.h"

#include <cstdint>
#include <cstring>

#include "neardup/code_points.h"
#include "neardup/text.h"

namespace neardup {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid. When
// invalid, *skip is the length of the maximal invalid subpart (at least 1), so
// that each subpart becomes one U+FFFD (the Unicode "best practice").
size_t ValidSequence(std::string_view s, size_t i, size_t* skip) {
  int len, subpart = 1;
  const bool valid = utf8::DecodeAt(s, i, &len, &subpart) < utf8::kInvalidBase;
  *skip = static_cast<size_t>(subpart);
  return valid ? static_cast<size_t>(len) : 0;
}

}  // namespace

std::u32string Utf8CodePoints(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  utf8::ForEachCodePoint(text, [&out](uint32_t c) {
    out.push_back(c >= utf8::kInvalidBase ? char32_t{0xFFFD} : static_cast<char32_t>(c));
    return true;
  });
  return out;
}

Utf8Repair RepairUtf8(std::string* text, bool replace_nul) {
  Utf8Repair repair;
  const std::string_view s(*text);
  // Fast path: scan until the first byte that needs work: eight ASCII bytes
  // at a time, and the three-byte sequences of the BMP (CJK) inline.
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      const bool ascii = (w & 0x8080808080808080ull) == 0;
      const bool has_nul = ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull) != 0;
      if (ascii && !(replace_nul && has_nul)) {
        i += 8;
        continue;
      }
    }
    const unsigned char b = p[i];
    if (b < 0x80) {
      if (b == 0 && replace_nul) break;
      ++i;
      continue;
    }
    // E1..EC and EE..EF take any two continuation bytes (E0 and ED restrict
    // the second one: the general path).
    if (b >= 0xE1 && b <= 0xEF && b != 0xED && i + 2 < n && (p[i + 1] & 0xC0) == 0x80 &&
        (p[i + 2] & 0xC0) == 0x80) {
      i += 3;
      continue;
    }
    size_t skip;
    const size_t len = ValidSequence(s, i, &skip);
    if (len == 0) break;
    i += len;
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
