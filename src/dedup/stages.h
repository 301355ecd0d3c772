// Copyright 2026 The neardup Authors.
//
// Cluster mode of Dedup (dedup.h) and MinHashDedup (minhash_dedup.h) cut into
// its stages, so that a run over several processes (neardup-mpi) can split
// the join by band ranges and still give what one process gives:
//
//   auto plan = dedup_internal::PlanSimHash(docs, options);     // every process
//   std::vector<IdPair> pairs;                                  // group numbers
//   dedup_internal::SimHashJoinBands(*plan, options, b0, b1, &pairs, &stats);
//   ... gather the pairs of every band range ...
//   dedup_internal::MergePairs(&pairs);                         // sorted, once each
//   dedup_internal::FinishSimHash(docs, *plan, pairs, options, &result);
//
// A band's pairs depend only on that band (band_join.h), so the merged pairs
// of any partition of [0, bands) into ranges equal the pairs of one
// BandJoin over all bands; Dedup and MinHashDedup are these stages with one
// range.
//
// Internal to the library (src/, not installed). Thread safety: pure
// functions; a plan is immutable once built.

#ifndef NEARDUP_DEDUP_STAGES_H_
#define NEARDUP_DEDUP_STAGES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "dedup/cluster.h"
#include "dedup/documents.h"
#include "dedup/sketch_store.h"
#include "neardup/band_join.h"
#include "neardup/dedup.h"
#include "neardup/index.h"
#include "neardup/minhash.h"
#include "neardup/status.h"

