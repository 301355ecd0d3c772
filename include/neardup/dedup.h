// Copyright 2026 The neardup Authors.
//
// Near-duplicate detection over a sequence of fingerprinted documents.
//
// Documents are identified by their position in the input (0, 1, ...); the
// caller maps positions back to its own document ids. Two modes:
//
//   kCluster  Every pair of non-empty documents at Hamming distance <= k is an
//             edge; clusters are centres (ClusterRule::kCenter, the default:
//             every member within k of its kept document) or the connected
//             components of the edges (kComponents, union-find). The
//             pairs are found by an exact PermutedTableIndex self-join or, when
//             that would be slow (large k and N), by a banded join (bit-sampling
//             bands, band_join.h) that finds each pair within k with a stated
//             probability (DedupOptions::recall, default 0.99 at distance k) and
//             never reports a pair beyond k; DedupOptions::join chooses, and
//             DedupResult::join says what was used and the guarantee. In each cluster one document
//             is kept, chosen by the KeepPolicy; every other member is a
//             duplicate. Components are transitive: a member can be farther
//             than k from the kept document (a -- b -- c chains).
//             Memory grows with the documents and with the pairs of
//             *distinct* fingerprints within k, not with the pairs of
//             documents: identical fingerprints are collapsed first (1M
//             identical documents take about 100 bytes each).
//   kStream   Documents in input order; a document is kept only if no
//             previously kept document lies within k, else it is a duplicate
//             of the closest kept one (ties: the earliest). Not transitive; the
//             kept set depends on the input order. Only KeepPolicy::kFirst.
//             At large k and N the kept documents are found through bands
//             (DedupOptions::join): a kept document within k is found with
//             probability recall(d), a duplicate is always within k.
//
// Empty documents (no features) are never compared with anything: each is a
// singleton cluster, kept, and counted in DedupSummary::empty.
//
//   std::vector<neardup::DedupDocument> docs = ...;
//   neardup::DedupOptions opt;
//   opt.k = 3;                                  // default 28: the default method's
//   auto result = neardup::Dedup(docs, opt);
//   if (!result.ok()) return result.status();
//   for (const auto& r : result->records) if (r.duplicate) ... r.nearest ...
//
// Output is deterministic and independent of DedupOptions::threads.
// Thread safety: Dedup is a pure function; concurrent calls are fine.

#ifndef NEARDUP_DEDUP_H_
#define NEARDUP_DEDUP_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "neardup/band_join.h"
#include "neardup/fingerprint.h"
#include "neardup/status.h"

