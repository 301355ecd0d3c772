// Copyright 2026 The neardup Authors.
//
// A dedup job's cluster mode (dedup_job.h) cut into the stages that a run
// over several processes (neardup-mpi, doc/distributed.md) spreads over its
// ranks, with one interface for every method: the library decides, by the
// job's method, what a document's identity is, how the join is split and
// how a pair is tested, so that the distributed program has no SimHash
// versus MinHash branch of its own and gives what one process gives.
//
//   DocumentKey key = IdentityKeyOf(job, docs, signatures);   // group by it
//   ... number the groups over the processes (GroupByKey's numbering) ...
//   auto plan = DedupJoinPlan::CreateSampled(job, options, groups, sample, bits);
//   switch (plan->split()) {
//     kBandRanges: plan->JoinBands(options, begin, end, &pairs, &stats)
//                  for band ranges spread over the processes (Create: every
//                  key on every process);
//     kBandKeys:   BandBucket of each group's signature, buckets exchanged,
//                  VerifyBucket where a bucket lands;
//     kNone:       JoinAll on one process.
//   }
//   MergePairs(&pairs);   ... gathered on one process ...
//   AddShortRulePairs(options, sets, groups, fingerprints, &pairs);  // --short-features
//   (--short-rule sketch: AddShortSketchRulePairs(options, sketches, groups, ...))
//   plan->Finish(docs, &groups, &pairs, signature_of, sketches, options, &result);
//
// A band's pairs depend only on that band (band_join.h), so the merged pairs
// of any partition of the bands equal those of one join over all bands.
//
// Thread safety: a plan is immutable after Create (but ReleaseKeys); the
// free functions are pure.

#ifndef NEARDUP_DEDUP_OVER_RANKS_H_
#define NEARDUP_DEDUP_OVER_RANKS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "neardup/band_join.h"
#include "neardup/dedup.h"
#include "neardup/dedup_groups.h"
#include "neardup/dedup_job.h"
#include "neardup/index.h"
#include "neardup/status.h"

