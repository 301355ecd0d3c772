// Copyright 2026 The neardup Authors.
//
// neardup-mpi dedup's setup stage (run.h): inputs and outputs checked, the
// run's identity, the work directory probed, the units cut.

#include <set>
#include <string>

#include "run.h"

namespace neardup::mpi {

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
  // Neither is split over the ranks: at P > 1 rank 0 would run it alone
  // while the others wait (doc/distributed.md, "What runs where").
  if (w_.size > 1 && config_->options.mode == DedupMode::kStream) {
    return Status::InvalidArgument(
        "--mode stream is sequential and is not distributed: run it with one rank (mpirun -np "
        "1) or with neardup dedup --mode stream, or use --mode cluster (the default) over the "
        "ranks");
  }
  if (w_.size > 1 && f.exact) {
    return Status::InvalidArgument(
        "--exact is not distributed (the exact join's index holds every fingerprint and runs on "
        "one rank): run it with one rank (mpirun -np 1) or with neardup dedup --exact, or use "
        "--banded (split over the ranks by band key)");
  }
  std::error_code ec;
  for (const char* sub : {"/shards", "/join", "/parts", "/probe"}) {
    if (!ec) fs::create_directories(flags_.work_dir + sub, ec);
  }
  if (ec)
    return Status::IOError(flags_.work_dir + ": cannot create the work directory: " + ec.message());
  log_ = std::make_unique<Log>(w_, flags_.work_dir, f.input.quiet);
  if (w_.rank != 0) return Status::OK();
  NEARDUP_RETURN_IF_ERROR(
      cli::CheckInputsAndOutputs(f.input.inputs, {f.input.output, f.unique_out, f.duplicates_out,
                                                  f.pairs_out, f.clusters_out, f.summary_json}));
  // Created before the input is read, as neardup dedup does, so that a path
  // that cannot be written fails now; then removed: the output stage creates
  // it again. A rank that fails or runs out of memory in between aborts the
  // job, and Open MPI may SIGKILL rank 0 before its SIGTERM handler removes
  // a temporary file: none is left while the ranks compute. A path that is
  // not a regular file (a FIFO, /dev/null) is opened only once, when written.
  if (struct stat st; ::stat(f.input.output.c_str(), &st) != 0 || S_ISREG(st.st_mode)) {
    NEARDUP_RETURN_IF_ERROR(cli::Output::Open(f.input.output, f.input.inputs).status());
    cli::DiscardOutputs();
  }
  const std::string id_path = flags_.work_dir + "/run.id";
  const std::string inputs_path = flags_.work_dir + "/inputs.id";
  if (flags_.resume) {
    auto earlier = ReadChecked(id_path);
    // The identity's last line is the rank count.
    const auto command = [](std::string_view id) {
      const size_t at = id.rfind("ranks ");
      return at == std::string_view::npos ? id : id.substr(0, at);
    };
    if (earlier.ok() && command(*earlier) != command(flags_.identity)) {
      return Status::InvalidArgument(
          "--resume: " + flags_.work_dir +
          " holds a run of another command line; rerun it as it was, or use a new --work-dir");
    }
    if (earlier.ok() && *earlier != flags_.identity) {
      // Another rank count: what does not depend on P is reused (the shards
      // of whole inputs and of pieces cut alike); each rank's parts and
      // band-key rounds (per rank) go.
      const std::string_view before = std::string_view(*earlier).substr(command(*earlier).size());
      (*log_)("setup: --resume with " + std::to_string(w_.size) + " ranks; the earlier run had " +
              std::string(before.substr(std::min<size_t>(6, before.size()),
                                        before.find('\n') == std::string_view::npos
                                            ? std::string_view::npos
                                            : before.find('\n') - 6)) +
              ": its ranks' parts and band-key rounds are computed again");
      std::error_code ec;
      for (const char* sub : {"/parts", "/join"}) {
        for (fs::directory_iterator it(flags_.work_dir + sub, ec), end; !ec && it != end;
             it.increment(ec)) {
          const std::string name = it->path().filename().string();
          if (std::string_view(sub) == "/join" && !name.starts_with("round-")) continue;
          NEARDUP_RETURN_IF_ERROR(file::RemoveFile(it->path().string()));
        }
      }
      if (ec) return Status::IOError(flags_.work_dir + ": " + ec.message());
      NEARDUP_RETURN_IF_ERROR(WriteFileAtomically(id_path, flags_.identity));
    }
    if (earlier.ok()) {
      auto inputs = ReadChecked(inputs_path);
      if (inputs.ok()) earlier_inputs_ = std::move(*inputs);
      return Status::OK();
    }
  }
  // A new run: no inputs' identity until its inputs are checked (a run
  // stopped before that leaves none, and its --resume computes everything).
  NEARDUP_RETURN_IF_ERROR(file::RemoveFile(inputs_path));
  return WriteFileAtomically(id_path, flags_.identity);
}

