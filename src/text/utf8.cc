// Copyright 2026 The neardup Authors.

#include "util/utf8.h"

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
