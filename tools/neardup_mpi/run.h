// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup's run: the stages (main.cc has their order and
// doc/distributed.md their data), one file each: setup.cc, fingerprint.cc
// (fingerprint and gather), join.cc (plan and join), output.cc (cluster,
// assign, write, output).

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_RUN_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_RUN_H_

#include <malloc.h>
#include <mpi.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <system_error>
#include <tuple>

#include "band_exchange.h"
#include "boilerplate_exchange.h"
#include "common.h"
#include "dedup_stages.h"
#include "forest.h"
#include "group.h"
#include "inputs.h"
#include "mpi_comm.h"
#include "neardup/dedup_groups.h"
#include "neardup/dedup_over_ranks.h"
#include "neardup/file.h"
#include "output_files.h"
#include "shard.h"
#include "watchdog.h"
#include "work_dir.h"

namespace neardup::mpi {

namespace fs = std::filesystem;
using cli::DedupConfig;
using cli::DedupFlags;
using neardup::DedupCorpus;

inline double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct MpiFlags {
  DedupFlags dedup;
  std::string work_dir;
  bool resume = false;
  double stall_timeout = 600;  // seconds; 0: no watchdog (watchdog.h)
  // SimHash's band join: "keys" (exchanged band keys), "ranges" (every rank
  // holds the distinct fingerprints and joins ranges of bands), "auto"
  // (ranges at P = 1, keys at P > 1).
  std::string band_join = "auto";
  std::string identity;  // the command line without --resume and --stall-timeout, and P
};

// This process's peak resident set (VmHWM in /proc/self/status), in KB; 0
// where there is none.
inline uint64_t PeakRssKb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// Gives the allocator's free pages back to the system (glibc: malloc_trim;
// elsewhere nothing): a large structure freed in pieces (a shard moved into
// the rank's documents) otherwise stays in the resident set, as free heap
// between live blocks, and the next stage's peak adds to it.
inline void ReleaseFreeMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// The fingerprint stage keeps no input record: --unique-out and
// --duplicates-out read them back from the inputs in the write stage
// (output.cc), so the job is made from the flags without them
// (WithoutRecords) and they are put back into its config's flags after
// (RestoreRecordOutputs).
inline DedupFlags WithoutRecords(DedupFlags flags) {
  flags.unique_out.clear();
  flags.duplicates_out.clear();
  return flags;
}
inline void RestoreRecordOutputs(const DedupFlags& from, DedupFlags* to) {
  to->unique_out = from.unique_out;
  to->duplicates_out = from.duplicates_out;
}

// Fault injection for the tests: NEARDUP_MPI_FAIL_AT=STAGE:RANK kills rank
// RANK (SIGKILL, as an out-of-memory killer would) right after it finished
// its first unit of STAGE (fingerprint: a shard; band: its second band-key
// round; write: its parts; output: rank 0, after
// copying rank 0's part into --output). `term`: rank 0 gets SIGTERM at the
// output point instead (an interrupt while writing); `alloc`: the rank's
// join stage throws std::bad_alloc (a failed allocation) at its start;
// `alloc-worker`: the same on a worker thread of the library's pool;
// `stop`: the rank stops itself (SIGSTOP) there.
bool FailAt(const World& w, const char* stage);

// A failed allocation on this rank: says so, removes this rank's temporary
// outputs and ends the whole job (MPI_Abort: the other ranks may be waiting
// in a collective this rank will never join, and memory is short for
// anything more), exit status 1.
// `what`: the failure ("an allocation failed", "cannot start a thread: ...").
[[noreturn]] void OutOfMemory(const World& w, const std::string& stage,
                              const std::string& what = "an allocation failed");

// One line on stderr and in WORK/log-rank-R.txt: what this rank did.
class Log {
 public:
  Log(const World& w, const std::string& work_dir, bool quiet)
      : w_(w),
        quiet_(quiet),
        file_(work_dir + "/log-rank-" + std::to_string(w.rank) + ".txt", std::ios::app) {}
  void operator()(const std::string& line) {
    file_ << line << "\n";
    file_.flush();
    if (!quiet_) cli::PrintErrorLine("neardup-mpi: rank " + std::to_string(w_.rank) + ": " + line);
  }

