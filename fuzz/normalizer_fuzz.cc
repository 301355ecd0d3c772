// Copyright 2026 The neardup Authors.
//
// Fuzzes UTF-8 repair and normalization (ICU NFKC_Casefold, OpenCC t2s).

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "neardup/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  static const std::unique_ptr<neardup::Normalizer> normalizer = [] {
    neardup::NormalizeOptions options;
    options.t2s = "t2s";
    options.collapse_whitespace = true;
    auto n = neardup::Normalizer::Create(options);
    if (!n.ok()) std::abort();
    return std::move(*n);
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  neardup::RepairUtf8(&text);
  const std::string out = normalizer->Normalize(text);
  std::string check = out;
  if (neardup::RepairUtf8(&check).invalid != 0) std::abort();  // output stays valid UTF-8
  // Idempotence of NFKC_Casefold + t2s + white space collapsing is not
  // guaranteed by OpenCC's phrase tables, so only validity is checked.
  return 0;
}
