// Copyright 2026 The neardup Authors.
//
// MinHash's band join over the ranks of an MPI job without gathering the
// signatures anywhere: band keys are exchanged instead (issue 14's plan).
// Each rank holds the signatures of its own documents and knows which of
// them represent a group (identical signatures, numbered by GroupOverRanks).
// In a round, each rank computes the bucket (dedup_internal::
// MinHashBandBucket, BandJoin's own) of every band of the round for each of
// its groups and sends (band, bucket, group, owner) to the rank that owns the
// bucket (a hash of band and bucket, MPI_Alltoallv); each rank sorts what it
// received into buckets, asks the owners for the signatures of the groups in
// buckets of two or more (MPI_Alltoallv, and back), and verifies the pairs of
// each bucket as BandJoin does (every pair of a bucket of at most max_bucket
// groups, in group order; larger buckets against representatives). So the
// pairs are those of one MinHashJoinBands over all bands, whatever P.
//
//   std::vector<MinHashRep> reps = ...;   // this rank's groups, by group
//   ExchangeLayout layout = PlanExchange(world, options, reps.size());
//   for (size_t t = 0; t < layout.rounds.size(); ++t)
//     JoinRound(world, options, layout.rounds[t], reps, signatures, &pairs, &stats, &traffic);
//
// Memory per rank and round: 24 bytes per (group, band) entry sent and
// received (at most ExchangeOptions::round_bytes of entries sent: a round
// takes several bands, or one band's buckets split into parts by hash), and
// the signatures of the groups of shared buckets, num_perm x 4 bytes each,
// fetched in batches of buckets of at most round_bytes (a batch holds one
// bucket at least).
//
// Collective functions: every rank calls them in the same order.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_BAND_EXCHANGE_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_BAND_EXCHANGE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mpi_comm.h"
#include "neardup/band_join.h"
#include "neardup/index.h"

namespace neardup::mpi {

// A group whose representative (its first document) is on this rank.
struct MinHashRep {
  uint64_t group = 0;
  uint64_t local = 0;  // the representative's position among the rank's documents
};

struct ExchangeOptions {
  size_t groups = 0;  // n of the join (the number of groups)
  size_t need = 0;    // equal components of a near-duplicate pair
  int num_perm = 0;
  int bands = 0;
  int rows = 0;
  // Only the components are needed: a bucket's pairs that its earlier pairs
  // already connect are not tested (a spanning forest of each bucket).
  bool components_only = false;
  size_t max_bucket = BandJoinOptions().max_bucket;
  size_t max_representatives = BandJoinOptions().max_representatives;
  // Entries (24 bytes each) a rank sends in one round, and signatures it
  // fetches in one batch, at most.
  uint64_t round_bytes = uint64_t{256} << 20;
  // At least this many rounds (when there are as many bands): a round is
  // what a killed job redoes on --resume, so a kill redoes at most about
  // 1 / min_rounds of the join, whatever round_bytes allows.
  int min_rounds = 8;
};

// One round: bands [band_begin, band_end), the part `part` of `parts` of
// their buckets (by hash).
struct ExchangeRound {
  int band_begin = 0;
  int band_end = 0;
  uint32_t part = 0;
  uint32_t parts = 1;
};

// The rounds, the same on every rank (collective: the largest count of
// representatives over the ranks decides).
std::vector<ExchangeRound> PlanExchange(const World& world, const ExchangeOptions& options,
                                        size_t my_reps);

// The buckets of one band for this rank's groups (in the order of reps),
// kept between the parts of a band cut into parts: its keys are computed
// once, not once per part. 8 bytes per own group.
struct BandBuckets {
  int band = -1;  // -1: none yet
  std::vector<uint64_t> buckets;
};

// What one round moved, by kind.
struct ExchangeTraffic {
  Traffic keys;        // the (band, bucket, group, owner) entries
  Traffic signatures;  // requests and signatures
};

// The pairs (of groups, a < b) of the buckets this rank owns in `round`,
// appended to *pairs; the counts added to *stats. `reps` sorted by group;
// signatures: this rank's documents' signatures (num_perm words each).
// cache (may be null): the buckets of a band cut into parts, reused by its
// later parts (the same reps and signatures each round).
void JoinRound(const World& world, const ExchangeOptions& options, const ExchangeRound& round,
               std::span<const MinHashRep> reps, std::span<const uint32_t> signatures,
               std::vector<IdPair>* pairs, BandJoinStats* stats, ExchangeTraffic* traffic,
               BandBuckets* cache = nullptr);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_BAND_EXCHANGE_H_
