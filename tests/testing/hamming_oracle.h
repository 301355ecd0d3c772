// Copyright 2026 The neardup Authors.
//
// Obviously-correct references for the Hamming indexes: bit-by-bit distance,
// nested loops, no tricks. Slow; for tests only.

#ifndef NEARDUP_TESTS_TESTING_HAMMING_ORACLE_H_
#define NEARDUP_TESTS_TESTING_HAMMING_ORACLE_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/index.h"

namespace neardup::testing {

// Counts differing bits one at a time.
int SlowDistance(const Fingerprint& a, const Fingerprint& b);

// Every entry within k of q, sorted by (distance, id).
std::vector<Neighbor> OracleSearch(const std::vector<IndexEntry>& entries, const Fingerprint& q,
                                   int k);

// Every pair of entries with different ids within k, (a < b), sorted by (a, b, distance).
std::vector<IdPair> OraclePairs(const std::vector<IndexEntry>& entries, int k);

// A uniformly random fingerprint of `bits` bits.
Fingerprint RandomFingerprint(int bits, std::mt19937_64& rng);
// `fp` with exactly `flips` distinct random bits flipped.
Fingerprint FlipBits(const Fingerprint& fp, int flips, std::mt19937_64& rng);

// Rows of 128-bit fingerprints for the index tests: `random_rows` random
// ones, plus for each of `queries` random queries one neighbour planted at
// each distance of `planted` (in that order), shuffled. Row i has id
// 2i + 1 and name "doc<i>"; ids, lo, hi, names and entries are the rows'
// columns.
struct PlantedRows {
  std::vector<uint64_t> ids, lo, hi;
  std::vector<Fingerprint> fps, queries;
  std::vector<std::string> names;
  std::vector<IndexEntry> entries;
};
PlantedRows MakePlantedRows(size_t random_rows, size_t queries, const std::vector<int>& planted,
                            uint64_t seed);

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_TESTING_HAMMING_ORACLE_H_
