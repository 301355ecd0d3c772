// Copyright 2026 The neardup Authors.
//
// neardup-mpi's join stages on synthetic fingerprints, per stage: wall time
// (the slowest rank), CPU time (all ranks), bytes moved, and each rank's peak
// RSS.
//
//   mpirun -np P build/bench/neardup_mpi_dedup_bench N [k] [bits] [threads per rank] [layout]
//
// N fingerprints (default 128 bits): independent random ones, and a near copy
// (d uniform in 1..k bits flipped) of every tenth, planted next to it. Each
// rank makes its own share (the fingerprint stage's stand-in: a real run
// reads and fingerprints text there), then the stages of neardup-mpi run as
// in tools/neardup_mpi/main.cc. Four layouts, for the comparison in one
// build:
//   sorted (default, neardup-mpi's): identical fingerprints grouped over the
//        ranks by a sample sort (group.h), the distinct fingerprints
//        all-gathered (16 bytes each), the plan made on every rank from
//        them; the band join as root's; rank 0 receives only the documents
//        of clusters of two or more (CollectClustered) after the join.
//   root (the layout before): the 40-byte documents gathered on rank 0,
//        which plans once and broadcasts the distinct fingerprints; the band
//        join split into ranges over the ranks; pairs routed to the rank of
//        their first group, reduced to spanning forests, merged in a tree to
//        rank 0, which clusters (union-find, keep policy) the documents of
//        clusters of two or more only (SelectClustered).
//   bandkeys (neardup-mpi's since issue 30): grouped as sorted, but only
//        the keys of the groups the band layout's cost model samples are
//        all-gathered (DedupJoinPlan::CreateSampled); each rank keeps the
//        fingerprints of its key range, and the join exchanges band buckets
//        in rounds (band_exchange.h, the round budget of join.cc); then as
//        sorted.
//   dense: root, but rank 0 clusters every document (the layout before).
//   allgather (the layout before that): documents all-gathered, the plan
//        repeated on every rank, every pair gathered on rank 0, every
//        document clustered.
// The reference in the same run: the planted pairs found, against the band
// layout's computed recall (identical for both layouts and every P); and
// P = 1 of the same N for the scaling ratio (run the command for each P).

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "band_exchange.h"
#include "dedup/stages.h"
#include "forest.h"
#include "group.h"
#include "mpi_comm.h"
#include "neardup/dedup.h"
#include "neardup/dedup_job.h"
#include "neardup/dedup_over_ranks.h"
#include "shard.h"
#include "util/random.h"

