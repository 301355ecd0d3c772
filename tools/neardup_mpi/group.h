// Copyright 2026 The neardup Authors.
//
// Identical documents (equal identity keys, IdentityKeyOf: the library's,
// by method) grouped over the ranks of an MPI job, without any rank holding
// every document: a sample sort by key. Group numbers are those of the single
// process's grouping (DedupGroups: groups in increasing key order), so the
// band join, the pairs and every output come out the same.
//
// 1. Each rank sorts its own non-empty documents by (key, position) and
//    collapses equal keys: one 32-byte entry (key, first position, count) per
//    distinct key of its own.
// 2. Splitters: each rank's regular sample of its distinct keys (P of them,
//    at least 64), all-gathered; the P - 1 splitters cut the sorted samples
//    evenly. The entries go to the rank of their key range (MPI_Alltoallv).
//    A key is on one rank whatever its count (entries were collapsed first),
//    so a group whose members are on every rank is P entries there.
// 3. Each owner merges its entries by key: its distinct keys, numbered after
//    those of the ranks before it (an all-gather of the counts), each
//    group's size and first position. It replies to each entry (the same
//    all-to-all back): the group, whether the group has two members or more,
//    and whether the entry's first position is the group's.
//
//   DistributedGroups g;
//   NEARDUP_RETURN_IF_ERROR(GroupOverRanks(world, docs, key, first_position, &g, &traffic));
//   // g.group[i]: own document i's group; g.owned_keys: this rank's range
//
// Memory per rank: O(own documents): 24 bytes per own document while
// sorting, 32 + 16 bytes per own distinct key sent and replied, the same
// for the entries received (at most about twice the average with regular
// sampling), 16 bytes per distinct key owned, and 9 bytes per own document
// kept (group, flags).
//
// Collective: every rank calls it.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_GROUP_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_GROUP_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "forest.h"
#include "mpi_comm.h"
#include "neardup/dedup.h"
#include "neardup/dedup_over_ranks.h"
#include "neardup/status.h"

namespace neardup::mpi {

struct DistributedGroups {
  static constexpr uint8_t kShared = 1;  // the group has two members or more
  static constexpr uint8_t kFirst = 2;   // the document is its group's first member
  uint64_t groups = 0;                   // over all ranks
  // Per own document: its group, or UINT64_MAX when it is empty; flags.
  std::vector<uint64_t> group;
  std::vector<uint8_t> flags;
  // The keys of groups first_owned, first_owned + 1, ... (increasing).
  uint64_t first_owned = 0;
  std::vector<std::pair<uint64_t, uint64_t>> owned_keys;
};

// docs: this rank's documents, at global positions first_position ...;
// key(i): own document i's key (not asked for empty ones).
// Corruption when an exchange lost bytes (after every collective).
Status GroupOverRanks(const World& world, std::span<const DedupDocument> docs,
                      const DocumentKey& key, uint64_t first_position, DistributedGroups* out,
                      Traffic* traffic);

// Rank 0's input to the cluster stage, collected from the ranks: the
// documents of clusters of two or more (the members of groups of two or
// more, and of groups in `pairs`, rank 0's pairs of groups), renumbered in
// increasing position: what SelectClustered makes of every document. With
// num_perm > 0 (SignatureWords: the method has signatures): with the
// signature of each of their groups, from the rank of its first member
// (signature_groups increasing, num_perm words each).
// `sketches` (own documents' sketches; null: none, on every rank alike):
// each collected document's sketch too.
struct Collected {
  ClusteredDocuments clustered;
  std::vector<uint64_t> signature_groups;
  std::vector<uint32_t> signatures;
  // Verified pairs: the sketch of each of clustered.docs (when `sketches`).
  std::vector<JaccardSketch> sketches;
  uint64_t empty = 0;  // empty documents over all ranks
};

// Collective. pairs: rank 0's (other ranks: ignored); signatures: own
// documents' (num_perm words each) when num_perm > 0. Rank 0 gets the
// result, the others empty ones (but `empty`, on every rank).
Status CollectClustered(const World& world, std::span<const DedupDocument> docs,
                        const DistributedGroups& groups, uint64_t first_position,
                        std::span<const IdPair> pairs, std::span<const uint32_t> signatures,
                        size_t num_perm, Collected* out, Traffic* traffic,
                        const std::vector<JaccardSketch>* sketches = nullptr);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_GROUP_H_