namespace neardup::dedup_internal {

// SimHash cluster mode: identical fingerprints collapsed into groups, and the
// join chosen for the distinct ones (report.banded, report.bands).
struct SimHashPlan {
  Groups groups;
  // Group g's fingerprint as (hi, lo).
  std::vector<std::pair<uint64_t, uint64_t>> words;
  int bits = 0;
  DedupJoinReport report;
};

// Validates as Dedup does (cluster mode), groups and chooses the join.
// Deterministic: every process that plans the same documents and options
// gets the same plan.
Result<SimHashPlan> PlanSimHash(DocumentView docs, const DedupOptions& options);

// The same plan from the distinct fingerprints alone (words, in increasing
// (hi, lo) order: GroupIdentical's group order) of `bits` (0 when there is
// no non-empty document; anything but 0, 64 and 128: the documents mix
// widths) where no process holds every document (neardup-mpi groups them
// over its ranks). The options are checked as PlanSimHash checks them; the
// groups are left empty. Called with no words it only checks the options.
Result<SimHashPlan> PlanSimHashDistinct(std::vector<std::pair<uint64_t, uint64_t>> words, int bits,
                                        const DedupOptions& options);

// The pairs (i, j), i != j, of the n distinct fingerprints whose distances
// the band layout's cost model samples (a fixed seed: up to 4,096 pairs).
std::vector<std::pair<size_t, size_t>> SamplePairs(size_t n);

// The same plan from the count n of distinct fingerprints and the
// fingerprints of the groups SamplePairs(n) names (sample: (group, (hi,
// lo)), increasing group, each once; others may be there), where no process
// holds them all (neardup-mpi's join split by band keys). The words are left
// empty: SimHashJoinBands and SimHashJoinExact need them.
Result<SimHashPlan> PlanSimHashSampled(
    size_t n, std::span<const std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample, int bits,
    const DedupOptions& options);

// The pairs (of group numbers, a < b) confirmed in bands [begin, end),
// sorted by (a, b), each once. REQUIRES: plan.report.banded,
// 0 <= begin <= end <= plan.report.bands.bands.
Status SimHashJoinBands(const SimHashPlan& plan, const DedupOptions& options, int begin, int end,
                        std::vector<IdPair>* pairs, BandJoinStats* stats);

// SimHashBandJoin (band_join.h) over the fingerprints as (hi, lo) words
// (64-bit: hi 0), as a plan holds them, without a copy of its own.
Status SimHashBandJoinWords(std::span<const std::pair<uint64_t, uint64_t>> words, int k,
                            const SimHashBands& layout, const BandJoinOptions& options,
                            std::vector<IdPair>* pairs, BandJoinStats* stats, int first_band = 0,
                            int end_band = -1);

// Every pair of groups within k (the permuted-table self-join).
// REQUIRES: !plan.report.banded.
// Components only (no pairs asked for, components rule): a spanning forest
// of them, and `confirmed` (when not null) counts every pair.
Status SimHashJoinExact(const SimHashPlan& plan, const DedupOptions& options,
                        std::vector<IdPair>* pairs, size_t* confirmed = nullptr);

// Clusters, keep policy, records, summary and document pairs (pair_sink) from
// the merged group pairs. result->join is left as the caller filled it.
void FinishSimHash(DocumentView docs, const SimHashPlan& plan, std::span<const IdPair> group_pairs,
                   const DedupOptions& options, DedupResult* result);
// The same, verifying *group_pairs in place (the span form verifies a copy):
// on return they are the pairs that passed.
void FinishSimHash(DocumentView docs, const SimHashPlan& plan, std::vector<IdPair>* group_pairs,
                   const DedupOptions& options, DedupResult* result);
// The same, taking the pairs: verified in place and freed as soon as the
// clusters no longer read them (the centre rule without document pairs:
// once the groups' adjacency is built), before the clusters' own arrays.
void FinishSimHash(DocumentView docs, const SimHashPlan& plan, std::vector<IdPair>&& group_pairs,
                   const DedupOptions& options, DedupResult* result);

// MinHash: documents with identical signatures (exact: sets) collapsed.
struct MinHashPlan {
  Groups groups;
  // Equal components a pair needs (estimate): ceil(threshold * num_perm).
  size_t need = 0;
};

// Validates as MinHashDedup does and groups.
Result<MinHashPlan> PlanMinHash(std::span<const DedupDocument> docs,
                                std::span<const uint32_t> signatures,
                                std::span<const std::vector<uint64_t>> sets,
                                const MinHashOptions& minhash, const DedupOptions& options);

// A signature's identity key (what PlanMinHash groups by, estimate only): a
// process that holds the signatures sends these 16 bytes instead.
std::pair<uint64_t, uint64_t> MinHashIdentity(std::span<const uint32_t> signature);
// PlanMinHash from every document's MinHashIdentity (identities[i], any value
// for an empty document), without the signatures. REQUIRES: !minhash.exact.
Result<MinHashPlan> PlanMinHashByIdentity(std::span<const DedupDocument> docs,
                                          std::span<const std::pair<uint64_t, uint64_t>> identities,
                                          const MinHashOptions& minhash,
                                          const DedupOptions& options);

// The bucket of band key `key` in MinHashJoinBands over n groups: BandJoin's
// bucket (the top 32 + partition bits of the key's hash; distinct keys that
// agree there share it, and their pairs are tested as well). Groups with
// equal buckets of a band are its candidates, in increasing group order.
uint64_t MinHashBandBucket(uint64_t key, size_t n);

// The pairs of groups confirmed in bands [begin, end) of minhash.bands.
Status MinHashJoinBands(const MinHashPlan& plan, std::span<const uint32_t> signatures,
                        std::span<const std::vector<uint64_t>> sets, const MinHashOptions& minhash,
                        const DedupOptions& options, int begin, int end, std::vector<IdPair>* pairs,
                        BandJoinStats* stats);

void FinishMinHash(std::span<const DedupDocument> docs, const MinHashPlan& plan,
                   std::span<const uint32_t> signatures,
                   std::span<const std::vector<uint64_t>> sets, const MinHashOptions& minhash,
                   std::span<const IdPair> group_pairs, const DedupOptions& options,
                   DedupResult* result);

// The same (estimate only) where the signatures are not all at hand:
// signature(i) is document i's signature, asked for the documents of
// clusters of two or more only (a duplicate and its cluster's kept document).
using SignatureOf = std::function<std::span<const uint32_t>(size_t position)>;
void FinishMinHash(std::span<const DedupDocument> docs, const MinHashPlan& plan,
                   const SignatureOf& signature, const MinHashOptions& minhash,
                   std::span<const IdPair> group_pairs, const DedupOptions& options,
                   DedupResult* result);

// Pairs of several band ranges, concatenated: sorted by (a, b), duplicates
// (a pair found in two ranges) removed. A pair's distance is the same in
// every range (the method's test), so which copy stays does not matter.
void MergePairs(std::vector<IdPair>* pairs);

// Verified pairs (DedupOptions::sketches): whether documents i and j (input
// positions, both non-empty) pass the Jaccard check; true when not verifying.
bool PassesVerification(const DedupOptions& options, size_t i, size_t j);
// Drops the pairs of groups whose first members fail it; returns how many.
size_t VerifyGroupPairs(const Groups& groups, const DedupOptions& options,
                        std::vector<IdPair>* pairs);

// True when only the connected components of the pairs are needed (no pair
// output, components rule): the joins then keep a spanning forest.
bool ComponentsOnly(const DedupOptions& options);

// The short-document rule (DedupOptions::short_features) on groups: the
// pairs of ShortDocumentPairs(sets, short_features, short_jaccard) whose two
// documents (entries of `sets`) are in different groups and more than k apart
// (within k the join has them), as pairs of groups with their Hamming
// distance, added to *group_pairs and merged (MergePairs) when any was
// added. group(e): entry e's group, UINT64_MAX for an empty document (never
// paired); fingerprint(e): its fingerprint. Returns how many pairs of groups
// were added (DedupJoinReport::short_pairs). Every process that passes the
// same entries, in any order, adds the same pairs.
Result<size_t> AddShortRulePairs(std::span<const std::vector<uint64_t>> sets,
                                 const std::function<uint64_t(size_t)>& group,
                                 const std::function<Fingerprint(size_t)>& fingerprint,
                                 const DedupOptions& options, std::vector<IdPair>* group_pairs);

// The sketch short rule (ShortRule::kSketch): whether a document whose
// verification sketch is `sketch` takes part (at least one feature and fewer
// than short_features / short_jaccard; on long texts none). One rule for one
// process (dedup.cc) and for the ranks (dedup_over_ranks.h).
bool TakesPartInShortSketchRule(const DedupOptions& options, const JaccardSketch& sketch);
// The same from the sketch's feature count (JaccardSketch::features).
bool TakesPartInShortSketchRule(const DedupOptions& options, uint32_t features);

// The sketch short rule on groups: ShortSketchPairs over sketches[who[i]]
// (one entry per group, groups[i] its group, ascending), the pairs whose two
// entries are more than k apart (within k the join has them) as pairs of
// groups with their Hamming distance (fingerprint(i): entry who[i]'s),
// added to *group_pairs after `routed` (the routed join's pairs of the rule,
// SimHashJoinRouted's beyond_k) and merged (MergePairs) when any was added.
// Returns how many pairs of groups were added (DedupJoinReport::short_pairs).
Result<size_t> AddShortSketchRulePairs(SketchView sketches, std::span<const size_t> who,
                                       std::span<const uint64_t> groups,
                                       const std::function<Fingerprint(size_t)>& fingerprint,
                                       std::span<const IdPair> routed, const DedupOptions& options,
                                       std::vector<IdPair>* group_pairs);

// Adds the counts of `s` to *report (candidates, tested, large buckets).
void AddBandStats(const BandJoinStats& s, DedupJoinReport* report);

}  // namespace neardup::dedup_internal

#endif  // NEARDUP_DEDUP_STAGES_H_
