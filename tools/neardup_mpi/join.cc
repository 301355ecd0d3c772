// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup's plan and join stages (run.h).

#include <atomic>
#include <thread>

#include "neardup/parallel.h"
#include "run.h"

namespace neardup::mpi {
namespace {

// A sampled group's key on its way to every rank (Plan).
struct SampledKey {
  uint64_t group = 0;
  uint64_t hi = 0;
  uint64_t lo = 0;
};

// Fault `alloc-worker`: std::bad_alloc thrown on a worker thread of the
// library's pool (not this one), as a failed allocation in a parallel
// stage of the library would be; the pool hands it to this thread.
void FailAllocationOnAWorker() {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> thrown{false};
  ParallelFor(2, 2, [&](size_t, int) {
    if (std::this_thread::get_id() != caller) {
      thrown = true;
      throw std::bad_alloc();
    }
    // The caller waits for the worker's task (10 s at most).
    for (int i = 0; i < 10000 && !thrown; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
}

// The bytes of the distinct keys a rank owns, as sent.
std::string_view BytesOf(const std::vector<std::pair<uint64_t, uint64_t>>& keys) {
  return {reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(keys[0])};
}

// The keys whose bytes `bytes` holds (std::pair is not trivially copyable
// as DecodePods asks, but its two words are).
std::vector<std::pair<uint64_t, uint64_t>> KeysOf(std::string_view bytes) {
  std::vector<std::pair<uint64_t, uint64_t>> keys(bytes.size() / sizeof(keys[0]));
  if (!keys.empty()) {
    std::memcpy(static_cast<void*>(keys.data()), bytes.data(), keys.size() * sizeof(keys[0]));
  }
  return keys;
}

}  // namespace

// What a rank holds per distinct fingerprint of the whole corpus while a band
// of the band-range join runs: the fingerprints all-gathered (16 B) and the
// band engine's copies (24 + 16 + 16 B); doc/distributed.md, "Memory per
// rank".
constexpr uint64_t kBandRangeBytesPerGroup = 72;

Status Run::CheckAllKeys(const std::vector<std::pair<uint64_t, uint64_t>>& keys) const {
  return keys.size() == groups_.groups
             ? Status::OK()
             : Status::Corruption("plan: distinct fingerprints lost in the exchange");
}

bool Run::ChooseBandRanges() {
  if (flags_.band_join == "ranges") return true;
  if (flags_.band_join == "keys") return false;
  if (w_.size == 1) return true;
  // auto at P > 1: band ranges (several times less CPU) while every rank's
  // copies of the distinct fingerprints take at most a quarter of what its
  // node offers each of its ranks; band keys (nothing of the whole corpus
  // on a rank) beyond. Every rank's verdict is gathered, so the choice is
  // the same on all of them.
  const uint64_t budget = NodeMemoryBytes() / 4 / static_cast<uint64_t>(RanksOnThisNode(w_));
  const bool fits = groups_.groups <= budget / kBandRangeBytesPerGroup;
  bool all = true;
  for (const uint64_t v : AllGatherU64(w_, fits ? 1 : 0)) all = all && v == 1;
  return all;
}

Status Run::Plan() {
  const DedupConfig& c = *config_;
  const DedupJob& job = *c.job;
  // Stream mode is sequential: rank 0 runs it whole in the join stage.
  if (c.options.mode != DedupMode::kCluster) return Status::OK();
  // The options are checked first, the same way on every rank (with the
  // fingerprints' width over the ranks, 1 when they mix).
  uint64_t mine = 0;
  for (const DedupDocument& d : own_.docs) {
    if (d.empty) continue;
    const auto b = static_cast<uint64_t>(d.fingerprint.bits());
    mine = mine == 0 || mine == b ? b : 1;
  }
  int bits = 0;
  for (const uint64_t b : AllGatherU64(w_, mine)) {
    if (b != 0) bits = bits == 0 || bits == static_cast<int>(b) ? static_cast<int>(b) : 1;
  }
  NEARDUP_RETURN_IF_ERROR(DedupJoinPlan::Create(job, c.options, 0, {}, bits).status());
  // Identical documents grouped over the ranks (group.h).
  const auto t = std::chrono::steady_clock::now();
  const DocumentKey key = IdentityKeyOf(job, own_.docs, own_.signatures);
  Traffic traffic;
  Status status = GroupOverRanks(w_, own_.docs, key, first_[w_.rank], &groups_, &traffic);
  // The plan needs the keys of a sample of the groups (SimHash: the band
  // layout's cost model reads the distances of up to 4,096 pairs): each
  // rank sends those of its key range, all-gathered in rank (group) order,
  // 24 bytes each. No rank holds the other distinct keys.
  std::vector<std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample;
  const std::vector<std::pair<uint64_t, uint64_t>>& owned = groups_.owned_keys;
  band_ranges_ = ChooseBandRanges();
  // The plan made, on this rank: kept with its report, or its error.
  const auto adopt = [&](Result<std::unique_ptr<DedupJoinPlan>> plan) {
    if (!plan.ok()) return plan.status();
    plan_ = std::move(*plan);
    join_report_ = plan_->report();
    join_report_.group_seconds = Since(t);
    return Status::OK();
  };
  if (PlanNeedsDistinctKeys(job) && BandRanges()) {
    // --band-join ranges: every distinct key on every rank, in group order
    // (each rank's range, all-gathered in rank order; 16 bytes each), and
    // the plan made from them all (Split::kBandRanges).
    std::vector<std::pair<uint64_t, uint64_t>> keys =
        KeysOf(AllGatherBytes(w_, BytesOf(owned), &traffic));
    if (status.ok()) status = CheckAllKeys(keys);
    if (status.ok()) {
      status = adopt(DedupJoinPlan::Create(job, c.options, groups_.groups, std::move(keys), bits));
    }
  } else if (PlanNeedsDistinctKeys(job)) {
    std::string mine;
    const uint64_t first = groups_.first_owned;
    for (const uint64_t g : PlanSampleGroups(job, groups_.groups)) {
      if (g >= first && g - first < owned.size()) {
        const std::pair<uint64_t, uint64_t> key = owned[g - first];
        AppendPod(SampledKey{g, key.first, key.second}, &mine);
      }
    }
    for (const SampledKey& k : DecodePods<SampledKey>(AllGatherBytes(w_, mine, &traffic))) {
      sample.push_back({k.group, {k.hi, k.lo}});
    }
  }
  if (status.ok() && plan_ == nullptr) {
    status = adopt(DedupJoinPlan::CreateSampled(job, c.options, groups_.groups, sample, bits));
  }
  // A join on one process (SimHash's exact join): every distinct key to rank
  // 0, in group order (16 bytes each).
  const bool on_rank_0 = plan_ != nullptr && plan_->split() == DedupJoinPlan::Split::kNone &&
                         PlanNeedsDistinctKeys(job) && !BandRanges() && groups_.groups >= 2;
  if (AllRanksOk(w_, status) && on_rank_0) {
    std::string all = GatherBytes(w_, BytesOf(owned), 0, &traffic);
    if (w_.rank == 0) {
      std::vector<std::pair<uint64_t, uint64_t>> keys = KeysOf(all);
      status = CheckAllKeys(keys);
      plan_->SetDistinctKeys(std::move(keys));
    }
  }
  // The band-key join takes the owned keys as its groups' signatures (Join);
  // otherwise they are done with.
  if (plan_ == nullptr || plan_->split() != DedupJoinPlan::Split::kBandKeys ||
      !PlanNeedsDistinctKeys(job)) {
    std::vector<std::pair<uint64_t, uint64_t>>().swap(groups_.owned_keys);
  }
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back(
      {"plan", 0, moved[0], {{"groups", groups_.groups}, {"rounds", traffic.rounds}}});
  return status;
}

Status Run::JoinBandRanges(std::vector<IdPair>* pairs, BandJoinStats* total, size_t* computed,
                           size_t* units) {
  const DedupOptions options = JoinOptions();
  const auto bands = static_cast<size_t>(plan_->bands());
  const size_t ranges = std::min<size_t>(bands, 4 * static_cast<size_t>(w_.size));
  *units = ranges;
  std::vector<IdPair> range_pairs;
  for (size_t j = static_cast<size_t>(w_.rank); j < ranges; j += static_cast<size_t>(w_.size)) {
    const int begin = static_cast<int>(j * bands / ranges);
    const int end = static_cast<int>((j + 1) * bands / ranges);
    const std::string path = RangePath(flags_.work_dir, j, ranges);
    const std::string what = "join: band range " + std::to_string(j) + " of " +
                             std::to_string(ranges) + " (bands " + std::to_string(begin) + ".." +
                             std::to_string(end - 1) + ")";
    if (flags_.resume) {
      auto bytes = ReadChecked(path);
      if (bytes.ok()) {
        auto got = DecodePairs(*bytes, path);
        if (got.ok()) {
          pairs->insert(pairs->end(), got->begin(), got->end());
          (*log_)(what + ": done in an earlier run, skipped");
          continue;
        }
      }
    }
    BandJoinStats stats;
    NEARDUP_RETURN_IF_ERROR(plan_->JoinBands(options, begin, end, &range_pairs, &stats));
    total->candidates += stats.candidates;
    total->tested += stats.tested;
    total->large_buckets += stats.large_buckets;
    NEARDUP_RETURN_IF_ERROR(WriteFileAtomically(path, EncodePairs(range_pairs)));
    (*log_)(what + ": " + std::to_string(range_pairs.size()) + " pairs");
    pairs->insert(pairs->end(), range_pairs.begin(), range_pairs.end());
    ++*computed;
    if (FailAt(w_, "band")) std::raise(SIGKILL);
  }
  return Status::OK();
}

Status Run::JoinBandKeyRounds(std::vector<IdPair>* pairs, BandJoinStats* total, size_t* computed,
                              size_t* units, ExchangeTraffic* traffic) {
  // This rank's groups and their join signatures: when the method has
  // signatures (MinHash), the groups whose first document is here, with
  // their documents' signatures (own_.signatures); else the groups of this
  // rank's key range (the grouping's), their keys as signatures (SimHash:
  // the fingerprints, 16 bytes each).
  std::vector<GroupRep> reps;
  std::vector<uint32_t> key_signatures;
  std::span<const uint32_t> signatures = own_.signatures;
  if (SignatureWords(*config_->job) > 0) {
    for (size_t i = 0; i < own_.docs.size(); ++i) {
      if ((groups_.flags[i] & DistributedGroups::kFirst) != 0) {
        reps.push_back({groups_.group[i], i});
      }
    }
    std::sort(reps.begin(), reps.end(),
              [](const GroupRep& a, const GroupRep& b) { return a.group < b.group; });
  } else {
    key_signatures.reserve(4 * groups_.owned_keys.size());
    for (size_t k = 0; k < groups_.owned_keys.size(); ++k) {
      reps.push_back({groups_.first_owned + k, k});
      AppendKeySignature(groups_.owned_keys[k], &key_signatures);
    }
    std::vector<std::pair<uint64_t, uint64_t>>().swap(groups_.owned_keys);
    signatures = key_signatures;
  }
  ExchangeOptions o;
  o.signature_words = JoinSignatureWords(*config_->job);
  o.bands = plan_->bands();
  o.components_only = ComponentsOnly(JoinOptions());
  // A round's entries take at most what the rank's groups take (their
  // signatures and 16 bytes each), and 256 MiB: the join adds no more than
  // the rank holds anyway (SimHash: about one band a round).
  uint64_t most = 0;
  for (const uint64_t r : AllGatherU64(w_, reps.size())) most = std::max(most, r);
  o.round_bytes = std::min<uint64_t>(
      o.round_bytes, std::max<uint64_t>(most * (o.signature_words * 4 + 16), uint64_t{1} << 20));
  if (const char* env = std::getenv("NEARDUP_MPI_ROUND_BYTES")) {
    o.round_bytes = std::max<uint64_t>(std::strtoull(env, nullptr, 10), 1);
  }
  const std::vector<ExchangeRound> rounds = PlanExchange(w_, o, reps.size());
  *units = rounds.size();
  // Every round is collective: an error ends this rank's writing, not its
  // part in the exchanges (the other ranks are in them).
  Status status = Status::OK();
  std::vector<IdPair> round_pairs;
  BandBuckets buckets;  // a band cut into parts: computed for its first part
  for (size_t t = 0; t < rounds.size(); ++t) {
    const ExchangeRound& round = rounds[t];
    char name[96];
    std::snprintf(name, sizeof name, "/join/round-%04zu-of-%04zu-rank-%04d.pairs", t, rounds.size(),
                  w_.rank);
    const std::string path = flags_.work_dir + name;
    std::string what = "join: band-key round " + std::to_string(t) + " of " +
                       std::to_string(rounds.size()) + " (bands " +
                       std::to_string(round.band_begin) + ".." + std::to_string(round.band_end - 1);
    if (round.parts > 1) {
      what += ", part " + std::to_string(round.part) + " of " + std::to_string(round.parts);
    }
    what += ")";
    // A round every rank finished in an earlier run is skipped by all.
    std::optional<std::vector<IdPair>> earlier;
    if (flags_.resume) {
      auto bytes = ReadChecked(path);
      if (bytes.ok()) {
        auto got = DecodePairs(*bytes, path);
        if (got.ok()) earlier = std::move(*got);
      }
    }
    std::vector<uint64_t> done = {earlier ? 1u : 0u};
    AllReduceSum(w_, &done);
    if (done[0] == static_cast<uint64_t>(w_.size)) {
      pairs->insert(pairs->end(), earlier->begin(), earlier->end());
      (*log_)(what + ": done in an earlier run, skipped");
      continue;
    }
    round_pairs.clear();
    BandJoinStats stats;
    JoinRound(w_, *plan_, o, round, reps, signatures, &round_pairs, &stats, traffic, &buckets);
    MergePairs(&round_pairs);
    total->candidates += stats.candidates;
    total->tested += stats.tested;
    total->large_buckets += stats.large_buckets;
    if (status.ok()) status = WriteFileAtomically(path, EncodePairs(round_pairs));
    (*log_)(what + ": " + std::to_string(round_pairs.size()) + " pairs");
    pairs->insert(pairs->end(), round_pairs.begin(), round_pairs.end());
    ++*computed;
    // After the second round (when there are two): every rank has finished
    // the first by then (this rank's exchanges of the second needed theirs).
    if (*computed == std::min<size_t>(2, rounds.size()) && FailAt(w_, "band")) std::raise(SIGKILL);
  }
  return status;
}

Status Run::Join() {
  if (FailAt(w_, "alloc")) throw std::bad_alloc();
  if (FailAt(w_, "alloc-worker")) FailAllocationOnAWorker();
  if (FailAt(w_, "stop")) std::raise(SIGSTOP);
  // Rank 0: whether every rank joined its part.
  bool complete = false;
  const Status joined = plan_ == nullptr || plan_->split() == DedupJoinPlan::Split::kNone
                            ? JoinOnRankZero(&complete)
                            : JoinOverRanks(&complete);
  // The short-document rule: collective, whatever this rank's join gave.
  const Status short_rule = JoinShortDocuments(joined.ok() && complete);
  NEARDUP_RETURN_IF_ERROR(joined);
  NEARDUP_RETURN_IF_ERROR(short_rule);
  return complete ? WriteMarker(flags_.work_dir, "join") : Status::OK();
}

Status Run::JoinShortDocuments(bool use) {
  const DedupOptions& options = config_->options;
  // The same on every rank: the rule is off, or every rank takes part.
  if (options.short_features == 0 || options.mode != DedupMode::kCluster) return Status::OK();
  if (options.short_rule == ShortRule::kSketch) return JoinShortSketches(use);
  const auto t = std::chrono::steady_clock::now();
  // The documents that may take part (fewer than short_features /
  // short_jaccard features: few on a corpus of long texts) to rank 0, each
  // with its group and fingerprint, 56 + 8 bytes an element; freed here.
  struct Entry {
    uint64_t group;
    uint64_t elements;
    PackedDocument doc;
  };
  std::string mine;
  for (size_t i = 0; i < own_.short_sets.size(); ++i) {
    const std::vector<uint64_t>& set = own_.short_sets[i];
    if (set.empty() || groups_.group[i] == UINT64_MAX) continue;
    AppendPod(Entry{groups_.group[i], set.size(), Pack(own_.docs[i])}, &mine);
    mine.append(reinterpret_cast<const char*>(set.data()), set.size() * sizeof(uint64_t));
  }
  std::vector<std::vector<uint64_t>>().swap(own_.short_sets);
  Traffic traffic;
  std::string all = GatherBytes(w_, mine, 0, &traffic);
  std::string().swap(mine);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  Status status = Status::OK();
  size_t documents = 0, added = 0;
  if (w_.rank == 0 && use) {
    std::vector<std::vector<uint64_t>> sets;
    std::vector<uint64_t> groups;
    std::vector<neardup::Fingerprint> fingerprints;  // (Run::Fingerprint is the stage)
    std::string_view rest = all;
    while (status.ok() && !rest.empty()) {
      Entry e;
      if (rest.size() < sizeof e) break;
      std::memcpy(&e, rest.data(), sizeof e);
      rest.remove_prefix(sizeof e);
      if (e.elements > rest.size() / sizeof(uint64_t)) break;
      std::vector<uint64_t>& set = sets.emplace_back(e.elements);
      std::memcpy(set.data(), rest.data(), e.elements * sizeof(uint64_t));
      rest.remove_prefix(e.elements * sizeof(uint64_t));
      groups.push_back(e.group);
      fingerprints.push_back(Unpack(e.doc).fingerprint);
    }
    if (!rest.empty()) status = Status::Corruption("join: short documents lost in the exchange");
    std::string().swap(all);
    documents = sets.size();
    if (status.ok()) {
      auto got = AddShortRulePairs(options, sets, groups, fingerprints, &group_pairs_);
      if (got.ok()) {
        added = *got;
        result_.join.short_pairs = added;
      } else {
        status = got.status();
      }
    }
  }
  stages_.push_back({"short_rule",
                     Since(t),
                     moved[0],
                     {{"documents_on_rank_0", documents}, {"pairs_added", added}}});
  return status;
}

Status Run::JoinShortSketches(bool use) {
  const DedupOptions& options = config_->options;
  const auto t = std::chrono::steady_clock::now();
  // The groups that may take part, each once: the sketch of the group's
  // first member (one process joins the groups' first members), with its
  // group and fingerprint, 152 + 56 bytes each, to rank 0.
  struct Entry {
    uint64_t group;
    PackedDocument doc;
    JaccardSketch sketch;
  };
  Status status = Status::OK();
  if (own_.sketches.size() != own_.docs.size()) {
    // Still collective: this rank sends nothing and fails the stage.
    status = Status::Corruption("join: the sketch short rule needs every document's sketch");
  }
  std::string mine;
  for (size_t i = 0; status.ok() && i < own_.docs.size(); ++i) {
    if (groups_.group[i] == UINT64_MAX || (groups_.flags[i] & DistributedGroups::kFirst) == 0 ||
        !TakesPartInShortSketchRule(options, own_.sketches[i])) {
      continue;
    }
    AppendPod(Entry{groups_.group[i], Pack(own_.docs[i]), own_.sketches[i]}, &mine);
  }
  Traffic traffic;
  std::string all = GatherBytes(w_, mine, 0, &traffic);
  std::string().swap(mine);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  size_t documents = 0, added = 0;
  if (w_.rank == 0 && use && status.ok()) {
    if (all.size() % sizeof(Entry) != 0) {
      status = Status::Corruption("join: short documents' sketches lost in the exchange");
    } else {
      documents = all.size() / sizeof(Entry);
      std::vector<JaccardSketch> sketches(documents);
      std::vector<uint64_t> groups(documents);
      std::vector<neardup::Fingerprint> fingerprints(documents);  // (Run::Fingerprint: the stage)
      for (size_t e = 0; e < documents; ++e) {
        Entry entry;
        std::memcpy(&entry, all.data() + e * sizeof entry, sizeof entry);
        sketches[e] = entry.sketch;
        groups[e] = entry.group;
        fingerprints[e] = Unpack(entry.doc).fingerprint;
      }
      std::string().swap(all);
      auto got = AddShortSketchRulePairs(options, sketches, groups, fingerprints, &group_pairs_);
      if (got.ok()) {
        added = *got;
        result_.join.short_pairs = added;
      } else {
        status = got.status();
      }
    }
  }
  stages_.push_back(
      {"short_rule",
       Since(t),
       moved[0],
       {{"rule", "sketch"}, {"documents_on_rank_0", documents}, {"pairs_added", added}}});
  return status;
}

Status Run::JoinOverRanks(bool* complete) {
  // This rank's pairs: band-key rounds (the keys or signatures stay on
  // their ranks) or, --band-join ranges, band ranges (every rank holds the
  // distinct keys).
  const bool ranges = plan_->split() == DedupJoinPlan::Split::kBandRanges;
  std::vector<IdPair> pairs;
  BandJoinStats total;
  size_t computed = 0, units = 0;
  ExchangeTraffic exchange;
  const Status joined = ranges ? JoinBandRanges(&pairs, &total, &computed, &units)
                               : JoinBandKeyRounds(&pairs, &total, &computed, &units, &exchange);
  MergePairs(&pairs);
  // Each pair to the rank of its first group, where the copies that two
  // ranges or buckets found become one (their number is the join's count).
  Traffic traffic;
  const std::vector<IdPair> owned = RoutePairs(w_, pairs, &traffic);
  std::vector<IdPair>().swap(pairs);
  std::vector<uint64_t> sums = {total.candidates, total.tested,          total.large_buckets,
                                computed,         joined.ok() ? 0u : 1u, owned.size()};
  AllReduceSum(w_, &sums);
  if (NeedsAllPairs()) {
    // --pairs-out lists every pair, --cluster center tests them all: rank 0
    // gets them (each once already).
    const std::string all = GatherBytes(w_, EncodePairs(owned), 0, &traffic);
    if (w_.rank == 0) {
      group_pairs_ = std::move(*DecodePairs(all, "gathered pairs"));
      MergePairs(&group_pairs_);
    }
  } else {
    group_pairs_ = MergeForests(w_, SpanningForest(owned), &traffic);
  }
  std::vector<uint64_t> moved = {traffic.bytes_sent, exchange.keys.bytes_sent,
                                 exchange.signatures.bytes_sent};
  AllReduceSum(w_, &moved);
  // Band ranges: the ranges every rank computed; band-key rounds: this
  // rank's count (every rank takes part in every round).
  nlohmann::ordered_json extra = {
      {ranges ? "band_ranges" : "band_key_rounds", units},
      {ranges ? "ranges_computed" : "rounds_computed", ranges ? sums[3] : computed},
      {"pairs", sums[5]},
      {"pairs_on_rank_0", group_pairs_.size()}};
  if (!ranges) {
    extra["band_key_bytes"] = moved[1];
    extra["signature_bytes"] = moved[2];
  }
  stages_.push_back({"join", 0, moved[0] + moved[1] + moved[2], extra});
  NEARDUP_RETURN_IF_ERROR(joined);
  // Rank 0 goes on only when every rank joined its part (EndStage names
  // the ranks that did not).
  if (sums[4] > 0 || w_.rank != 0) return Status::OK();
  result_.join = join_report_;
  result_.join.candidates = sums[0];
  result_.join.tested = sums[1];
  result_.join.large_buckets = sums[2];
  result_.join.confirmed = sums[5];
  *complete = true;
  return Status::OK();
}

Status Run::JoinOnRankZero(bool* complete) {
  if (w_.rank != 0) return Status::OK();
  (*log_)("join: not banded; rank 0 joins everything");
  DedupOptions options = JoinOptions();
  if (options.mode == DedupMode::kStream) {
    options.sketches = all_.sketches;
    NEARDUP_ASSIGN_OR_RETURN(result_, Dedup(all_.docs, options));
  } else {
    result_.join = join_report_;
    const auto t = std::chrono::steady_clock::now();
    NEARDUP_RETURN_IF_ERROR(plan_->JoinAll(options, &group_pairs_, &result_.join.confirmed));
    result_.join.join_seconds = Since(t);
  }
  *complete = true;
  return Status::OK();
}

}  // namespace neardup::mpi
