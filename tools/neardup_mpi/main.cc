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
//                counts all-gathered, then fingerprints its contiguous share
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
//                document) SimHash: the distinct fingerprints all-gathered
//                (16 bytes each) and the join chosen from them on every
//                rank; MinHash: each rank knows the groups whose first
//                document it holds
//   join         (each rank joins its band ranges; minhash: band keys are
//                exchanged by bucket in rounds, band_exchange.h, and each
//                rank verifies its buckets) -> WORK/join/; the pairs
//                routed to the rank of their first group (each once there),
//                reduced to spanning forests, the forests merged in a tree
//                to rank 0 (all pairs gathered there instead when
//                --pairs-out or --cluster center needs them). Joins that
//                cannot be split by band (SimHash's exact join, stream mode)
//                run on rank 0.
//   cluster      (each rank sends rank 0 its documents of clusters of two
//                or more, and minhash: their groups' signatures) rank 0:
//                union-find, keep policy (the library's code) over them
//   assign       rank 0 asks each rank for the ids it needs (kept documents
//                of clusters; every clustered document with --pairs-out or
//                --clusters-out) and sends each rank the records of its
//                documents that are in a cluster of two or more
//   write        (each rank writes the output lines of its own documents, in
//                input order) -> WORK/parts/
//   output       rank 0 copies the parts, in rank order, to the outputs and
//                writes --pairs-out and --clusters-out
// Every stage ends with all ranks agreeing on whether it succeeded; a failed
// rank is named with its reason and the job exits non-zero.

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
#include "common.h"
#include "dedup/cluster.h"
#include "dedup/stages.h"
#include "dedup_stages.h"
#include "forest.h"
#include "group.h"
#include "mpi_comm.h"
#include "neardup/minhash_dedup.h"
#include "output_files.h"
#include "shard.h"
#include "text/compression.h"
#include "util/file.h"
#include "watchdog.h"

namespace neardup::mpi {
namespace {

namespace fs = std::filesystem;
using cli::DedupConfig;
using cli::DedupFlags;
using neardup::DedupCorpus;

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct MpiFlags {
  DedupFlags dedup;
  std::string work_dir;
  bool resume = false;
  double stall_timeout = 600;  // seconds; 0: no watchdog (watchdog.h)
  std::string identity;        // the command line without --resume and --stall-timeout, and P
};

// Fault injection for the tests: NEARDUP_MPI_FAIL_AT=STAGE:RANK kills rank
// RANK (SIGKILL, as an out-of-memory killer would) right after it finished
// its first unit of STAGE (fingerprint: a shard; band: a band range, or
// MinHash's second band-key round; write: its parts; output: rank 0, after
// copying rank 0's part into --output). `term`: rank 0 gets SIGTERM at the
// output point instead (an interrupt while writing); `alloc`: the rank's
// join stage throws std::bad_alloc (a failed allocation) at its start;
// `stop`: the rank stops itself (SIGSTOP) there.
bool FailAt(const World& w, const char* stage) {
  const char* env = std::getenv("NEARDUP_MPI_FAIL_AT");
  if (env == nullptr) return false;
  const std::string want = std::string(stage) + ":" + std::to_string(w.rank);
  return want == env;
}

// A failed allocation on this rank: says so, removes this rank's temporary
// outputs and ends the whole job (MPI_Abort: the other ranks may be waiting
// in a collective this rank will never join, and memory is short for
// anything more), exit status 1.
// `what`: the failure ("an allocation failed", "cannot start a thread: ...").
[[noreturn]] void OutOfMemory(const World& w, const std::string& stage,
                              const std::string& what = "an allocation failed") {
  cli::PrintErrorLine("neardup-mpi: rank " + std::to_string(w.rank) + ": out of memory in stage " +
                      stage + " (" + what +
                      "); the job is aborted. Give each rank more "
                      "memory (fewer ranks per node) or run on more nodes; --resume keeps "
                      "the finished stages");
  cli::FinishOutputs(cli::kExitError);
  MPI_Abort(MPI_COMM_WORLD, cli::kExitError);
  std::_Exit(cli::kExitError);
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
bool AllRanksOk(const World& w, const Status& status) {
  const std::vector<uint64_t> failed = AllGatherU64(w, status.ok() ? 0 : 1);
  return std::count(failed.begin(), failed.end(), 1u) == 0;
}

// Ends a stage collectively: -1 when every rank succeeded, else the exit
// status (each failed rank has printed its reason; rank 0 names them).
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

// A unit of the fingerprint stage: an INPUT, or a piece of a large plain
// JSONL file (bytes [begin, end), cut at line starts; line first_line is its
// first line).
struct Unit {
  uint64_t input = 0;
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;  // UINT64_MAX: the whole input
  uint64_t first_line = 1;
  uint64_t piece = 0;   // its number among the pieces of its input
  uint64_t pieces = 1;  // 1: the input is not split
};

// True for a file that can be read in byte ranges: a regular file named
// *.jsonl or *.ndjson (format auto or jsonl) that is not compressed (gzip,
// zstd, xz, bzip2: DetectCompression, as the reader decides).
bool Splittable(const std::string& path, const std::string& format) {
  if (format != "auto" && format != "jsonl" && format != "lines") return false;
  std::string name = fs::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (format == "auto" && !name.ends_with(".jsonl") && !name.ends_with(".ndjson")) return false;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[8] = {};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  // The reader's own detector: whatever it decompresses is read whole.
  return DetectCompression(std::string_view(head, n)).empty();
}

// The first line start at or after `at` (the byte after the first '\n' at or
// after at - 1); `size` when there is none.
uint64_t LineStartFrom(std::FILE* f, uint64_t at, uint64_t size) {
  if (at == 0) return 0;
  if (std::fseek(f, static_cast<long>(at - 1), SEEK_SET) != 0) return size;
  std::string buffer(1u << 16, '\0');
  uint64_t pos = at - 1;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
    const void* nl = std::memchr(buffer.data(), '\n', n);
    if (nl != nullptr) {
      return pos + static_cast<uint64_t>(static_cast<const char*>(nl) - buffer.data()) + 1;
    }
    pos += n;
  }
  return size;
}

// What a stat of an input says (a directory: its regular files, recursively,
// as the reader reads them): bytes, files, the latest modification time.
struct InputStat {
  bool found = false;
  bool directory = false;
  uint64_t size = 0;
  uint64_t files = 0;
  int64_t mtime_ns = 0;
  std::string error;  // why it was not found
};

InputStat StatInput(const std::string& path) {
  InputStat s;
  const auto add = [&](const fs::path& file, std::error_code& ec) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {
      ec = std::error_code(errno, std::generic_category());
      return;
    }
    s.size += static_cast<uint64_t>(st.st_size);
    ++s.files;
    s.mtime_ns = std::max<int64_t>(
        s.mtime_ns, int64_t{st.st_mtim.tv_sec} * 1000000000 + int64_t{st.st_mtim.tv_nsec});
  };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    s.error = ec ? ec.message() : "no such file or directory";
    return s;
  }
  s.found = true;
  if (fs::is_directory(st)) {
    s.directory = true;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code file_ec;
      if (it->is_regular_file(file_ec)) add(it->path(), file_ec);
    }
  } else {
    add(path, ec);
  }
  if (ec) {
    s.found = false;
    s.error = ec.message();
  }
  return s;
}

