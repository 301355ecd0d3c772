// Copyright 2026 The neardup Authors.

#include "forest.h"

#include <algorithm>

#include "neardup/dedup_over_ranks.h"
#include "shard.h"

namespace neardup::mpi {

std::vector<IdPair> RoutePairs(const World& world, const std::vector<IdPair>& pairs,
                               Traffic* traffic) {
  std::vector<std::vector<IdPair>> to(static_cast<size_t>(world.size));
  for (const IdPair& p : pairs) to[p.a % static_cast<uint64_t>(world.size)].push_back(p);
  std::vector<std::string> bytes(to.size());
  for (size_t r = 0; r < to.size(); ++r) {
    bytes[r] = EncodePairs(to[r]);
    std::vector<IdPair>().swap(to[r]);
  }
  const std::string got = AllToAllBytes(world, bytes, traffic);
  // Well formed by construction (20 bytes per pair).
  std::vector<IdPair> mine = std::move(*DecodePairs(got, "routed pairs"));
  MergePairs(&mine);
  return mine;
}

std::vector<IdPair> MergeForests(const World& world, std::vector<IdPair> forest, Traffic* traffic) {
  for (int step = 1; step < world.size; step *= 2) {
    if (world.rank % (2 * step) == step) {
      SendBytes(world, EncodePairs(forest), world.rank - step, traffic);
      return {};
    }
    if (world.rank % (2 * step) == 0 && world.rank + step < world.size) {
      std::vector<IdPair> theirs =
          std::move(*DecodePairs(ReceiveBytes(world, world.rank + step), "forest"));
      forest.insert(forest.end(), theirs.begin(), theirs.end());
      forest = SpanningForest(forest);
    }
  }
  return forest;
}

ClusteredDocuments SelectClustered(std::span<const DedupDocument> docs, const DedupGroups& groups,
                                   std::span<const IdPair> pairs) {
  std::vector<uint64_t> chosen;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups.Members(g).size() >= 2) chosen.push_back(g);
  }
  for (const IdPair& p : pairs) chosen.insert(chosen.end(), {p.a, p.b});
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  const auto index = [](const std::vector<uint64_t>& sorted, uint64_t v) {
    return static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin());
  };
  ClusteredDocuments out;
  for (const uint64_t g : chosen) {
    for (const size_t m : groups.Members(g)) out.positions.push_back(m);
  }
  std::sort(out.positions.begin(), out.positions.end());
  for (const uint64_t i : out.positions) out.docs.push_back(docs[i]);
  DedupGroups& sub = out.groups;
  sub.of.assign(out.positions.size(), SIZE_MAX);
  for (size_t k = 0; k < chosen.size(); ++k) {
    sub.begin.push_back(sub.members.size());
    for (const size_t m : groups.Members(chosen[k])) {
      const size_t i = index(out.positions, m);
      sub.members.push_back(i);
      sub.of[i] = k;
    }
  }
  sub.begin.push_back(sub.members.size());
  for (const IdPair& p : pairs) {
    out.pairs.push_back({index(chosen, p.a), index(chosen, p.b), p.distance});
  }
  out.chosen = std::move(chosen);
  return out;
}

}  // namespace neardup::mpi
