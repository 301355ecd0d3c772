// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup: `neardup dedup` over the ranks of an MPI job, with the
// same outputs byte for byte, and stages that a rerun with --resume skips
// when they are done. See doc/distributed.md.
//
//   mpirun -np 4 neardup-mpi dedup data/*.jsonl --work-dir /shared/run1 -o records.jsonl
//
// Stages (each rank's part in parentheses):
//   setup        rank 0 checks inputs and outputs and records the run's
//                identity in WORK/run.id (a --resume with another command
//                line is refused)
//   boilerplate  (each rank counts the lines of its inputs; the counts are
//                all-gathered and merged) when boilerplate removal is on and
//                some input still needs fingerprints
//   fingerprint  (each rank reads its contiguous share of the INPUTs, cut by
//                size, and writes one shard per INPUT) -> WORK/shards/
//   gather       fingerprints (minhash: signatures) all-gathered in chunks;
//                ids (and records) gathered on rank 0
//   join         (each rank joins its band ranges) -> WORK/join/; pairs
//                gathered on rank 0, which clusters them. Joins that cannot
//                be split by band (SimHash's exact join, stream mode) run on
//                rank 0.
//   write        rank 0 writes every output in input order, with the code
//                of neardup dedup (dedup_stages.h).
// Every stage ends with all ranks agreeing on whether it succeeded; a failed
// rank is named with its reason and the job exits non-zero.

#include <mpi.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "boilerplate_pass.h"
#include "common.h"
#include "dedup/stages.h"
#include "dedup_stages.h"
#include "mpi_comm.h"
#include "neardup/minhash_dedup.h"
#include "shard.h"

namespace neardup::mpi {
namespace {

namespace fs = std::filesystem;
using cli::DedupConfig;
using cli::DedupCorpus;
using cli::DedupFlags;

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct MpiFlags {
  DedupFlags dedup;
  std::string work_dir;
  bool resume = false;
  std::string identity;  // the command line without --resume, and P
};

// Fault injection for the tests: NEARDUP_MPI_FAIL_AT=STAGE:RANK kills rank
// RANK (SIGKILL, as an out-of-memory killer would) right after it finished
// its first unit of STAGE (fingerprint: a shard; band: a band range).
bool FailAt(const World& w, const char* stage) {
  const char* env = std::getenv("NEARDUP_MPI_FAIL_AT");
  if (env == nullptr) return false;
  const std::string want = std::string(stage) + ":" + std::to_string(w.rank);
  return want == env;
}

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
    if (!quiet_) std::cerr << "neardup-mpi: rank " << w_.rank << ": " << line << "\n";
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

// Ends a stage collectively: -1 when every rank succeeded, else the exit
// status (each failed rank has printed its reason; rank 0 names them).
int EndStage(const World& w, const char* stage, const Status& status) {
  if (!status.ok()) {
    std::cerr << "neardup-mpi: rank " << w.rank << ": error in stage " << stage << ": "
              << status.message() << "\n";
  }
  const int mine = status.ok() ? 0 : status.IsInvalidArgument() ? cli::kExitUsage : cli::kExitError;
  const std::vector<uint64_t> codes = AllGatherU64(w, static_cast<uint64_t>(mine));
  std::string ranks;
  int code = -1;
  for (size_t r = 0; r < codes.size(); ++r) {
    if (codes[r] == 0) continue;
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    // Every rank exits with the first failed rank's status.
    if (code < 0) code = static_cast<int>(codes[r]);
  }
  if (code >= 0 && w.rank == 0) {
    std::cerr << "neardup-mpi: stage " << stage << " failed on rank(s) " << ranks << "\n";
  }
  return code;
}

// Contiguous shares of the inputs cut by size (a directory counts its files'
// bytes): rank r reads inputs [cut[r], cut[r + 1]). Computed on rank 0.
std::vector<uint64_t> CutInputs(const World& w, const std::vector<std::string>& inputs) {
  std::vector<uint64_t> cut(static_cast<size_t>(w.size) + 1, 0);
  if (w.rank == 0) {
    std::vector<double> weight(inputs.size(), 1);
    double total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::error_code ec;
      if (fs::is_directory(inputs[i], ec)) {
        for (fs::recursive_directory_iterator it(inputs[i], ec), end; !ec && it != end;
             it.increment(ec)) {
          if (it->is_regular_file(ec)) weight[i] += static_cast<double>(it->file_size(ec));
        }
      } else {
        const auto size = fs::file_size(inputs[i], ec);
        if (!ec) weight[i] += static_cast<double>(size);
      }
      total += weight[i];
    }
    double sum = 0;
    size_t i = 0;
    for (int r = 1; r < w.size; ++r) {
      const double target = total * r / w.size;
      while (i < inputs.size() && sum + weight[i] / 2 < target) sum += weight[i++];
      cut[static_cast<size_t>(r)] = i;
    }
    cut[static_cast<size_t>(w.size)] = inputs.size();
  }
  BroadcastU64s(w, &cut, 0);
  return cut;
}

std::string ShardPath(const std::string& dir, size_t input) {
  char name[64];
  std::snprintf(name, sizeof name, "/shards/input-%06zu.shard", input);
  return dir + name;
}

std::string RangePath(const std::string& dir, size_t range, size_t ranges) {
  char name[64];
  std::snprintf(name, sizeof name, "/join/range-%04zu-of-%04zu.pairs", range, ranges);
  return dir + name;
}

Status WriteMarker(const std::string& dir, const std::string& stage) {
  return WriteFileAtomically(dir + "/" + stage + ".done", stage);
}

// Splits "a b c" strings back (ids or records of several ranks).
Result<std::vector<std::string>> Strings(std::string_view bytes) {
  std::vector<std::string> out;
  if (!ReadStrings(bytes, &out)) return Status::Corruption("malformed string exchange");
  return out;
}

class Run {
 public:
  Run(const World& w, MpiFlags flags) : w_(w), flags_(std::move(flags)) {}
  int Main();

