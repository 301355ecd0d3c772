// Copyright 2026 The neardup Authors.

#include "neardup/dedup.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>

#include "dedup/cluster.h"
#include "dedup/documents.h"
#include "dedup/short_join.h"
#include "dedup/sketch_store.h"
#include "dedup/stages.h"
#include "dedup/stream_bands.h"
#include "neardup/band_join.h"
#include "neardup/index.h"
#include "util/random.h"
#include "util/union_find.h"

namespace neardup {
namespace {

using dedup_internal::DocumentView;
using dedup_internal::Groups;

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The options' checks for fingerprints of `bits` (0: no non-empty
// document) over n documents.
Status ValidateOptions(const DedupOptions& opt, int bits, size_t n) {
  // Without a non-empty document nothing is compared, so any k >= 0 will do
  // (an empty corpus is not a usage error whatever the method's k).
  const int max_k = bits == 0 ? 128 / 4 : bits / 4;
  if (opt.k < 0 || opt.k > max_k) {
    return Status::InvalidArgument("k must be in [0, " + std::to_string(max_k) + "], got " +
                                   std::to_string(opt.k));
  }
  if (opt.mode == DedupMode::kStream && opt.keep != KeepPolicy::kFirst) {
    return Status::InvalidArgument(
        "stream mode keeps the first document; use cluster mode for "
        "the longest / field policies");
  }
  if (opt.short_features > 0) {
    if (opt.mode != DedupMode::kCluster) {
      return Status::InvalidArgument("the short-document rule applies to cluster mode only");
    }
    if (opt.short_rule == ShortRule::kExact && opt.short_sets.size() != n) {
      return Status::InvalidArgument("short_sets must hold one set per document");
    }
    if (opt.short_rule == ShortRule::kSketch && dedup_internal::SketchesOf(opt).size() != n) {
      return Status::InvalidArgument("the sketch short rule needs one sketch per document");
    }
    if (!(opt.short_jaccard > 0 && opt.short_jaccard <= 1)) {
      return Status::InvalidArgument("short_jaccard must be in (0, 1]");
    }
  }
  if (const dedup_internal::SketchView sk = dedup_internal::SketchesOf(opt);
      !sk.empty() && sk.size() != n) {
    return Status::InvalidArgument("sketches must hold one sketch per document");
  }
  if (!(opt.verify_jaccard >= 0 && opt.verify_jaccard <= 1) ||
      !(opt.verify_short_jaccard >= 0 && opt.verify_short_jaccard <= 1)) {
    return Status::InvalidArgument("verify_jaccard and verify_short_jaccard must be in [0, 1]");
  }
  if (!(opt.recall > 0 && opt.recall < 1)) {
    return Status::InvalidArgument("recall must be in (0, 1), got " + std::to_string(opt.recall));
  }
  if ((opt.band_bits == 0) != (opt.bands == 0) || opt.band_bits < 0 || opt.bands < 0 ||
      opt.band_bits > (bits == 0 ? 128 : bits)) {
    return Status::InvalidArgument("band_bits and bands: both 0 (chosen) or both set, r <= bits");
  }
  return Status::OK();
}

Status Validate(DocumentView docs, const DedupOptions& opt, int* bits) {
  *bits = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs.empty(i)) continue;
    const int b = docs.fingerprint(i).bits();
    if (*bits == 0) *bits = b;
    if (b != *bits) {
      return Status::InvalidArgument("documents mix 64- and 128-bit fingerprints");
    }
  }
  return ValidateOptions(opt, *bits, docs.size());
}

// Distances of up to 4,096 random pairs of the distinct fingerprints (a fixed
// seed, dedup_internal::SamplePairs): the data's background for the band
// cost model. fp(i) is fingerprint i of n.
std::vector<int> SampleDistances(size_t n, const std::function<Fingerprint(size_t)>& fp) {
  std::vector<int> d;
  for (const auto& [i, j] : dedup_internal::SamplePairs(n)) {
    d.push_back(HammingDistance(fp(i), fp(j)));
  }
  return d;
}

std::vector<int> SampleDistances(std::span<const Fingerprint> fps) {
  return SampleDistances(fps.size(), [fps](size_t i) { return fps[i]; });
}