 private:
  World w_;
  bool quiet_;
  std::ofstream file_;
};

// The stage report (WORK/report.json and the benchmark): seconds and bytes.
struct StageReport {
  std::string name;
  double seconds = 0;
  uint64_t bytes_moved = 0;  // sent by all ranks together
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

// Collective: whether `status` is OK on every rank.
bool AllRanksOk(const World& w, const Status& status);

// Ends a stage collectively: -1 when every rank succeeded, else the exit
// status (each failed rank has printed its reason; rank 0 names them).
int EndStage(const World& w, const char* stage, const Status& status);

// What rank 0 tells a rank about one of its documents in a cluster of two or
// more (the others are their own singleton clusters, kept).
struct Assignment {
  uint64_t local = 0;  // position among the rank's documents
  DedupRecord record;  // cluster, duplicate, distance, jaccard (nearest: see below)
  std::string nearest_id;
};

class Run {
 public:
  Run(const World& w, MpiFlags flags) : w_(w), flags_(std::move(flags)) {}
  int Main();

 private:
  Status Setup();
  Status SetupStage();
  Status ProbeWorkDir();
  Status CheckInputsSeen(const std::vector<uint64_t>& seen_by_rank_0);
  std::string Where(int rank) const {
    return "rank " + std::to_string(rank) + " (host " + hosts_[static_cast<size_t>(rank)] + ")";
  }
  Status CheckInputsIdentity(const std::vector<InputStat>& stats,
                             const std::vector<uint64_t>& digests);
  Status CountBoilerplate(bool needed);
  Status Fingerprint(bool* any_needed_out);
  Status Gather();
  Status Plan();
  Status Join();
  Status JoinBandRanges(std::vector<IdPair>* pairs, BandJoinStats* total, size_t* computed,
                        size_t* units);
  Status JoinBandKeyRounds(std::vector<IdPair>* pairs, BandJoinStats* total, size_t* computed,
                           size_t* units, ExchangeTraffic* traffic);
  Status JoinOnRankZero(bool* complete);
  Status JoinOverRanks(bool* complete);
  // The short-document rule (--short-features): the documents that may take
  // part gathered on rank 0, their pairs added to group_pairs_ there (when
  // `use`: its join is complete). Collective.
  Status JoinShortDocuments(bool use);
  // --short-rule sketch: the sketches of the groups that may take part (of
  // each group's first member) to rank 0, which runs the library's join
  // (AddShortSketchRulePairs).
  Status JoinShortSketches(bool use);
  // Whether SimHash's join runs on band ranges (--band-join): chosen once,
  // the same on every rank, by ChooseBandRanges when the plan knows the
  // number of distinct fingerprints.
  bool BandRanges() const { return band_ranges_; }
  bool ChooseBandRanges();
  // OK when `keys` (gathered from every rank) are all the distinct keys.
  Status CheckAllKeys(const std::vector<std::pair<uint64_t, uint64_t>>& keys) const;
  Status Cluster();
  Status Assign();
  Status WriteParts();
  Status WriteOutputs();
  // Collective: the output `path` from every rank's part `what`, each rank
  // writing its own at its offset (MPI-IO) into rank 0's temporary name,
  // put in place when the job succeeded; standard output, a FIFO or a
  // device: rank 0 copies the parts. `parts`: rank 0 adds the parts read.
  Status WriteOutput(const std::string& path, const char* what, std::vector<std::string>* parts,
                     uint64_t* copied_by_rank_0);
  void Report();

