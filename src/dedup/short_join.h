// Copyright 2026 The neardup Authors.
//
// The routed join of SimHash cluster mode with verified pairs: short
// documents (few distinct features: titles, queries, log lines) are joined
// exactly in the space of their Jaccard sketches, the others by the banded
// join. Why: short records that share most of their features have
// fingerprints that agree on many bits, so bit-sampling bands put thousands
// of them into one bucket that holds few pairs within k (10M one-line
// records: 49 billion candidates for 5.7 million pairs; doc/banding.md,
// "Short records").
//
// A pair passes verification only when SketchJaccard >= t (t: the lowest
// threshold VerifyThreshold can give). Of two sketches with a and b
// non-empty slots, `matches` slots equal in both (dedup.h): the estimate
// (m - both / 256) / (slots (1 - 1 / 256)) >= t, with both >= m and
// slots >= max(a, b), implies
//
//   m >= t max(a, b).                                                    (*)
//
// So a sketch is a set of 15-bit tokens (slot << 8 | value, one per
// non-empty slot) and a pair that can pass shares at least
// Need(a, b) >= ceil(t max(a, b)) of them (PairOverlap below: the exact
// least overlap for the two sizes, with at most kSlotClashes slots
// non-empty in both but different). With every token set ordered by one
// global order (rarest first), two sets that share need >= s tokens have
// their first s common ones within their first |x| - need + s tokens (the
// prefix filter with s tokens). The join: each short or medium group emits a
// key per pair of tokens of its first a - alpha + 2, alpha = Any(a) (the
// least need over every partner size; 30 bits, exact: no hash); groups with
// equal keys are candidates. A bucket of more than 48 groups is cut by the
// next common token (level s + 1: each member's tokens after the bucket's
// last one, within its first a - alpha + s + 1), down to 16 levels, so that
// a bucket of two common tokens does not cost its square.
//
// The shorter member of a pair (both, at equal sizes) needs Longer(a) >=
// alpha tokens: its s-th common token lies within its first a - Longer(a) + s
// (a `lead` of the bucket). A member that is not a lead pairs only with a
// strictly shorter lead, and is no lead in any finer bucket: a bucket keeps
// its leads and the non-leads longer than its shortest lead, and looks at
// the pairs of a lead with a later member only. The records that share the
// words and the leading digits of issue 27's benchmark (sets of equal size,
// half their tokens in common) thus meet in no bucket.
//
// A pair is tested in one bucket only, that of its first s common tokens at
// the level s where its alpha (the larger of the two) stops the cutting (or
// the last level): the prefix and positional filters with its own need, its
// Hamming distance (<= k), the need on the whole token sets, and then the
// verifier's estimate from the shared tokens and the two occupancy masks at
// the lowest threshold t: only pairs that can pass verification are held.
// Tiny sets (alpha = 1) also emit one key per token.
//
// Hence: every pair of groups with at least one short member that is within
// k and can pass verification (with at most kSlotClashes clashing slots) is
// found; the join is exact for them (the banded join finds recall(d) of
// them). Pairs of two long groups (more than kShortSlots non-empty slots)
// come from the banded join over the long groups alone, as before. Pairs are
// then verified as every join's are (VerifyGroupPairs), so the result equals
// the exact join's pairs for the short documents and the banded join's for
// the long ones.
//
// Cost: the keys of a group are C(p, 2) with p = a - alpha + 2 tokens (28 for
// a 13-token record at t = 0.5); tests follow the buckets after cutting;
// memory: the token sets (2 bytes a token, 8 a record), the keys of one pass
// (8 bytes each; a pass takes the keys whose first token is in a range of
// ranks, about 4M of them) and the pairs held (8 bytes each, 24 once
// returned).
//
// Internal to the library (src/, not installed).

#ifndef NEARDUP_DEDUP_SHORT_JOIN_H_
#define NEARDUP_DEDUP_SHORT_JOIN_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dedup/stages.h"
#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup::dedup_internal {

// A group whose first member's sketch has at most this many non-empty slots
// is short.
inline constexpr int kShortSlots = 16;