 private:
  Status Setup();
  Status CountBoilerplate(bool needed);
  Status Fingerprint(bool* any_needed_out);
  Status Gather();
  Status Join();
  Status Write();
  void Report();

  World w_;
  MpiFlags flags_;
  std::unique_ptr<DedupConfig> config_;
  std::unique_ptr<cli::DedupWriter> writer_;  // rank 0
  std::unique_ptr<Log> log_;
  cli::BoilerplatePass boilerplate_;
  std::vector<uint64_t> cut_;
  std::vector<Shard> mine_;  // my inputs' shards, in input order
  // After the gather: every document (all ranks); ids and records (rank 0).
  DedupCorpus all_;
  InputStats stats_;
  uint64_t bad_scores_ = 0;
  uint64_t dropped_ = 0;
  DedupResult result_;  // rank 0
  std::vector<StageReport> stages_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double fingerprint_seconds_ = 0, dedup_seconds_ = 0, output_seconds_ = 0;
};

Status Run::Setup() {
  const DedupFlags& f = config_->flags;
  for (const std::string& in : f.input.inputs) {
    if (in == "-") {
      return Status::InvalidArgument("neardup-mpi reads files, not standard input ('-')");
    }
  }
  if (config_->minhash && config_->method.minhash.exact) {
    return Status::InvalidArgument(
        "neardup-mpi does not support minhash's exact verification (feature sets are not "
        "exchanged between ranks); use the estimate (the default)");
  }
  std::error_code ec;
  fs::create_directories(flags_.work_dir + "/shards", ec);
  if (!ec) fs::create_directories(flags_.work_dir + "/join", ec);
  if (ec)
    return Status::IOError(flags_.work_dir + ": cannot create the work directory: " + ec.message());
  log_ = std::make_unique<Log>(w_, flags_.work_dir, f.input.quiet);
  if (w_.rank != 0) return Status::OK();
  NEARDUP_RETURN_IF_ERROR(
      cli::CheckInputsAndOutputs(f.input.inputs, {f.input.output, f.unique_out, f.duplicates_out,
                                                  f.pairs_out, f.clusters_out, f.summary_json}));
  NEARDUP_ASSIGN_OR_RETURN(writer_, cli::DedupWriter::Open(*config_));
  const std::string id_path = flags_.work_dir + "/run.id";
  if (flags_.resume) {
    auto earlier = ReadChecked(id_path);
    if (earlier.ok() && *earlier != flags_.identity) {
      return Status::InvalidArgument(
          "--resume: " + flags_.work_dir +
          " holds a run of another command line or rank count; rerun it as it was, or use a new "
          "--work-dir");
    }
    if (earlier.ok()) return Status::OK();
  }
  return WriteFileAtomically(id_path, flags_.identity);
}

Status Run::CountBoilerplate(bool needed) {
  if (!needed) return Status::OK();
  cli::InputFlags input = config_->flags.input;
  input.inputs.assign(input.inputs.begin() + static_cast<ptrdiff_t>(cut_[w_.rank]),
                      input.inputs.begin() + static_cast<ptrdiff_t>(cut_[w_.rank + 1]));
  LineStats counts;
  Status counted = Status::OK();
  if (!input.inputs.empty()) {
    auto got = cli::BoilerplatePass::CountFiles(input, config_->read_options,
                                                config_->method.pipeline.normalize);
    if (got.ok()) {
      counts = std::move(*got);
    } else {
      counted = got.status();
    }
  }
  // Collective whatever happened here: the other ranks are in it.
  std::string mine;
  AppendStrings({counts.Serialize()}, &mine);
  Traffic traffic;
  const std::string all = AllGatherBytes(w_, mine, &traffic);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back({"boilerplate", 0, moved[0], {}});
  NEARDUP_RETURN_IF_ERROR(counted);
  NEARDUP_ASSIGN_OR_RETURN(auto blobs, Strings(all));
  LineCounter merged;
  for (size_t r = 0; r < blobs.size(); ++r) {
    NEARDUP_ASSIGN_OR_RETURN(auto s, LineStats::Deserialize(blobs[r], "rank " + std::to_string(r)));
    merged.Merge(s);
  }
  NEARDUP_RETURN_IF_ERROR(boilerplate_.Use(std::move(merged).Finish(), config_->boilerplate,
                                           config_->method.pipeline.normalize));
  if (w_.rank == 0 && !config_->flags.boilerplate.stats_out.empty()) {
    NEARDUP_RETURN_IF_ERROR(boilerplate_.stats().Save(config_->flags.boilerplate.stats_out));
  }
  return Status::OK();
}

Status Run::Fingerprint(bool* any_needed_out) {
  const DedupFlags& f = config_->flags;
  const bool records = config_->keep_records();
  const size_t num_perm =
      config_->minhash ? static_cast<size_t>(config_->method.minhash.num_perm) : 0;
  // Shards done in an earlier run.
  std::vector<size_t> todo;
  for (size_t i = cut_[w_.rank]; i < cut_[w_.rank + 1]; ++i) {
    mine_.emplace_back();
    if (flags_.resume) {
      const std::string path = ShardPath(flags_.work_dir, i);
      auto bytes = ReadChecked(path);
      if (bytes.ok()) {
        auto shard = DecodeShard(*bytes, path, num_perm, records);
        if (shard.ok()) {
          mine_.back() = std::move(*shard);
          (*log_)("fingerprint: input " + std::to_string(i) + " (" + f.input.inputs[i] +
                  "): done in an earlier run, skipped");
          continue;
        }
        (*log_)("fingerprint: " + shard.status().message() + "; computing it again");
      }
    }
    todo.push_back(i);
  }
  std::vector<uint64_t> need = {todo.size()};
  AllReduceSum(w_, &need);
  *any_needed_out = need[0] > 0;
  // Collective: every rank takes part in the count when any rank needs it.
  const bool count = need[0] > 0 && config_->boilerplate.mode != BoilerplateMode::kOff;
  const Status counted = CountBoilerplate(count);
  if (!counted.ok()) return counted;
  for (size_t i : todo) {
    cli::InputFlags input = f.input;
    input.inputs = {f.input.inputs[i]};
    input.quiet = true;  // one summary for the job, on rank 0
    const uint64_t dropped_before = boilerplate_.dropped_lines();
    Shard& shard = mine_[i - cut_[w_.rank]];
    NEARDUP_ASSIGN_OR_RETURN(shard.stats,
                             cli::FingerprintInputs(*config_, input, boilerplate_, &shard.corpus));
    shard.boilerplate_dropped = boilerplate_.dropped_lines() - dropped_before;
    NEARDUP_RETURN_IF_ERROR(
        WriteFileAtomically(ShardPath(flags_.work_dir, i), EncodeShard(shard, records)));
    (*log_)("fingerprint: input " + std::to_string(i) + " (" + f.input.inputs[i] +
            "): " + std::to_string(shard.corpus.docs.size()) + " documents");
    if (FailAt(w_, "fingerprint")) std::raise(SIGKILL);
  }
  return Status::OK();
}

Status Run::Gather() {
  const bool records = config_->keep_records();
  std::string packed, signatures, ids, recs;
  std::vector<uint64_t> sums(kStatsWords + 2, 0);
  for (Shard& s : mine_) {
    for (const DedupDocument& d : s.corpus.docs) {
      const PackedDocument p = Pack(d);
      packed.append(reinterpret_cast<const char*>(&p), sizeof p);
    }
    signatures.append(reinterpret_cast<const char*>(s.corpus.signatures.data()),
                      s.corpus.signatures.size() * sizeof(uint32_t));
    AppendStrings(s.corpus.ids, &ids);
    if (records) AppendStrings(s.corpus.records, &recs);
    const std::vector<uint64_t> words = StatsWords(s.stats);
    for (size_t k = 0; k < kStatsWords; ++k) sums[k] += words[k];
    sums[kStatsWords] += s.corpus.bad_scores;
    sums[kStatsWords + 1] += s.boilerplate_dropped;
  }
  mine_.clear();
  AllReduceSum(w_, &sums);
  stats_ = StatsFromWords(sums.data());
  bad_scores_ = sums[kStatsWords];
  dropped_ = sums[kStatsWords + 1];
  Traffic traffic;
  const std::string all = AllGatherBytes(w_, packed, &traffic);
  std::string().swap(packed);
  const size_t n = all.size() / sizeof(PackedDocument);
  all_.docs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    PackedDocument p;
    std::memcpy(&p, all.data() + i * sizeof p, sizeof p);
    all_.docs[i] = Unpack(p);
  }
  if (config_->minhash) {
    const std::string sig = AllGatherBytes(w_, signatures, &traffic);
    all_.signatures.resize(sig.size() / sizeof(uint32_t));
    if (!sig.empty()) std::memcpy(all_.signatures.data(), sig.data(), sig.size());
  }
  const std::string all_ids = GatherBytes(w_, ids, 0, &traffic);
  const std::string all_recs = records ? GatherBytes(w_, recs, 0, &traffic) : std::string();
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back({"gather", 0, moved[0], {{"rounds", traffic.rounds}}});
  if (w_.rank == 0) {
    NEARDUP_ASSIGN_OR_RETURN(all_.ids, Strings(all_ids));
    if (records) {
      NEARDUP_ASSIGN_OR_RETURN(all_.records, Strings(all_recs));
    }
    if (all_.ids.size() != n || (records && all_.records.size() != n)) {
      return Status::Corruption("gather: ids and fingerprints disagree in number");
    }
    NEARDUP_RETURN_IF_ERROR(writer_->OpenPairs(all_.ids));
  }
  return Status::OK();
}

