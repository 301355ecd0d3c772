// Copyright 2026 The neardup Authors.
//
// Deterministic crash injection for tests. Code that writes durable state
// calls Step() before each write step (a file write, an fsync, a rename, a
// database commit). When the environment variable NEARDUP_FAULT_KILL_AT=N
// (N >= 1) is set, the N-th Step() of the process raises SIGKILL, so a test
// can kill a child process at every write step in turn instead of after a
// random delay. Without the variable Step() only counts (one relaxed atomic
// increment).
//
// Thread safety: Step() may be called from any thread; steps are numbered in
// the order the calls reach the shared counter.

#ifndef NEARDUP_UTIL_FAULT_H_
#define NEARDUP_UTIL_FAULT_H_

namespace neardup::fault {

// One write step named `what` (e.g. "store.write"; for the reader of a core
// dump, nothing depends on it).
void Step(const char* what);

}  // namespace neardup::fault

#endif  // NEARDUP_UTIL_FAULT_H_
