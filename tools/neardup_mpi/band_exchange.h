// Copyright 2026 The neardup Authors.
//
// A band join split by band keys (DedupJoinPlan::Split::kBandKeys, the
// library's choice for MinHash) over the ranks of an MPI job without
// gathering the signatures anywhere: band keys are exchanged instead (issue
// 14's plan). Each rank holds the signatures of its own documents and knows
// which of them represent a group (identical documents, numbered by
// GroupOverRanks). In a round, each rank computes the bucket
// (DedupJoinPlan::BandBucket, the single process's own) of every band of the
// round for each of its groups and sends (band, bucket, group, owner) to the rank that owns the
// bucket (a hash of band and bucket, MPI_Alltoallv); each rank sorts what it
// received into buckets, asks the owners for the signatures of the groups in
// buckets of two or more (MPI_Alltoallv, and back), and verifies the pairs of
// each bucket (DedupJoinPlan::VerifyBucket: as the single process's band
// join does). So the pairs are those of one join over all bands, whatever P.
//
//   std::vector<GroupRep> reps = ...;   // this rank's groups, by group
//   std::vector<ExchangeRound> rounds = PlanExchange(world, options, reps.size());
//   for (const ExchangeRound& round : rounds)
//     JoinRound(world, plan, options, round, reps, signatures, &pairs, &stats, &traffic);
//
// Memory per rank and round: 24 bytes per (group, band) entry sent and
// received (at most ExchangeOptions::round_bytes of entries sent: a round
// takes several bands, or one band's buckets split into parts by hash), and
// the signatures of the groups of shared buckets, signature_words x 4 bytes each,
// fetched in batches of buckets of at most round_bytes (a batch holds one
// bucket at least). Signatures of at most 4 words (SimHash's fingerprint)
// travel in the entries instead (32 bytes each: band and bucket in one
// word, group, signature; no owner), and nothing is fetched; the received
// entries are put in bucket order by a radix sort on that word, which holds
// them twice (64 bytes per entry received, as much as the budget allows);
// at most 65,536 bands a round.
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
#include "neardup/dedup_over_ranks.h"
#include "neardup/index.h"

namespace neardup::mpi {

// A group whose representative (its first document) is on this rank.
struct GroupRep {
  uint64_t group = 0;
  uint64_t local = 0;  // the representative's position among the rank's documents
};

struct ExchangeOptions {
  size_t signature_words = 0;  // of a group's signature (SignatureWords)
  int bands = 0;               // the plan's
  // Only the components are needed: a bucket's pairs that its earlier pairs
  // already connect are not tested (a spanning forest of each bucket).
  bool components_only = false;
  size_t max_bucket = BandJoinOptions().max_bucket;
  size_t max_representatives = BandJoinOptions().max_representatives;
  // Entries (24 bytes each; 32 with a signature of at most 4 words, counted
  // twice for the sorted copy) a rank sends in one round, and signatures it
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
// signatures: this rank's documents' signatures (signature_words each).
// cache (may be null): the buckets of a band cut into parts, reused by its
// later parts (the same reps and signatures each round).
void JoinRound(const World& world, const DedupJoinPlan& plan, const ExchangeOptions& options,
               const ExchangeRound& round, std::span<const GroupRep> reps,
               std::span<const uint32_t> signatures, std::vector<IdPair>* pairs,
               BandJoinStats* stats, ExchangeTraffic* traffic, BandBuckets* cache = nullptr);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_BAND_EXCHANGE_H_
