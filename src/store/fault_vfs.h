// Copyright 2026 The neardup Authors.
//
// A SQLite VFS shim over the default VFS that calls fault::BeforeWriteStep() before
// every write step SQLite takes on the store's files: each write, fsync,
// truncate and delete (see util/fault.h). The store opens its database
// through it, so a test can kill `neardup store add` at each of those steps
// in turn. Without NEARDUP_FAULT_KILL_AT it only forwards (one counter
// increment per step).

#ifndef NEARDUP_STORE_FAULT_VFS_H_
#define NEARDUP_STORE_FAULT_VFS_H_

namespace neardup::store_internal {

// Registers the shim once (thread-safe) and returns its name for
// sqlite3_open_v2, or nullptr (the default VFS) when there is no default VFS
// to wrap.
const char* FaultVfsName();

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_FAULT_VFS_H_