// What the routed join did (DedupJoinReport::short_join).
struct ShortJoinStats {
  size_t short_groups = 0;   // groups joined only in the sketch space
  size_t medium_groups = 0;  // more than kShortSlots slots, at most kShortSlots / t: both joins
  size_t keys = 0;           // (token pair, group) keys
  size_t candidates = 0;     // pairs of a bucket looked at (once per bucket)
  size_t tested = 0;         // Hamming tests (a pair once per bucket it is tested in)
  size_t confirmed = 0;      // pairs within k whose estimate passes t
  size_t rejected = 0;       // pairs within k sharing enough tokens whose estimate fails t
  size_t largest_bucket = 0;
  size_t passes = 0;    // passes over the prefixes (the keys of one pass are held at once)
  size_t beyond_k = 0;  // the sketch short rule's pairs beyond k (ShortRuleBeyondK), each once
};

// The overlap a pair of token sets (sketches) of sizes a and b needs to
// pass verification at t: the least m (equal non-empty slots) for which
// some `both` (slots non-empty in both, m <= both <= min(a, b)) gives
// SketchJaccard = (m - both / 256) / ((a + b - both) (1 - 1 / 256)) >= t.
// Tighter than (*), which takes both = m in the numerator but
// slots = max(a, b) in the denominator: at t = 0.5, a = b = 6 needs 4, not
// 3. kNever: no pair of these sizes can pass (too far apart in size).
//
// both - m (slots non-empty in both whose values differ: two different
// features in one slot) is taken to be at most kSlotClashes: a pair with
// more has at least four of its differing features landing in the slots of
// the other's differing features, and the bound is not guaranteed for it
// (the join may miss it). With kSlotClashes = 3, a = b = 9 (a seven-digit
// record of the short-record benchmark) needs 6 equal slots, not 5: the
// buckets of records that share the words and the leading digits stop
// growing quadratically. Measured against the exact join in
// doc/benchmarks.md, "Short records".
inline constexpr int kSlotClashes = 3;

class PairOverlap {
 public:
  static constexpr int kNever = 255;
  // Sizes 1..max_size.
  PairOverlap(double t, int max_size);
  int Need(int a, int b) const { return need_[static_cast<size_t>(a * n_ + b)]; }
  // The least need over every partner size: what the prefix a set emits
  // keys from must allow.
  int Any(int a) const { return any_[static_cast<size_t>(a)]; }
  // The least need over partners at least as large: a pair's shorter
  // member (or both, at equal sizes) has its s-th common token within its
  // first a - Longer(a) + s tokens.
  int Longer(int a) const { return longer_[static_cast<size_t>(a)]; }

 private:
  int n_;
  std::vector<uint8_t> need_, any_, longer_;
};

// The lowest verification threshold a pair can get (DedupOptions); 0 when
// not verifying.
double LowestVerifyThreshold(const DedupOptions& options);

// True when cluster mode routes short documents to the sketch join: a banded
// plan, verified pairs, a lowest threshold of at least 0.4 (below it the
// prefixes grow long), and one short group at least.
bool RouteShortDocuments(const SimHashPlan& plan, const DedupOptions& options);

// True when the routed join also gives the sketch short rule's pairs more
// than k apart (SimHashJoinRouted's beyond_k): the rule is ShortRule::kSketch
// and its threshold is at least the routed join's (LowestVerifyThreshold), so
// the join's candidates hold every such pair with a short member.
bool ShortRuleBeyondK(const DedupOptions& options);

// The routed join over every group of the plan: the pairs (of group numbers,
// a < b, sorted by (a, b), each once) within k from the sketch join and from
// the banded join of the long groups (plan.report.bands). With beyond_k and
// ShortRuleBeyondK(options): also, in beyond_k (same order), the pairs of
// the sketch join's candidates more than k apart that pass the sketch short
// rule's test (ShortSketchPairs: the smaller under short_features, sizes
// within the ratio, SketchJaccard >= short_jaccard): the work of the join
// shared with the rule, and every such pair with a short member (at most
// kShortSlots non-empty slots, at most kSlotClashes clashing slots) found,
// where the rule's bands find those of tiny sketches with low probability.
// beyond_k may be `pairs` itself: the rule's pairs are then merged into it
// (one array, no second copy; they are those more than k apart), and
// short_stats->beyond_k counts them. ClusterMode does so, and then runs the
// rule's LSH (ShortSketchPairs) over the groups of more than kShortSlots
// non-empty slots alone: every rule pair with a short member is here (a
// pair missed here by more than kSlotClashes clashing slots is not looked
// for there; measured against the exact rule in doc/benchmarks.md, "The
// sketch short rule at 10M").
// REQUIRES: RouteShortDocuments(plan, options).
Status SimHashJoinRouted(const SimHashPlan& plan, const DedupOptions& options,
                         std::vector<IdPair>* pairs, BandJoinStats* band_stats,
                         ShortJoinStats* short_stats, std::vector<IdPair>* beyond_k = nullptr);

