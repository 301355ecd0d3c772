// Copyright 2026 The neardup Authors.
//
// libFuzzer target: ExtractDocxText on arbitrary bytes (ZIP container, XML
// inside). Input and decompressed sizes are capped so that a run measures
// parsing robustness, not memory.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "neardup/extract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 20)) return 0;
  neardup::ExtractOptions options;
  options.max_uncompressed_bytes = uint64_t{8} << 20;
  options.max_text_bytes = uint64_t{8} << 20;
  const neardup::Result<std::string> text = neardup::ExtractDocxText(
      std::string_view(reinterpret_cast<const char*>(data), size), options, "fuzz.docx");
  (void)text;
  return 0;
}
