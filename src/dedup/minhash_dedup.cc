// Copyright 2026 The neardup Authors.

#include "neardup/minhash_dedup.h"

#include <xxhash.h>

#include <chrono>
#include <cmath>

#include "dedup/cluster.h"
#include "dedup/stages.h"
#include "util/random.h"

namespace neardup {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Status ValidateOptions(const MinHashOptions& mh, const DedupOptions& opt) {
  if (mh.num_perm < 1 || mh.num_perm > kMaxMinHashPermutations) {
    return Status::InvalidArgument("minhash: num_perm must be in [1, " +
                                   std::to_string(kMaxMinHashPermutations) + "]");
  }
  if (mh.bands < 1 || mh.rows < 1 || static_cast<int64_t>(mh.bands) * mh.rows > mh.num_perm) {
    return Status::InvalidArgument(
        "minhash: bands and rows must be >= 1 with bands x rows <= "
        "num_perm");
  }
  if (!(mh.threshold > 0 && mh.threshold <= 1)) {
    return Status::InvalidArgument("minhash: threshold must be in (0, 1]");
  }
  if (opt.mode != DedupMode::kCluster) {
    return Status::InvalidArgument("minhash: only cluster mode is supported");
  }
  return Status::OK();
}

Status Validate(std::span<const DedupDocument> docs, std::span<const uint32_t> signatures,
                std::span<const std::vector<uint64_t>> sets, const MinHashOptions& mh,
                const DedupOptions& opt) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(mh, opt));
  if (signatures.size() != docs.size() * static_cast<size_t>(mh.num_perm)) {
    return Status::InvalidArgument("minhash: " + std::to_string(signatures.size()) +
                                   " signature values for " + std::to_string(docs.size()) +
                                   " documents of " + std::to_string(mh.num_perm));
  }
  if (mh.exact && sets.size() != docs.size()) {
    return Status::InvalidArgument("minhash: exact verification needs every document's set");
  }
  return Status::OK();
}

// The estimate's distance of two signatures and whether it is a
// near-duplicate (equal components >= need).
std::pair<int, bool> EstimateDistance(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                      size_t need) {
  const size_t equal = EqualComponents(a, b);
  return {MinHashDistance(static_cast<double>(equal) / static_cast<double>(a.size())),
          equal >= need};
}

// A pair's distance (MinHashDistance) and whether it is a near-duplicate.
std::pair<int, bool> PairDistance(size_t i, size_t j, std::span<const uint32_t> signatures,
                                  std::span<const std::vector<uint64_t>> sets,
                                  const MinHashOptions& mh, size_t need) {
  if (mh.exact) {
    const double jac = ExactJaccard(sets[i], sets[j]);
    return {MinHashDistance(jac), jac >= mh.threshold};
  }
  const auto perm = static_cast<size_t>(mh.num_perm);
  return EstimateDistance(signatures.subspan(i * perm, perm), signatures.subspan(j * perm, perm),
                          need);
}

size_t NeedOf(const MinHashOptions& mh) {
  // A pair is a near-duplicate when its estimated Jaccard equal / num_perm
  // >= threshold, i.e. equal >= need.
  return static_cast<size_t>(std::ceil(mh.threshold * mh.num_perm - 1e-9));
}

dedup_internal::AssembleOptions MinHashAssembleOptions(const MinHashOptions& mh, size_t need,
                                                       const DedupOptions& opt) {
  dedup_internal::AssembleOptions a;
  a.keep = opt.keep;
  a.rule = opt.cluster_rule;
  a.max_distance = MinHashDistance(
      mh.exact ? mh.threshold : static_cast<double>(need) / static_cast<double>(mh.num_perm));
  a.collect_pairs = opt.collect_pairs;
  a.pair_sink = opt.pair_sink;
  a.progress = opt.progress;
  return a;
}

}  // namespace

namespace dedup_internal {

Result<MinHashPlan> PlanMinHash(std::span<const DedupDocument> docs,
                                std::span<const uint32_t> signatures,
                                std::span<const std::vector<uint64_t>> sets,
                                const MinHashOptions& mh, const DedupOptions& opt) {
  NEARDUP_RETURN_IF_ERROR(Validate(docs, signatures, sets, mh, opt));
  const auto perm = static_cast<size_t>(mh.num_perm);
  MinHashPlan plan;
  plan.need = NeedOf(mh);
  plan.groups = GroupByKey(docs, [&](size_t i) -> std::pair<uint64_t, uint64_t> {
    if (!mh.exact) return MinHashIdentity(signatures.subspan(i * perm, perm));
    const XXH128_hash_t h = XXH3_128bits(sets[i].data(), sets[i].size() * sizeof(uint64_t));
    return {h.high64, h.low64};
  });
  return plan;
}

std::pair<uint64_t, uint64_t> MinHashIdentity(std::span<const uint32_t> signature) {
  const XXH128_hash_t h = XXH3_128bits(signature.data(), signature.size() * sizeof(uint32_t));
  return {h.high64, h.low64};
}

IdentityKey DocumentIdentity(DocumentView docs, std::span<const uint32_t> signatures, size_t perm) {
  if (perm > 0) {
    return [signatures, perm](size_t i) {
      return MinHashIdentity(signatures.subspan(i * perm, perm));
    };
  }
  return [docs](size_t i) {
    const Fingerprint fp = docs.fingerprint(i);
    return std::pair<uint64_t, uint64_t>(fp.hi(), fp.lo());
  };
}

Result<MinHashPlan> PlanMinHashByIdentity(std::span<const DedupDocument> docs,
                                          std::span<const std::pair<uint64_t, uint64_t>> identities,
                                          const MinHashOptions& mh, const DedupOptions& opt) {
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(mh, opt));
  if (mh.exact) return Status::InvalidArgument("minhash: exact verification needs the sets");
  if (identities.size() != docs.size()) {
    return Status::InvalidArgument("minhash: " + std::to_string(identities.size()) +
                                   " identities for " + std::to_string(docs.size()) + " documents");
  }
  MinHashPlan plan;
  plan.need = NeedOf(mh);
  plan.groups = GroupByKey(docs, [&](size_t i) { return identities[i]; });
  return plan;
}