namespace neardup {
namespace dedup_internal {
class PackedSketches;  // src/dedup/sketch_store.h
}  // namespace dedup_internal

// A pair of sets (a < b, positions) and their exact Jaccard.
struct JaccardPair {
  size_t a = 0;
  size_t b = 0;
  double jaccard = 0;
  friend bool operator==(const JaccardPair&, const JaccardPair&) = default;
};

// Every pair of `sets` (each sorted, distinct) with exact Jaccard >= threshold,
// sorted by (a, b). A prefix-filter join (Chaudhuri et al. 2006; Bayardo et
// al. 2007): elements ordered by corpus frequency, rarest first; a set of
// size s indexes its first s - ceil(t s) + 1 elements, and two sets at
// Jaccard >= t share one of them, so no pair is missed; candidates pass a
// size filter and are verified exactly. Empty sets pair with nothing.
// InvalidArgument unless 0 < threshold <= 1. The probes run on `threads`
// threads (0: all cores) over an index of every prefix built first; the
// result does not depend on the threads. Memory: the ranked sets (4 bytes
// an element), the index (8 bytes per indexed prefix element that occurs in
// two sets or more) and about 20 bytes per distinct element; while ranking,
// one small table per thread (elements are counted in blocks of the value
// range, about 2^20 elements a block), never a copy of every element.
Result<std::vector<JaccardPair>> JaccardJoin(std::span<const std::vector<uint64_t>> sets,
                                             double threshold, int threads = 1);

// The short-document rule's pairs (DedupOptions::short_features): the pairs
// of JaccardJoin(sets, jaccard) in which the smaller set has fewer than
// `short_features` elements.
Result<std::vector<JaccardPair>> ShortDocumentPairs(std::span<const std::vector<uint64_t>> sets,
                                                    size_t short_features, double jaccard,
                                                    int threads = 1);

// A document's Jaccard sketch: a one-permutation MinHash (Li, Owen and
// Zhang 2012) of its feature set (the sorted distinct feature hashes,
// Pipeline::FeatureSet: the features the fingerprint sums), b-bit (Li and
// König 2010): each of kSketchSlots slots keeps the low 8 bits of the
// smallest remixed hash of the features that fall into it; `empty` marks
// the slots no feature fell into. 152 bytes per document.
//
// SketchJaccard estimates the Jaccard of two sets from the slots not empty
// in both: matches / slots, corrected for the 1/256 chance that two
// different minima agree in 8 bits. Standard error about
// sqrt(J (1 - J) / slots): 0.044 at J = 0.5 when both sets fill all 128
// slots (>= ~600 features); sets smaller than the slots are compared nearly
// exactly (a feature per slot; the error is that of the 8-bit agreements
// and of features sharing a slot).
inline constexpr int kSketchSlots = 128;
struct JaccardSketch {
  std::array<uint8_t, kSketchSlots> slot{};
  std::array<uint64_t, kSketchSlots / 64> empty{~uint64_t{0}, ~uint64_t{0}};
  uint32_t features = 0;  // the size of the set (for the length rule)
};

// The sketch of `hashes` (any order; repeats allowed, but then `features`,
// set to hashes.size(), must be set to the set's size by the caller, as
// neardup dedup does from the fingerprint's feature count).
JaccardSketch MakeJaccardSketch(std::span<const uint64_t> hashes);
// The estimated Jaccard of the two sets, in [0, 1]; 0 when either is empty.
double SketchJaccard(const JaccardSketch& a, const JaccardSketch& b);

struct DedupDocument {
  Fingerprint fingerprint;
  // True when the document had no features; its fingerprint is ignored.
  bool empty = false;
  // Used by KeepPolicy::kLongest (e.g. characters of normalized text).
  uint64_t length = 0;
  // Used by KeepPolicy::kField. Missing (or NaN) ranks below every number.
  std::optional<double> score;
};

// How the short-document rule (DedupOptions::short_features) finds its
// pairs: kExact joins the exact feature sets (DedupOptions::short_sets);
// kSketch joins the verification sketches (DedupOptions::sketches) by LSH
// bands and checks each candidate by its sketch estimate, keeping no
// feature set (dedup/short_join.h states its recall).
enum class ShortRule { kExact, kSketch };
// "exact" / "sketch"; InvalidArgument for anything else.
Result<ShortRule> ParseShortRule(std::string_view name);
const char* ShortRuleName(ShortRule rule);

enum class DedupMode {
  kCluster,
  kStream,
};

enum class KeepPolicy {
  kFirst,    // smallest input position
  kLongest,  // largest length; ties -> smallest position
  kField,    // largest score; ties -> smallest position
};

// How cluster mode groups the pairs within k (see the top of the file).
enum class ClusterRule {
  kComponents,  // connected components: transitive, may chain
  kCenter,      // greedy centres in keep order: every member within k of its kept one
};

// "components" / "center"; InvalidArgument for anything else.
Result<ClusterRule> ParseClusterRule(std::string_view name);
const char* ClusterRuleName(ClusterRule rule);

// How cluster mode finds the pairs within k.
enum class DedupJoin {
  kAuto,    // the cheaper of the two by estimated cost; exact when either is fast
  kExact,   // PermutedTableIndex self-join: every pair within k
  kBanded,  // bit-sampling bands: each pair within k with probability >= recall
};

// One pair of documents within k, by input position; i < j.
struct DedupPair {
  size_t i = 0;
  size_t j = 0;
  int distance = 0;
  // The estimated Jaccard of the two feature sets (SketchJaccard) when
  // DedupOptions::sketches are given; -1 otherwise.
  double jaccard = -1;
  friend bool operator==(const DedupPair&, const DedupPair&) = default;
};

struct DedupOptions {
  // Documents at Hamming distance <= k are near-duplicates. 0 <= k <= bits/4
  // (the permuted-table index's range); larger k is InvalidArgument. The
  // default is the default method's (method.h, chars5u at 128 bits); 64-bit
  // fingerprints need k <= 16 (the tfidf method's is 3).
  int k = 28;
  DedupMode mode = DedupMode::kCluster;
  // kStream accepts only kFirst.
  KeepPolicy keep = KeepPolicy::kFirst;
  // Cluster mode: centres (the default since 2026-11-26: every member is
  // within k of its cluster's kept document, so clusters do not chain) or
  // connected components (a -- b -- c puts c with a however far apart they
  // are: 71 dividend notices of different companies in one cluster, or one
  // of 868,742 of 1M documents built from shared paragraphs;
  // doc/evaluation.md, "Clustering").
  ClusterRule cluster_rule = ClusterRule::kCenter;
  // Worker threads for the self-join; 0 = all hardware threads.
  int threads = 0;
  // How pairs within k are found. Cluster mode: the self-join. Stream mode:
  // exact permuted tables, or an incremental banded index of the kept
  // documents (dedup/stream_bands.h) with the same recall guarantee, kAuto
  // choosing by estimated cost; DedupResult::join reports it.
  DedupJoin join = DedupJoin::kAuto;
  // Banded join: the probability that a pair at distance exactly k is found
  // (closer pairs: higher; see doc/banding.md). In (0, 1).
  double recall = 0.99;
  // Banded join: the seed that draws the band positions. The same seed and
  // input give the same result.
  uint64_t band_seed = kDefaultBandSeed;
  // Banded join: r (bits per band) and L (bands); 0 = chosen from N, k and
  // recall by estimated cost. Both or neither.
  int band_bits = 0;
  int bands = 0;
  // The short-document rule (cluster mode only; 0 = off). The Hamming
  // distance of two fingerprints of few features spreads widely (one changed
  // character of a 20-character sentence changes a quarter of its 5-grams),
  // so at the usual k short near-copies are missed. With the rule, a pair in
  // which one document has fewer than short_features distinct features is a
  // near-duplicate also when the exact Jaccard of the two feature sets is
  // >= short_jaccard (whatever their distance; ShortDocumentPairs, an exact
  // prefix-filter join). short_sets: one entry per document, the sorted
  // distinct feature hashes (Pipeline::FeatureSet) of every document with
  // fewer than short_features / short_jaccard features (only those can be
  // that close to a short one), empty for the others. Such a duplicate's
  // record can have a distance above k (nearest_within_k unset); its pairs
  // carry their Hamming distance.
  // short_rule kSketch: short_sets is not read; `sketches` (below) give the
  // pairs instead (an LSH join over them, each candidate's SketchJaccard
  // >= short_jaccard; where the join routes short documents, its exact
  // sketch-space candidates add those with a member of few features).
  size_t short_features = 0;
  double short_jaccard = 0.5;
  ShortRule short_rule = ShortRule::kExact;
  std::span<const std::vector<uint64_t>> short_sets;
  // Verified pairs. With `sketches` (one per document, MakeJaccardSketch of
  // its feature set; empty documents: any), a pair within k is a
  // near-duplicate only when its estimated Jaccard (SketchJaccard) is at
  // least VerifyThreshold(options, smaller set's features): the Hamming
  // distance of few features is noisy, and templates of different content
  // (dividend notices of different companies, J ~ 0.3) fall within k.
  // Every pair, record and cluster then rests on verified pairs only
  // (records and pairs carry the estimate). Empty sketches or
  // verify_jaccard 0: off. Memory: the caller's 152 bytes per document
  // (release_sketches: freed before the records are built).
  // The thresholds were measured (doc/evaluation.md, "Verified pairs").
  std::span<const JaccardSketch> sketches;
  // The same sketches packed by what they hold (src/dedup/sketch_store.h;
  // internal: DedupJob::Run sets it, ~30 bytes a short document instead of
  // 152). When set, read instead of `sketches`; release_sketches applies
  // to it alike.
  const dedup_internal::PackedSketches* packed_sketches = nullptr;
  // When set, cluster mode (SimHash) calls it once when `sketches` will not
  // be read again: after the pairs are verified, the duplicates' estimates
  // taken and the pairs emitted, before the records are built, so that the
  // sketches' owner may free them (their memory is then not held with the
  // records'). Not called by stream mode or MinHashDedup. May be empty.
  std::function<void()> release_sketches;
  double verify_jaccard = 0.5;
  // Documents with fewer than verify_short_features features use
  // verify_short_jaccard (0: the rule is off).
  size_t verify_short_features = 0;
  double verify_short_jaccard = 0.5;
  // Fill DedupResult::pairs. Cluster mode: every pair within k (banded join:
  // every pair it found; in a bucket joined against representatives, see
  // band_join.h, fewer). Stream mode:
  // one pair per duplicate (its nearest kept document, the duplicate).
  // Memory: 24 bytes per pair, and cluster mode's pairs grow with the square
  // of a cluster's size (1M identical documents: 5 * 10^11 pairs). Prefer
  // pair_sink for large inputs.
  bool collect_pairs = false;
  // When set, receives the same pairs as collect_pairs would store, one at a
  // time, on the calling thread, sorted by (i, j), before Dedup returns.
  // Cluster mode holds only one document's pairs at a time; stream mode holds
  // one pair per duplicate. Independent of collect_pairs (both may be set).
  std::function<void(const DedupPair&)> pair_sink;
  // Progress for long runs (e.g. a progress bar), called on the calling
  // thread with (phase, done, total). Cluster mode: phases "index" (0 then 1
  // of 1), "join" (0 then 1 of 1; banded: "bands", b of L) and "cluster"
  // (documents); stream mode:
  // phase "stream", every 65,536 documents and at the end. May be empty.
  std::function<void(std::string_view phase, size_t done, size_t total)> progress;
};

struct DedupRecord {
  // Input position of the cluster's first member (smallest position), so
  // cluster ids do not depend on thread count or index layout.
  size_t cluster = 0;
  bool empty = false;
  bool duplicate = false;
  // The kept document this one is attributed to: for a duplicate, the kept
  // document of its cluster (cluster mode) or the closest kept document within
  // k (stream mode); for a kept document, itself.
  size_t nearest = 0;
  // Hamming distance to `nearest` (0 for kept documents). In cluster mode it
  // can exceed k (see the transitivity note above).
  int distance = 0;
  // Cluster mode: the closest kept document within k, if any (ties: the
  // smallest position), and its distance; equal to nearest/distance whenever
  // that is within k. (A banded join may miss the pair of a duplicate and
  // another cluster's kept document within k; then this is unset.) Stream mode: same as
  // nearest/distance for duplicates. Unset (and -1) for kept documents and for duplicates with no
  // kept document within k.
  std::optional<size_t> nearest_within_k;
  int distance_within_k = -1;
  // The estimated Jaccard to `nearest` (duplicates, with
  // DedupOptions::sketches); -1 otherwise.
  double jaccard = -1;
};

struct DedupSummary {
  size_t documents = 0;
  size_t empty = 0;
  size_t duplicates = 0;
  size_t kept = 0;                      // documents - duplicates
  size_t clusters = 0;                  // every document is in exactly one cluster
  size_t clusters_with_duplicates = 0;  // clusters of size >= 2
  size_t largest_cluster = 0;           // members of the largest cluster (0: no document)
};

// A summary whose largest cluster has more members than this deserves a
// warning (front ends print one): at the centre rule every member is within
// k of one document, yet so large a cluster is usually a template or a
// boilerplate the fingerprints do not see past, worth a look.
inline constexpr size_t kLargeClusterWarning = 1000;

// What the join did (cluster mode; stream mode: `distinct` counts the
// non-empty documents, `tested` includes the exact comparisons within a batch). Pairs are counted
// between distinct fingerprints (identical ones are collapsed first).
struct DedupJoinReport {
  bool banded = false;
  // The band layout (r, L, seed) and its guarantee; meaningful when banded.
  SimHashBands bands;
  size_t distinct = 0;    // distinct non-empty fingerprints joined
  size_t candidates = 0;  // banded: pairs sharing a band key (per band)
  size_t tested = 0;      // banded: exact distance tests
  size_t confirmed = 0;   // pairs of distinct fingerprints within k
  size_t large_buckets = 0;
  // Pairs added by the short-document rule (DedupOptions::short_features)
  // that the join did not find within k.
  size_t short_pairs = 0;
  // Pairs of distinct fingerprints within k whose estimated Jaccard was
  // below the verification threshold (DedupOptions::sketches), dropped.
  size_t rejected = 0;
  // The routed join (banded plans with verified pairs): documents with at
  // most 16 non-empty sketch slots are joined exactly in the sketch space
  // (every pair within k that can pass verification), the others by the
  // bands; the counts above are the bands' (doc/banding.md, "Short records").
  struct ShortJoin {
    bool used = false;
    size_t short_groups = 0;   // distinct fingerprints joined in the sketch space only
    size_t medium_groups = 0;  // in both joins (a pair with a short one can pass)
    size_t keys = 0;           // (token pair, fingerprint) keys
    size_t candidates = 0;     // pairs looked at in the buckets, once per bucket
    size_t tested = 0;         // Hamming tests
    size_t confirmed = 0;      // distinct pairs within k that can pass verification
    size_t largest_bucket = 0;
  } short_join;
  // The cost model's one-thread estimates that chose the join.
  double estimated_exact_seconds = 0;
  double estimated_banded_seconds = 0;
  // Wall time per phase.
  double group_seconds = 0;  // collapsing identical fingerprints
  double join_seconds = 0;   // the self-join (index build included)
  double cluster_seconds = 0;
};

struct DedupResult {
  std::vector<DedupRecord> records;  // one per input document, in input order
  std::vector<DedupPair> pairs;      // sorted by (i, j); see collect_pairs
  DedupSummary summary;
  DedupJoinReport join;  // cluster mode
};

// The verification threshold of a pair whose smaller feature set has
// `features` elements (DedupOptions::verify_jaccard and the short rule).
double VerifyThreshold(const DedupOptions& options, size_t features);
// True when the options verify pairs (sketches given, threshold > 0).
bool Verifying(const DedupOptions& options);

// InvalidArgument when k is out of range, the non-empty fingerprints differ in
// width, recall is not in (0, 1), only one of band_bits and bands is set, or stream mode is asked
// for a policy other than kFirst.
Result<DedupResult> Dedup(std::span<const DedupDocument> documents, const DedupOptions& options);

// The clusters of two or more documents of a DedupResult with their members,
// as compressed rows: two words per document whatever the cluster sizes.
// Cluster i (in increasing id order) has id ids[i] (DedupRecord::cluster),
// keeps kept[i], and its members (input positions, increasing) are
// members[offsets[i] .. offsets[i + 1]).
struct ClusterRows {
  std::vector<size_t> ids;
  // The member that is not a duplicate (if several: the last; if none: the
  // first member).
  std::vector<size_t> kept;
  std::vector<size_t> offsets;  // size() + 1 entries (one, 0, when empty)
  std::vector<size_t> members;

  size_t size() const { return ids.size(); }
  // REQUIRES: i < size()
  std::span<const size_t> Members(size_t i) const {
    return std::span<const size_t>(members).subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

// Groups result.records by cluster. REQUIRES: every record's cluster is a
// position < result.records.size() (as Dedup returns them).
ClusterRows ClusterMembers(const DedupResult& result);

}  // namespace neardup

#endif  // NEARDUP_DEDUP_H_
