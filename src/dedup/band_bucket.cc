// Copyright 2026 The neardup Authors.
//
// VerifyBandBucket (neardup/band_join.h): BandJoin's rule for one bucket
// (band_bucket.h), for buckets formed outside BandJoin.

#include "dedup/band_bucket.h"

#include "neardup/band_bucket.h"

namespace neardup {

void VerifyBandBucket(std::span<const uint64_t> members, const PairTest& test,
                      const BandJoinOptions& options, std::vector<IdPair>* pairs,
                      BandJoinStats* stats) {
  if (members.size() < 2) return;
  dedup_internal::BucketTally tally;
  std::vector<uint32_t> up;
  dedup_internal::VerifyBucket(
      members.size(), [members](size_t i) { return members[i]; },
      [&test](uint64_t a, uint64_t b) {
        return test(static_cast<size_t>(a), static_cast<size_t>(b));
      },
      [](uint64_t, uint64_t) { return false; }, options.components_only,
      std::max<size_t>(options.max_bucket, 2), std::max<size_t>(options.max_representatives, 1),
      &up, pairs, &tally);
  stats->candidates += tally.candidates;
  stats->tested += tally.tested;
  stats->large_buckets += tally.large;
  stats->largest_bucket = std::max(stats->largest_bucket, tally.largest);
}

}  // namespace neardup
