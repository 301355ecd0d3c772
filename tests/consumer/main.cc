// Copyright 2026 The neardup Authors.
//
// Indexes three fingerprints and finds the near one: the core layer alone.

#include <cstdint>
#include <cstdio>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/index.h"

int main() {
  std::vector<neardup::Fingerprint> fps;
  for (const char* hex : {"0123456789abcdef", "0123456789abcdee", "fedcba9876543210"}) {
    auto fp = neardup::Fingerprint::FromHex(hex);
    if (!fp.ok()) return 1;
    fps.push_back(*fp);
  }
  neardup::PermutedTableOptions options;
  options.bits = 64;
  options.max_k = 3;
  const std::vector<uint64_t> ids = {0, 1, 2};
  auto index = neardup::PermutedTableIndex::Build(options, ids, fps);
  if (!index.ok()) return 1;
  std::vector<neardup::Neighbor> found;
  if (!(*index)->Search(fps[0], 3, &found).ok()) return 1;
  std::printf("neighbors within 3: %zu\n", found.size());
  return found.size() == 2 ? 0 : 1;
}
