// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup: `neardup dedup` over the ranks of an MPI job, with the
// same outputs byte for byte, and stages that a rerun with --resume skips
// when they are done. See doc/distributed.md.
//
//   mpirun -np 4 neardup-mpi dedup data/*.jsonl --work-dir /shared/run1 -o records.jsonl
//
// Stages (each rank's part in parentheses; doc/distributed.md has the data
// sizes and the memory per rank):
//   setup        rank 0 checks inputs and outputs and records the run's
//                identity in WORK/run.id (a --resume with another command
//                line is refused); the units cut; every rank digests its
//                units and its successor's (the ranks agree on the inputs);
//                rank 0 records the inputs (sizes, times, digests) in
//                WORK/inputs.id (a --resume with changed inputs is refused)
//   fingerprint  (each rank counts boilerplate lines of its units, the
//                counts reduced by key range, boilerplate_exchange.h, then
//                fingerprints its contiguous share
//                of the units, cut by size, one shard per unit) ->
//                WORK/shards/. A unit is an INPUT, or a byte range of a large
//                plain JSONL file cut at line starts (its first line number
//                from the line breaks the ranks counted before it).
//   gather       input counts summed; repeated ids found over the ranks
//                (neardup dedup's warning); stream mode only (sequential): the
//                40-byte documents gathered on rank 0. Ids, records,
//                documents and MinHash signatures stay on their rank.
//   plan         (identical fingerprints (minhash: signatures) grouped over
//                the ranks by a sample sort, group.h: no rank holds every
//                document) SimHash: the fingerprints of a sample of the
//                groups all-gathered (the band layout's cost model reads
//                their distances) and the join chosen from them on every
//                rank; each rank holds the keys of its key range of the
//                groups; MinHash: each rank knows the groups whose first
//                document it holds
//   join         (band keys are exchanged by bucket in rounds,
//                band_exchange.h, and each rank verifies its buckets; the
//                keys or signatures stay on their ranks) -> WORK/join/; the pairs
//                routed to the rank of their first group (each once there),
//                reduced to spanning forests, the forests merged in a tree
//                to rank 0 (all pairs gathered there instead when
//                --pairs-out or --cluster center needs them). Joins that
//                cannot be split by band (SimHash's exact join when the
//                automatic choice takes it) run on rank 0; --exact and
//                --mode stream are refused at P > 1 (setup.cc).
//                The short-document rule (the job's resolution of
//                --short-features, auto by default: sketch, every document
//                at Jaccard 0.52, for
//                128-bit SimHash methods in cluster mode at the method's k,
//                as neardup dedup): the documents that may take part to
//                rank 0 (their feature sets; --short-rule sketch: their
//                groups' first members' sketches), which adds the
//                library's short-rule pairs (dedup_over_ranks.h)
//   cluster      (each rank sends rank 0 its documents of clusters of two
//                or more, and minhash: their groups' signatures) rank 0:
//                union-find, keep policy (the library's code) over them
//   assign       rank 0 asks each rank for the ids it needs (kept documents
//                of clusters; every clustered document with --pairs-out or
//                --clusters-out) and sends each rank the records of its
//                documents that are in a cluster of two or more
//   write        (each rank writes the output lines of its own documents, in
//                input order; --unique-out and --duplicates-out: their
//                records read back from its units, the shards hold none)
//                -> WORK/parts/
//   output       (each rank writes its part of every output at its offset
//                into rank 0's temporary name, MPI-IO) rank 0 writes
//                --pairs-out and --clusters-out
// Every stage ends with all ranks agreeing on whether it succeeded; a failed
// rank is named with its reason and the job exits non-zero.

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <new>
#include <string>
#include <system_error>

#include "output_files.h"
#include "run.h"

