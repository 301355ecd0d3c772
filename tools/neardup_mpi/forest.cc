// Copyright 2026 The neardup Authors.

#include "forest.h"

#include <algorithm>

#include "dedup/stages.h"
#include "shard.h"
#include "util/union_find.h"

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
  dedup_internal::MergePairs(&mine);
  return mine;
}

std::vector<IdPair> SpanningForest(const std::vector<IdPair>& pairs) {
  // The groups the pairs touch, numbered densely.
  std::vector<uint64_t> nodes;
  nodes.reserve(2 * pairs.size());
  for (const IdPair& p : pairs) {
    nodes.push_back(p.a);
    nodes.push_back(p.b);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const auto dense = [&nodes](uint64_t g) {
    return static_cast<size_t>(std::lower_bound(nodes.begin(), nodes.end(), g) - nodes.begin());
  };
  UnionFind uf(nodes.size());
  std::vector<IdPair> forest;
  for (const IdPair& p : pairs) {
    if (uf.Union(dense(p.a), dense(p.b))) forest.push_back(p);
  }
  dedup_internal::MergePairs(&forest);
  return forest;
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

}  // namespace neardup::mpi