// The units (in input order) and each rank's contiguous share of them, cut by
// size (`sizes`: rank 0's StatInput of each input): rank r reads units
// [cut[r], cut[r + 1]). A plain JSONL file larger than a rank's share is cut
// into pieces at line starts. Computed on rank 0 and broadcast.
void CutInputs(const World& w, const cli::InputFlags& input, const std::vector<uint64_t>& sizes,
               std::vector<Unit>* units, std::vector<uint64_t>* cut) {
  const std::vector<std::string>& inputs = input.inputs;
  std::vector<uint64_t> words;
  cut->assign(static_cast<size_t>(w.size) + 1, 0);
  if (w.rank == 0) {
    std::vector<double> weight(inputs.size(), 1);
    double total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      weight[i] += static_cast<double>(sizes[i]);
      total += weight[i];
    }
    const double share = total / w.size;
    std::vector<double> unit_weight;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto pieces = static_cast<uint64_t>(std::ceil(weight[i] / share - 1e-9));
      std::FILE* f = nullptr;
      if (w.size > 1 && pieces > 1 && Splittable(inputs[i], input.format)) {
        f = std::fopen(inputs[i].c_str(), "rb");
      }
      if (f == nullptr) {
        units->push_back({i, 0, UINT64_MAX, 1, 0, 1});
        unit_weight.push_back(weight[i]);
        continue;
      }
      const auto size = static_cast<uint64_t>(weight[i] - 1);
      std::vector<uint64_t> starts = {0};
      for (uint64_t j = 1; j < pieces; ++j) {
        const uint64_t at = LineStartFrom(f, size * j / pieces, size);
        if (at > starts.back() && at < size) starts.push_back(at);
      }
      std::fclose(f);
      starts.push_back(size);
      for (size_t j = 0; j + 1 < starts.size(); ++j) {
        units->push_back({i, starts[j], starts[j + 1], 1, j, starts.size() - 1});
        unit_weight.push_back(static_cast<double>(starts[j + 1] - starts[j]) + 1);
      }
    }
    double sum = 0;
    size_t u = 0;
    for (int r = 1; r < w.size; ++r) {
      const double target = total * r / w.size;
      while (u < units->size() && sum + unit_weight[u] / 2 < target) sum += unit_weight[u++];
      (*cut)[static_cast<size_t>(r)] = u;
    }
    (*cut)[static_cast<size_t>(w.size)] = units->size();
    for (const Unit& x : *units) {
      words.insert(words.end(), {x.input, x.begin, x.end, x.first_line, x.piece, x.pieces});
    }
  }
  BroadcastU64s(w, cut, 0);
  std::vector<uint64_t> count = {words.size()};
  BroadcastU64s(w, &count, 0);
  words.resize(count[0]);
  BroadcastU64s(w, &words, 0);
  units->clear();
  for (size_t k = 0; k + 6 <= words.size(); k += 6) {
    units->push_back(
        {words[k], words[k + 1], words[k + 2], words[k + 3], words[k + 4], words[k + 5]});
  }
}

// XXH3-64 of the bytes of unit `x` of `path` (a directory: its regular
// files' relative names and bytes, in name order); 0 when it cannot be read.
uint64_t UnitDigest(const std::string& path, const Unit& x) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::string buffer(1u << 20, '\0');
  bool ok = true;
  const auto add = [&](const std::string& file, uint64_t begin, uint64_t end) {
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (f == nullptr || std::fseek(f, static_cast<long>(begin), SEEK_SET) != 0) {
      if (f != nullptr) std::fclose(f);
      ok = false;
      return;
    }
    uint64_t left = end - begin;
    size_t n = 0;
    while (left > 0 &&
           (n = std::fread(buffer.data(), 1, std::min<uint64_t>(left, buffer.size()), f)) > 0) {
      XXH3_64bits_update(state, buffer.data(), n);
      left -= n;
    }
    if (std::ferror(f)) ok = false;
    std::fclose(f);
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), path, ec).string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& name : files) {
      XXH3_64bits_update(state, name.data(), name.size() + 1);
      add((fs::path(path) / name).string(), 0, UINT64_MAX);
    }
  } else {
    add(path, x.begin, x.end);
  }
  const uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!ok) return 0;
  return digest == 0 ? 1 : digest;
}

// Ranks agree on what they read: every unit is digested by the rank that
// reads it and once more by the rank before it (rank r checks rank r + 1's
// units: every byte is read twice in all, not once per rank), and the two
// digests must match. A rank that read another version of an input (same
// size, other bytes) or an empty directory made the job exit 0 with other
// output. IOError on the rank that owns a unit it cannot read or whose
// digests differ.
// `digests`: every unit's digest (its reader's), on every rank.
Status AgreeOnInputs(const World& w, const std::vector<std::string>& inputs,
                     const std::vector<uint64_t>& cut, const std::vector<Unit>& units,
                     std::vector<uint64_t>* digests) {
  std::vector<uint64_t> own(units.size(), 0), check(units.size(), 0);
  const auto range = [&](int r) {
    return std::pair<size_t, size_t>(cut[static_cast<size_t>(r)], cut[static_cast<size_t>(r) + 1]);
  };
  const auto [own_begin, own_end] = range(w.rank);
  for (size_t u = own_begin; u < own_end; ++u)
    own[u] = UnitDigest(inputs[units[u].input], units[u]);
  if (w.size > 1) {
    const auto [begin, end] = range((w.rank + 1) % w.size);
    for (size_t u = begin; u < end; ++u) check[u] = UnitDigest(inputs[units[u].input], units[u]);
  }
  AllReduceSum(w, &own);
  AllReduceSum(w, &check);
  *digests = own;
  const int checker = (w.rank + w.size - 1) % w.size;
  for (size_t u = own_begin; u < own_end; ++u) {
    const Unit& x = units[u];
    const std::string name = inputs[x.input];
    if (own[u] == 0) {
      return Status::IOError(name +
                             ": cannot read it on this rank (every rank must see the same "
                             "files)");
    }
    if (w.size == 1 || own[u] == check[u]) continue;
    const std::string where =
        x.pieces > 1 ? " (bytes " + std::to_string(x.begin) + ".." + std::to_string(x.end) + ")"
                     : "";
    return Status::IOError(name + where + ": rank " + std::to_string(w.rank) +
                           " read other bytes than rank " + std::to_string(checker) +
                           (check[u] == 0 ? ", which cannot read it" : "") +
                           ": every rank must see the same files");
  }
  return Status::OK();
}

// Each piece's first line: every rank counts the line breaks of its pieces,
// the counts are summed over the ranks and added up per input.
Status NumberLines(const World& w, const std::vector<std::string>& inputs,
                   const std::vector<uint64_t>& cut, std::vector<Unit>* units) {
  std::vector<uint64_t> breaks(units->size(), 0);
  Status status = Status::OK();
  for (size_t u = cut[static_cast<size_t>(w.rank)]; u < cut[static_cast<size_t>(w.rank) + 1]; ++u) {
    const Unit& x = (*units)[u];
    if (x.pieces == 1 || x.piece + 1 == x.pieces) continue;  // no later piece needs it
    std::FILE* f = std::fopen(inputs[x.input].c_str(), "rb");
    if (f == nullptr || std::fseek(f, static_cast<long>(x.begin), SEEK_SET) != 0) {
      status = Status::IOError(inputs[x.input] +
                               ": cannot read to count its lines: " + std::strerror(errno));
      if (f != nullptr) std::fclose(f);
      continue;
    }
    std::string buffer(1u << 20, '\0');
    uint64_t left = x.end - x.begin;
    size_t n = 0;
    while (left > 0 &&
           (n = std::fread(buffer.data(), 1, std::min<uint64_t>(left, buffer.size()), f)) > 0) {
      breaks[u] += static_cast<uint64_t>(std::count(buffer.data(), buffer.data() + n, '\n'));
      left -= n;
    }
    std::fclose(f);
  }
  AllReduceSum(w, &breaks);  // collective whatever happened here
  for (size_t u = 1; u < units->size(); ++u) {
    Unit& x = (*units)[u];
    if (x.piece > 0) x.first_line = (*units)[u - 1].first_line + breaks[u - 1];
  }
  return status;
}

