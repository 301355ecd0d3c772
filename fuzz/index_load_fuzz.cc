// Copyright 2026 The neardup Authors.
//
// Fuzzes the index loader: any byte string must give an index or a clean
// Status, never a crash, a sanitizer report or a huge allocation. A loaded
// index must also answer a query and a self-join consistently.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "neardup/index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Cap the input: the loader's cost is linear in the entry count, which the
  // size check ties to the input size.
  if (size > (1 << 16)) return 0;
  auto index = neardup::LoadIndexFromMemory(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input");
  if (!index.ok()) return 0;
  neardup::HammingIndex& ix = **index;
  const int k = ix.max_k() < 3 ? ix.max_k() : 3;
  const neardup::Fingerprint q =
      ix.bits() == 64 ? neardup::Fingerprint::From64(0) : neardup::Fingerprint::From128(0, 0);
  std::vector<neardup::Neighbor> hits;
  if (!ix.Search(q, k, &hits).ok()) __builtin_trap();
  for (const auto& h : hits) {
    if (h.distance > k) __builtin_trap();
  }
  std::vector<neardup::IdPair> pairs;
  if (ix.size() <= 512 && !ix.SelfJoin(k, 1, &pairs).ok()) __builtin_trap();
  return 0;
}
