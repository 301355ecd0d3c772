// Copyright 2026 The neardup Authors.
//
// One bucket of a band join verified: the one rule BandJoin (band_join.cc)
// and VerifyBandBucket (neardup-mpi's exchanged buckets) both use. A bucket
// of at most max_bucket members: every pair, in member order (components
// only: a spanning forest, a pair its members' earlier pairs connect is not
// tested); a larger one: each member against representatives.
//
// A template so that BandJoin's inner loop keeps its inlined test.

#ifndef NEARDUP_DEDUP_BAND_BUCKET_H_
#define NEARDUP_DEDUP_BAND_BUCKET_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "neardup/index.h"

namespace neardup::dedup_internal {

// What the buckets verified so far counted (BandJoinStats' fields).
struct BucketTally {
  size_t candidates = 0;
  size_t tested = 0;
  size_t large = 0;    // buckets joined against representatives
  size_t largest = 0;  // the largest bucket's size
};

// The bucket of `size` >= 2 members, member(i) its i-th (increasing): the
// pairs the test confirms (a score >= 0) appended to *pairs, the counts
// added to *tally. confirmed_before(a, b): the pair is known already (not
// tested again; components only: connected by earlier bands). forest: only
// the components are wanted. up: scratch for the bucket's union-find.
template <class Member, class Test, class Confirmed>
void VerifyBucket(size_t size, const Member& member, const Test& test,
                  const Confirmed& confirmed_before, bool forest, size_t max_bucket,
                  size_t max_reps, std::vector<uint32_t>* up, std::vector<IdPair>* pairs,
                  BucketTally* tally) {
  tally->largest = std::max(tally->largest, size);
  if (size <= max_bucket && forest) {
    // A spanning forest of the bucket's pairs (a union-find over its
    // members): a pair already connected, here or by earlier bands, is not
    // tested, and the bucket adds fewer than `size` pairs.
    tally->candidates += size * (size - 1) / 2;
    up->resize(size);
    std::iota(up->begin(), up->end(), 0u);
    const auto root = [up](uint32_t x) {
      std::vector<uint32_t>& u = *up;
      while (u[x] != x) x = u[x] = u[u[x]];
      return x;
    };
    for (size_t x = 0; x < size; ++x) {
      const auto a = member(x);
      for (size_t y = x + 1; y < size; ++y) {
        const auto b = member(y);
        const uint32_t rx = root(static_cast<uint32_t>(x));
        const uint32_t ry = root(static_cast<uint32_t>(y));
        if (rx == ry || confirmed_before(a, b)) continue;
        ++tally->tested;
        const int score = test(a, b);
        if (score >= 0) {
          pairs->push_back({a, b, score});
          (*up)[std::max(rx, ry)] = std::min(rx, ry);
        }
      }
    }
  } else if (size <= max_bucket) {
    tally->candidates += size * (size - 1) / 2;
    for (size_t x = 0; x < size; ++x) {
      const auto a = member(x);
      for (size_t y = x + 1; y < size; ++y) {
        const auto b = member(y);
        if (confirmed_before(a, b)) continue;
        ++tally->tested;
        const int score = test(a, b);
        if (score >= 0) pairs->push_back({a, b, score});
      }
    }
  } else {
    ++tally->large;
    std::vector<std::remove_cvref_t<decltype(member(0))>> reps{member(0)};
    for (size_t x = 1; x < size; ++x) {
      const auto b = member(x);
      bool matched = false;
      for (const auto a : reps) {
        ++tally->candidates;
        if (confirmed_before(a, b)) {
          if (!forest) {  // a confirmed pair: its test passed
            matched = true;
            continue;
          }
          // Connected by earlier bands, but maybe not a pair. Whether b
          // matches must not depend on what earlier bands joined: the
          // representatives, and so the components, would differ from the
          // full join's and between band ranges (neardup-mpi). Tested;
          // connected, so no pair is kept.
          ++tally->tested;
          if (test(a, b) >= 0) matched = true;
          continue;
        }
        ++tally->tested;
        const int score = test(a, b);
        if (score >= 0) {
          pairs->push_back({a, b, score});
          matched = true;
        }
      }
      if (!matched && reps.size() < max_reps) reps.push_back(b);
    }
  }
}

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_BAND_BUCKET_H_
