// Copyright 2026 The neardup Authors.
//
// Band join: the candidate engine of large-scale dedup, independent of the
// method (SimHash, MinHash).
//
// Every document yields L band keys. Documents that share the key of a band
// are candidates; every candidate pair is verified by the method's exact test,
// so no false pair is ever reported; what banding trades is recall (a pair
// that shares no band key is missed). The caller chooses the bands so that the
// recall it needs holds (for SimHash see ChooseSimHashBands below and
// doc/banding.md).
//
//   neardup::BandJoinOptions opt;
//   opt.bands = 20;
//   std::vector<neardup::IdPair> pairs;
//   NEARDUP_RETURN_IF_ERROR(neardup::BandJoin(n, keys, test, opt, &pairs));
//
// How it runs: the bands are processed one after another. For one band the
// keys of all documents are computed (in parallel ranges), hashed, partitioned
// by their top bits and radix-sorted as (key, document) words in each
// partition; runs of equal keys are the buckets. Memory per document: 16 bytes
// while a band runs (an 8-byte key and an 8-byte sort word) plus 24 bytes per
// distinct confirmed pair; nothing grows with L. SimHashBandJoin below is the
// same engine with packed exact keys, an inlined test and prefetching.
//
// Candidate pairs are deduplicated in the output: a pair that collides in
// several bands is reported once. It is tested again in each band where it
// collides (for SimHash and MinHash estimates the test is cheaper than a
// lookup); set skip_confirmed when the test is expensive.
//
// Large buckets: a bucket of more than max_bucket documents (templates, boiler
// plate: distinct values that agree on a band) is not joined all-pairs. Its
// members, in document order, are tested against the bucket's representatives
// (the first member, and each later member that matched none of them, at most
// max_representatives); every confirmed (representative, member) pair is
// reported. Cost: at most max_bucket^2 / 2 or members * max_representatives
// tests per bucket, never quadratic in the bucket. Effect: in such a bucket
// pairs of two non-representatives are not found there (they are usually
// connected through a representative, which is what clustering needs), and
// members that match none of max_representatives representatives are not
// joined in that band. BandJoinStats::large_buckets counts such buckets.
//
// Output is deterministic: the same input gives the same pairs whatever the
// thread count. Thread safety: BandJoin is a pure function; the key function
// and test are called concurrently from its worker threads.

#ifndef NEARDUP_BAND_JOIN_H_
#define NEARDUP_BAND_JOIN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup {

// Keys of band `band` for documents [begin, end): out[i - begin]. Called
// concurrently (different bands or ranges); must be thread-safe. Any 64-bit
// values: equal keys make candidates (they are hashed again inside, so keys
// need not be uniform).
using BandKeyFunction = std::function<void(int band, size_t begin, size_t end, uint64_t* out)>;

// The exact test of a candidate pair i < j: a score >= 0 (e.g. Hamming
// distance) when it is a near-duplicate pair, -1 when it is not. Called
// concurrently.
using PairTest = std::function<int(size_t i, size_t j)>;

struct BandJoinOptions {
  int bands = 0;    // L, >= 1
  int threads = 0;  // 0 = all hardware threads
  // Called on the calling thread: ("bands", b, L) before band b and (L, L) at
  // the end. May be empty.
  std::function<void(std::string_view phase, size_t done, size_t total)> progress;
  // Buckets larger than this are joined against representatives (see above).
  size_t max_bucket = 2048;
  size_t max_representatives = 64;
  // Do not test a pair again once it is confirmed (a binary search of the
  // confirmed pairs before every test; the confirmed pairs are merged after
  // every band). For expensive tests.
  bool skip_confirmed = false;
  // Only the connected components of the pairs are wanted: confirmed pairs
  // are folded into a union-find after every band and only a spanning forest
  // of them is kept and returned (fewer than n pairs, sorted), so memory does
  // not grow with the pairs of a template's variants. A pair whose documents
  // are already connected by earlier bands is not tested again (counted in
  // candidates, not in tested), except a large bucket's member against a
  // representative: whether it matches one decides the representatives, so
  // that must not depend on the bands joined before (or on how the bands are
  // cut into ranges, as neardup-mpi does); confirmed then counts the pairs tested and
  // confirmed, a lower bound of the distinct pairs. The components are those
  // of the full join's pairs, whatever the thread count.
  bool components_only = false;
};

struct BandJoinStats {
  size_t candidates = 0;     // pairs that shared a band key, counted once per band
  size_t tested = 0;         // calls of the test
  size_t confirmed = 0;      // distinct pairs confirmed (components_only: see there)
  size_t large_buckets = 0;  // buckets joined against representatives
  size_t largest_bucket = 0;
  double seconds = 0;  // wall time of the join
};