Status Run::Join() {
  const DedupConfig& c = *config_;
  DedupOptions options = c.options;
  const MinHashOptions& mh = c.method.minhash;
  dedup_internal::SimHashPlan simhash;
  dedup_internal::MinHashPlan minhash;
  int bands = 0;
  const bool cluster = options.mode == DedupMode::kCluster;
  if (cluster && c.minhash) {
    NEARDUP_ASSIGN_OR_RETURN(
        minhash, dedup_internal::PlanMinHash(all_.docs, all_.signatures, {}, mh, options));
    bands = minhash.groups.size() >= 2 ? mh.bands : 0;
  } else if (cluster) {
    NEARDUP_ASSIGN_OR_RETURN(simhash, dedup_internal::PlanSimHash(all_.docs, options));
    bands = simhash.report.banded ? simhash.report.bands.bands : 0;
  }
  if (bands == 0) {
    // Not split by band: rank 0 runs the whole join (SimHash's exact join,
    // stream mode, fewer than two distinct documents).
    if (w_.rank != 0) return Status::OK();
    (*log_)("join: not banded; rank 0 joins everything");
    options.pair_sink = writer_->pair_sink();
    NEARDUP_ASSIGN_OR_RETURN(result_,
                             c.minhash ? MinHashDedup(all_.docs, all_.signatures, {}, mh, options)
                                       : Dedup(all_.docs, options));
    return WriteMarker(flags_.work_dir, "join");
  }
  const size_t ranges =
      std::min<size_t>(static_cast<size_t>(bands), 4 * static_cast<size_t>(w_.size));
  std::vector<IdPair> pairs, range_pairs;
  BandJoinStats total;
  size_t computed = 0;
  // The ranges of this rank; an error ends them, not the exchange below (the
  // other ranks are in it).
  const Status joined = [&]() -> Status {
    for (size_t j = static_cast<size_t>(w_.rank); j < ranges; j += static_cast<size_t>(w_.size)) {
      const int begin = static_cast<int>(j * static_cast<size_t>(bands) / ranges);
      const int end = static_cast<int>((j + 1) * static_cast<size_t>(bands) / ranges);
      const std::string path = RangePath(flags_.work_dir, j, ranges);
      const std::string what = "join: band range " + std::to_string(j) + " of " +
                               std::to_string(ranges) + " (bands " + std::to_string(begin) + ".." +
                               std::to_string(end - 1) + ")";
      if (flags_.resume) {
        auto bytes = ReadChecked(path);
        if (bytes.ok()) {
          auto got = DecodePairs(*bytes, path);
          if (got.ok()) {
            pairs.insert(pairs.end(), got->begin(), got->end());
            (*log_)(what + ": done in an earlier run, skipped");
            continue;
          }
        }
      }
      BandJoinStats stats;
      if (c.minhash) {
        NEARDUP_RETURN_IF_ERROR(dedup_internal::MinHashJoinBands(
            minhash, all_.signatures, {}, mh, options, begin, end, &range_pairs, &stats));
      } else {
        NEARDUP_RETURN_IF_ERROR(
            dedup_internal::SimHashJoinBands(simhash, options, begin, end, &range_pairs, &stats));
      }
      total.candidates += stats.candidates;
      total.tested += stats.tested;
      total.large_buckets += stats.large_buckets;
      NEARDUP_RETURN_IF_ERROR(WriteFileAtomically(path, EncodePairs(range_pairs)));
      (*log_)(what + ": " + std::to_string(range_pairs.size()) + " pairs");
      pairs.insert(pairs.end(), range_pairs.begin(), range_pairs.end());
      ++computed;
      if (FailAt(w_, "band")) std::raise(SIGKILL);
    }
    return Status::OK();
  }();
  dedup_internal::MergePairs(&pairs);
  Traffic traffic;
  const std::string all = GatherBytes(w_, EncodePairs(pairs), 0, &traffic);
  std::vector<uint64_t> sums = {total.candidates,   total.tested, total.large_buckets,
                                traffic.bytes_sent, computed,     joined.ok() ? 0u : 1u};
  AllReduceSum(w_, &sums);
  stages_.push_back({"join", 0, sums[3], {{"band_ranges", ranges}, {"ranges_computed", sums[4]}}});
  NEARDUP_RETURN_IF_ERROR(joined);
  // Rank 0 clusters only when every rank joined its ranges (EndStage names
  // the ranks that did not).
  if (sums[5] > 0 || w_.rank != 0) return Status::OK();
  NEARDUP_ASSIGN_OR_RETURN(pairs, DecodePairs(all, "gathered pairs"));
  dedup_internal::MergePairs(&pairs);
  options.pair_sink = writer_->pair_sink();
  if (c.minhash) {
    result_.join.banded = true;
    result_.join.distinct = minhash.groups.size();
  } else {
    result_.join = simhash.report;
  }
  result_.join.candidates = sums[0];
  result_.join.tested = sums[1];
  result_.join.large_buckets = sums[2];
  result_.join.confirmed = pairs.size();
  if (c.minhash) {
    dedup_internal::FinishMinHash(all_.docs, minhash, all_.signatures, {}, mh, pairs, options,
                                  &result_);
  } else {
    dedup_internal::FinishSimHash(all_.docs, simhash, pairs, options, &result_);
  }
  return WriteMarker(flags_.work_dir, "join");
}