namespace neardup::mpi {

bool FailAt(const World& w, const char* stage) {
  const char* env = std::getenv("NEARDUP_MPI_FAIL_AT");
  if (env == nullptr) return false;
  const std::string want = std::string(stage) + ":" + std::to_string(w.rank);
  return want == env;
}

void OutOfMemory(const World& w, const std::string& stage, const std::string& what) {
  cli::PrintErrorLine("neardup-mpi: rank " + std::to_string(w.rank) + ": out of memory in stage " +
                      stage + " (" + what +
                      "); the job is aborted. Give each rank more "
                      "memory (fewer ranks per node) or run on more nodes; --resume keeps "
                      "the finished stages");
  cli::FinishOutputs(cli::kExitError);
  MPI_Abort(MPI_COMM_WORLD, cli::kExitError);
  std::_Exit(cli::kExitError);
}

bool AllRanksOk(const World& w, const Status& status) {
  const std::vector<uint64_t> failed = AllGatherU64(w, status.ok() ? 0 : 1);
  return std::count(failed.begin(), failed.end(), 1u) == 0;
}

int EndStage(const World& w, const char* stage, const Status& status) {
  if (!status.ok()) {
    cli::PrintErrorLine("neardup-mpi: rank " + std::to_string(w.rank) + ": error in stage " +
                        stage + ": " + status.message());
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
    cli::PrintErrorLine("neardup-mpi: stage " + std::string(stage) + " failed on rank(s) " + ranks);
  }
  return code;
}

int Run::Main() {
  auto config = cli::ResolveDedupConfig(WithoutRecords(flags_.dedup));
  if (!config.ok()) {
    // The same on every rank: rank 0 says it.
    if (w_.rank == 0) return cli::Fail(config.status());
    return config.status().IsInvalidArgument() ? cli::kExitUsage : cli::kExitError;
  }
  config_ = std::move(*config);
  RestoreRecordOutputs(flags_.dedup, &config_->flags);
  const bool quiet = config_->flags.input.quiet;
  auto timed = [this](const char* name, auto&& body) {
    const auto t = std::chrono::steady_clock::now();
    const size_t before = stages_.size();
    Status status = Status::OK();
    try {
      status = body();
    } catch (const std::bad_alloc&) {
      OutOfMemory(w_, name);
    } catch (const std::system_error& e) {
      // std::thread: no memory for a thread's stack, or no more threads.
      OutOfMemory(w_, name, std::string("cannot start a thread: ") + e.what());
    }
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
    // The peak RSS so far of rank 0 and of the largest rank (the memory
    // benchmark reads which stage set it: bench/mpi/mpi_fit.sh).
    const std::vector<uint64_t> peaks = AllGatherU64(w_, PeakRssKb());
    for (size_t i = before; i < stages_.size(); ++i) {
      if (stages_[i].name != name) continue;
      stages_[i].extra["peak_rss_kb_rank_0"] = peaks[0];
      stages_[i].extra["peak_rss_kb_largest"] = *std::max_element(peaks.begin(), peaks.end());
    }
    if (code < 0 && w_.rank == 0 && log_) (*log_)(std::string("stage ") + name + " done");
    return code;
  };
  int code = timed("setup", [&] { return SetupStage(); });
  if (code >= 0) return code;
  // The work directory is shared (the probe): heartbeats from here on.
  watchdog_ =
      std::make_unique<Watchdog>(Watchdog::Options{.dir = flags_.work_dir + "/heartbeat",
                                                   .rank = w_.rank,
                                                   .size = w_.size,
                                                   .run = run_number_,
                                                   .timeout = flags_.stall_timeout,
                                                   .where = [this](int r) { return Where(r); }});
  bool any_needed = false;
  code = timed("fingerprint", [&] {
    // Every rank goes on to Fingerprint's collectives, or none does: a rank
    // that returned alone left the others waiting in them forever.
    const Status numbered = NumberLines(w_, config_->flags.input.inputs, cut_, &units_);
    if (!AllRanksOk(w_, numbered)) return numbered;  // OK on the others: EndStage fails them
    return Fingerprint(&any_needed);
  });
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
    cli::WarnDuplicateIds(repeated_ids_);
  }
  const auto dedup_start = std::chrono::steady_clock::now();
  const std::pair<const char*, Status (Run::*)()> stages[] = {
      {"plan", &Run::Plan},     {"join", &Run::Join},        {"cluster", &Run::Cluster},
      {"assign", &Run::Assign}, {"write", &Run::WriteParts}, {"output", &Run::WriteOutputs}};
  for (const auto& [name, body] : stages) {
    if (std::string_view(name) == "write") dedup_seconds_ = Since(dedup_start);
    code = timed(name, [&] { return (this->*body)(); });
    if (code >= 0) return code;
  }
  Report();
  int exit_code = cli::kExitOk;
  if (w_.rank == 0) {
    cli::DedupTimes times;
    times.fingerprint = fingerprint_seconds_;
    times.dedup = dedup_seconds_;
    times.output = output_seconds_;
    times.total = Since(start_);
    const std::string summary = config_->job->BoilerplateSummary(static_cast<size_t>(dropped_));
    const Status reported = cli::WriteDedupReport(*config_, result_, times, summary);
    exit_code =
        reported.ok() ? cli::InputExitCode(config_->flags.input, stats_) : cli::Fail(reported);
  }
  return BroadcastInt(w_, exit_code, 0);
}

}  // namespace neardup::mpi

