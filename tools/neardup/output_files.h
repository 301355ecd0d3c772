// Copyright 2026 The neardup Authors.
//
// No half-written output under a final name. Every output file a command
// writes (Output, common.h) is created under a temporary name beside it,
// ".NAME.neardup-PID-N.tmp", and renamed into place by FinishOutputs only
// when the command succeeded, in the order the files were opened (dedup's
// --summary-json last, so that its presence marks a finished run). A failed
// run removes them; so does SIGINT or SIGTERM, which also clears the
// progress line and exits 130 or 143 (InstallSignalHandlers). A path that
// exists and is not a regular file (/dev/null, a FIFO) is written directly.
// Putting a file in place is durable: its data are fsynced before the
// rename and its directory after, before the next file is put in place. A
// symbolic link is followed: its target is created or replaced (the
// temporary file sits beside the target) and the link is left as it is.
//
// Not thread-safe: outputs are opened and finished by the main thread; the
// signal handler only reads the registry (async-signal-safe).

#ifndef NEARDUP_TOOLS_NEARDUP_OUTPUT_FILES_H_
#define NEARDUP_TOOLS_NEARDUP_OUTPUT_FILES_H_

#include <string>

#include "neardup/status.h"

namespace neardup::cli {

// SIGINT / SIGTERM: remove the pending temporary files, clear the progress
// line, say so and exit 128 + the signal (130, 143). SIGXFSZ is ignored, so
// that a file size limit (RLIMIT_FSIZE) is a write error (exit 1), not a
// crash. Call once, first thing in main.
void InstallSignalHandlers();

// The temporary name for `path` (registered: removed on failure or signal),
// beside the file a symbolic link `path` ends at; or an error when no more
// outputs can be registered, the links loop, or a link's target directory
// does not exist.
Result<std::string> BeginOutputFile(const std::string& path);

// The status after a command returned `exit_code`: when it is 0, or 3 for
// bad input under --strict and the run was not marked failed, every pending
// file is fsynced and renamed into place, in order (an error there: exit 1,
// the files already in place stay and the rest are removed); otherwise
// every pending file is removed.
int FinishOutputs(int exit_code);

// Removes every pending temporary file now (none is put in place); outputs
// begun later are registered as usual. For a command that opens its outputs
// early only to fail fast on a path it cannot write, and writes them later.
void DiscardOutputs();

// The run failed though its exit status may be 3 (--strict): its outputs
// are not put in place.
void MarkRunFailed();

// Tells the signal handler whether a progress line is on the screen.
void SetProgressShown(bool shown);

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_OUTPUT_FILES_H_