Status Run::Write() {
  if (w_.rank != 0) return Status::OK();
  const auto t = std::chrono::steady_clock::now();
  NEARDUP_RETURN_IF_ERROR(writer_->Finish(result_, all_.docs, all_.ids, all_.records));
  output_seconds_ = Since(t);
  return WriteMarker(flags_.work_dir, "write");
}

void Run::Report() {
  if (w_.rank != 0) return;
  nlohmann::ordered_json o = {{"ranks", w_.size}, {"documents", all_.docs.size()}};
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageReport& s : stages_) {
    nlohmann::ordered_json j = {
        {"stage", s.name}, {"seconds", s.seconds}, {"bytes_moved", s.bytes_moved}};
    if (s.extra.is_object()) j.update(s.extra);
    stages.push_back(j);
  }
  o["stages"] = stages;
  std::ofstream(flags_.work_dir + "/report.json") << o.dump(2) << "\n";
}

int Run::Main() {
  auto config = cli::ResolveDedupConfig(flags_.dedup);
  if (!config.ok()) {
    // The same on every rank: rank 0 says it.
    if (w_.rank == 0) return cli::Fail(config.status());
    return config.status().IsInvalidArgument() ? cli::kExitUsage : cli::kExitError;
  }
  config_ = std::move(*config);
  const bool quiet = config_->flags.input.quiet;
  auto timed = [this](const char* name, auto&& body) {
    const auto t = std::chrono::steady_clock::now();
    const size_t before = stages_.size();
    const Status status = body();
    const int code = EndStage(w_, name, status);
    const double seconds = Since(t);
    // The stage's own entry (a body may have added one for its exchange).
    bool found = false;
    for (size_t i = before; i < stages_.size(); ++i) {
      if (stages_[i].name == name) {
        stages_[i].seconds = seconds;
        found = true;
      }
    }
    if (!found) stages_.push_back({name, seconds, 0, {}});
    if (code < 0 && w_.rank == 0 && log_) (*log_)(std::string("stage ") + name + " done");
    return code;
  };
  int code = timed("setup", [&] { return Setup(); });
  if (code >= 0) return code;
  cut_ = CutInputs(w_, config_->flags.input.inputs);
  bool any_needed = false;
  code = timed("fingerprint", [&] { return Fingerprint(&any_needed); });
  if (code >= 0) return code;
  if (w_.rank == 0) {
    if (const Status s = WriteMarker(flags_.work_dir, "fingerprint"); !s.ok()) return cli::Fail(s);
  }
  fingerprint_seconds_ = Since(start_);
  code = timed("gather", [&] { return Gather(); });
  if (code >= 0) return code;
  if (w_.rank == 0) {
    if (!quiet) std::cerr << cli::SummaryLine(stats_) << "\n";
    if (!any_needed && !quiet) {
      std::cerr << "neardup-mpi: every input's fingerprints were done in an earlier run\n";
    }
    cli::WarnBadScores(*config_, bad_scores_);
  }
  const auto dedup_start = std::chrono::steady_clock::now();
  code = timed("join", [&] { return Join(); });
  if (code >= 0) return code;
  dedup_seconds_ = Since(dedup_start);
  code = timed("write", [&] { return Write(); });
  if (code >= 0) return code;
  Report();
  int exit_code = cli::kExitOk;
  if (w_.rank == 0) {
    cli::DedupTimes times;
    times.fingerprint = fingerprint_seconds_;
    times.dedup = dedup_seconds_;
    times.output = output_seconds_;
    times.total = Since(start_);
    const std::string summary = boilerplate_.Summary(static_cast<size_t>(dropped_));
    const Status reported = cli::WriteDedupReport(*config_, result_, times, summary);
    exit_code =
        reported.ok() ? cli::InputExitCode(config_->flags.input, stats_) : cli::Fail(reported);
  }
  return BroadcastInt(w_, exit_code, 0);
}

}  // namespace
}  // namespace neardup::mpi

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  neardup::mpi::World world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);

  neardup::mpi::MpiFlags flags;
  CLI::App app{"neardup-mpi: neardup dedup over the ranks of an MPI job (doc/distributed.md)"};
  app.require_subcommand(1);
  CLI::App* cmd = app.add_subcommand(
      "dedup",
      "neardup dedup's outputs, byte for byte, computed by every rank of the job: fingerprints "
      "by input share, the band join by band range; stages kept under --work-dir");
  neardup::cli::AddDedupOptions(cmd, &flags.dedup);
  cmd->add_option("--work-dir", flags.work_dir,
                  "Directory for the stages' files (shards, band-range pairs, markers, logs); on "
                  "a cluster a file system every rank sees")
      ->required();
  cmd->add_flag("--resume", flags.resume,
                "Reuse the shards and band ranges an earlier run of the same command line (and "
                "rank count) finished under --work-dir");
  int code = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    code = world.rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return code == 0 ? 0 : neardup::cli::kExitUsage;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--resume") flags.identity += std::string(argv[i]) + "\n";
  }
  flags.identity += "ranks " + std::to_string(world.size) + "\n";
  code = neardup::mpi::Run(world, std::move(flags)).Main();
  MPI_Finalize();
  return code;
}
