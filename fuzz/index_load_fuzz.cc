// Copyright 2026 The neardup Authors.
//
// Fuzzes the index loader: any byte string must give an index or a clean
// Status, never a crash, a sanitizer report or a huge allocation. A loaded
// index must also answer a query and a self-join consistently.
//
// The first input byte picks a mode: even -> the rest is the file as is;
// odd -> the rest gets a valid XXH3 checksum in its last 8 bytes first, so the
// fuzzer also reaches the field checks and the index rebuild behind the
// checksum.

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Cap the input: the loader's cost is linear in the entry count, which the
  // size check ties to the input size.
  if (size == 0 || size > (1 << 16)) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0 && bytes.size() >= 8) {
    const uint64_t sum = XXH3_64bits(bytes.data(), bytes.size() - 8);
    for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>(sum >> (8 * i));
  }
  auto index = neardup::LoadIndexFromMemory(bytes, "fuzz-input");
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
