// Copyright 2026 The neardup Authors.
//
// LSH banding of MinHash signatures (minhash.h) for the evaluation's natural
// duplicate groups.

#include <algorithm>
#include <unordered_map>

#include "neardup/eval.h"

namespace neardup {

std::vector<std::pair<uint32_t, uint32_t>> LshCandidates(
    const std::vector<std::vector<uint32_t>>& signatures, int bands) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  if (signatures.empty() || bands <= 0) return out;
  const int rows = static_cast<int>(signatures[0].size()) / bands;
  for (int band = 0; band < bands; ++band) {
    std::unordered_map<uint64_t, std::vector<uint32_t>> buckets;
    for (size_t d = 0; d < signatures.size(); ++d) {
      buckets[MinHashBandKey(signatures[d], band, rows)].push_back(static_cast<uint32_t>(d));
    }
    for (const auto& [key, members] : buckets) {
      for (size_t i = 0; i < members.size(); ++i) {
        for (size_t j = i + 1; j < members.size(); ++j) out.emplace_back(members[i], members[j]);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace neardup
