// Copyright 2026 The neardup Authors.
//
// neardup-mpi's inputs: the fingerprint stage's units (an INPUT, or a byte
// range of a large plain JSONL file), how they are cut over the ranks, and
// the inputs' identity that --resume checks.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_INPUTS_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_INPUTS_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "mpi_comm.h"

namespace neardup::mpi {

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

InputStat StatInput(const std::string& path);

// The units (in input order) and each rank's contiguous share of them, cut by
// size (`sizes`: rank 0's StatInput of each input): rank r reads units
// [cut[r], cut[r + 1]). A plain JSONL file larger than a rank's share is cut
// into pieces at line starts. Computed on rank 0 and broadcast.
void CutInputs(const World& w, const cli::InputFlags& input, const std::vector<uint64_t>& sizes,
               std::vector<Unit>* units, std::vector<uint64_t>* cut);

// Read options for one unit: its byte range and first line.
ReadOptions UnitReadOptions(const ReadOptions& base, const Unit& unit);

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
                     std::vector<uint64_t>* digests);

// Each piece's first line: every rank counts the line breaks of its pieces,
// the counts are summed over the ranks and added up per input.
Status NumberLines(const World& w, const std::vector<std::string>& inputs,
                   const std::vector<uint64_t>& cut, std::vector<Unit>* units);

// The inputs' part of the run's identity (WORK/inputs.id): each input's
// path, bytes, files (a directory's regular files), latest modification
// time, and its units (byte ranges) with the XXH3-64 of every byte of each
// (AgreeOnInputs' digests: the whole content, not a sample).
nlohmann::json InputsIdentity(const std::vector<std::string>& inputs,
                              const std::vector<InputStat>& stats, const std::vector<Unit>& units,
                              const std::vector<uint64_t>& digests);

// The inputs whose content differs between two InputsIdentity: their size or
// file count, or the digest of one of the earlier run's units. A unit whose
// byte range is one of `now`'s is compared with that digest; one that is not
// (the earlier run had another rank count, so a split file was cut into
// other pieces) is digested again by `digest_of(input, begin, end)` (0: it
// cannot be read). Each with what changed. `touched`: the inputs whose
// modification time alone changed.
using RangeDigest = std::function<uint64_t(uint64_t input, uint64_t begin, uint64_t end)>;
std::vector<std::string> ChangedInputs(const nlohmann::json& earlier, const nlohmann::json& now,
                                       const RangeDigest& digest_of,
                                       std::vector<std::string>* touched);

// The XXH3-64 of the bytes [begin, end) of `path` (end UINT64_MAX: to its
// end; a directory: its regular files' relative names and bytes, in name
// order): the digest AgreeOnInputs gives a unit; 0 when it cannot be read.
uint64_t RangeDigestOf(const std::string& path, uint64_t begin, uint64_t end);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_INPUTS_H_
