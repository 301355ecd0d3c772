// Copyright 2026 The neardup Authors.
//
// Internal: fault injection for crash and disk-full tests.
//
// Every durable write path (index files, and any other module that opts in)
// calls BeforeWriteStep() immediately before each step that changes the file
// system: one write(2), fsync(2), rename(2) or unlink(2) is one step. Steps are
// counted per process from 1. Environment variables (read once):
//
//   NEARDUP_FAULT_KILL_AT=N   the process raises SIGKILL just before step N
//                             (steps 1..N-1 happened, step N did not);
//   NEARDUP_FAULT_FAIL_AT=N   step N is not performed and reports ENOSPC, as if
//                             the disk were full;
//   NEARDUP_FAULT_TRACE=1     every step is printed to stderr as
//                             "neardup: fault step N: <what>".
//
// Without these variables the cost is one relaxed atomic increment per step.
//
// Thread safety: may be called from any thread.

#ifndef NEARDUP_UTIL_FAULT_H_
#define NEARDUP_UTIL_FAULT_H_

#include <string_view>

namespace neardup::fault {

// Counts one write step named `what` (for the trace). Returns 0 when the step
// should proceed, or an errno value (ENOSPC) that the caller must report as the
// step's failure without performing it. Does not return under KILL_AT.
int BeforeWriteStep(std::string_view what);

}  // namespace neardup::fault

#endif  // NEARDUP_UTIL_FAULT_H_
