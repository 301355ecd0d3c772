// Copyright 2026 The neardup Authors.
//
// One bucket of a band join verified as BandJoin (band_join.h) verifies each
// of its buckets, for a join whose buckets are formed elsewhere: neardup-mpi
// exchanges MinHash band keys over the ranks and verifies the buckets each
// rank owns with this, so that its pairs are BandJoin's.

#ifndef NEARDUP_BAND_BUCKET_H_
#define NEARDUP_BAND_BUCKET_H_

#include <cstdint>
#include <span>
#include <vector>

#include "neardup/band_join.h"
#include "neardup/index.h"

namespace neardup {

// members: the bucket's documents in increasing order (two or more; fewer:
// nothing to do). options' components_only (a spanning forest of the
// bucket's pairs), max_bucket and max_representatives apply; no pair is
// known confirmed before. The confirmed pairs (a < b, distance = the test's
// score) are appended to *pairs in BandJoin's order; stats' candidates,
// tested, large_buckets and largest_bucket are added to.
void VerifyBandBucket(std::span<const uint64_t> members, const PairTest& test,
                      const BandJoinOptions& options, std::vector<IdPair>* pairs,
                      BandJoinStats* stats);

}  // namespace neardup

#endif  // NEARDUP_BAND_BUCKET_H_
