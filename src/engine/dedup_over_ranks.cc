// Copyright 2026 The neardup Authors.

#include "neardup/dedup_over_ranks.h"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "dedup/cluster.h"
#include "dedup/short_join.h"
#include "dedup/stages.h"
#include "neardup/band_bucket.h"
#include "neardup/minhash.h"
#include "neardup/minhash_dedup.h"
#include "util/random.h"
#include "util/union_find.h"

namespace neardup {

DocumentKey IdentityKeyOf(const DedupJob& job, std::span<const DedupDocument> docs,
                          std::span<const uint32_t> signatures) {
  return dedup_internal::DocumentIdentity(docs, signatures, SignatureWords(job));
}

size_t SignatureWords(const DedupJob& job) {
  return job.method().is_minhash() ? static_cast<size_t>(job.method().minhash.num_perm) : 0;
}

bool PlanNeedsDistinctKeys(const DedupJob& job) { return !job.method().is_minhash(); }

std::vector<uint64_t> PlanSampleGroups(const DedupJob& job, uint64_t groups) {
  std::vector<uint64_t> out;
  if (!PlanNeedsDistinctKeys(job)) return out;
  for (const auto& [i, j] : dedup_internal::SamplePairs(static_cast<size_t>(groups))) {
    out.insert(out.end(), {i, j});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

size_t JoinSignatureWords(const DedupJob& job) {
  const size_t words = SignatureWords(job);
  return words > 0 ? words : 4;
}

void AppendKeySignature(std::pair<uint64_t, uint64_t> key, std::vector<uint32_t>* out) {
  out->insert(out->end(),
              {static_cast<uint32_t>(key.first >> 32), static_cast<uint32_t>(key.first),
               static_cast<uint32_t>(key.second >> 32), static_cast<uint32_t>(key.second)});
}

namespace {

// A join signature (AppendKeySignature) back as (hi, lo).
std::pair<uint64_t, uint64_t> KeyOfSignature(std::span<const uint32_t> s) {
  return {uint64_t{s[0]} << 32 | s[1], uint64_t{s[2]} << 32 | s[3]};
}

// The bits of `value` at the positions of `mask`, packed into the low bits
// in order (pext).
uint64_t PackBits(uint64_t value, uint64_t mask) {
  uint64_t out = 0;
  int at = 0;
  for (; mask != 0; mask &= mask - 1) {
    out |= ((value >> std::countr_zero(mask)) & 1) << at++;
  }
  return out;
}

// The options of the join proper: the short-document rule's pairs come
// from its own join (AddShortRulePairs), over the documents that may take
// part, not from the plan's groups.
DedupOptions WithoutShortRule(const DedupOptions& options) {
  DedupOptions o = options;
  o.short_features = 0;
  o.short_sets = {};
  return o;
}

}  // namespace

void MergePairs(std::vector<IdPair>* pairs) { dedup_internal::MergePairs(pairs); }

std::vector<IdPair> SpanningForest(const std::vector<IdPair>& pairs) {
  // The groups the pairs touch, numbered densely.
  std::vector<uint64_t> nodes;
  nodes.reserve(2 * pairs.size());
  for (const IdPair& p : pairs) {
    nodes.push_back(p.a);
    nodes.push_back(p.b);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const auto dense = [&nodes](uint64_t g) {
    return static_cast<size_t>(std::lower_bound(nodes.begin(), nodes.end(), g) - nodes.begin());
  };
  UnionFind uf(nodes.size());
  std::vector<IdPair> forest;
  for (const IdPair& p : pairs) {
    if (uf.Union(dense(p.a), dense(p.b))) forest.push_back(p);
  }
  dedup_internal::MergePairs(&forest);
  return forest;
}

void EmitDocumentPairs(const DedupGroups& groups, std::span<const IdPair> group_pairs,
                       const std::function<void(const DedupPair&)>& sink) {
  dedup_internal::EmitDocumentPairs(groups, group_pairs, sink);
}

bool ComponentsOnly(const DedupOptions& options) { return dedup_internal::ComponentsOnly(options); }

Result<size_t> AddShortRulePairs(const DedupOptions& options,
                                 std::span<const std::vector<uint64_t>> sets,
                                 std::span<const uint64_t> groups,
                                 std::span<const Fingerprint> fingerprints,
                                 std::vector<IdPair>* group_pairs) {
  if (groups.size() != sets.size() || fingerprints.size() != sets.size()) {
    return Status::InvalidArgument("short-document rule: one group and fingerprint per set");
  }
  if (options.short_features > 0 && options.short_rule == ShortRule::kSketch) {
    // The sets are the exact rule's: the sketch rule's entries are sketches
    // (AddShortSketchRulePairs).
    return Status::InvalidArgument(
        "the sketch short rule (--short-rule sketch) joins sketches, not feature sets");
  }
  return dedup_internal::AddShortRulePairs(
      sets, [groups](size_t e) { return groups[e]; },
      [fingerprints](size_t e) { return fingerprints[e]; }, options, group_pairs);
}

bool TakesPartInShortSketchRule(const DedupOptions& options, const JaccardSketch& sketch) {
  return dedup_internal::TakesPartInShortSketchRule(options, sketch);
}

Result<size_t> AddShortSketchRulePairs(const DedupOptions& options,
                                       std::span<const JaccardSketch> sketches,
                                       std::span<const uint64_t> groups,
                                       std::span<const Fingerprint> fingerprints,
                                       std::vector<IdPair>* group_pairs) {
  if (groups.size() != sketches.size() || fingerprints.size() != sketches.size()) {
    return Status::InvalidArgument("sketch short rule: one group and fingerprint per sketch");
  }
  if (options.short_features == 0 || options.short_rule != ShortRule::kSketch) {
    return Status::InvalidArgument("sketch short rule: the options ask for another rule");
  }
  // The entries in group order: the order of one process's groups, which
  // it gives the rule (dedup.cc, AddShortSketchPairs).
  std::vector<size_t> who;
  who.reserve(sketches.size());
  for (size_t e = 0; e < sketches.size(); ++e) {
    if (TakesPartInShortSketchRule(options, sketches[e])) who.push_back(e);
  }
  std::sort(who.begin(), who.end(), [groups](size_t x, size_t y) { return groups[x] < groups[y]; });
  std::vector<uint64_t> who_groups(who.size());
  for (size_t i = 0; i < who.size(); ++i) {
    who_groups[i] = groups[who[i]];
    if (i > 0 && who_groups[i - 1] == who_groups[i]) {
      return Status::InvalidArgument("sketch short rule: group " + std::to_string(who_groups[i]) +
                                     " has two entries (one per group: its first member's)");
    }
  }
  return dedup_internal::AddShortSketchRulePairs(
      sketches, who, who_groups, [&](size_t i) { return fingerprints[who[i]]; }, {}, options,
      group_pairs);
}

// One of the two plans, by the job's method.
struct DedupJoinPlan::Impl {
  bool minhash = false;
  MinHashOptions mh;
  dedup_internal::SimHashPlan simhash;       // SimHash: groups empty (no process holds them all)
  dedup_internal::MinHashPlan minhash_plan;  // MinHash: `need` (groups empty)
  uint64_t groups = 0;
  int bands = 0;  // 0: not split
  // SimHash split by band keys (CreateSampled): the bands' masks (hi, lo).
  bool band_keys = false;
  int simhash_k = 0;
  std::vector<std::pair<uint64_t, uint64_t>> masks;
};

DedupJoinPlan::DedupJoinPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DedupJoinPlan::~DedupJoinPlan() = default;

Result<std::unique_ptr<DedupJoinPlan>> DedupJoinPlan::Create(
    const DedupJob& job, const DedupOptions& options, uint64_t groups,
    std::vector<std::pair<uint64_t, uint64_t>> keys, int bits) {
  auto impl = std::make_unique<Impl>();
  impl->minhash = job.method().is_minhash();
  impl->mh = job.method().minhash;
  impl->groups = groups;
  if (impl->minhash) {
    NEARDUP_ASSIGN_OR_RETURN(impl->minhash_plan, dedup_internal::PlanMinHashByIdentity(
                                                     {}, {}, impl->mh, WithoutShortRule(options)));
    impl->bands = groups >= 2 ? impl->mh.bands : 0;
  } else {
    NEARDUP_ASSIGN_OR_RETURN(impl->simhash, dedup_internal::PlanSimHashDistinct(
                                                std::move(keys), bits, WithoutShortRule(options)));
    impl->bands = impl->simhash.report.banded ? impl->simhash.report.bands.bands : 0;
  }
  return std::unique_ptr<DedupJoinPlan>(new DedupJoinPlan(std::move(impl)));
}

Result<std::unique_ptr<DedupJoinPlan>> DedupJoinPlan::CreateSampled(
    const DedupJob& job, const DedupOptions& options, uint64_t groups,
    std::span<const std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample, int bits) {
  if (job.method().is_minhash()) return Create(job, options, groups, {}, bits);
  auto impl = std::make_unique<Impl>();
  impl->groups = groups;
  NEARDUP_ASSIGN_OR_RETURN(
      impl->simhash, dedup_internal::PlanSimHashSampled(static_cast<size_t>(groups), sample, bits,
                                                        WithoutShortRule(options)));
  if (impl->simhash.report.banded) {
    impl->bands = impl->simhash.report.bands.bands;
    impl->band_keys = true;
    impl->simhash_k = options.k;
    impl->masks = SimHashBandMasks(impl->simhash.report.bands);
  }
  return std::unique_ptr<DedupJoinPlan>(new DedupJoinPlan(std::move(impl)));
}

void DedupJoinPlan::SetDistinctKeys(std::vector<std::pair<uint64_t, uint64_t>> keys) {
  impl_->simhash.words = std::move(keys);
}

DedupJoinPlan::Split DedupJoinPlan::split() const {
  if (impl_->bands == 0) return Split::kNone;
  return impl_->minhash || impl_->band_keys ? Split::kBandKeys : Split::kBandRanges;
}

int DedupJoinPlan::bands() const { return impl_->bands; }

DedupJoinReport DedupJoinPlan::report() const {
  if (!impl_->minhash) return impl_->simhash.report;
  DedupJoinReport report;
  report.banded = true;
  report.distinct = impl_->groups;
  return report;
}

Status DedupJoinPlan::JoinBands(const DedupOptions& options, int begin, int end,
                                std::vector<IdPair>* pairs, BandJoinStats* stats) const {
  if (split() != Split::kBandRanges) {
    return Status::InvalidArgument("JoinBands: the join is not split by band ranges");
  }
  return dedup_internal::SimHashJoinBands(impl_->simhash, options, begin, end, pairs, stats);
}

Status DedupJoinPlan::JoinAll(const DedupOptions& options, std::vector<IdPair>* pairs,
                              size_t* confirmed) const {
  if (split() != Split::kNone) {
    return Status::InvalidArgument("JoinAll: the join is split over processes");
  }
  // MinHash with fewer than two distinct signatures: no pairs.
  if (impl_->minhash) return Status::OK();
  return dedup_internal::SimHashJoinExact(impl_->simhash, options, pairs, confirmed);
}

uint64_t DedupJoinPlan::BandBucket(std::span<const uint32_t> signature, int band) const {
  if (impl_->minhash) {
    return dedup_internal::MinHashBandBucket(MinHashBandKey(signature, band, impl_->mh.rows),
                                             impl_->groups);
  }
  // SimHashBandJoin's buckets: with at most 32 sampled bits, the packed bits
  // themselves (buckets are exact keys); else its 64-bit key, whose bucket
  // is BandJoin's for hashed keys (the same rule as MinHash's).
  const auto [hi, lo] = KeyOfSignature(signature);
  const auto [mhi, mlo] = impl_->masks[static_cast<size_t>(band)];
  if (impl_->simhash.report.bands.band_bits <= 32) {
    return PackBits(lo, mlo) | PackBits(hi, mhi) << std::popcount(mlo);
  }
  return dedup_internal::MinHashBandBucket((lo & mlo) ^ SplitMix64(hi & mhi), impl_->groups);
}

void DedupJoinPlan::VerifyBucket(
    std::span<const uint64_t> members,
    const std::function<std::span<const uint32_t>(uint64_t group)>& signature,
    const BandJoinOptions& options, std::vector<IdPair>* pairs, BandJoinStats* stats) const {
  if (!impl_->minhash) {
    // SimHashBandJoin's test: the Hamming distance, within k.
    const int k = impl_->simhash_k;
    const auto test = [&](size_t a, size_t b) {
      const auto [ahi, alo] = KeyOfSignature(signature(a));
      const auto [bhi, blo] = KeyOfSignature(signature(b));
      const int d = std::popcount(ahi ^ bhi) + std::popcount(alo ^ blo);
      return d <= k ? d : -1;
    };
    VerifyBandBucket(members, test, options, pairs, stats);
    return;
  }
  const size_t need = impl_->minhash_plan.need;
  const auto perm = static_cast<double>(impl_->mh.num_perm);
  const auto test = [&](size_t a, size_t b) {
    const size_t equal = EqualComponents(signature(a), signature(b));
    if (equal < need) return -1;
    return MinHashDistance(static_cast<double>(equal) / perm);
  };
  VerifyBandBucket(members, test, options, pairs, stats);
}

void DedupJoinPlan::ReleaseKeys() {
  std::vector<std::pair<uint64_t, uint64_t>>().swap(impl_->simhash.words);
}

void DedupJoinPlan::Finish(std::span<const DedupDocument> docs, DedupGroups* groups,
                           std::vector<IdPair>* group_pairs, const GroupSignature& signature,
                           std::span<const JaccardSketch> sketches, const DedupOptions& options,
                           DedupResult* result) const {
  if (impl_->minhash) {
    dedup_internal::MinHashPlan plan;
    plan.groups = std::move(*groups);
    plan.need = impl_->minhash_plan.need;
    const auto of = [&](size_t i) { return signature(plan.groups.of[i]); };
    dedup_internal::FinishMinHash(docs, plan, of, impl_->mh, *group_pairs, options, result);
    *groups = std::move(plan.groups);
    return;
  }
  dedup_internal::SimHashPlan plan;
  plan.groups = std::move(*groups);
  DedupOptions verified = options;
  verified.sketches = sketches;  // verified pairs, as neardup dedup's
  // Verified here too: the caller may write these pairs.
  dedup_internal::VerifyGroupPairs(plan.groups, verified, group_pairs);
  dedup_internal::FinishSimHash(docs, plan, group_pairs, verified, result);
  *groups = std::move(plan.groups);
}

}  // namespace neardup