// The approximate short-document rule (DedupOptions::short_rule
// ShortRule::kSketch): the pairs of the short documents found by an LSH join
// over their Jaccard sketches instead of the exact join of their feature
// sets, so that no feature set is kept (the sketches are verification's).
// The 128 slots are cut into kShortBands bands of kShortBandSlots slots: the
// first 32 bands are the slots in order, the next 32 the slots in a fixed
// pseudo-random order (a layout each). A band's key is its slots' values and
// empty marks (exact, 36 bits). A band with no value gives no key; one with a
// single value (8 bits: tiny sketches met by chance in most such bands, 10.5
// of 12.8 million candidates on 100,000 texts of 20-200 characters) gives
// one only in a sparse sketch (at most kSparseValues values), extended by
// the next two values of its layout. Two sketches are candidates when some
// band's keys are equal, and a pair when the smaller has fewer than
// short_features features, their feature counts are within the ratio t and
// SketchJaccard >= t (t = short_jaccard). Of the pairs the exact rule keeps
// after verification, one is found with probability
//
//   P = 1 - (1 - p)^64,
//   p = (C(A, 4) - C(E, 4) - C(E, 3) (A - E) (1 - n)) / C(128, 4)
//
// for a pair whose sketches agree on A slots (equal values, or empty in
// both), E of them empty in both (a band of 4 random slots agrees and holds
// a value; n: for two sparse sketches, the chance that the next two slots
// holding a value agree, (A - E) (A - E - 1) / ((128 - E) (127 - E)), else
// 0; bands taken as independent). For sets that fill the slots a slot
// agrees with probability J: P ~ 1 - (1 - J^4)^64, 0.984 at J = 0.5, 0.9998
// at 0.6. tests/dedup/short_sketch_rule_test.cc checks the model against the
// exact rule (random sets, short news with edited copies). A bucket of more
// than kShortBucketCap sketches is cut by the next band of its layout (again
// while it stays larger, up to all 128 slots), so that sketches sharing a
// template's slots cost no square; a pair in such a bucket is then found in
// it only when it agrees on those slots as well (outside the model). Pairs
// may have an exact Jaccard below t (the estimate's error; the exact rule's
// pairs are verified by the same estimate). Cost: per band one radix sort
// of the participants' keys (8 bytes each, 8 bands' keys at a time per
// thread), a 48-byte row per participant (occupancy masks of both layouts,
// sketch, feature count), and the candidates' estimates: a pair is
// estimated only when the slots non-empty in both are at least t of those
// non-empty in either (the estimate's bound; exact, no pair lost), and
// once per worker while it stays in the worker's table of recent pairs; no
// feature set (doc/evaluation.md, "The short rule by sketch" and "The short
// rule by sketch made cheaper").
inline constexpr int kShortBandSlots = 4;
inline constexpr int kShortBands = 64;
inline constexpr size_t kShortBucketCap = 1024;
// A sketch with at most this many values is sparse (BandKey in short_join.cc).
inline constexpr int kSparseValues = 24;

// The pairs (i, j), i < j, positions in `who`, sorted and each once, of the
// approximate rule over the sketches sketches[who[i]]. A sketch with no
// feature or with at least short_features / t features takes no part.
// InvalidArgument when `who` holds 2^28 sketches or more.
// The sketches: an array (a JaccardSketch span or vector converts) or a
// packed store (unpacked where read: ~10 ns a read, no 152 bytes held).
Result<std::vector<std::pair<uint32_t, uint32_t>>> ShortSketchPairs(SketchView sketches,
                                                                    std::span<const size_t> who,
                                                                    size_t short_features, double t,
                                                                    int threads);

// The slots of layout 0 (the slots in order) or 1 (a fixed shuffle) in
// their order: band b of the layout is positions 4b..4b + 3. For tests.
const std::array<uint8_t, kSketchSlots>& ShortBandOrder(int layout);

// For tests: the keys one pass of the sketch join makes at most (unless one
// token's keys are more; 0: the default, 4M). Not thread-safe: set it before
// joining.
void SetShortJoinKeysPerPass(size_t keys);

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_SHORT_JOIN_H_
