// Copyright 2026 The neardup Authors.
//
// Obviously-correct references for the Hamming indexes: bit-by-bit distance,
// nested loops, no tricks. Slow; for tests only.

#ifndef NEARDUP_TESTS_TESTING_HAMMING_ORACLE_H_
#define NEARDUP_TESTS_TESTING_HAMMING_ORACLE_H_

#include <cstdint>
#include <random>
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

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_TESTING_HAMMING_ORACLE_H_
