// Copyright 2026 The neardup Authors.
//
// Fuzzes the roff (man page) text extractor.

#include <cstdint>
#include <string>
#include <string_view>

#include "neardup/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  std::string title;
  const std::string text =
      neardup::RoffToText(std::string_view(reinterpret_cast<const char*>(data), size), &title);
  // Output never grows beyond a small multiple of the input (special characters
  // expand to at most 3 bytes from 4).
  if (text.size() > 2 * size + 16) __builtin_trap();
  return 0;
}
