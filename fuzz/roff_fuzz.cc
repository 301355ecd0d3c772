// Copyright 2026 The neardup Authors.
//
// Fuzzes the roff (man page) text extractor: output size bounded by the
// input, valid UTF-8 kept valid.

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "neardup/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  std::string title;
  const std::string text =
      neardup::RoffToText(std::string_view(reinterpret_cast<const char*>(data), size), &title);
  // Output never grows beyond the input plus the line break a last
  // unterminated line gets (a special character gives at most 3 bytes from 4;
  // \e gives 1 from 2).
  if (text.size() > size + 1 || title.size() > size) __builtin_trap();
  // Valid UTF-8 in, valid UTF-8 out: escapes never split a character.
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (neardup::fuzz::IsValidUtf8(in) &&
      (!neardup::fuzz::IsValidUtf8(text) || !neardup::fuzz::IsValidUtf8(title))) {
    __builtin_trap();
  }
  return 0;
}
