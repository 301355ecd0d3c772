// Copyright 2026 The neardup Authors.
//
// libFuzzer target: ExtractPdfText on arbitrary bytes (poppler's parser
// behind neardup's glue). Input is capped at 256 KiB and the text at 1 MiB,
// so that a run measures parsing robustness, not memory. Checks: a clear
// error or text that is valid UTF-8, within the cap, ending each page with
// '\n'.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "neardup/extract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{256} << 10)) return 0;
  neardup::ExtractOptions options;
  options.max_uncompressed_bytes = uint64_t{8} << 20;
  options.max_text_bytes = uint64_t{1} << 20;
  const neardup::Result<std::string> text = neardup::ExtractPdfText(
      std::string_view(reinterpret_cast<const char*>(data), size), options, "fuzz.pdf");
  if (!text.ok()) {
    if (text.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (text->size() > options.max_text_bytes) __builtin_trap();
  if (!neardup::fuzz::IsValidUtf8(*text)) __builtin_trap();
  if (!text->empty() && text->back() != '\n') __builtin_trap();
  return 0;
}