// The short-document rule: its pairs, as pairs of fingerprint groups, added
// to the join's (a pair the join found already is kept once).
Status AddShortPairs(DocumentView docs, const dedup_internal::SimHashPlan& plan,
                     const DedupOptions& opt, std::vector<IdPair>* group_pairs,
                     DedupJoinReport* report) {
  NEARDUP_ASSIGN_OR_RETURN(
      report->short_pairs,
      dedup_internal::AddShortRulePairs(
          opt.short_sets,
          [&](size_t i) { return docs.empty(i) ? UINT64_MAX : uint64_t{plan.groups.of[i]}; },
          [&](size_t i) { return docs.fingerprint(i); }, opt, group_pairs));
  return Status::OK();
}

// The sketch short rule (ShortRule::kSketch) over the groups' first
// members (AddShortSketchRulePairs), with the routed join's pairs of the rule.
// With routed_covers (the routed join ran with ShortRuleBeyondK), the
// routed join gave every rule pair with a short member (at most kShortSlots
// non-empty slots; SimHashJoinRouted), routed_beyond_k of them, in
// *group_pairs already: the short groups take no part in the rule's LSH,
// which joins only the pairs of two longer sketches.
Status AddShortSketchPairs(DocumentView docs, const dedup_internal::SimHashPlan& plan,
                           const DedupOptions& opt, bool routed_covers, size_t routed_beyond_k,
                           std::vector<IdPair>* group_pairs, DedupJoinReport* report) {
  // Only the groups that may take part (on long texts none): no array per group.
  const dedup_internal::SketchView sketches = dedup_internal::SketchesOf(opt);
  std::vector<size_t> first;
  std::vector<uint64_t> group;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const size_t d = plan.groups.Members(g).front();
    if (routed_covers && sketches.NonEmpty(d) <= dedup_internal::kShortSlots) continue;
    if (dedup_internal::TakesPartInShortSketchRule(opt, sketches.features(d))) {
      first.push_back(d);
      group.push_back(g);
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(
      report->short_pairs,
      dedup_internal::AddShortSketchRulePairs(
          sketches, first, group, [&](size_t i) { return docs.fingerprint(first[i]); }, {}, opt,
          group_pairs));
  report->short_pairs += routed_beyond_k;
  return Status::OK();
}

// Memory grows with the documents and the pairs of distinct fingerprints
// within k, never with the pairs of documents: identical fingerprints are
// collapsed before the self-join and their documents united directly.
Status ClusterMode(DocumentView docs, const DedupOptions& opt, DedupResult* r) {
  NEARDUP_ASSIGN_OR_RETURN(dedup_internal::SimHashPlan plan,
                           dedup_internal::PlanSimHash(docs, opt));
  r->join = plan.report;
  const auto t = std::chrono::steady_clock::now();
  std::vector<IdPair> group_pairs;  // ids are group numbers
  const bool routed = dedup_internal::RouteShortDocuments(plan, opt);
  // The routed join gives the sketch short rule's pairs with a short member
  // (beyond k) in group_pairs itself: no second array of them.
  const bool routed_rule = routed && dedup_internal::ShortRuleBeyondK(opt);
  size_t routed_beyond_k = 0;
  // No join reads the groups' `of` (8 bytes a document): freed while they
  // run (their peak is the run's at 1M), rebuilt for the clusters.
  std::vector<size_t>().swap(plan.groups.of);
  if (routed) {
    BandJoinStats stats;
    dedup_internal::ShortJoinStats sj;
    NEARDUP_RETURN_IF_ERROR(dedup_internal::SimHashJoinRouted(
        plan, opt, &group_pairs, &stats, &sj, routed_rule ? &group_pairs : nullptr));
    routed_beyond_k = sj.beyond_k;
    dedup_internal::AddBandStats(stats, &r->join);
    r->join.confirmed = group_pairs.size() - routed_beyond_k;  // both joins, each pair once
    r->join.rejected += sj.rejected;                           // dropped in the sketch join already
    r->join.short_join = {true,          sj.short_groups, sj.medium_groups, sj.keys,
                          sj.candidates, sj.tested,       sj.confirmed,     sj.largest_bucket};
  } else if (plan.report.banded) {
    BandJoinStats stats;
    NEARDUP_RETURN_IF_ERROR(dedup_internal::SimHashJoinBands(plan, opt, 0, plan.report.bands.bands,
                                                             &group_pairs, &stats));
    dedup_internal::AddBandStats(stats, &r->join);
    r->join.confirmed = stats.confirmed;
  } else {
    NEARDUP_RETURN_IF_ERROR(
        dedup_internal::SimHashJoinExact(plan, opt, &group_pairs, &r->join.confirmed));
  }
  dedup_internal::IndexGroupMembers(docs.size(), &plan.groups);
  if (opt.short_features > 0) {
    NEARDUP_RETURN_IF_ERROR(opt.short_rule == ShortRule::kSketch
                                ? AddShortSketchPairs(docs, plan, opt, routed_rule, routed_beyond_k,
                                                      &group_pairs, &r->join)
                                : AddShortPairs(docs, plan, opt, &group_pairs, &r->join));
  }
  r->join.join_seconds = SecondsSince(t);
  // The clusters need the groups alone, and the pairs are verified in place.
  std::vector<std::pair<uint64_t, uint64_t>>().swap(plan.words);
  dedup_internal::FinishSimHash(docs, plan, std::move(group_pairs), opt, r);
  return Status::OK();
}

// The band layout that --bands / --band-bits force, with its guarantee.
SimHashBands ForcedBands(const DedupOptions& opt, int bits) {
  SimHashBands b;
  b.bits = bits;
  b.band_bits = opt.band_bits;
  b.bands = opt.bands;
  b.seed = opt.band_seed;
  b.recall_at_k = BandRecall(BitSamplingCollision(bits, opt.k, opt.band_bits), opt.bands);
  b.recall_at_k_minus_4 =
      BandRecall(BitSamplingCollision(bits, std::max(opt.k - 4, 0), opt.band_bits), opt.bands);
  return b;
}

// The stream join: banded (dedup/stream_bands.h) when the exact tables would
// be slow, as cluster mode chooses (but on documents, not distinct
// fingerprints: stream mode inserts only kept documents).
bool ChooseStream(DocumentView docs, const DedupOptions& opt, int bits, DedupJoinReport* rep) {
  std::vector<Fingerprint> fps;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!docs.empty(i)) fps.push_back(docs.fingerprint(i));
  }
  rep->distinct = fps.size();
  if (opt.join == DedupJoin::kExact || fps.size() < 2) return false;
  if (opt.bands > 0) {
    rep->bands = ForcedBands(opt, bits);
  } else {
    rep->bands = ChooseSimHashStreamBands(fps.size(), bits, opt.k, opt.recall, SampleDistances(fps),
                                          opt.band_seed);
    rep->estimated_banded_seconds = rep->bands.estimated_seconds;
  }
  rep->estimated_exact_seconds = EstimateExactJoinSeconds(fps.size(), bits, opt.k);
  if (opt.join == DedupJoin::kBanded || opt.bands > 0) return true;
  return rep->estimated_exact_seconds > 0.25 &&
         rep->estimated_exact_seconds > rep->estimated_banded_seconds;
}