// Rank 0: compares the inputs with the earlier run's (--resume) and records
// them. A changed input is refused (its shards, and all after them, are
// stale), naming it; one whose modification time alone changed (the same
// size and bytes) is reused. Without a record of the earlier run's inputs,
// every stage is computed again (flags_.resume off).
Status Run::CheckInputsIdentity(const std::vector<InputStat>& stats,
                                const std::vector<uint64_t>& digests) {
  const nlohmann::json now = InputsIdentity(config_->flags.input.inputs, stats, units_, digests);
  if (flags_.resume && !earlier_inputs_) {
    (*log_)(
        "setup: --resume: no record of the earlier run's inputs (it stopped before they "
        "were checked): every stage is computed again");
    flags_.resume = false;
  }
  if (flags_.resume) {
    const nlohmann::json earlier = nlohmann::json::parse(*earlier_inputs_, nullptr, false);
    std::vector<std::string> touched;
    const std::vector<std::string>& inputs = config_->flags.input.inputs;
    std::set<uint64_t> reread;
    const auto digest_of = [&](uint64_t input, uint64_t begin, uint64_t end) {
      if (reread.insert(input).second) {
        (*log_)("setup: --resume: " + inputs[input] +
                " was cut into other pieces by the earlier run: its pieces are read again "
                "to check them");
      }
      return RangeDigestOf(inputs[input], begin, end);
    };
    const std::vector<std::string> changed = ChangedInputs(earlier, now, digest_of, &touched);
    if (!changed.empty()) {
      std::string list;
      for (const std::string& c : changed) list += (list.empty() ? "" : ", ") + c;
      return Status::InvalidArgument(
          "--resume: the input changed since the run in " + flags_.work_dir + " began: " + list +
          "; what was computed from it is stale: rerun without --resume (every stage is "
          "computed again), or restore the input");
    }
    for (const std::string& t : touched) {
      (*log_)("setup: " + t + ": modified since the earlier run, but the same size and bytes: " +
              "its work is reused");
    }
  }
  return WriteFileAtomically(flags_.work_dir + "/inputs.id", now.dump());
}

// Every rank writes a token (a number rank 0 drew for this run, the rank and
// its host) in WORK/probe/ and reads rank 0's and its successor's: a work
// directory that is not one directory shared by every rank (a node's local
// disk, a file system not mounted on every node) fails here, in seconds,
// naming the rank, its host and the path, not at the output stage after all
// the compute.
Status Run::ProbeWorkDir() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::string mine;
  AppendStrings({std::string(name, static_cast<size_t>(length))}, &mine);
  Traffic traffic;
  NEARDUP_ASSIGN_OR_RETURN(hosts_, Strings(AllGatherBytes(w_, mine, &traffic)));
  std::vector<uint64_t> nonce = {0};
  if (w_.rank == 0) {
    nonce[0] = std::random_device()() ^
               static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  }
  BroadcastU64s(w_, &nonce, 0);
  run_number_ = nonce[0];
  const auto token = [&](int r) {
    return "neardup-mpi work directory probe " + std::to_string(nonce[0]) + " " + Where(r) + "\n";
  };
  const auto path = [&](int r) {
    char file[48];
    std::snprintf(file, sizeof file, "/probe/rank-%04d.token", r);
    return flags_.work_dir + file;
  };
  const Status written = WriteFileAtomically(path(w_.rank), token(w_.rank));
  if (!AllRanksOk(w_, written)) return written;
  Status seen = Status::OK();
  for (const int r : {0, (w_.rank + 1) % w_.size}) {
    if (r == w_.rank) continue;
    auto got = ReadChecked(path(r));
    if (got.ok() && *got == token(r)) continue;
    std::error_code ec;
    const std::string here = fs::absolute(flags_.work_dir, ec).string();
    seen = Status::IOError(
        "--work-dir is not shared: " + Where(w_.rank) + " cannot read the token that " + Where(r) +
        " wrote in it: " + (got.ok() ? path(r) + ": another run's token" : got.status().message()) +
        " (the work directory is " + here + " on " + Where(w_.rank) +
        "); it must be one directory that every rank sees at the same path (a shared file "
        "system mounted on every node)");
    break;
  }
  // Every rank has read the tokens it checks before any is removed.
  const bool ok = AllRanksOk(w_, seen);
  (void)file::RemoveFile(path(w_.rank));
  return ok ? Status::OK() : seen;
}