// The inputs' part of the run's identity (WORK/inputs.id): each input's
// path, bytes, files (a directory's regular files), latest modification
// time, and its units (byte ranges) with the XXH3-64 of every byte of each
// (AgreeOnInputs' digests: the whole content, not a sample).
nlohmann::json InputsIdentity(const std::vector<std::string>& inputs,
                              const std::vector<InputStat>& stats, const std::vector<Unit>& units,
                              const std::vector<uint64_t>& digests) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    out.push_back({{"input", inputs[i]},
                   {"size", stats[i].size},
                   {"files", stats[i].files},
                   {"mtime_ns", stats[i].mtime_ns},
                   {"units", nlohmann::json::array()}});
  }
  for (size_t u = 0; u < units.size(); ++u) {
    out[units[u].input]["units"].push_back({units[u].begin, units[u].end, digests[u]});
  }
  return out;
}

std::string UtcTime(int64_t ns) {
  const std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// The inputs whose content differs between two InputsIdentity: their size or
// file count, or the digest of a unit with the same byte range; a split
// file cut at other line starts while every input kept its size (the cut
// depends only on the sizes and line starts). Each with what changed.
// `touched`: the inputs whose modification time alone changed.
std::vector<std::string> ChangedInputs(const nlohmann::json& earlier, const nlohmann::json& now,
                                       std::vector<std::string>* touched) {
  std::vector<std::string> changed;
  if (!earlier.is_array() || earlier.size() != now.size()) return {"the list of inputs"};
  bool sizes_kept = true;
  for (size_t i = 0; i < now.size(); ++i) {
    sizes_kept = sizes_kept && earlier[i].value("size", uint64_t{0}) == now[i]["size"] &&
                 earlier[i].value("files", uint64_t{0}) == now[i]["files"];
  }
  for (size_t i = 0; i < now.size(); ++i) {
    const nlohmann::json& a = earlier[i];
    const nlohmann::json& b = now[i];
    const std::string name = b["input"].get<std::string>();
    std::string why;
    const uint64_t size_a = a.value("size", uint64_t{0}), size_b = b["size"];
    const uint64_t files_a = a.value("files", uint64_t{0}), files_b = b["files"];
    if (size_a != size_b) {
      why = std::to_string(size_a) + " bytes then, " + std::to_string(size_b) + " now";
    } else if (files_a != files_b) {
      why = std::to_string(files_a) + " files then, " + std::to_string(files_b) + " now";
    } else {
      const nlohmann::json ua = a.value("units", nlohmann::json::array()), ub = b["units"];
      bool differs = false;
      if (ua.size() == ub.size()) {
        for (size_t k = 0; k < ub.size(); ++k) {
          const bool same_range = ua[k][0] == ub[k][0] && ua[k][1] == ub[k][1];
          if (same_range ? ua[k][2] != ub[k][2] : sizes_kept) differs = true;
        }
      } else {
        differs = sizes_kept;
      }
      if (differs) why = "same size, other bytes";
    }
    const int64_t mtime_a = a.value("mtime_ns", int64_t{0}), mtime_b = b["mtime_ns"];
    if (!why.empty()) {
      changed.push_back(name + " (" + why + "; modified " + UtcTime(mtime_b) + ")");
    } else if (mtime_a != mtime_b) {
      touched->push_back(name);
    }
  }
  return changed;
}

std::string ShardPath(const std::string& dir, const Unit& unit) {
  char name[64];
  if (unit.pieces == 1) {
    std::snprintf(name, sizeof name, "/shards/input-%06llu.shard",
                  static_cast<unsigned long long>(unit.input));
  } else {
    // The same input cut into as many pieces has the same byte ranges (the
    // cut depends on its size, the count and its bytes): a --resume at
    // another P reuses a piece only then.
    std::snprintf(name, sizeof name, "/shards/input-%06llu-piece-%04llu-of-%04llu.shard",
                  static_cast<unsigned long long>(unit.input),
                  static_cast<unsigned long long>(unit.piece),
                  static_cast<unsigned long long>(unit.pieces));
  }
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

std::string PartPath(const std::string& dir, int rank, const char* what) {
  char name[64];
  std::snprintf(name, sizeof name, "/parts/rank-%04d.%s", rank, what);
  return dir + name;
}

// What a rank's parts hold: each one's size and XXH3-64, read back from the
// files (kept in WORK/parts/rank-R.done once they are closed; --resume
// skips writing parts that still match it). NotFound when a part is missing.
Result<std::string> PartsDigest(const std::vector<std::string>& paths) {
  std::string digest;
  std::string buffer(1u << 20, '\0');
  for (const std::string& path : paths) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return Status::NotFound(path + ": no such part");
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    uint64_t size = 0;
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
      XXH3_64bits_update(state, buffer.data(), n);
      size += n;
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    const uint64_t words[2] = {size, XXH3_64bits_digest(state)};
    XXH3_freeState(state);
    if (failed) return Status::IOError(path + ": read error");
    AppendPod(words, &digest);
  }
  return digest;
}

// Output lines, buffered, to a file.
class PartWriter {
 public:
  static Result<PartWriter> Create(const std::string& path) {
    NEARDUP_ASSIGN_OR_RETURN(auto f, file::WritableFile::Create(path));
    return PartWriter(std::move(f));
  }
  Status Write(std::string_view s) {
    buffer_ += s;
    if (buffer_.size() < (1u << 20)) return Status::OK();
    return Flush();
  }
  Status Close() {
    NEARDUP_RETURN_IF_ERROR(Flush());
    return file_->Close();
  }

 private:
  explicit PartWriter(std::unique_ptr<file::WritableFile> f) : file_(std::move(f)) {}
  Status Flush() {
    const Status s = file_->Append(buffer_);
    buffer_.clear();
    return s;
  }
  std::unique_ptr<file::WritableFile> file_;
  std::string buffer_;
};

// Copies the file at `path` to `out` in 1 MiB pieces.
Status CopyInto(const std::string& path, cli::Output* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError(path + ": cannot open a part of the output");
  std::string buffer(1u << 20, '\0');
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
    out->Write(std::string_view(buffer.data(), n));
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::IOError(path + ": read error");
  return Status::OK();
}

// What rank 0 tells a rank about one of its documents in a cluster of two or
// more (the others are their own singleton clusters, kept).
struct Assignment {
  uint64_t local = 0;  // position among the rank's documents
  DedupRecord record;  // cluster, duplicate, distance, jaccard (nearest: see below)
  std::string nearest_id;
};

std::string EncodeAssignments(const std::vector<Assignment>& a) {
  std::string out;
  for (const Assignment& x : a) {
    const uint64_t words[5] = {x.local, x.record.cluster, x.record.duplicate ? 1u : 0u,
                               static_cast<uint64_t>(static_cast<int64_t>(x.record.distance)),
                               std::bit_cast<uint64_t>(x.record.jaccard)};
    AppendPod(words, &out);
    AppendStrings({x.nearest_id}, &out);
  }
  return out;
}

Result<std::vector<Assignment>> DecodeAssignments(std::string_view bytes) {
  std::vector<Assignment> out;
  while (!bytes.empty()) {
    uint64_t words[6];  // five, then the nearest id's length
    if (bytes.size() < sizeof words) return Status::Corruption("malformed assignment");
    std::memcpy(words, bytes.data(), sizeof words);
    if (bytes.size() - sizeof words < words[5]) return Status::Corruption("malformed assignment");
    Assignment& x = out.emplace_back();
    x.local = words[0];
    x.record.cluster = words[1];
    x.record.duplicate = words[2] != 0;
    x.record.distance = static_cast<int>(static_cast<int64_t>(words[3]));
    x.record.jaccard = std::bit_cast<double>(words[4]);
    x.nearest_id.assign(bytes.data() + sizeof words, words[5]);
    bytes.remove_prefix(sizeof words + words[5]);
  }
  return out;
}

std::string EncodeU64s(const std::vector<uint64_t>& v) {
  if (v.empty()) return {};
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(uint64_t));
}