  // Who owns document `position` (a rank).
  size_t Owner(uint64_t position) const {
    return static_cast<size_t>(std::upper_bound(first_.begin(), first_.end(), position) -
                               first_.begin()) -
           1;
  }
  // Rank 0, after Assign: the id of a document in a cluster of two or more.
  std::string_view Id(uint64_t position) const {
    const auto it = std::lower_bound(id_positions_.begin(), id_positions_.end(), position);
    // Every position asked for is in the table (Cluster() asked for them).
    if (it == id_positions_.end() || *it != position) return {};
    return ids_[static_cast<size_t>(it - id_positions_.begin())];
  }
  bool NeedsAllPairs() const {
    // Verified pairs: a spanning forest's edge may fail the check.
    return !config_->flags.pairs_out.empty() ||
           config_->options.cluster_rule == ClusterRule::kCenter || config_->verify();
  }
  // The joins' options: every pair (not a spanning forest) when the outputs
  // need them, as neardup dedup's pair sink asks.
  DedupOptions JoinOptions() const {
    DedupOptions options = config_->options;
    options.collect_pairs = NeedsAllPairs();
    return options;
  }

  World w_;
  MpiFlags flags_;
  std::unique_ptr<DedupConfig> config_;
  std::unique_ptr<cli::Output> out_;  // rank 0: --output, opened by WriteOutputs
  std::unique_ptr<Log> log_;
  // Rank 0, --resume: the earlier run's WORK/inputs.id (none: it stopped
  // before its inputs were checked).
  std::optional<std::string> earlier_inputs_;
  std::vector<std::string> hosts_;      // every rank's host (MPI_Get_processor_name)
  RepeatedIds repeated_ids_;            // rank 0, after the gather stage
  uint64_t run_number_ = 0;             // drawn by rank 0 for this run (the probe's tokens)
  std::unique_ptr<Watchdog> watchdog_;  // after the setup stage (--stall-timeout)
  std::vector<Unit> units_;             // the fingerprint stage's units, in input order
  std::vector<uint64_t> cut_;           // rank r reads units [cut_[r], cut_[r + 1])
  std::vector<Shard> mine_;             // my inputs' shards, in input order
  // After the gather: my documents (ids; no records: output.cc reads them
  // back from the inputs), at positions
  // first_[rank] ...; first_ has P + 1 entries.
  DedupCorpus own_;
  std::vector<uint64_t> first_;
  uint64_t documents_ = 0;
  InputStats stats_;
  uint64_t bad_scores_ = 0;
  uint64_t dropped_ = 0;
  // Rank 0, stream mode only: every document (stream mode is sequential).
  DedupCorpus all_;
  // Every rank, until the cluster stage: its documents' groups (group.h).
  DistributedGroups groups_;
  bool band_ranges_ = false;
  // Every rank, cluster mode: the join's plan (the library's, by method:
  // how the join is split, the distinct keys when it runs on them) and its
  // report before the join (with the grouping's seconds).
  std::unique_ptr<DedupJoinPlan> plan_;
  DedupJoinReport join_report_;
  // Rank 0: the join's pairs (of groups); after the cluster stage the
  // clustered documents' groups and pairs (renumbered: indexes into
  // positions_), for --pairs-out.
  std::vector<IdPair> group_pairs_;
  DedupGroups clustered_groups_;
  std::vector<IdPair> clustered_pairs_;
  std::vector<JaccardSketch> clustered_sketches_;  // verified pairs: of the clustered documents
  // Rank 0: the result; the ids of the documents in clusters of two or more.
  DedupResult result_;
  // The documents result_.records are of (increasing; cluster mode: those
  // of clusters of two or more; the records' cluster and nearest are
  // indexes into it).
  std::vector<uint64_t> positions_;
  std::vector<std::vector<uint64_t>> wanted_;  // per rank: local positions whose ids rank 0 needs
  std::vector<uint64_t> id_positions_;
  std::vector<std::string> ids_;
  std::vector<Assignment> assigned_;  // my documents in clusters of two or more
  std::vector<StageReport> stages_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double fingerprint_seconds_ = 0, dedup_seconds_ = 0, output_seconds_ = 0;
};

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_RUN_H_
