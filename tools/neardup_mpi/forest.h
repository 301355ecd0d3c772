// Copyright 2026 The neardup Authors.
//
// The band join's pairs over the ranks of an MPI job, without gathering them
// on one rank: each rank's pairs (of group numbers, from its band-key
// rounds) go to the rank that owns their first group (a % P), which removes
// the pairs two buckets both found; each rank reduces its share to a spanning forest
// (the pairs that join two components), and the forests are merged in a
// binary tree (log2 P rounds: in round s, rank r with r mod 2s == s sends its
// forest to rank r - s, which unites it with its own) to rank 0. The
// components of rank 0's forest are those of all the pairs, so cluster mode's
// components (and the keep policy) come out the same; what rank 0 receives
// is at most one edge per group in a cluster, not every pair.
//
//   std::vector<IdPair> mine = ...;                       // this rank's ranges
//   std::vector<IdPair> owned = RoutePairs(world, mine, &traffic);
//   uint64_t distinct = owned.size();                     // summed: confirmed
//   std::vector<IdPair> forest = MergeForests(world, SpanningForest(owned), &traffic);
//
// SpanningForest is the library's (neardup/dedup_over_ranks.h).
//
// Collective functions: every rank calls them in the same order.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_FOREST_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_FOREST_H_

#include <span>
#include <vector>

#include "mpi_comm.h"
#include "neardup/dedup.h"
#include "neardup/dedup_groups.h"
#include "neardup/index.h"

namespace neardup::mpi {

// Every rank's pairs, redistributed: this rank gets the pairs with
// a mod P == rank, sorted by (a, b), each once.
std::vector<IdPair> RoutePairs(const World& world, const std::vector<IdPair>& pairs,
                               Traffic* traffic);

// Rank 0: a spanning forest of the union of every rank's `forest`, sorted;
// the other ranks: empty.
std::vector<IdPair> MergeForests(const World& world, std::vector<IdPair> forest, Traffic* traffic);

// The documents of clusters of two or more (the members of groups of two or
// more and of groups in a pair), renumbered densely in increasing position:
// the cluster stage's input. The renumbering is monotonic (groups and
// documents keep their order), so clusters, keep policy and pair order come
// out as over every document.
struct ClusteredDocuments {
  std::vector<uint64_t> positions;  // increasing
  std::vector<DedupDocument> docs;  // docs[positions[i]]
  DedupGroups groups;               // members are indexes into positions
  std::vector<uint64_t> chosen;     // groups' numbers before the renumbering
  std::vector<IdPair> pairs;        // of the renumbered groups
};

ClusteredDocuments SelectClustered(std::span<const DedupDocument> docs, const DedupGroups& groups,
                                   std::span<const IdPair> pairs);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_FOREST_H_