// The library's rule for repeated ids (FindRepeatedIds, neardup dedup's
// warning) over the ranks: each id's XXH3-128 goes, with its document's
// position, to the rank of its hash; there the repeats are counted, and
// the first repeat (the smallest position whose id an earlier document
// has) with that earlier document is chosen over the ranks; its id comes
// from the rank that read it. `first`: this rank's first position. The
// result on rank 0 (count 0 elsewhere). Collective.
RepeatedIds FindRepeatedIdsOverRanks(const World& w, const std::vector<std::string>& ids,
                                     uint64_t first, Traffic* traffic) {
  struct Entry {
    uint64_t hi, lo, position;
  };
  std::vector<std::string> to(static_cast<size_t>(w.size));
  for (size_t i = 0; i < ids.size(); ++i) {
    const XXH128_hash_t h = XXH3_128bits(ids[i].data(), ids[i].size());
    AppendPod(Entry{h.high64, h.low64, first + i}, &to[h.low64 % static_cast<uint64_t>(w.size)]);
  }
  std::vector<Entry> mine = DecodePods<Entry>(AllToAllBytes(w, to, traffic));
  std::vector<std::string>().swap(to);
  std::sort(mine.begin(), mine.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.hi, a.lo, a.position) < std::tie(b.hi, b.lo, b.position);
  });
  uint64_t count = 0, repeat = UINT64_MAX, repeat_of = 0;
  for (size_t i = 1; i < mine.size(); ++i) {
    if (mine[i].hi != mine[i - 1].hi || mine[i].lo != mine[i - 1].lo) continue;
    ++count;
    // The group's second member repeats its first.
    if (i >= 2 && mine[i - 2].hi == mine[i].hi && mine[i - 2].lo == mine[i].lo) continue;
    if (mine[i].position < repeat) {
      repeat = mine[i].position;
      repeat_of = mine[i - 1].position;
    }
  }
  std::vector<uint64_t> total = {count};
  AllReduceSum(w, &total);
  const std::vector<uint64_t> repeats = AllGatherU64(w, repeat);
  const std::vector<uint64_t> repeats_of = AllGatherU64(w, repeat_of);
  RepeatedIds r;
  if (total[0] == 0) return r;
  const size_t best =
      static_cast<size_t>(std::min_element(repeats.begin(), repeats.end()) - repeats.begin());
  const uint64_t position = repeats[best];
  std::string id;
  if (position >= first && position - first < ids.size()) id = ids[position - first];
  const std::string all = GatherBytes(w, id, 0, traffic);
  if (w.rank != 0) return r;
  r.count = total[0];
  r.first = position;
  r.first_of = repeats_of[best];
  r.id = all;  // only the reader of `position` sent its id
  return r;
}

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
  Status JoinMinHashRounds(std::vector<IdPair>* pairs, BandJoinStats* total, size_t* computed,
                           size_t* units, ExchangeTraffic* traffic);
  Status JoinOnRankZero();
  Status Cluster();
  Status Assign();
  Status WriteParts();
  Status WriteOutputs();
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
  std::unique_ptr<cli::Output> out_;  // rank 0: --output, opened in setup
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
  // After the gather: my documents (ids, records), at positions
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
  // Every rank: the plan. SimHash: the distinct fingerprints and the join
  // (groups empty: no rank holds them all); MinHash: `need`.
  dedup_internal::SimHashPlan simhash_;
  dedup_internal::MinHashPlan minhash_;
  int bands_ = 0;  // 0: not split by band
  // MinHash: the number of groups, `need`, and the groups whose first
  // document is here (their signatures are own_.signatures).
  size_t minhash_groups_ = 0;
  size_t minhash_need_ = 0;
  std::vector<MinHashRep> reps_;
  // Rank 0: the join's pairs (of groups); after the cluster stage the
  // clustered documents' groups and pairs (renumbered: indexes into
  // positions_), for --pairs-out.
  std::vector<IdPair> group_pairs_;
  dedup_internal::Groups clustered_groups_;
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
  // Created before the input is read, as neardup dedup does.
  NEARDUP_ASSIGN_OR_RETURN(out_, cli::Output::Open(f.input.output, f.input.inputs));
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
      // of whole inputs and of pieces cut alike, SimHash's band ranges when
      // there are as many); each rank's parts and MinHash's band-key rounds
      // (per rank) go.
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
    const std::vector<std::string> changed = ChangedInputs(earlier, now, &touched);
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
// Read options for one unit: its byte range and first line.
ReadOptions UnitReadOptions(const ReadOptions& base, const Unit& unit) {
  ReadOptions options = base;
  if (unit.pieces > 1) {
    options.range_begin = unit.begin;
    options.range_end = unit.end;
    options.range_first_line = unit.first_line;
  }
  return options;
}

Status Run::CountBoilerplate(bool needed) {
  if (!needed) return Status::OK();
  LineCounter counter;
  Status counted = Status::OK();
  for (size_t u = cut_[w_.rank]; counted.ok() && u < cut_[w_.rank + 1]; ++u) {
    cli::InputFlags input = config_->flags.input;
    input.inputs = {input.inputs[units_[u].input]};
    ReadOptions read_options = UnitReadOptions(config_->read_options, units_[u]);
    read_options.on_issue = [](const InputIssue&) {};  // reported by the fingerprint pass
    auto reader = DocumentReader::Open(input.inputs, read_options);
    auto got = reader.ok() ? config_->job->CountLineStats(**reader) : reader.status();
    if (got.ok()) {
      counter.Merge(*got);
    } else {
      counted = got.status();
    }
  }
  const LineStats counts = std::move(counter).Finish();
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
  NEARDUP_RETURN_IF_ERROR(config_->job->UseLineStats(std::move(merged).Finish()));
  if (w_.rank == 0 && !config_->flags.boilerplate.stats_out.empty()) {
    NEARDUP_RETURN_IF_ERROR(config_->job->line_stats().Save(config_->flags.boilerplate.stats_out));
  }
  return Status::OK();
}