// Stream mode's pairs (one per duplicate), sorted, to the sink; the join
// report's confirmed pairs are those (duplicate, nearest kept).
void StreamPairs(const DedupOptions& opt, DedupResult* r) {
  r->join.confirmed = 0;
  for (const DedupRecord& rec : r->records) r->join.confirmed += rec.duplicate;
  std::sort(r->pairs.begin(), r->pairs.end(), [](const DedupPair& a, const DedupPair& b) {
    return a.i != b.i ? a.i < b.i : a.j < b.j;
  });
  if (opt.pair_sink) {
    for (const DedupPair& p : r->pairs) opt.pair_sink(p);
    if (!opt.collect_pairs) std::vector<DedupPair>().swap(r->pairs);
  }
}

Status StreamMode(DocumentView docs, const DedupOptions& opt, int bits, DedupResult* r) {
  const size_t n = docs.size();
  const auto t = std::chrono::steady_clock::now();
  if (bits != 0 && ChooseStream(docs, opt, bits, &r->join)) {
    r->join.banded = true;
    NEARDUP_RETURN_IF_ERROR(dedup_internal::BandedStream(docs, opt, r->join.bands, r));
    r->join.join_seconds = SecondsSince(t);
    StreamPairs(opt, r);
    return Status::OK();
  }
  r->records.resize(n);
  PermutedTableOptions popt;
  popt.bits = bits;
  popt.max_k = opt.k;
  popt.expected_size = n;
  popt.build_threads = opt.threads;
  // bits == 0: every document is empty (or there is none), so no index is
  // searched (and none is built: it could not take a k beyond 64 bits').
  std::unique_ptr<PermutedTableIndex> index;
  if (bits != 0) {
    NEARDUP_ASSIGN_OR_RETURN(index, PermutedTableIndex::Create(popt));
  }
  std::vector<Neighbor> hits;
  for (size_t i = 0; i < n; ++i) {
    if (opt.progress && i % 65536 == 0) opt.progress("stream", i, n);
    DedupRecord& rec = r->records[i];
    rec.empty = docs.empty(i);
    rec.cluster = i;
    rec.nearest = i;
    if (rec.empty) continue;
    const Fingerprint fp = docs.fingerprint(i);
    NEARDUP_RETURN_IF_ERROR(index->Search(fp, opt.k, &hits));
    // Sorted by (distance, id): the first verified hit is the closest,
    // earliest kept one.
    const auto hit = std::find_if(hits.begin(), hits.end(), [&](const Neighbor& h) {
      return dedup_internal::PassesVerification(opt, static_cast<size_t>(h.id), i);
    });
    if (hit == hits.end()) {
      NEARDUP_RETURN_IF_ERROR(index->Add(i, fp));
      continue;
    }
    rec.duplicate = true;
    rec.nearest = hit->id;
    rec.distance = hit->distance;
    rec.nearest_within_k = rec.nearest;
    rec.distance_within_k = rec.distance;
    rec.cluster = rec.nearest;  // a kept document is its cluster's first member
    if (Verifying(opt)) rec.jaccard = dedup_internal::SketchesOf(opt).Jaccard(rec.nearest, i);
    if (opt.collect_pairs || opt.pair_sink) {
      r->pairs.push_back({rec.nearest, i, rec.distance, rec.jaccard});
    }
  }
  if (opt.progress) opt.progress("stream", n, n);
  r->join.join_seconds = SecondsSince(t);
  StreamPairs(opt, r);
  return Status::OK();
}

