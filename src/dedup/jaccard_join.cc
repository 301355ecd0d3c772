// Copyright 2026 The neardup Authors.
//
// The exact Jaccard join of sets (JaccardJoin) and the short-document rule
// built on it (ShortDocumentPairs), both declared in dedup.h.

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "neardup/dedup.h"
#include "neardup/minhash.h"

namespace neardup {

Result<std::vector<JaccardPair>> JaccardJoin(std::span<const std::vector<uint64_t>> sets,
                                             double threshold) {
  if (!(threshold > 0 && threshold <= 1)) {
    return Status::InvalidArgument("Jaccard threshold must be in (0, 1]");
  }
  const size_t n = sets.size();
  // Element ranks: rarest first (ties by value), so prefixes hold rare
  // elements and inverted lists stay short.
  std::unordered_map<uint64_t, uint32_t> frequency;
  for (const auto& s : sets) {
    for (uint64_t e : s) ++frequency[e];
  }
  std::vector<std::pair<uint32_t, uint64_t>> by_rank;
  by_rank.reserve(frequency.size());
  for (const auto& [e, f] : frequency) by_rank.emplace_back(f, e);
  std::sort(by_rank.begin(), by_rank.end());
  std::unordered_map<uint64_t, uint32_t> rank;
  rank.reserve(by_rank.size());
  for (size_t r = 0; r < by_rank.size(); ++r) rank[by_rank[r].second] = static_cast<uint32_t>(r);
  std::vector<std::vector<uint32_t>> ranked(n);
  for (size_t i = 0; i < n; ++i) {
    ranked[i].reserve(sets[i].size());
    for (uint64_t e : sets[i]) ranked[i].push_back(rank[e]);
    std::sort(ranked[i].begin(), ranked[i].end());
  }
  // Sets in increasing size: a probe meets only sets no larger than itself.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sets[a].size() < sets[b].size(); });
  const auto prefix = [&](size_t size) {
    const auto need = static_cast<size_t>(std::ceil(threshold * static_cast<double>(size) - 1e-9));
    return size - std::max<size_t>(need, 1) + 1;
  };
  std::vector<std::vector<uint32_t>> lists(by_rank.size());  // rank -> sets (positions)
  std::vector<size_t> seen(n, SIZE_MAX);
  std::vector<JaccardPair> out;
  std::vector<size_t> candidates;
  for (size_t x : order) {
    const size_t sx = sets[x].size();
    if (sx == 0) continue;
    const size_t px = prefix(sx);
    candidates.clear();
    for (size_t p = 0; p < px; ++p) {
      for (uint32_t y : lists[ranked[x][p]]) {
        if (seen[y] == x) continue;
        seen[y] = x;
        // Size filter: J <= |y| / |x| for |y| <= |x|.
        if (static_cast<double>(sets[y].size()) < threshold * static_cast<double>(sx) - 1e-9) {
          continue;
        }
        candidates.push_back(y);
      }
    }
    for (size_t y : candidates) {
      const double j = ExactJaccard(sets[x], sets[y]);
      if (j >= threshold) out.push_back({std::min(x, y), std::max(x, y), j});
    }
    for (size_t p = 0; p < px; ++p) lists[ranked[x][p]].push_back(static_cast<uint32_t>(x));
  }
  std::sort(out.begin(), out.end(), [](const JaccardPair& a, const JaccardPair& b) {
    return a.a != b.a ? a.a < b.a : a.b < b.b;
  });
  return out;
}

Result<std::vector<JaccardPair>> ShortDocumentPairs(std::span<const std::vector<uint64_t>> sets,
                                                    size_t short_features, double jaccard) {
  NEARDUP_ASSIGN_OR_RETURN(std::vector<JaccardPair> pairs, JaccardJoin(sets, jaccard));
  std::erase_if(pairs, [&](const JaccardPair& p) {
    return std::min(sets[p.a].size(), sets[p.b].size()) >= short_features;
  });
  return pairs;
}

}  // namespace neardup