Status Run::Fingerprint(bool* any_needed_out) {
  const DedupFlags& f = config_->flags;
  const bool records = config_->keep_records();
  const size_t num_perm =
      config_->minhash ? static_cast<size_t>(config_->method.minhash.num_perm) : 0;
  const auto name = [&](const Unit& u) {
    std::string s = "input " + std::to_string(u.input) + " (" + f.input.inputs[u.input];
    if (u.pieces > 1) {
      s += ", piece " + std::to_string(u.piece) + " of " + std::to_string(u.pieces) + ": bytes " +
           std::to_string(u.begin) + ".." + std::to_string(u.end) + ", from line " +
           std::to_string(u.first_line);
    }
    return s + ")";
  };
  // Shards done in an earlier run.
  std::vector<size_t> todo;
  for (size_t u = cut_[w_.rank]; u < cut_[w_.rank + 1]; ++u) {
    mine_.emplace_back();
    if (flags_.resume) {
      const std::string path = ShardPath(flags_.work_dir, units_[u]);
      auto bytes = ReadChecked(path);
      if (bytes.ok()) {
        auto shard = DecodeShard(*bytes, path, num_perm, records);
        if (shard.ok()) {
          mine_.back() = std::move(*shard);
          (*log_)("fingerprint: " + name(units_[u]) + ": done in an earlier run, skipped");
          continue;
        }
        (*log_)("fingerprint: " + shard.status().message() + "; computing it again");
      }
    }
    todo.push_back(u);
  }
  std::vector<uint64_t> need = {todo.size()};
  AllReduceSum(w_, &need);
  *any_needed_out = need[0] > 0;
  // Collective: every rank takes part in the count when any rank needs it.
  const bool count = need[0] > 0 && config_->boilerplate.mode != BoilerplateMode::kOff;
  const Status counted = CountBoilerplate(count);
  if (!counted.ok()) return counted;
  for (size_t u : todo) {
    const Unit& unit = units_[u];
    cli::InputFlags input = f.input;
    input.inputs = {f.input.inputs[unit.input]};
    input.quiet = true;  // one summary for the job, on rank 0
    const uint64_t dropped_before = config_->job->dropped_lines();
    Shard& shard = mine_[u - cut_[w_.rank]];
    const ReadOptions read_options = UnitReadOptions(config_->read_options, unit);
    NEARDUP_ASSIGN_OR_RETURN(shard.stats,
                             cli::FingerprintInputs(*config_, input, &shard.corpus, &read_options));
    shard.boilerplate_dropped = config_->job->dropped_lines() - dropped_before;
    NEARDUP_RETURN_IF_ERROR(
        WriteFileAtomically(ShardPath(flags_.work_dir, unit), EncodeShard(shard, records)));
    (*log_)("fingerprint: " + name(unit) + ": " + std::to_string(shard.corpus.docs.size()) +
            " documents");
    if (FailAt(w_, "fingerprint")) std::raise(SIGKILL);
  }
  return Status::OK();
}

Status Run::Gather() {
  std::vector<uint64_t> sums(kStatsWords + 2, 0);
  for (Shard& s : mine_) {
    own_.signatures.insert(own_.signatures.end(), s.corpus.signatures.begin(),
                           s.corpus.signatures.end());
    const std::vector<uint64_t> words = StatsWords(s.stats);
    for (size_t k = 0; k < kStatsWords; ++k) sums[k] += words[k];
    sums[kStatsWords] += s.corpus.bad_scores;
    sums[kStatsWords + 1] += s.boilerplate_dropped;
    // My documents stay here: ids and records are written by this rank.
    own_.docs.insert(own_.docs.end(), s.corpus.docs.begin(), s.corpus.docs.end());
    own_.sketches.insert(own_.sketches.end(), s.corpus.sketches.begin(), s.corpus.sketches.end());
    std::move(s.corpus.ids.begin(), s.corpus.ids.end(), std::back_inserter(own_.ids));
    std::move(s.corpus.records.begin(), s.corpus.records.end(), std::back_inserter(own_.records));
  }
  mine_.clear();
  AllReduceSum(w_, &sums);
  stats_ = StatsFromWords(sums.data());
  bad_scores_ = sums[kStatsWords];
  dropped_ = sums[kStatsWords + 1];
  const std::vector<uint64_t> counts = AllGatherU64(w_, own_.docs.size());
  first_.assign(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) first_[r + 1] = first_[r] + counts[r];
  documents_ = first_.back();
  {
    Traffic traffic;
    repeated_ids_ = FindRepeatedIdsOverRanks(w_, own_.ids, first_[w_.rank], &traffic);
    std::vector<uint64_t> moved = {traffic.bytes_sent};
    AllReduceSum(w_, &moved);
    stages_.push_back({"ids", 0, moved[0], {{"repeated_ids", repeated_ids_.count}}});
  }
  // Stream mode is sequential: rank 0 runs it on every document. Cluster
  // mode gathers nothing: the documents are grouped over the ranks (plan).
  if (config_->options.mode == DedupMode::kCluster) return Status::OK();
  std::string packed;
  for (const DedupDocument& d : own_.docs) {
    AppendPod(Pack(d), &packed);
  }
  Traffic traffic;
  const std::string all = GatherBytes(w_, packed, 0, &traffic);
  std::string().swap(packed);
  // Verified pairs: every document's sketch too.
  const std::string sketches =
      GatherBytes(w_,
                  std::string(reinterpret_cast<const char*>(own_.sketches.data()),
                              own_.sketches.size() * sizeof(JaccardSketch)),
                  0, &traffic);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back({"gather", 0, moved[0], {{"rounds", traffic.rounds}}});
  if (w_.rank != 0) return Status::OK();
  const size_t n = all.size() / sizeof(PackedDocument);
  if (n != documents_) return Status::Corruption("gather: documents lost in the exchange");
  all_.docs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    PackedDocument p;
    std::memcpy(&p, all.data() + i * sizeof p, sizeof p);
    all_.docs[i] = Unpack(p);
  }
  if (config_->verify()) {
    if (sketches.size() != n * sizeof(JaccardSketch)) {
      return Status::Corruption("gather: sketches lost in the exchange");
    }
    all_.sketches.resize(n);
    if (n > 0) std::memcpy(all_.sketches.data(), sketches.data(), sketches.size());
  }
  return Status::OK();
}

