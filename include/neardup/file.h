// Copyright 2026 The neardup Authors.
//
// The few POSIX file operations a durable write path needs, each turned into
// a Status naming the file and the reason, and each counted as a
// fault-injection step (inside the library). The library's own write paths
// (the index's commit, the store) use them, and so does a program that keeps
// its own durable files, as neardup-mpi keeps its work directory.
//
// Thread safety: a WritableFile or FileLock is used by one thread at a time;
// the free functions are thread-safe.

#ifndef NEARDUP_FILE_H_
#define NEARDUP_FILE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "neardup/status.h"

namespace neardup::file {

// A file opened for writing (created or truncated), unbuffered: every Append
// is write(2) calls. The destructor closes it without syncing.
class WritableFile {
 public:
  static Result<std::unique_ptr<WritableFile>> Create(const std::string& path);
  // An existing file, opened for appending (O_APPEND); NotFound when absent.
  static Result<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path);
  ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  Status Append(std::string_view data);
  // fsync(2): the data is on stable storage when this returns OK.
  Status Sync();
  // ftruncate(2) to `size` bytes (drops a torn or failed append).
  Status Truncate(uint64_t size);
  Status Close();
  const std::string& path() const { return path_; }

 private:
  WritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// rename(2): atomically replaces `to`.
Status RenameFile(const std::string& from, const std::string& to);
// unlink(2); OK when the file does not exist.
Status RemoveFile(const std::string& path);
// fsync(2) of the directory holding `path`, so that renames and creations of
// names in it are durable.
Status SyncParentDir(const std::string& path);
// The whole file. NotFound when it does not exist; IOError when it is not a
// regular file or cannot be read.
Result<std::string> ReadWholeFile(const std::string& path);

// How FileLock::Acquire waits for a lock another process holds.
struct LockWait {
  // Seconds to wait before giving up (IOError naming the holder's pid);
  // < 0: wait as long as it takes (the default).
  double timeout_seconds = -1;
  // Called once, with the holder's pid (0 when unknown), after about a
  // second of waiting; may be empty.
  std::function<void(int pid)> on_wait;
};

// An exclusive advisory lock (flock(2)) on `path`, created if absent and
// never deleted (deleting a lock file races with the next locker). Waits
// (LockWait) until another process releases it; released by the destructor
// or when the process dies. The holder writes its pid into the file, for
// the messages of those waiting. A lock this process already holds (or one
// its parent held when it forked: the child shares the parent's lock) is
// InvalidArgument at once: flock would wait for it forever.
class FileLock {
 public:
  static Result<std::unique_ptr<FileLock>> Acquire(const std::string& path,
                                                   const LockWait& wait = {});
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // False in a child forked while the lock was held: the lock is the
  // parent's, and the child must not write what it guards.
  bool HeldByThisProcess() const;

 private:
  FileLock(int fd, uint64_t dev, uint64_t ino, int pid)
      : fd_(fd), dev_(dev), ino_(ino), pid_(pid) {}
  int fd_;
  uint64_t dev_, ino_;  // the lock file's identity in the process's registry
  int pid_;             // the process that acquired it
};

}  // namespace neardup::file

#endif  // NEARDUP_FILE_H_
