// Copyright 2026 The neardup Authors.
//
// Dedup of MinHash signatures (the method `minhash`, minhash.h): cluster mode
// of dedup.h with Jaccard in place of Hamming distance.
//
// Documents with identical signatures (with MinHashOptions::exact: identical
// feature sets) are collapsed first; the distinct ones are joined by the band
// engine (band_join.h) on MinHashBandKey of each of the `bands` bands of
// `rows` rows; every candidate pair is verified: its estimated Jaccard (the
// share of equal signature components) or, with exact, the exact Jaccard of
// the feature sets must be >= threshold, so no pair below the threshold is
// ever reported. A pair of Jaccard s is a candidate with probability
// 1 - (1 - s^rows)^bands (MinHashCandidateProbability); that is the recall.
// Clusters, the keep policy, records, pairs and the summary are those of
// Dedup (dedup.h), with one change of unit: every `distance`
// (DedupRecord::distance, distance_within_k, DedupPair::distance) is
// MinHashDistance(J) = round(10^6 (1 - J)); JaccardOfDistance reads it back.
//
//   std::vector<neardup::DedupDocument> docs = ...;   // empty, length, score
//   std::vector<uint32_t> signatures = ...;           // docs.size() * num_perm
//   auto result = neardup::MinHashDedup(docs, signatures, {}, method.minhash, options);
//
// DedupOptions: mode must be kCluster (stream mode is InvalidArgument); k,
// join, recall and the band settings are SimHash's and ignored.
// Output is deterministic and independent of DedupOptions::threads.
// Thread safety: a pure function.

#ifndef NEARDUP_MINHASH_DEDUP_H_
#define NEARDUP_MINHASH_DEDUP_H_

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "neardup/dedup.h"
#include "neardup/minhash.h"
#include "neardup/status.h"

namespace neardup {

inline constexpr double kMinHashDistanceScale = 1e6;

inline int MinHashDistance(double jaccard) {
  return static_cast<int>(std::lround(kMinHashDistanceScale * (1 - jaccard)));
}
inline double JaccardOfDistance(int distance) {
  return 1 - static_cast<double>(distance) / kMinHashDistanceScale;
}

// `signatures` holds documents.size() * minhash.num_perm values (document i
// at i * num_perm); `sets` the sorted feature sets (Pipeline::FeatureSet),
// required when minhash.exact, else may be empty. InvalidArgument when the
// sizes disagree, the options are out of range (Method::Validate) or the mode
// is not kCluster.
Result<DedupResult> MinHashDedup(std::span<const DedupDocument> documents,
                                 std::span<const uint32_t> signatures,
                                 std::span<const std::vector<uint64_t>> sets,
                                 const MinHashOptions& minhash, const DedupOptions& options);

}  // namespace neardup

#endif  // NEARDUP_MINHASH_DEDUP_H_