uint64_t MinHashBandBucket(uint64_t key, size_t n) {
  // BandJoin with 64-bit keys (key_bits 0): a partition of the top
  // PartitionBits(n) bits of SplitMix64(key), then its next 32 bits sorted.
  int partition_bits = 0;
  while (partition_bits < 16 && (n >> partition_bits) > 1024) ++partition_bits;
  return SplitMix64(key) >> (32 - partition_bits);
}

Status MinHashJoinBands(const MinHashPlan& plan, std::span<const uint32_t> signatures,
                        std::span<const std::vector<uint64_t>> sets, const MinHashOptions& mh,
                        const DedupOptions& opt, int begin, int end, std::vector<IdPair>* pairs,
                        BandJoinStats* stats) {
  pairs->clear();
  if (plan.groups.size() < 2 || begin >= end) return Status::OK();
  const auto perm = static_cast<size_t>(mh.num_perm);
  const auto rep = [&](size_t g) { return plan.groups.Members(g).front(); };
  const BandKeyFunction keys = [&](int band, size_t from, size_t to, uint64_t* out) {
    for (size_t g = from; g < to; ++g) {
      out[g - from] =
          MinHashBandKey(signatures.subspan(rep(g) * perm, perm), begin + band, mh.rows);
    }
  };
  const PairTest test = [&](size_t a, size_t b) {
    const auto [d, near] = PairDistance(rep(a), rep(b), signatures, sets, mh, plan.need);
    return near ? d : -1;
  };
  BandJoinOptions bopt;
  bopt.bands = end - begin;
  bopt.threads = opt.threads;
  bopt.progress = opt.progress;
  bopt.skip_confirmed = mh.exact;  // a merge of two sets costs more than a lookup
  bopt.components_only = ComponentsOnly(opt);
  return BandJoin(plan.groups.size(), keys, test, bopt, pairs, stats);
}

void FinishMinHash(std::span<const DedupDocument> docs, const MinHashPlan& plan,
                   std::span<const uint32_t> signatures,
                   std::span<const std::vector<uint64_t>> sets, const MinHashOptions& mh,
                   std::span<const IdPair> group_pairs, const DedupOptions& opt,
                   DedupResult* result) {
  const auto t = std::chrono::steady_clock::now();
  AssembleOptions a = MinHashAssembleOptions(mh, plan.need, opt);
  a.distance = [&](size_t i, size_t kept) {
    return PairDistance(i, kept, signatures, sets, mh, plan.need).first;
  };
  AssembleClusters(docs, plan.groups, group_pairs, a, result);
  result->join.cluster_seconds = SecondsSince(t);
}

void FinishMinHash(std::span<const DedupDocument> docs, const MinHashPlan& plan,
                   const SignatureOf& signature, const MinHashOptions& mh,
                   std::span<const IdPair> group_pairs, const DedupOptions& opt,
                   DedupResult* result) {
  const auto t = std::chrono::steady_clock::now();
  AssembleOptions a = MinHashAssembleOptions(mh, plan.need, opt);
  a.distance = [&](size_t i, size_t kept) {
    return EstimateDistance(signature(i), signature(kept), plan.need).first;
  };
  AssembleClusters(docs, plan.groups, group_pairs, a, result);
  result->join.cluster_seconds = SecondsSince(t);
}

}  // namespace dedup_internal

Result<DedupResult> MinHashDedup(std::span<const DedupDocument> docs,
                                 std::span<const uint32_t> signatures,
                                 std::span<const std::vector<uint64_t>> sets,
                                 const MinHashOptions& mh, const DedupOptions& opt) {
  DedupResult result;
  auto t = std::chrono::steady_clock::now();
  NEARDUP_ASSIGN_OR_RETURN(dedup_internal::MinHashPlan plan,
                           dedup_internal::PlanMinHash(docs, signatures, sets, mh, opt));
  result.join.group_seconds = SecondsSince(t);
  result.join.banded = true;
  result.join.distinct = plan.groups.size();

  t = std::chrono::steady_clock::now();
  std::vector<IdPair> group_pairs;  // ids are group numbers
  BandJoinStats stats;
  NEARDUP_RETURN_IF_ERROR(dedup_internal::MinHashJoinBands(plan, signatures, sets, mh, opt, 0,
                                                           mh.bands, &group_pairs, &stats));
  dedup_internal::AddBandStats(stats, &result.join);
  result.join.confirmed = stats.confirmed;
  result.join.join_seconds = SecondsSince(t);
  dedup_internal::FinishMinHash(docs, plan, signatures, sets, mh, group_pairs, opt, &result);
  return result;
}

}  // namespace neardup
