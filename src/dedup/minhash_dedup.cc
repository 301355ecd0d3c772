// Copyright 2026 The neardup Authors.

#include "neardup/minhash_dedup.h"

#include <xxhash.h>

#include <chrono>
#include <cmath>

#include "dedup/cluster.h"

namespace neardup {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Status Validate(std::span<const DedupDocument> docs, std::span<const uint32_t> signatures,
                std::span<const std::vector<uint64_t>> sets, const MinHashOptions& mh,
                const DedupOptions& opt) {
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
  if (signatures.size() != docs.size() * static_cast<size_t>(mh.num_perm)) {
    return Status::InvalidArgument("minhash: " + std::to_string(signatures.size()) +
                                   " signature values for " + std::to_string(docs.size()) +
                                   " documents of " + std::to_string(mh.num_perm));
  }
  if (mh.exact && sets.size() != docs.size()) {
    return Status::InvalidArgument("minhash: exact verification needs every document's set");
  }
  if (opt.mode != DedupMode::kCluster) {
    return Status::InvalidArgument("minhash: only cluster mode is supported");
  }
  return Status::OK();
}

}  // namespace

Result<DedupResult> MinHashDedup(std::span<const DedupDocument> docs,
                                 std::span<const uint32_t> signatures,
                                 std::span<const std::vector<uint64_t>> sets,
                                 const MinHashOptions& mh, const DedupOptions& opt) {
  NEARDUP_RETURN_IF_ERROR(Validate(docs, signatures, sets, mh, opt));
  const auto perm = static_cast<size_t>(mh.num_perm);
  const auto signature = [&](size_t i) { return signatures.subspan(i * perm, perm); };
  // A pair is a near-duplicate when its estimated Jaccard equal / num_perm
  // >= threshold, i.e. equal >= need.
  const auto need = static_cast<size_t>(std::ceil(mh.threshold * mh.num_perm - 1e-9));
  const auto distance = [&](size_t i, size_t j) -> std::pair<int, bool> {
    if (mh.exact) {
      const double jac = ExactJaccard(sets[i], sets[j]);
      return {MinHashDistance(jac), jac >= mh.threshold};
    }
    const size_t equal = EqualComponents(signature(i), signature(j));
    return {MinHashDistance(static_cast<double>(equal) / static_cast<double>(perm)), equal >= need};
  };

  DedupResult result;
  auto t = std::chrono::steady_clock::now();
  const dedup_internal::Groups groups =
      dedup_internal::GroupByKey(docs, [&](size_t i) -> std::pair<uint64_t, uint64_t> {
        const XXH128_hash_t h =
            mh.exact ? XXH3_128bits(sets[i].data(), sets[i].size() * sizeof(uint64_t))
                     : XXH3_128bits(signature(i).data(), perm * sizeof(uint32_t));
        return {h.high64, h.low64};
      });
  result.join.group_seconds = SecondsSince(t);
  result.join.banded = true;
  result.join.distinct = groups.size();

  t = std::chrono::steady_clock::now();
  std::vector<IdPair> group_pairs;  // ids are group numbers
  const auto rep = [&](size_t g) { return groups.Members(g).front(); };
  const BandKeyFunction keys = [&](int band, size_t begin, size_t end, uint64_t* out) {
    for (size_t g = begin; g < end; ++g) {
      out[g - begin] = MinHashBandKey(signature(rep(g)), band, mh.rows);
    }
  };
  const PairTest test = [&](size_t a, size_t b) {
    const auto [d, near] = distance(rep(a), rep(b));
    return near ? d : -1;
  };
  BandJoinOptions bopt;
  bopt.bands = mh.bands;
  bopt.threads = opt.threads;
  bopt.progress = opt.progress;
  bopt.skip_confirmed = mh.exact;  // a merge of two sets costs more than a lookup
  BandJoinStats stats;
  if (groups.size() >= 2) {
    NEARDUP_RETURN_IF_ERROR(BandJoin(groups.size(), keys, test, bopt, &group_pairs, &stats));
  }
  result.join.candidates = stats.candidates;
  result.join.tested = stats.tested;
  result.join.confirmed = stats.confirmed;
  result.join.large_buckets = stats.large_buckets;
  result.join.join_seconds = SecondsSince(t);

  t = std::chrono::steady_clock::now();
  dedup_internal::AssembleOptions a;
  a.keep = opt.keep;
  a.rule = opt.cluster_rule;
  a.distance = [&](size_t i, size_t kept) { return distance(i, kept).first; };
  a.max_distance = MinHashDistance(
      mh.exact ? mh.threshold : static_cast<double>(need) / static_cast<double>(perm));
  a.collect_pairs = opt.collect_pairs;
  a.pair_sink = opt.pair_sink;
  a.progress = opt.progress;
  dedup_internal::AssembleClusters(docs, groups, group_pairs, a, &result);
  result.join.cluster_seconds = SecondsSince(t);
  return result;
}

}  // namespace neardup