namespace neardup {

// A 128-bit identity key (hi, lo) of the non-empty document at a position:
// documents with equal keys are identical for the job (one group).
using DocumentKey = std::function<std::pair<uint64_t, uint64_t>(size_t position)>;

// What the job groups identical documents by (as `neardup dedup` does): the
// fingerprint (SimHash) or the signature's identity (MinHash). docs and
// signatures (SignatureWords(job) words per document) must outlive the key.
DocumentKey IdentityKeyOf(const DedupJob& job, std::span<const DedupDocument> docs,
                          std::span<const uint32_t> signatures);

// The words of a document's signature that the join and the cluster stage
// read (DedupCorpus::signatures); 0 when the job has none (SimHash).
size_t SignatureWords(const DedupJob& job);

// Whether the join reads the groups' identity keys (SimHash: the keys are
// the fingerprints the join compares); else it needs their count only
// (MinHash: the join reads the signatures).
bool PlanNeedsDistinctKeys(const DedupJob& job);

// The groups (of `groups`, increasing, each once) whose keys
// DedupJoinPlan::CreateSampled reads when PlanNeedsDistinctKeys: those whose
// distances the band layout's cost model samples (at most 8,192); none
// otherwise.
std::vector<uint64_t> PlanSampleGroups(const DedupJob& job, uint64_t groups);

// The words of a group's signature in the band-key join (BandBucket,
// VerifyBucket): SignatureWords(job) when the method has signatures, else 4
// (the group's identity key as AppendKeySignature writes it).
size_t JoinSignatureWords(const DedupJob& job);
// A group's identity key (hi, lo) as its join signature (4 words), appended
// to *out: the signature when SignatureWords(job) is 0 (SimHash: the key is
// the fingerprint).
void AppendKeySignature(std::pair<uint64_t, uint64_t> key, std::vector<uint32_t>* out);

// Pairs of several joins concatenated: sorted by (a, b), each once (a pair's
// distance is the same wherever it was found).
void MergePairs(std::vector<IdPair>* pairs);

// The pairs (in their order) that join two components of the pairs before
// them: a spanning forest, sorted by (a, b). Memory: O(pairs), not O(groups).
std::vector<IdPair> SpanningForest(const std::vector<IdPair>& pairs);

// Every document pair, in (i, j) order, from the groups and the pairs of
// groups (each once): i's pairs are the later members of its own group
// (distance 0) and the later members of every group paired with its own.
void EmitDocumentPairs(const DedupGroups& groups, std::span<const IdPair> group_pairs,
                       const std::function<void(const DedupPair&)>& sink);

// True when only the connected components of the pairs are needed (no pair
// output, the components rule): a join may then keep a spanning forest.
bool ComponentsOnly(const DedupOptions& options);

// The short-document rule (DedupOptions::short_features) where the
// documents are spread over processes: its exact Jaccard join runs on one
// process, over the documents that may take part (those with a non-empty
// DedupCorpus::short_sets entry: fewer than short_features / short_jaccard
// features), gathered there in any order: entry e's set sets[e], its group
// groups[e] (numbered as the join's; UINT64_MAX: an empty document) and
// fingerprints[e]. Adds the rule's pairs of groups (in different groups,
// more than k apart, with their distance) to *group_pairs, the join's
// merged pairs (or spanning forest), and merges them; returns how many were
// added (DedupJoinReport::short_pairs). The pairs are those neardup dedup's
// one process adds. Memory: the sets (8 bytes an element) and the join's
// (JaccardJoin: 4 bytes an element and its index). The exact rule only:
// InvalidArgument for ShortRule::kSketch (AddShortSketchRulePairs).
Result<size_t> AddShortRulePairs(const DedupOptions& options,
                                 std::span<const std::vector<uint64_t>> sets,
                                 std::span<const uint64_t> groups,
                                 std::span<const Fingerprint> fingerprints,
                                 std::vector<IdPair>* group_pairs);

// Whether a group whose first member has this sketch takes part in the
// sketch short rule (ShortRule::kSketch): at least one feature and fewer
// than short_features / short_jaccard (false when the rule is off). What a
// process sends for AddShortSketchRulePairs.
bool TakesPartInShortSketchRule(const DedupOptions& options, const JaccardSketch& sketch);

// The sketch short rule (DedupOptions::short_rule ShortRule::kSketch) where
// the documents are spread over processes: the same LSH join over the
// sketches (ShortSketchPairs, dedup/short_join.h) that neardup dedup's one
// process runs, on one process, over one entry per group that may take
// part, gathered there in any order: entry e the sketch of its group's
// first member (the document of the lowest position: one process joins the
// groups' first members) sketches[e], its group groups[e] (numbered as the
// join's) and fingerprints[e]; entries that do not take part
// (TakesPartInShortSketchRule) are skipped. Adds the rule's pairs of groups
// more than k apart (within k they are the join's), with their distance, to
// *group_pairs, the join's merged pairs (or spanning forest), and merges
// them; returns how many were added (DedupJoinReport::short_pairs). The
// pairs are those neardup dedup's one process adds, but where its join is
// the routed one (banded, verified, short groups: RouteShortDocuments in
// dedup/short_join.h), which also gives the rule's pairs among its own
// candidates; a distributed join is never routed. Memory: the sketches (152
// bytes, 16 + 16 with group and fingerprint, an entry) and the join's
// (ShortSketchPairs: a 48-byte row an entry and the keys of 8 bands).
// InvalidArgument when the options' rule is not the sketch rule, when a
// group has two entries, or when the sizes differ.
Result<size_t> AddShortSketchRulePairs(const DedupOptions& options,
                                       std::span<const JaccardSketch> sketches,
                                       std::span<const uint64_t> groups,
                                       std::span<const Fingerprint> fingerprints,
                                       std::vector<IdPair>* group_pairs);

class DedupJoinPlan {
 public:
  // How the join is split over processes.
  enum class Split {
    kNone,        // not split: JoinAll on one process (or no pairs to find)
    kBandRanges,  // every process holds the distinct keys: JoinBands on ranges of bands
    kBandKeys,    // the keys or signatures stay where they are: BandBucket / VerifyBucket
  };

