// Copyright 2026 The neardup Authors.
//
// neardup-mpi's files under --work-dir, each written whole to a temporary
// name, fsynced and renamed into place (so a file that exists is complete),
// with an XXH3-64 checksum at its end: read back, a torn or foreign file is
// Corruption naming the path. Byte order and widths are the machine's: a work
// directory is read back by the same build on the same kind of machine.
//
//   shards/input-NNNNNN.shard  the fingerprint stage's result for INPUT
//                              number NNNNNN (0-based, in command-line order)
//   join/round-RRRR-of-TTTT-rank-KKKK.pairs
//                              the group pairs rank KKKK confirmed in
//                              band-key round RRRR
//   parts/rank-RRRR.done       the sizes and XXH3-64 of rank RRRR's output
//                              parts (the parts themselves are plain lines)
//   STAGE.done                 a stage's completion marker
//
// Thread safety: pure functions.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_SHARD_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_SHARD_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/dedup_job.h"
#include "neardup/index.h"
#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup::mpi {

// One input's documents and what reading it met.
struct Shard {
  // sets and records are never stored (minhash exact is refused); short_sets
  // are (--short-features).
  DedupCorpus corpus;
  InputStats stats;
  uint64_t boilerplate_dropped = 0;  // line occurrences left out
};

// The fixed-width part of a document as exchanged between ranks: 40 bytes.
struct PackedDocument {
  uint64_t hi = 0;
  uint64_t lo = 0;
  uint64_t length = 0;
  double score = 0;
  uint64_t flags = 0;  // bit 0 empty, bit 1 has score, bit 2 128-bit fingerprint
};
PackedDocument Pack(const DedupDocument& d);
DedupDocument Unpack(const PackedDocument& p);

// InputStats as 9 words (and back), for sums over ranks.
std::vector<uint64_t> StatsWords(const InputStats& s);
InputStats StatsFromWords(const uint64_t* w);
inline constexpr size_t kStatsWords = 9;

// A shard holds no input record (--unique-out and --duplicates-out read
// them back from the inputs in the write stage): its documents' fixed-width
// part, signatures, sketches and ids.
std::string EncodeShard(const Shard& shard);
Result<Shard> DecodeShard(std::string_view bytes, const std::string& name, size_t num_perm);

// Strings as (u64 length, bytes)..., for ids and records.
void AppendStrings(const std::vector<std::string>& strings, std::string* out);
// Appends the strings of `bytes` to *out; false when they are malformed.
bool ReadStrings(std::string_view bytes, std::vector<std::string>* out);

std::string EncodePairs(const std::vector<IdPair>& pairs);
Result<std::vector<IdPair>> DecodePairs(std::string_view bytes, const std::string& name);

// Writes `payload` + its checksum to path atomically (temporary file, fsync,
// rename, fsync of the directory).
Status WriteFileAtomically(const std::string& path, std::string_view payload);
// The payload of a file WriteFileAtomically wrote; NotFound when absent,
// Corruption when its checksum is wrong.
Result<std::string> ReadChecked(const std::string& path);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_SHARD_H_