namespace {

// The rank of this process before MPI_Init, from the launcher's environment
// (Open MPI, PMIx, MPICH/Slurm's PMI); 0 when started without one.
int LauncherRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The command line is parsed before MPI starts: --help, --version and usage
  // errors need no MPI library at run time and no launcher; every rank parses
  // the same arguments, so every rank ends here alike, and rank 0 prints.
  neardup::mpi::MpiFlags flags;
  CLI::App app{"neardup-mpi: neardup dedup over the ranks of an MPI job (doc/distributed.md)",
               "neardup-mpi"};
  app.set_version_flag("--version", "neardup-mpi " NEARDUP_VERSION);
  app.require_subcommand(1);
  CLI::App* cmd = app.add_subcommand(
      "dedup",
      "neardup dedup's outputs, byte for byte, computed by every rank of the job: fingerprints "
      "by input share, the band join by band key; stages kept under --work-dir");
  neardup::cli::AddDedupOptions(cmd, &flags.dedup);
  cmd->add_option(
         "--work-dir", flags.work_dir,
         "Directory for the stages' files (shards, band-key rounds' pairs, markers, logs); on "
         "a cluster a file system every rank sees")
      ->required();
  cmd->add_option("--stall-timeout", flags.stall_timeout,
                  "Seconds without a heartbeat from a rank (each rank's watchdog thread writes "
                  "one under --work-dir every fifth of this, at most every 10 s, and watches "
                  "the next rank's) after which the job is aborted with the rank named: a "
                  "stopped or hung rank, a lost node. 0: wait forever")
      ->check(CLI::NonNegativeNumber)
      ->default_val(600);
  cmd->add_option("--band-join", flags.band_join,
                  "SimHash's band join over the ranks: keys (band keys exchanged in rounds; no "
                  "rank holds the corpus's fingerprints), ranges (every rank holds the distinct "
                  "fingerprints and joins ranges of bands: several times less CPU, about 72 bytes "
                  "per distinct fingerprint of the whole corpus on every rank), auto (ranges "
                  "while those bytes fit a quarter of each rank's share of its node's memory, "
                  "keys beyond)")
      ->check(CLI::IsMember({"auto", "keys", "ranges"}))
      ->default_val("auto");
  cmd->add_flag("--resume", flags.resume,
                "Reuse what an earlier run of the same command line over the same inputs "
                "(checked: sizes and digests; a changed input is refused, named) finished under "
                "--work-dir; at another rank count, what does not depend on it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = LauncherRank() == 0 ? app.exit(e) : e.get_exit_code();
    return code == 0 ? neardup::cli::kExitOk : neardup::cli::kExitUsage;
  }

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  // After MPI_Init (which may install handlers of its own): SIGINT and
  // SIGTERM (mpirun forwards them; it sends SIGTERM to every rank when the
  // job is aborted) remove this rank's temporary outputs and exit 130/143,
  // as neardup does (output_files.h).
  neardup::cli::InstallSignalHandlers();
  neardup::mpi::World world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  // The identity: what the outputs depend on (not --resume, not the
  // watchdog's timeout).
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--resume" || arg.starts_with("--stall-timeout=")) continue;
    if (arg == "--stall-timeout") {
      ++i;
      continue;
    }
    flags.identity += std::string(arg) + "\n";
  }
  flags.identity += "ranks " + std::to_string(world.size) + "\n";
  int code = neardup::cli::kExitError;
  try {
    code = neardup::mpi::Run(world, std::move(flags)).Main();
  } catch (const std::bad_alloc&) {
    // Outside a stage's body (the stages catch their own).
    neardup::mpi::OutOfMemory(world, "start or report");
  } catch (const std::system_error& e) {
    neardup::mpi::OutOfMemory(world, "start or report",
                              std::string("cannot start a thread: ") + e.what());
  }
  // This rank's output files go in place only when the run succeeded.
  code = neardup::cli::FinishOutputs(code);
  MPI_Finalize();
  return code;
}
