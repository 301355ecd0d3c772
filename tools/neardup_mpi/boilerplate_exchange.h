// Copyright 2026 The neardup Authors.
//
// The boilerplate line counts of an MPI job, reduced by key range: no rank
// holds every distinct line of the corpus. Each rank counts the lines of its
// own documents (a LineStats), splits the counts by line key into P ranges
// (LineStats::SplitByKey) and sends range r to rank r (MPI_Alltoallv, in
// rounds of at most ChunkBytes(P) per pair of ranks). Rank r merges what it
// received into the counts of its range over the whole corpus, keeps the
// lines that reach min_docs (LineStats::AtLeast: all a BoilerplateFilter with
// that min_docs looks at), and only those go to every rank (all-gather),
// where they are joined into one LineStats (LineStats::Union). Every rank
// then strips exactly the lines neardup dedup strips.
//
// Memory per rank: its own counts (its documents' distinct lines), its range
// of the corpus's distinct lines (about 1/P of them), and the boilerplate
// lines (those at >= min_docs) of the whole corpus. Before, every rank
// received every other rank's whole table (12 B or more per distinct line
// and rank).
//
// Collective: every rank calls ReduceLineCounts, in the same order.

#ifndef NEARDUP_TOOLS_NEARDUP_MPI_BOILERPLATE_EXCHANGE_H_
#define NEARDUP_TOOLS_NEARDUP_MPI_BOILERPLATE_EXCHANGE_H_

#include <cstdint>

#include "mpi_comm.h"
#include "neardup/boilerplate.h"
#include "neardup/status.h"

namespace neardup::mpi {

struct LineCountsReduced {
  // Every rank: the lines of the whole corpus in >= min_docs groups, and
  // the corpus's documents (what the fingerprint pass's filter needs).
  LineStats kept;
  // Rank 0, when asked for (--boilerplate-stats-out): every line's counts.
  LineStats all;
  uint64_t distinct_lines = 0;  // of the corpus (every rank)
  uint64_t range_lines = 0;     // the most distinct lines one rank's range held
  uint64_t count_bytes = 0;     // the serialized counts sent to the owners, all ranks
  uint64_t kept_bytes = 0;      // the serialized kept lines, all ranks together
  Traffic traffic;              // this rank's
};

// `local`: this rank's counts (consumed); `status`: whether counting them
// went well (a failed rank still takes part, sending nothing, and the
// result is its error). `all_on_rank_0`: also gather every line's counts on
// rank 0 (the same on every rank).
Result<LineCountsReduced> ReduceLineCounts(const World& world, LineStats local,
                                           const Status& status, uint32_t min_docs,
                                           bool all_on_rank_0);

}  // namespace neardup::mpi

#endif  // NEARDUP_TOOLS_NEARDUP_MPI_BOILERPLATE_EXCHANGE_H_