// Every rank stats the inputs it will read (its units and its successor's,
// which it digests) and compares them with rank 0's view (`seen_by_rank_0`:
// bytes and files of each input): an input missing on a node, another
// version of it, or an empty directory (a file system not mounted) fails in
// seconds, naming the rank, its host and the input, before any is read.
Status Run::CheckInputsSeen(const std::vector<uint64_t>& seen_by_rank_0) {
  const std::vector<std::string>& inputs = config_->flags.input.inputs;
  std::vector<bool> reads(inputs.size(), false);
  for (const int r : {w_.rank, (w_.rank + 1) % w_.size}) {
    for (size_t u = cut_[static_cast<size_t>(r)]; u < cut_[static_cast<size_t>(r) + 1]; ++u) {
      reads[units_[u].input] = true;
    }
  }
  const auto files = [](uint64_t n) { return std::to_string(n) + (n == 1 ? " file" : " files"); };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!reads[i]) continue;
    const InputStat st = StatInput(inputs[i]);
    const uint64_t size0 = seen_by_rank_0[2 * i], files0 = seen_by_rank_0[2 * i + 1];
    if (!st.found) {
      return Status::IOError(inputs[i] + ": not found on " + Where(w_.rank) + " (" + st.error +
                             "), which must read it; every rank must see the inputs at the same "
                             "path (rank 0 sees it)");
    }
    if (st.size != size0 || st.files != files0) {
      return Status::IOError(inputs[i] + ": " + Where(w_.rank) + " sees " +
                             std::to_string(st.size) + " bytes in " + files(st.files) + ", " +
                             Where(0) + " " + std::to_string(size0) + " bytes in " + files(files0) +
                             "; every rank must see the same files");
    }
    if (st.directory && st.files == 0) {
      return Status::IOError(inputs[i] + ": a directory with no files (on " + Where(w_.rank) +
                             "): nothing to read; is its file system mounted?");
    }
  }
  return Status::OK();
}

// The setup stage on every rank: rank 0's checks, the work directory probe,
// the units and each rank's share, the inputs stat'ed by every rank and the
// ranks' agreement on their bytes, the run's identity.
Status Run::SetupStage() {
  Status s = Setup();
  if (!AllRanksOk(w_, s)) return s;
  s = ProbeWorkDir();
  if (!AllRanksOk(w_, s)) return s;
  const std::vector<std::string>& inputs = config_->flags.input.inputs;
  std::vector<InputStat> stats;
  std::vector<uint64_t> sizes(inputs.size(), 0), seen(2 * inputs.size(), 0);
  if (w_.rank == 0) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      stats.push_back(StatInput(inputs[i]));
      sizes[i] = seen[2 * i] = stats.back().size;
      seen[2 * i + 1] = stats.back().files;
    }
  }
  BroadcastU64s(w_, &sizes, 0);
  BroadcastU64s(w_, &seen, 0);
  CutInputs(w_, config_->flags.input, sizes, &units_, &cut_);
  s = CheckInputsSeen(seen);
  if (!AllRanksOk(w_, s)) return s;
  std::vector<uint64_t> digests;
  s = AgreeOnInputs(w_, inputs, cut_, units_, &digests);
  if (!AllRanksOk(w_, s)) return s;
  if (w_.rank == 0) s = CheckInputsIdentity(stats, digests);
  flags_.resume = BroadcastInt(w_, flags_.resume ? 1 : 0, 0) != 0;
  return s;
}

}  // namespace neardup::mpi