Status Run::Plan() {
  const DedupConfig& c = *config_;
  // Stream mode is sequential: rank 0 runs it whole in the join stage.
  if (c.options.mode != DedupMode::kCluster) return Status::OK();
  const MinHashOptions& mh = c.method.minhash;
  const auto perm = static_cast<size_t>(mh.num_perm);
  // The options are checked first, the same way on every rank (SimHash:
  // with the fingerprints' width over the ranks, 1 when they mix).
  int bits = 0;
  if (c.minhash) {
    NEARDUP_ASSIGN_OR_RETURN(minhash_,
                             dedup_internal::PlanMinHashByIdentity({}, {}, mh, c.options));
  } else {
    uint64_t mine = 0;
    for (const DedupDocument& d : own_.docs) {
      if (d.empty) continue;
      const auto b = static_cast<uint64_t>(d.fingerprint.bits());
      mine = mine == 0 || mine == b ? b : 1;
    }
    for (const uint64_t b : AllGatherU64(w_, mine)) {
      if (b != 0) bits = bits == 0 || bits == static_cast<int>(b) ? static_cast<int>(b) : 1;
    }
    NEARDUP_RETURN_IF_ERROR(dedup_internal::PlanSimHashDistinct({}, bits, c.options).status());
  }
  // Identical fingerprints (signatures) grouped over the ranks (group.h).
  const auto t = std::chrono::steady_clock::now();
  const dedup_internal::IdentityKey key =
      c.minhash ? dedup_internal::IdentityKey([&](size_t i) {
        return dedup_internal::MinHashIdentity(
            std::span<const uint32_t>(own_.signatures).subspan(i * perm, perm));
      })
                : dedup_internal::IdentityKey([&](size_t i) {
                    const neardup::Fingerprint& fp = own_.docs[i].fingerprint;
                    return std::pair<uint64_t, uint64_t>(fp.hi(), fp.lo());
                  });
  Traffic traffic;
  Status status = GroupOverRanks(w_, own_.docs, key, first_[w_.rank], &groups_, &traffic);
  if (c.minhash) {
    minhash_groups_ = groups_.groups;
    minhash_need_ = minhash_.need;
    bands_ = minhash_groups_ >= 2 ? mh.bands : 0;
    // The groups whose first document is here, by group.
    for (size_t i = 0; i < own_.docs.size(); ++i) {
      if ((groups_.flags[i] & DistributedGroups::kFirst) != 0) {
        reps_.push_back({groups_.group[i], i});
      }
    }
    std::sort(reps_.begin(), reps_.end(),
              [](const MinHashRep& a, const MinHashRep& b) { return a.group < b.group; });
  } else {
    // The distinct fingerprints, in group order, on every rank (16 bytes
    // each): each rank's range, all-gathered in rank (key) order.
    const std::vector<std::pair<uint64_t, uint64_t>>& owned = groups_.owned_keys;
    std::string all = AllGatherBytes(w_,
                                     std::string_view(reinterpret_cast<const char*>(owned.data()),
                                                      owned.size() * sizeof(owned[0])),
                                     &traffic);
    std::vector<std::pair<uint64_t, uint64_t>>().swap(groups_.owned_keys);
    std::vector<std::pair<uint64_t, uint64_t>> words(all.size() / sizeof(words[0]));
    if (!words.empty()) std::memcpy(static_cast<void*>(words.data()), all.data(), all.size());
    std::string().swap(all);
    if (status.ok() && words.size() != groups_.groups) {
      status = Status::Corruption("plan: distinct fingerprints lost in the exchange");
    }
    if (status.ok()) {
      auto plan = dedup_internal::PlanSimHashDistinct(std::move(words), bits, c.options);
      if (plan.ok()) {
        simhash_ = std::move(*plan);
        simhash_.report.group_seconds = Since(t);
        bands_ = simhash_.report.banded ? simhash_.report.bands.bands : 0;
      } else {
        status = plan.status();
      }
    }
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
  const dedup_internal::SimHashPlan& simhash = simhash_;
  const size_t ranges =
      std::min<size_t>(static_cast<size_t>(bands_), 4 * static_cast<size_t>(w_.size));
  *units = ranges;
  std::vector<IdPair> range_pairs;
  for (size_t j = static_cast<size_t>(w_.rank); j < ranges; j += static_cast<size_t>(w_.size)) {
    const int begin = static_cast<int>(j * static_cast<size_t>(bands_) / ranges);
    const int end = static_cast<int>((j + 1) * static_cast<size_t>(bands_) / ranges);
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
    NEARDUP_RETURN_IF_ERROR(
        dedup_internal::SimHashJoinBands(simhash, options, begin, end, &range_pairs, &stats));
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

Status Run::JoinMinHashRounds(std::vector<IdPair>* pairs, BandJoinStats* total, size_t* computed,
                              size_t* units, ExchangeTraffic* traffic) {
  const MinHashOptions& mh = config_->method.minhash;
  ExchangeOptions o;
  o.groups = minhash_groups_;
  o.need = minhash_need_;
  o.num_perm = mh.num_perm;
  o.bands = mh.bands;
  o.rows = mh.rows;
  o.components_only = dedup_internal::ComponentsOnly(JoinOptions());
  if (const char* env = std::getenv("NEARDUP_MPI_ROUND_BYTES")) {
    o.round_bytes = std::max<uint64_t>(std::strtoull(env, nullptr, 10), 1);
  }
  const std::vector<ExchangeRound> rounds = PlanExchange(w_, o, reps_.size());
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
    JoinRound(w_, o, round, reps_, own_.signatures, &round_pairs, &stats, traffic, &buckets);
    dedup_internal::MergePairs(&round_pairs);
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
  if (FailAt(w_, "stop")) std::raise(SIGSTOP);
  if (bands_ == 0) return JoinOnRankZero();
  const DedupConfig& c = *config_;
  std::vector<IdPair> pairs;
  BandJoinStats total;
  size_t computed = 0, units = 0;
  ExchangeTraffic exchange;
  // This rank's pairs: SimHash's band ranges, MinHash's band-key rounds.
  const Status joined = c.minhash ? JoinMinHashRounds(&pairs, &total, &computed, &units, &exchange)
                                  : JoinBandRanges(&pairs, &total, &computed, &units);
  dedup_internal::MergePairs(&pairs);
  // Each pair to the rank of its first group, where the copies that two
  // ranges found become one (their number is the join's count).
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
      dedup_internal::MergePairs(&group_pairs_);
    }
  } else {
    group_pairs_ = MergeForests(w_, SpanningForest(owned), &traffic);
  }
  std::vector<uint64_t> moved = {traffic.bytes_sent, exchange.keys.bytes_sent,
                                 exchange.signatures.bytes_sent};
  AllReduceSum(w_, &moved);
  nlohmann::ordered_json extra = {
      {c.minhash ? "band_key_rounds" : "band_ranges", units},
      {c.minhash ? "rounds_computed" : "ranges_computed", c.minhash ? computed : sums[3]},
      {"pairs", sums[5]},
      {"pairs_on_rank_0", group_pairs_.size()}};
  if (c.minhash) {
    extra["band_key_bytes"] = moved[1];
    extra["signature_bytes"] = moved[2];
  }
  stages_.push_back({"join", 0, moved[0] + moved[1] + moved[2], extra});
  NEARDUP_RETURN_IF_ERROR(joined);
  // Rank 0 goes on only when every rank joined its ranges (EndStage names
  // the ranks that did not).
  if (sums[4] > 0 || w_.rank != 0) return Status::OK();
  if (c.minhash) {
    result_.join.banded = true;
    result_.join.distinct = minhash_groups_;
  } else {
    result_.join = simhash_.report;
  }
  result_.join.candidates = sums[0];
  result_.join.tested = sums[1];
  result_.join.large_buckets = sums[2];
  result_.join.confirmed = sums[5];
  return WriteMarker(flags_.work_dir, "join");
}

Status Run::JoinOnRankZero() {
  if (w_.rank != 0) return Status::OK();
  (*log_)("join: not banded; rank 0 joins everything");
  const DedupConfig& c = *config_;
  DedupOptions options = JoinOptions();
  if (options.mode == DedupMode::kStream) {
    options.sketches = all_.sketches;
    NEARDUP_ASSIGN_OR_RETURN(result_, Dedup(all_.docs, options));
  } else if (c.minhash) {
    // Fewer than two distinct signatures: no pairs.
    result_.join.banded = true;
    result_.join.distinct = minhash_groups_;
  } else {
    result_.join = simhash_.report;
    const auto t = std::chrono::steady_clock::now();
    NEARDUP_RETURN_IF_ERROR(dedup_internal::SimHashJoinExact(simhash_, options, &group_pairs_,
                                                             &result_.join.confirmed));
    result_.join.join_seconds = Since(t);
  }
  return WriteMarker(flags_.work_dir, "join");
}

Status Run::Cluster() {
  const DedupConfig& c = *config_;
  // The join's input (16 bytes per distinct fingerprint) is done with.
  std::vector<std::pair<uint64_t, uint64_t>>().swap(simhash_.words);
  Collected collected;
  if (c.options.mode == DedupMode::kCluster) {
    // The documents of clusters of two or more (and MinHash: their groups'
    // signatures) to rank 0; the others are their own clusters, kept.
    const size_t perm = c.minhash ? static_cast<size_t>(c.method.minhash.num_perm) : 0;
    Traffic traffic;
    const Status got =
        CollectClustered(w_, own_.docs, groups_, first_[w_.rank], group_pairs_, own_.signatures,
                         perm, &collected, &traffic, c.verify() ? &own_.sketches : nullptr);
    groups_ = DistributedGroups();
    std::vector<uint64_t> moved = {traffic.bytes_sent};
    AllReduceSum(w_, &moved);
    nlohmann::ordered_json extra = {
        {"documents_clustered_on_rank_0", collected.clustered.positions.size()},
        {"rounds", traffic.rounds}};
    if (c.minhash) extra["signatures_on_rank_0"] = collected.signature_groups.size();
    stages_.push_back({"cluster", 0, moved[0], extra});
    NEARDUP_RETURN_IF_ERROR(got);
  }
  if (w_.rank != 0) return Status::OK();
  const DedupFlags& f = c.flags;
  if (c.options.mode == DedupMode::kCluster) {
    ClusteredDocuments& sub = collected.clustered;
    // No pair sink: --pairs-out is written once the ids are here.
    const DedupJoinReport join = result_.join;
    if (c.minhash) {
      dedup_internal::MinHashPlan plan;
      plan.groups = std::move(sub.groups);
      plan.need = minhash_.need;
      // Asked for the documents of clusters of two or more only: their
      // groups' signatures were collected.
      const auto perm = static_cast<size_t>(c.method.minhash.num_perm);
      const std::vector<uint64_t>& with = collected.signature_groups;
      const auto signature = [&](size_t i) {
        const uint64_t g = sub.chosen[plan.groups.of[i]];
        const auto k =
            static_cast<size_t>(std::lower_bound(with.begin(), with.end(), g) - with.begin());
        return std::span<const uint32_t>(collected.signatures).subspan(k * perm, perm);
      };
      dedup_internal::FinishMinHash(sub.docs, plan, signature, c.method.minhash, sub.pairs,
                                    c.options, &result_);
      clustered_groups_ = std::move(plan.groups);
    } else {
      dedup_internal::SimHashPlan plan;
      plan.groups = std::move(sub.groups);
      DedupOptions options = c.options;
      options.sketches = collected.sketches;  // verified pairs, as neardup dedup's
      // Verified here too: --pairs-out writes these pairs.
      dedup_internal::VerifyGroupPairs(plan.groups, options, &sub.pairs);
      dedup_internal::FinishSimHash(sub.docs, plan, sub.pairs, options, &result_);
      clustered_sketches_ = std::move(collected.sketches);
      clustered_groups_ = std::move(plan.groups);
    }
    clustered_pairs_ = std::move(sub.pairs);
    positions_ = std::move(sub.positions);
    // The summary of every document.
    DedupSummary& s = result_.summary;
    const uint64_t others = documents_ - positions_.size();
    s.documents += others;
    s.kept += others;
    s.clusters += others;
    s.empty += collected.empty;
    result_.join = join;
    result_.join.cluster_seconds = 0;
  } else {
    // Stream mode: a record for every document.
    positions_.resize(result_.records.size());
    std::iota(positions_.begin(), positions_.end(), uint64_t{0});
  }
  // The ids rank 0 needs: every duplicate's kept document (records); every
  // member of a cluster of two or more (--clusters-out); every document of a
  // pair (--pairs-out).
  std::vector<uint64_t> want;
  for (size_t j = 0; j < result_.records.size(); ++j) {
    const DedupRecord& r = result_.records[j];
    if (!r.duplicate) continue;
    want.push_back(positions_[r.nearest]);
    if (!f.clusters_out.empty()) want.push_back(positions_[j]);
  }
  if (!f.pairs_out.empty()) {
    if (c.options.mode == DedupMode::kStream) {
      for (const DedupPair& p : result_.pairs) want.insert(want.end(), {p.i, p.j});
    } else {
      // The members of groups of two or more and of paired groups.
      want.insert(want.end(), positions_.begin(), positions_.end());
    }
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  wanted_.assign(static_cast<size_t>(w_.size), {});
  for (const uint64_t i : want) {
    const size_t r = Owner(i);
    wanted_[r].push_back(i - first_[r]);
  }
  // One entry (the collection may have made it).
  if (stages_.empty() || stages_.back().name != "cluster") stages_.push_back({"cluster", 0, 0, {}});
  stages_.back().extra["documents_clustered_on_rank_0"] = positions_.size();
  return Status::OK();
}

Status Run::Assign() {
  Traffic traffic;
  std::vector<std::string> requests;
  for (const std::vector<uint64_t>& w : wanted_) requests.push_back(EncodeU64s(w));
  const std::vector<uint64_t> wanted =
      DecodePods<uint64_t>(ScatterBytes(w_, requests, 0, &traffic));
  std::vector<std::string>().swap(requests);
  std::string ids;
  for (const uint64_t local : wanted) {
    AppendStrings({local < own_.ids.size() ? own_.ids[local] : std::string()}, &ids);
  }
  const std::string all_ids = GatherBytes(w_, ids, 0, &traffic);
  std::string().swap(ids);
  // Rank 0: the ids, then each rank's part of the result (the documents in
  // clusters of two or more; the others are singletons).
  Status status = Status::OK();
  std::vector<std::string> parts(static_cast<size_t>(w_.size));
  if (w_.rank == 0) {
    if (!ReadStrings(all_ids, &ids_)) status = Status::Corruption("malformed id exchange");
    for (size_t r = 0; r < wanted_.size(); ++r) {
      for (const uint64_t local : wanted_[r]) id_positions_.push_back(first_[r] + local);
    }
    std::vector<std::vector<uint64_t>>().swap(wanted_);
    if (ids_.size() != id_positions_.size()) status = Status::Corruption("ids lost in exchange");
    // Records of the clustered documents only (positions_, increasing: each
    // rank's in its order).
    for (size_t j = 0; status.ok() && j < result_.records.size(); ++j) {
      const uint64_t i = positions_[j];
      Assignment a;
      a.record = result_.records[j];
      a.record.cluster = positions_[a.record.cluster];
      a.record.nearest = positions_[a.record.nearest];
      if (!a.record.duplicate && a.record.cluster == i) continue;
      const size_t r = Owner(i);
      a.local = i - first_[r];
      if (a.record.duplicate) a.nearest_id = Id(a.record.nearest);
      parts[r] += EncodeAssignments({a});
    }
  }
  const std::string mine = ScatterBytes(w_, parts, 0, &traffic);
  std::vector<std::string>().swap(parts);
  std::vector<uint64_t> moved = {traffic.bytes_sent};
  AllReduceSum(w_, &moved);
  stages_.push_back(
      {"assign",
       0,
       moved[0],
       {{"ids_on_rank_0", ids_.size() + own_.ids.size()}, {"rounds", traffic.rounds}}});
  NEARDUP_RETURN_IF_ERROR(status);
  NEARDUP_ASSIGN_OR_RETURN(assigned_, DecodeAssignments(mine));
  std::vector<uint32_t>().swap(own_.signatures);
  if (w_.rank == 0) {
    // What the outputs still need on rank 0: the groups and pairs
    // (--pairs-out), the records (--clusters-out).
    std::vector<DedupDocument>().swap(all_.docs);
    if (config_->flags.clusters_out.empty()) std::vector<DedupRecord>().swap(result_.records);
  }
  return Status::OK();
}

Status Run::WriteParts() {
  const DedupFlags& f = config_->flags;
  std::vector<std::string> paths = {PartPath(flags_.work_dir, w_.rank, "records")};
  if (!f.unique_out.empty()) paths.push_back(PartPath(flags_.work_dir, w_.rank, "unique"));
  if (!f.duplicates_out.empty()) paths.push_back(PartPath(flags_.work_dir, w_.rank, "duplicates"));
  const std::string marker = PartPath(flags_.work_dir, w_.rank, "done");
  if (flags_.resume) {
    // The same command line and ranks (run.id): the same lines.
    auto earlier = ReadChecked(marker);
    auto now = PartsDigest(paths);
    if (earlier.ok() && now.ok() && *earlier == *now) {
      (*log_)("write: parts done in an earlier run, skipped");
      return Status::OK();
    }
  }
  NEARDUP_ASSIGN_OR_RETURN(PartWriter records,
                           PartWriter::Create(PartPath(flags_.work_dir, w_.rank, "records")));
  std::optional<PartWriter> kept, duplicates;
  if (!f.unique_out.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(kept,
                             PartWriter::Create(PartPath(flags_.work_dir, w_.rank, "unique")));
  }
  if (!f.duplicates_out.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(duplicates,
                             PartWriter::Create(PartPath(flags_.work_dir, w_.rank, "duplicates")));
  }
  const uint64_t first = first_[static_cast<size_t>(w_.rank)];
  size_t next = 0;
  for (size_t i = 0; i < own_.docs.size(); ++i) {
    DedupRecord r;
    r.cluster = r.nearest = first + i;
    r.empty = own_.docs[i].empty;
    std::string_view nearest_id = own_.ids[i];
    if (next < assigned_.size() && assigned_[next].local == i) {
      const Assignment& a = assigned_[next++];
      r.cluster = a.record.cluster;
      r.duplicate = a.record.duplicate;
      r.distance = a.record.distance;
      r.jaccard = a.record.jaccard;
      nearest_id = a.nearest_id;
    }
    NEARDUP_RETURN_IF_ERROR(
        records.Write(config_->job->RecordLine(own_.docs[i], r, own_.ids[i], nearest_id)));
    std::optional<PartWriter>& to = r.duplicate ? duplicates : kept;
    if (to) {
      NEARDUP_RETURN_IF_ERROR(to->Write(own_.records[i]));
      NEARDUP_RETURN_IF_ERROR(to->Write("\n"));
    }
  }
  if (next != assigned_.size()) return Status::Corruption("write: an assignment of no document");
  NEARDUP_RETURN_IF_ERROR(records.Close());
  if (kept) NEARDUP_RETURN_IF_ERROR(kept->Close());
  if (duplicates) NEARDUP_RETURN_IF_ERROR(duplicates->Close());
  NEARDUP_ASSIGN_OR_RETURN(const std::string digest, PartsDigest(paths));
  NEARDUP_RETURN_IF_ERROR(WriteFileAtomically(marker, digest));
  (*log_)("write: " + std::to_string(own_.docs.size()) + " documents' lines");
  if (FailAt(w_, "write")) std::raise(SIGKILL);
  return Status::OK();
}

Status Run::WriteOutputs() {
  if (w_.rank != 0) return Status::OK();
  const auto t = std::chrono::steady_clock::now();
  const DedupConfig& c = *config_;
  const DedupFlags& f = c.flags;
  std::vector<std::string> parts;
  for (int r = 0; r < w_.size; ++r) {
    parts.push_back(PartPath(flags_.work_dir, r, "done"));
    parts.push_back(PartPath(flags_.work_dir, r, "records"));
    NEARDUP_RETURN_IF_ERROR(CopyInto(parts.back(), out_.get()));
    if (r == 0 && w_.size > 1) {
      // The output half copied, under its temporary name.
      if (FailAt(w_, "output")) std::raise(SIGKILL);
      if (FailAt(w_, "term")) std::raise(SIGTERM);
    }
  }
  NEARDUP_RETURN_IF_ERROR(out_->Close());
  for (const bool dups : {false, true}) {
    const std::string& path = dups ? f.duplicates_out : f.unique_out;
    if (path.empty()) continue;
    NEARDUP_ASSIGN_OR_RETURN(auto out, cli::Output::Open(path, f.input.inputs));
    for (int r = 0; r < w_.size; ++r) {
      parts.push_back(PartPath(flags_.work_dir, r, dups ? "duplicates" : "unique"));
      NEARDUP_RETURN_IF_ERROR(CopyInto(parts.back(), out.get()));
    }
    NEARDUP_RETURN_IF_ERROR(out->Close());
  }
  if (!f.pairs_out.empty()) {
    NEARDUP_ASSIGN_OR_RETURN(auto out, cli::Output::Open(f.pairs_out, f.input.inputs));
    // Stream mode's pairs are of positions, cluster mode's of indexes into
    // positions_ (the identity in stream mode).
    const auto sink = [&](const DedupPair& p) {
      // Cluster mode's pairs come from the groups: their estimate from the
      // clustered documents' sketches.
      const double jaccard =
          p.jaccard >= 0 || clustered_sketches_.empty()
              ? p.jaccard
              : SketchJaccard(clustered_sketches_[p.i], clustered_sketches_[p.j]);
      out->Write(c.job->PairLine(Id(positions_[p.i]), Id(positions_[p.j]), p.distance, jaccard));
    };
    if (c.options.mode == DedupMode::kStream) {
      for (const DedupPair& p : result_.pairs) sink(p);
    } else {
      // Over the clustered documents (every document of a pair is one):
      // the same pairs in the same order, renumbered.
      dedup_internal::EmitDocumentPairs(clustered_groups_, clustered_pairs_, sink);
    }
    NEARDUP_RETURN_IF_ERROR(out->Close());
  }
  NEARDUP_RETURN_IF_ERROR(cli::WriteClusters(
      c, result_, [this](size_t i) { return Id(i); }, positions_));
  // Each rank's marker before its parts: a marker never outlives them.
  for (const std::string& p : parts) NEARDUP_RETURN_IF_ERROR(file::RemoveFile(p));
  output_seconds_ = Since(t);
  return WriteMarker(flags_.work_dir, "write");
}

void Run::Report() {
  if (w_.rank != 0) return;
  nlohmann::ordered_json o = {{"ranks", w_.size}, {"documents", documents_}};
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
  // The short-document rule's exact Jaccard join is not distributed yet.
  if (config.ok() && flags_.dedup.short_features > 0) {
    config = Status::InvalidArgument(
        "--short-features is not supported by neardup-mpi (run neardup dedup)");
  }
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

}  // namespace
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
      "by input share, the band join by band range; stages kept under --work-dir");
  neardup::cli::AddDedupOptions(cmd, &flags.dedup);
  cmd->add_option("--work-dir", flags.work_dir,
                  "Directory for the stages' files (shards, band-range pairs, markers, logs); on "
                  "a cluster a file system every rank sees")
      ->required();
  cmd->add_option("--stall-timeout", flags.stall_timeout,
                  "Seconds without a heartbeat from a rank (each rank's watchdog thread writes "
                  "one under --work-dir every fifth of this, at most every 10 s, and watches "
                  "the next rank's) after which the job is aborted with the rank named: a "
                  "stopped or hung rank, a lost node. 0: wait forever")
      ->check(CLI::NonNegativeNumber)
      ->default_val(600);
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