  // The plan of `job`'s cluster-mode join over `groups` distinct documents:
  // `keys` (when PlanNeedsDistinctKeys, else ignored) the distinct keys in
  // group order; `bits` the fingerprints' width (0 when there is no
  // non-empty document; anything but 0, 64 and 128: the documents mix
  // widths). The options are checked as neardup dedup checks them, the same
  // way on every process; called with no groups it only checks them.
  // Deterministic: every process gets the same plan.
  static Result<std::unique_ptr<DedupJoinPlan>> Create(
      const DedupJob& job, const DedupOptions& options, uint64_t groups,
      std::vector<std::pair<uint64_t, uint64_t>> keys, int bits);
  // The same plan where no process holds every key: `sample` the keys
  // (group, key) of at least PlanSampleGroups(job, groups), increasing
  // group. A banded join is then split by band keys (kBandKeys, every
  // method: the groups' keys or signatures stay where they are); kNone when
  // the method's choice is one process's join (SimHash's exact join, which
  // needs SetDistinctKeys on the process that runs JoinAll).
  static Result<std::unique_ptr<DedupJoinPlan>> CreateSampled(
      const DedupJob& job, const DedupOptions& options, uint64_t groups,
      std::span<const std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample, int bits);
  // kNone after CreateSampled, PlanNeedsDistinctKeys: every distinct key,
  // in group order, for JoinAll on this process.
  void SetDistinctKeys(std::vector<std::pair<uint64_t, uint64_t>> keys);
  ~DedupJoinPlan();
  DedupJoinPlan(const DedupJoinPlan&) = delete;
  DedupJoinPlan& operator=(const DedupJoinPlan&) = delete;

  Split split() const;
  // The bands of a split join (kBandRanges, kBandKeys); 0 for kNone.
  int bands() const;
  // The join's report before any pair is found (banded, the band layout, the
  // distinct documents); the caller adds the counts and seconds.
  DedupJoinReport report() const;

  // kBandRanges: the pairs (of group numbers, a < b) confirmed in bands
  // [begin, end), sorted by (a, b), each once.
  Status JoinBands(const DedupOptions& options, int begin, int end, std::vector<IdPair>* pairs,
                   BandJoinStats* stats) const;
  // kNone: every pair of groups (components only: a spanning forest, and
  // `confirmed`, when not null, counts every pair).
  Status JoinAll(const DedupOptions& options, std::vector<IdPair>* pairs,
                 size_t* confirmed = nullptr) const;

  // kBandKeys: the bucket of band `band` of a group whose signature (first
  // member's, JoinSignatureWords words) is `signature`. Groups with equal
  // buckets of a band are that band's candidates, as in the single
  // process's band join (SimHash: the band's sampled bits when they are at
  // most 32, else the top 32 + partition bits of their hash; MinHash: the
  // top bits of the band key's hash).
  uint64_t BandBucket(std::span<const uint32_t> signature, int band) const;
  // The pairs one bucket confirms (members: its groups, increasing;
  // signature(g): group g's signature), as the single process's band join
  // confirms them (VerifyBandBucket), appended to *pairs.
  void VerifyBucket(std::span<const uint64_t> members,
                    const std::function<std::span<const uint32_t>(uint64_t group)>& signature,
                    const BandJoinOptions& options, std::vector<IdPair>* pairs,
                    BandJoinStats* stats) const;

  // Frees what only the join reads (the distinct keys).
  void ReleaseKeys();

  // The cluster stage on one process: clusters, keep policy, records,
  // summary and (DedupOptions::pair_sink) document pairs of `docs`, grouped
  // by *groups, from the merged pairs of groups (numbered as *groups).
  // Verified pairs (SimHash with DedupOptions::verify_jaccard): `sketches`
  // are docs' sketches, and the pairs that fail are dropped from
  // *group_pairs. signature(g): group g's signature (SignatureWords words;
  // asked for groups of clusters of two or more only; it must not read
  // *groups, which the plan holds during the call). *groups is left as it
  // was. result->join is left as the caller filled it.
  using GroupSignature = std::function<std::span<const uint32_t>(size_t group)>;
  void Finish(std::span<const DedupDocument> docs, DedupGroups* groups,
              std::vector<IdPair>* group_pairs, const GroupSignature& signature,
              std::span<const JaccardSketch> sketches, const DedupOptions& options,
              DedupResult* result) const;

 private:
  struct Impl;
  explicit DedupJoinPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neardup

#endif  // NEARDUP_DEDUP_OVER_RANKS_H_