namespace neardup::mpi {
namespace {

// What the band join needs of a plan made on rank 0, for the "root" layout's
// broadcast: the join report (band layout), the width and the distinct
// fingerprints (16 bytes per group).
std::string EncodeSimHashJoinPlan(const dedup_internal::SimHashPlan& plan) {
  static_assert(std::is_trivially_copyable_v<DedupJoinReport>);
  std::string out(reinterpret_cast<const char*>(&plan.report), sizeof plan.report);
  const auto bits = static_cast<int64_t>(plan.bits);
  out.append(reinterpret_cast<const char*>(&bits), sizeof bits);
  out.append(reinterpret_cast<const char*>(plan.words.data()), plan.words.size() * 16);
  return out;
}

dedup_internal::SimHashPlan DecodeSimHashJoinPlan(const std::string& bytes) {
  dedup_internal::SimHashPlan plan;
  std::memcpy(&plan.report, bytes.data(), sizeof plan.report);
  int64_t bits = 0;
  std::memcpy(&bits, bytes.data() + sizeof plan.report, sizeof bits);
  plan.bits = static_cast<int>(bits);
  const size_t at = sizeof plan.report + sizeof bits;
  plan.words.resize((bytes.size() - at) / 16);
  std::memcpy(static_cast<void*>(plan.words.data()), bytes.data() + at, plan.words.size() * 16);
  return plan;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Fingerprint i: random, or (every tenth, i % 10 == 1) a copy of i - 1 with
// d in 1..k bits flipped.
Fingerprint Synthetic(uint64_t i, int k, int bits) {
  const auto random = [bits](uint64_t j) {
    const uint64_t hi = SplitMix64(j * 2 + 1), lo = SplitMix64(j * 2 + 2);
    return bits == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
  };
  if (i % 10 != 1) return random(i);
  Fingerprint f = random(i - 1);
  uint64_t hi = f.hi(), lo = f.lo();
  uint64_t state = SplitMix64(i ^ 0x706c616e74ULL);
  const int d = 1 + static_cast<int>(state % static_cast<uint64_t>(k));
  std::vector<int> pos(static_cast<size_t>(bits));
  for (int b = 0; b < bits; ++b) pos[static_cast<size_t>(b)] = b;
  for (int t = 0; t < d; ++t) {
    state = SplitMix64(state);
    const int j = t + static_cast<int>(state % static_cast<uint64_t>(bits - t));
    std::swap(pos[static_cast<size_t>(t)], pos[static_cast<size_t>(j)]);
    const int p = pos[static_cast<size_t>(t)];
    if (p >= 64) {
      hi ^= uint64_t{1} << (p - 64);
    } else {
      lo ^= uint64_t{1} << p;
    }
  }
  return bits == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(hi, lo);
}

struct Stage {
  const char* name;
  double wall = 0;     // slowest rank
  double cpu = 0;      // all ranks
  uint64_t bytes = 0;  // sent, all ranks
};

int Main(int argc, char** argv) {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  if (argc < 2) {
    if (w.rank == 0)
      std::fprintf(
          stderr,
          "usage: %s N [k] [bits] [threads per rank] [sorted|bandkeys|root|dense|allgather]\n",
          argv[0]);
    return 2;
  }
  const uint64_t n = std::strtoull(argv[1], nullptr, 10);
  const int k = argc > 2 ? std::atoi(argv[2]) : 24;
  const int bits = argc > 3 ? std::atoi(argv[3]) : 128;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 1;
  const std::string layout = argc > 5 ? argv[5] : "sorted";
  const bool allgather = layout == "allgather";
  const bool bandkeys = layout == "bandkeys";
  const bool sorted = layout == "sorted" || bandkeys;
  // Rank 0 clusters every document (dense: before) or only those of clusters
  // of two or more (neardup-mpi's).
  const bool dense = allgather || layout == "dense";
  if (!sorted && !dense && layout != "root") {
    if (w.rank == 0) std::fprintf(stderr, "unknown layout %s\n", layout.c_str());
    return 2;
  }
  // bandkeys: the library's plan (by method: a default job, SimHash).
  auto job = DedupJob::Create(DedupJobOptions{});
  if (!job.ok()) return 1;
  DedupOptions options;
  options.k = k;
  options.threads = threads;
  options.join = DedupJoin::kBanded;

  std::vector<Stage> stages;
  double wall = 0, cpu = 0;
  const auto begin = [&] {
    MPI_Barrier(MPI_COMM_WORLD);
    wall = Now();
    cpu = CpuSeconds();
  };
  const auto end = [&](const char* name, uint64_t bytes) {
    double my_cpu = CpuSeconds() - cpu, my_wall = Now() - wall;
    double total_cpu = 0, max_wall = 0;
    MPI_Reduce(&my_cpu, &total_cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_wall, &max_wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    std::vector<uint64_t> b = {bytes};
    AllReduceSum(w, &b);
    stages.push_back({name, max_wall, total_cpu, b[0]});
  };

  // 1. Fingerprints of this rank's share.
  begin();
  const uint64_t lo = n * static_cast<uint64_t>(w.rank) / static_cast<uint64_t>(w.size);
  const uint64_t hi = n * static_cast<uint64_t>(w.rank + 1) / static_cast<uint64_t>(w.size);
  std::string packed((hi - lo) * sizeof(PackedDocument), '\0');
  for (uint64_t i = lo; i < hi; ++i) {
    DedupDocument d;
    d.fingerprint = Synthetic(i, k, bits);
    d.length = 1000 + i % 977;
    const PackedDocument p = Pack(d);
    std::memcpy(packed.data() + (i - lo) * sizeof p, &p, sizeof p);
  }
  end("fingerprint (synthetic)", 0);

  // 2. The documents to rank 0 (root) or to every rank (allgather); sorted:
  // each rank's own, grouped over the ranks, the distinct fingerprints
  // all-gathered.
  begin();
  Traffic traffic;
  std::vector<DedupDocument> docs, own;
  DistributedGroups groups;
  std::vector<std::pair<uint64_t, uint64_t>> words;
  if (sorted) {
    own.resize(packed.size() / sizeof(PackedDocument));
    for (size_t i = 0; i < own.size(); ++i) {
      PackedDocument p;
      std::memcpy(&p, packed.data() + i * sizeof p, sizeof p);
      own[i] = Unpack(p);
    }
    std::string().swap(packed);
    const Status grouped = GroupOverRanks(
        w, own,
        [&own](size_t i) {
          return std::pair<uint64_t, uint64_t>(own[i].fingerprint.hi(), own[i].fingerprint.lo());
        },
        lo, &groups, &traffic);
    if (!grouped.ok()) return 1;
  }
  std::vector<std::pair<uint64_t, std::pair<uint64_t, uint64_t>>> sample;
  if (bandkeys) {
    std::string mine;
    for (const uint64_t g : PlanSampleGroups(**job, groups.groups)) {
      if (g >= groups.first_owned && g - groups.first_owned < groups.owned_keys.size()) {
        const auto key = groups.owned_keys[g - groups.first_owned];
        for (const uint64_t x : {g, key.first, key.second}) AppendPod(x, &mine);
      }
    }
    const std::vector<uint64_t> got = DecodePods<uint64_t>(AllGatherBytes(w, mine, &traffic));
    for (size_t i = 0; i + 2 < got.size(); i += 3)
      sample.push_back({got[i], {got[i + 1], got[i + 2]}});
  } else if (sorted) {
    const auto& keys = groups.owned_keys;
    const std::string all = AllGatherBytes(
        w, std::string_view(reinterpret_cast<const char*>(keys.data()), keys.size() * 16),
        &traffic);
    words.resize(all.size() / 16);
    std::memcpy(static_cast<void*>(words.data()), all.data(), all.size());
    std::vector<std::pair<uint64_t, uint64_t>>().swap(groups.owned_keys);
  } else {
    std::string all =
        allgather ? AllGatherBytes(w, packed, &traffic) : GatherBytes(w, packed, 0, &traffic);
    std::string().swap(packed);
    docs.resize(all.size() / sizeof(PackedDocument));
    for (size_t i = 0; i < docs.size(); ++i) {
      PackedDocument p;
      std::memcpy(&p, all.data() + i * sizeof p, sizeof p);
      docs[i] = Unpack(p);
    }
  }
  end(sorted      ? "group over ranks + distinct all-gathered"
      : allgather ? "all-gather"
                  : "gather on rank 0",
      traffic.bytes_sent);

  // 3. Plan: on every rank (allgather: from every document; sorted: from the
  // distinct fingerprints), or on rank 0 and broadcast (root).
  begin();
  Traffic plan_traffic;
  dedup_internal::SimHashPlan plan;
  std::unique_ptr<DedupJoinPlan> sampled;
  if (bandkeys) {
    auto made = DedupJoinPlan::CreateSampled(**job, options, groups.groups, sample, bits);
    if (!made.ok()) return 1;
    sampled = std::move(*made);
    plan.report = sampled->report();
  } else if (sorted || allgather || w.rank == 0) {
    auto planned = sorted ? dedup_internal::PlanSimHashDistinct(std::move(words), bits, options)
                          : dedup_internal::PlanSimHash(docs, options);
    if (!planned.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", w.rank, planned.status().message().c_str());
      return 1;
    }
    plan = std::move(*planned);
  }
  if (!allgather && !sorted) {
    std::string blob = w.rank == 0 ? EncodeSimHashJoinPlan(plan) : std::string();
    BroadcastBytes(w, &blob, 0, &plan_traffic);
    if (w.rank != 0) plan = DecodeSimHashJoinPlan(blob);
  }
  const int bands = plan.report.bands.bands;
  end(bandkeys    ? "plan (every rank, sampled keys)"
      : sorted    ? "plan (every rank, distinct)"
      : allgather ? "plan (every rank)"
                  : "plan (rank 0) + broadcast",
      plan_traffic.bytes_sent);

  // 4. Band join of this rank's ranges.
  begin();
  const size_t ranges =
      std::min<size_t>(static_cast<size_t>(bands), 4 * static_cast<size_t>(w.size));
  std::vector<IdPair> pairs, range_pairs;
  uint64_t tested = 0;
  uint64_t exchanged = 0;
  size_t rounds = 0;
  if (bandkeys) {
    // As join.cc: the groups of this rank's key range, their fingerprints as
    // signatures; a round's entries at most what the groups take.
    std::vector<GroupRep> reps;
    std::vector<uint32_t> signatures;
    for (size_t g = 0; g < groups.owned_keys.size(); ++g) {
      reps.push_back({groups.first_owned + g, g});
      AppendKeySignature(groups.owned_keys[g], &signatures);
    }
    std::vector<std::pair<uint64_t, uint64_t>>().swap(groups.owned_keys);
    ExchangeOptions o;
    o.signature_words = JoinSignatureWords(**job);
    o.bands = bands;
    o.components_only = ComponentsOnly(options);
    uint64_t most = 0;
    for (const uint64_t r : AllGatherU64(w, reps.size())) most = std::max(most, r);
    o.round_bytes = std::min<uint64_t>(
        o.round_bytes, std::max<uint64_t>(most * (o.signature_words * 4 + 16), uint64_t{1} << 20));
    const std::vector<ExchangeRound> plan_rounds = PlanExchange(w, o, reps.size());
    rounds = plan_rounds.size();
    ExchangeTraffic traffic_x;
    BandBuckets buckets;
    for (const ExchangeRound& round : plan_rounds) {
      range_pairs.clear();
      BandJoinStats stats;
      JoinRound(w, *sampled, o, round, reps, signatures, &range_pairs, &stats, &traffic_x,
                &buckets);
      tested += stats.tested;
      dedup_internal::MergePairs(&range_pairs);
      pairs.insert(pairs.end(), range_pairs.begin(), range_pairs.end());
    }
    exchanged = traffic_x.keys.bytes_sent + traffic_x.signatures.bytes_sent;
  }
  for (size_t j = static_cast<size_t>(w.rank); j < ranges && !bandkeys;
       j += static_cast<size_t>(w.size)) {
    BandJoinStats stats;
    const Status s = dedup_internal::SimHashJoinBands(
        plan, options, static_cast<int>(j * static_cast<size_t>(bands) / ranges),
        static_cast<int>((j + 1) * static_cast<size_t>(bands) / ranges), &range_pairs, &stats);
    if (!s.ok()) return 1;
    tested += stats.tested;
    pairs.insert(pairs.end(), range_pairs.begin(), range_pairs.end());
  }
  dedup_internal::MergePairs(&pairs);
  end(bandkeys ? "band join (band-key rounds)" : "band join", exchanged);

  // 5. Pairs to rank 0 (every pair, or forests merged in a tree), clusters
  // and keep policy there.
  begin();
  Traffic pair_traffic;
  uint64_t distinct = 0;
  if (allgather) {
    const std::string gathered = GatherBytes(w, EncodePairs(pairs), 0, &pair_traffic);
    if (w.rank == 0) {
      pairs = std::move(*DecodePairs(gathered, "pairs"));
      dedup_internal::MergePairs(&pairs);
      distinct = pairs.size();
    }
  } else {
    const std::vector<IdPair> owned = RoutePairs(w, pairs, &pair_traffic);
    std::vector<uint64_t> count = {owned.size()};
    AllReduceSum(w, &count);
    distinct = count[0];
    pairs = MergeForests(w, SpanningForest(owned), &pair_traffic);
  }
  const size_t pairs_on_rank_0 = pairs.size();
  DedupResult result;
  std::vector<uint64_t> positions;  // result.records[j] is document positions[j]
  if (w.rank == 0 && dense) {
    dedup_internal::FinishSimHash(docs, plan, pairs, options, &result);
    positions.resize(n);
    std::iota(positions.begin(), positions.end(), uint64_t{0});
  } else if (sorted) {
    Collected collected;
    if (!CollectClustered(w, own, groups, lo, pairs, {}, 0, &collected, &pair_traffic).ok()) {
      return 1;
    }
    ClusteredDocuments& sub = collected.clustered;
    dedup_internal::SimHashPlan clustered;
    clustered.groups = std::move(sub.groups);
    if (w.rank == 0)
      dedup_internal::FinishSimHash(sub.docs, clustered, sub.pairs, options, &result);
    positions = std::move(sub.positions);
  } else if (w.rank == 0) {
    ClusteredDocuments sub = SelectClustered(docs, plan.groups, pairs);
    dedup_internal::SimHashPlan clustered;
    clustered.groups = std::move(sub.groups);
    dedup_internal::FinishSimHash(sub.docs, clustered, sub.pairs, options, &result);
    positions = std::move(sub.positions);
  }
  // A document's cluster (its own when it has no record).
  const auto cluster_of = [&](uint64_t i) -> uint64_t {
    const auto it = std::lower_bound(positions.begin(), positions.end(), i);
    if (it == positions.end() || *it != i) return i;
    return positions[result.records[static_cast<size_t>(it - positions.begin())].cluster];
  };
  end(allgather ? "pairs to rank 0 + cluster"
      : sorted  ? "route + forest merge + clustered to rank 0 + cluster"
                : "route + forest merge + cluster",
      pair_traffic.bytes_sent);

  std::vector<uint64_t> sums = {tested};
  AllReduceSum(w, &sums);
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  const std::vector<uint64_t> rss = AllGatherU64(w, static_cast<uint64_t>(u.ru_maxrss));  // KB
  if (w.rank == 0) {
    // The reference: planted pairs (i - 1, i) found.
    size_t planted = 0, found = 0;
    for (uint64_t i = 1; i < n; i += 10) {
      if (HammingDistance(Synthetic(i, k, bits), Synthetic(i - 1, k, bits)) > k) continue;
      ++planted;
      found += cluster_of(i) == cluster_of(i - 1);
    }
    std::printf(
        "N = %llu, %d bits, k = %d, P = %d ranks x %d threads: r = %d, L = %d bands in %zu "
        "ranges or %zu rounds (layout %s); %llu candidate tests, %llu distinct pairs (%zu on rank "
        "0); planted "
        "pairs clustered %zu of %zu (%.4f; computed recall at k %.4f); peak RSS rank 0 %.0f MB, "
        "largest rank %.0f MB\n",
        static_cast<unsigned long long>(n), bits, k, w.size, threads, plan.report.bands.band_bits,
        bands, ranges, rounds, layout.c_str(), static_cast<unsigned long long>(sums[0]),
        static_cast<unsigned long long>(distinct), pairs_on_rank_0, found, planted,
        planted ? static_cast<double>(found) / static_cast<double>(planted) : 1.0,
        plan.report.bands.recall_at_k, static_cast<double>(rss[0]) / 1024,
        static_cast<double>(*std::max_element(rss.begin() + (w.size > 1), rss.end())) / 1024);
    std::printf(
        "| stage | wall (slowest rank) s | CPU (all ranks) s | bytes moved "
        "|\n|---|---:|---:|---:|\n");
    double total = 0;
    for (const Stage& s : stages) {
      std::printf("| %s | %.2f | %.2f | %llu |\n", s.name, s.wall, s.cpu,
                  static_cast<unsigned long long>(s.bytes));
      total += s.wall;
    }
    std::printf("| total | %.2f | | |\n", total);
  }
  return 0;
}

}  // namespace
}  // namespace neardup::mpi

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const int code = neardup::mpi::Main(argc, argv);
  MPI_Finalize();
  return code;
}