// Group g's fingerprint in a plan.
Fingerprint GroupFingerprint(const dedup_internal::SimHashPlan& plan, size_t g) {
  return plan.bits == 64 ? Fingerprint::From64(plan.words[g].second)
                         : Fingerprint::From128(plan.words[g].first, plan.words[g].second);
}

// A plan's group fingerprints, in group order.
std::vector<Fingerprint> GroupFingerprints(const dedup_internal::SimHashPlan& plan) {
  std::vector<Fingerprint> fps(plan.words.size());
  for (size_t g = 0; g < fps.size(); ++g) fps[g] = GroupFingerprint(plan, g);
  return fps;
}

// The join for n distinct fingerprints (report.banded, bands), chosen as
// Dedup does; fp(g): group g's fingerprint (asked for SamplePairs(n) only).
void ChooseJoin(const DedupOptions& opt, size_t n, const std::function<Fingerprint(size_t)>& fp,
                dedup_internal::SimHashPlan* plan) {
  DedupJoinReport* rep = &plan->report;
  rep->distinct = n;
  if (n < 2) return;
  const int bits = plan->bits;
  bool banded = opt.join == DedupJoin::kBanded;
  if (opt.join != DedupJoin::kExact) {
    if (opt.bands > 0) {
      rep->bands = ForcedBands(opt, bits);
    } else {
      rep->bands =
          ChooseSimHashBands(n, bits, opt.k, opt.recall, SampleDistances(n, fp), opt.band_seed);
      rep->estimated_banded_seconds = rep->bands.estimated_seconds;
    }
    rep->estimated_exact_seconds = EstimateExactJoinSeconds(n, bits, opt.k);
    // Exactness is worth a small absolute price: exact when it is cheaper or
    // estimated under a quarter of a second.
    if (opt.join == DedupJoin::kAuto) {
      banded = opt.bands > 0 || (rep->estimated_exact_seconds > 0.25 &&
                                 rep->estimated_exact_seconds > rep->estimated_banded_seconds);
    }
  }
  rep->banded = banded;
}

}  // namespace

Result<ClusterRule> ParseClusterRule(std::string_view name) {
  if (name == "components") return ClusterRule::kComponents;
  if (name == "center") return ClusterRule::kCenter;
  return Status::InvalidArgument("unknown cluster rule '" + std::string(name) +
                                 "' (expected components or center)");
}