// Every confirmed pair (IdPair a < b, distance = the test's score) exactly
// once, sorted by (a, b); the same output whatever the thread count.
// InvalidArgument when bands < 1 or n >= 2^32.
Status BandJoin(size_t n, const BandKeyFunction& keys, const PairTest& test,
                const BandJoinOptions& options, std::vector<IdPair>* pairs,
                BandJoinStats* stats = nullptr);

// ---------------------------------------------------------------------------
// SimHash bit sampling. A band is r of the f bit positions; the band key of a
// fingerprint is its bits at those positions. Two fingerprints at Hamming
// distance d share a band's key with probability
//   p(d) = C(f - d, r) / C(f, r)
// (the r positions avoid all d differing ones), and share at least one of L
// independent bands with probability recall(d) = 1 - (1 - p(d))^L.

// p(d) above. REQUIRES: 0 <= d <= f, 0 <= r <= f.
double BitSamplingCollision(int f, int d, int r);
// 1 - (1 - p)^L.
double BandRecall(double p, int bands);

// A SimHash band layout.
struct SimHashBands {
  int bits = 128;                   // f
  int band_bits = 0;                // r
  int bands = 0;                    // L
  uint64_t seed = 0;                // draws the positions (SimHashBandMasks)
  double recall_at_k = 0;           // recall(k)
  double recall_at_k_minus_4 = 0;   // recall(max(k - 4, 0))
  double estimated_candidates = 0;  // over all bands, for the sample's distances
  double estimated_seconds = 0;     // on one thread, by the cost model
};

// The default seed of the band positions (recorded in summaries).
inline constexpr uint64_t kDefaultBandSeed = 0x6e656172647570ULL;  // "neardup"

// Chooses (r, L) for n fingerprints of f bits, threshold k and target recall
// at k: among r in [1, f - k], the smallest L that reaches `recall` at d = k
// and 1 - (1 - recall) / 100 at d = k - 4 (0.9999 for 0.99), with the lowest
// estimated cost L * (n * key_cost + candidates_per_band * test_cost), where
// candidates_per_band = n^2 / 2 * mean p(d) over `sample_distances`
// (distances of random pairs of the data; empty: those of independent random
// fingerprints, Binomial(f, 1/2), whose mean p is 2^-r). L is at most 4096.
// REQUIRES: f in {64, 128}, 0 <= k < f, 0 < recall < 1.
SimHashBands ChooseSimHashBands(size_t n, int f, int k, double recall,
                                const std::vector<int>& sample_distances, uint64_t seed);

// The same choice for stream mode's incremental banded index
// (DedupMode::kStream, doc/banding.md): r <= 32, and a cost per document and
// band that grows with the index's levels (a probe and merges per level).
SimHashBands ChooseSimHashStreamBands(size_t n, int f, int k, double recall,
                                      const std::vector<int>& sample_distances, uint64_t seed);

// The L band masks, 2 words each (hi, lo) in Fingerprint's bit numbering:
// band b samples the r positions drawn by a partial Fisher-Yates shuffle from
// SplitMix64(seed + b).
std::vector<std::pair<uint64_t, uint64_t>> SimHashBandMasks(const SimHashBands& bands);

// The banded self-join of SimHash fingerprints (all of `layout.bits` bits):
// BandJoin on the bit-sampling bands of `layout` (SimHashBandMasks), every
// candidate verified by its Hamming distance <= k; pairs are indexes into fps
// with their distance, sorted, each once. options.bands is ignored (layout's).
// Faster than BandJoin with std::function keys and test: the band keys are
// the sampled bits packed (byte tables) when band_bits <= 32, sorted by radix
// without hashing, the test is inlined and the fingerprints it reads are
// prefetched. Memory: 16 bytes per fingerprint (a copy), 16 per document while
// a band runs, 24 per distinct confirmed pair, and 16 KB of tables per band.
// Only bands [first_band, end_band) of the layout when given (end_band -1:
// all): a band's pairs depend on that band only, so the merged pairs of any
// split of the bands into ranges are the pairs of the whole join
// (neardup-mpi joins band ranges on different processes).
// InvalidArgument unless layout.bands >= 1, 1 <= band_bits <= bits and the
// range lies within [0, layout.bands).
Status SimHashBandJoin(std::span<const Fingerprint> fps, int k, const SimHashBands& layout,
                       const BandJoinOptions& options, std::vector<IdPair>* pairs,
                       BandJoinStats* stats = nullptr, int first_band = 0, int end_band = -1);

// Estimated one-thread seconds of an exact PermutedTableIndex self-join of n
// distinct fingerprints at k (its layout's cost model, calibrated on this
// project's benchmark machine), comparable with SimHashBands::estimated_seconds.
double EstimateExactJoinSeconds(size_t n, int f, int k);

}  // namespace neardup

#endif  // NEARDUP_BAND_JOIN_H_