Result<ShortRule> ParseShortRule(std::string_view name) {
  if (name == "exact") return ShortRule::kExact;
  if (name == "sketch") return ShortRule::kSketch;
  return Status::InvalidArgument("unknown short rule '" + std::string(name) +
                                 "' (expected exact or sketch)");
}

const char* ShortRuleName(ShortRule rule) {
  return rule == ShortRule::kSketch ? "sketch" : "exact";
}

const char* ClusterRuleName(ClusterRule rule) {
  return rule == ClusterRule::kCenter ? "center" : "components";
}

Result<DedupResult> Dedup(std::span<const DedupDocument> documents, const DedupOptions& options) {
  return dedup_internal::DedupDocuments(documents, options);
}

namespace dedup_internal {

Result<DedupResult> DedupDocuments(DocumentView documents, const DedupOptions& options) {
  int bits = 0;
  NEARDUP_RETURN_IF_ERROR(Validate(documents, options, &bits));
  DedupResult r;
  if (options.mode == DedupMode::kCluster) {
    NEARDUP_RETURN_IF_ERROR(ClusterMode(documents, options, &r));
  } else {
    NEARDUP_RETURN_IF_ERROR(StreamMode(documents, options, bits, &r));
    dedup_internal::Summarize(&r);
  }
  return r;
}

bool ComponentsOnly(const DedupOptions& opt) {
  // Centre clustering and pair output need every pair within k; so does
  // verification (a forest edge that fails it may hide a pair that passes).
  return !opt.collect_pairs && !opt.pair_sink && opt.cluster_rule == ClusterRule::kComponents &&
         !Verifying(opt);
}

bool PassesVerification(const DedupOptions& opt, size_t i, size_t j) {
  if (!Verifying(opt)) return true;
  const SketchView sketches = SketchesOf(opt);
  return sketches.Jaccard(i, j) >=
         VerifyThreshold(opt, std::min(sketches.features(i), sketches.features(j)));
}

size_t VerifyGroupPairs(const Groups& groups, const DedupOptions& opt, std::vector<IdPair>* pairs) {
  if (!Verifying(opt)) return 0;
  const size_t before = pairs->size();
  std::erase_if(*pairs, [&](const IdPair& p) {
    return !PassesVerification(opt, groups.Members(p.a).front(), groups.Members(p.b).front());
  });
  return before - pairs->size();
}

Result<SimHashPlan> PlanSimHash(DocumentView docs, const DedupOptions& opt) {
  SimHashPlan plan;
  NEARDUP_RETURN_IF_ERROR(Validate(docs, opt, &plan.bits));
  auto t = std::chrono::steady_clock::now();
  plan.groups = GroupIdentical(docs);
  const size_t n = plan.groups.size();
  plan.words.resize(n);
  for (size_t g = 0; g < n; ++g) {
    const Fingerprint fp = docs.fingerprint(plan.groups.Members(g).front());
    plan.words[g] = {fp.hi(), fp.lo()};
  }
  plan.report.group_seconds = SecondsSince(t);
  ChooseJoin(
      opt, n, [&plan](size_t g) { return GroupFingerprint(plan, g); }, &plan);
  return plan;
}

Result<SimHashPlan> PlanSimHashDistinct(std::vector<std::pair<uint64_t, uint64_t>> words, int bits,
                                        const DedupOptions& opt) {
  if (bits != 0 && bits != 64 && bits != 128) {
    return Status::InvalidArgument("documents mix 64- and 128-bit fingerprints");
  }
  if (opt.short_features > 0) {
    return Status::InvalidArgument("the short-document rule needs every document's features");
  }
  SimHashPlan plan;
  plan.bits = bits;
  NEARDUP_RETURN_IF_ERROR(ValidateOptions(opt, bits, 0));
  plan.words = std::move(words);
  ChooseJoin(
      opt, plan.words.size(), [&plan](size_t g) { return GroupFingerprint(plan, g); }, &plan);
  return plan;
}

std::vector<std::pair<size_t, size_t>> SamplePairs(size_t n) {
  std::vector<std::pair<size_t, size_t>> pairs;
  if (n < 2) return pairs;
  uint64_t state = 0x73616d706c65ULL;
  for (int s = 0; s < 4096; ++s) {
    state = SplitMix64(state);
    const size_t i = state % n;
    state = SplitMix64(state);
    const size_t j = state % n;
    if (i != j) pairs.emplace_back(i, j);
  }
  return pairs;
}

Result<SimHashPlan> PlanSimHashSampled(
    size_t n, std::span<const std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample, int bits,
    const DedupOptions& opt) {
  NEARDUP_ASSIGN_OR_RETURN(SimHashPlan plan, PlanSimHashDistinct({}, bits, opt));
  const auto fp = [&sample, bits](size_t g) {
    const auto it = std::lower_bound(sample.begin(), sample.end(), g,
                                     [](const std::pair<uint64_t, std::pair<uint64_t, uint64_t>>& x,
                                        size_t y) { return x.first < y; });
    // Every group SamplePairs(n) names is in the sample (the caller's contract).
    const std::pair<uint64_t, uint64_t> w =
        it != sample.end() ? it->second : std::pair<uint64_t, uint64_t>{};
    return bits == 64 ? Fingerprint::From64(w.second) : Fingerprint::From128(w.first, w.second);
  };
  ChooseJoin(opt, n, fp, &plan);
  return plan;
}

Status SimHashJoinExact(const SimHashPlan& plan, const DedupOptions& opt,
                        std::vector<IdPair>* pairs, size_t* confirmed) {
  if (confirmed != nullptr) *confirmed = 0;
  auto report = [&opt](std::string_view phase, size_t done, size_t total) {
    if (opt.progress) opt.progress(phase, done, total);
  };
  const size_t n = plan.words.size();
  if (n < 2) {
    report("join", 1, 1);
    return Status::OK();
  }
  report("index", 0, 1);
  std::vector<uint64_t> ids(n);
  std::iota(ids.begin(), ids.end(), uint64_t{0});
  const std::vector<Fingerprint> fps = GroupFingerprints(plan);
  PermutedTableOptions popt;
  popt.bits = plan.bits;
  popt.max_k = opt.k;
  popt.build_threads = opt.threads;
  NEARDUP_ASSIGN_OR_RETURN(auto index, PermutedTableIndex::Build(popt, ids, fps));
  report("index", 1, 1);
  report("join", 0, 1);
  if (!ComponentsOnly(opt)) {
    NEARDUP_RETURN_IF_ERROR(index->SelfJoin(opt.k, opt.threads, pairs));
    if (confirmed != nullptr) *confirmed = pairs->size();
  } else {
    // Only connected components are wanted: keep a spanning forest of the
    // pairs (fewer than n), not all of them (a template with m variants has
    // m^2 / 2). The clusters are the same.
    UnionFind forest(n);
    std::mutex mu;
    size_t count = 0;
    NEARDUP_RETURN_IF_ERROR(
        index->SelfJoinStream(opt.k, opt.threads, [&](std::span<const IdPair> piece) {
          std::lock_guard<std::mutex> lock(mu);
          count += piece.size();
          for (const IdPair& p : piece) {
            if (forest.Union(p.a, p.b)) pairs->push_back(p);
          }
        }));
    std::sort(pairs->begin(), pairs->end(),
              [](const IdPair& x, const IdPair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
    if (confirmed != nullptr) *confirmed = count;
  }
  report("join", 1, 1);
  return Status::OK();
}

Status SimHashJoinBands(const SimHashPlan& plan, const DedupOptions& opt, int begin, int end,
                        std::vector<IdPair>* pairs, BandJoinStats* stats) {
  pairs->clear();
  if (begin >= end) return Status::OK();
  BandJoinOptions bopt;
  bopt.threads = opt.threads;
  bopt.progress = opt.progress;
  bopt.components_only = ComponentsOnly(opt);
  // The plan's words as they are: no copy of the fingerprints.
  return SimHashBandJoinWords(plan.words, opt.k, plan.report.bands, bopt, pairs, stats, begin, end);
}

namespace {

// FinishSimHash on pairs verified already.
// pairs_done (may be empty): AssembleOptions::pairs_done.
void FinishVerified(DocumentView docs, const SimHashPlan& plan, std::span<const IdPair> group_pairs,
                    const DedupOptions& opt, DedupResult* r,
                    std::chrono::steady_clock::time_point t, std::function<void()> pairs_done) {
  AssembleOptions a;
  a.keep = opt.keep;
  a.rule = opt.cluster_rule;
  a.distance = [&docs](size_t i, size_t kept) {
    return HammingDistance(docs.fingerprint(i), docs.fingerprint(kept));
  };
  if (Verifying(opt)) {
    a.jaccard = [sketches = SketchesOf(opt)](size_t i, size_t j) { return sketches.Jaccard(i, j); };
  }
  a.jaccard_done = opt.release_sketches;
  a.pairs_done = std::move(pairs_done);
  a.max_distance = opt.k;
  a.collect_pairs = opt.collect_pairs;
  a.pair_sink = opt.pair_sink;
  a.progress = opt.progress;
  AssembleClusters(docs, plan.groups, group_pairs, a, r);
  r->join.cluster_seconds = SecondsSince(t);
}

}  // namespace

void FinishSimHash(DocumentView docs, const SimHashPlan& plan, std::span<const IdPair> group_pairs,
                   const DedupOptions& opt, DedupResult* r) {
  const auto t = std::chrono::steady_clock::now();
  if (!Verifying(opt)) return FinishVerified(docs, plan, group_pairs, opt, r, t, {});
  // Verified pairs: only the pairs that pass make clusters and pairs.
  std::vector<IdPair> verified(group_pairs.begin(), group_pairs.end());
  r->join.rejected += VerifyGroupPairs(plan.groups, opt, &verified);
  FinishVerified(docs, plan, verified, opt, r, t,
                 [&verified] { std::vector<IdPair>().swap(verified); });
}

void FinishSimHash(DocumentView docs, const SimHashPlan& plan, std::vector<IdPair>* group_pairs,
                   const DedupOptions& opt, DedupResult* r) {
  const auto t = std::chrono::steady_clock::now();
  r->join.rejected += VerifyGroupPairs(plan.groups, opt, group_pairs);
  FinishVerified(docs, plan, *group_pairs, opt, r, t, {});
}

void FinishSimHash(DocumentView docs, const SimHashPlan& plan, std::vector<IdPair>&& group_pairs,
                   const DedupOptions& opt, DedupResult* r) {
  const auto t = std::chrono::steady_clock::now();
  std::vector<IdPair> pairs = std::move(group_pairs);
  r->join.rejected += VerifyGroupPairs(plan.groups, opt, &pairs);
  FinishVerified(docs, plan, pairs, opt, r, t, [&pairs] { std::vector<IdPair>().swap(pairs); });
}

void MergePairs(std::vector<IdPair>* pairs) {
  std::sort(pairs->begin(), pairs->end(),
            [](const IdPair& x, const IdPair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  pairs->erase(
      std::unique(pairs->begin(), pairs->end(),
                  [](const IdPair& x, const IdPair& y) { return x.a == y.a && x.b == y.b; }),
      pairs->end());
}

void AddBandStats(const BandJoinStats& s, DedupJoinReport* report) {
  report->candidates += s.candidates;
  report->tested += s.tested;
  report->large_buckets += s.large_buckets;
}

}  // namespace dedup_internal

ClusterRows ClusterMembers(const DedupResult& result) {
  const std::vector<DedupRecord>& records = result.records;
  const size_t n = records.size();
  // Counting sort by cluster id: begin[c] .. begin[c + 1] holds cluster c.
  std::vector<size_t> begin(n + 1, 0);
  for (const DedupRecord& r : records) ++begin[r.cluster + 1];
  for (size_t c = 0; c < n; ++c) begin[c + 1] += begin[c];
  std::vector<size_t> sorted(n);
  {
    std::vector<size_t> fill(begin.begin(), begin.end() - 1);
    for (size_t i = 0; i < n; ++i) sorted[fill[records[i].cluster]++] = i;
  }
  ClusterRows rows;
  rows.offsets.push_back(0);
  for (size_t cluster = 0; cluster < n; ++cluster) {
    if (begin[cluster + 1] - begin[cluster] < 2) continue;
    size_t kept = sorted[begin[cluster]];
    for (size_t m = begin[cluster]; m < begin[cluster + 1]; ++m) {
      rows.members.push_back(sorted[m]);
      if (!records[sorted[m]].duplicate) kept = sorted[m];
    }
    rows.ids.push_back(cluster);
    rows.kept.push_back(kept);
    rows.offsets.push_back(rows.members.size());
  }
  return rows;
}

}  // namespace neardup
