// Copyright 2026 The neardup Authors.

#include "util/file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "util/fault.h"

namespace neardup::file {
namespace {

Status Error(const std::string& path, std::string_view what, int err) {
  return Status::IOError(path + ": " + std::string(what) + ": " + std::strerror(err));
}

}  // namespace

Result<std::unique_ptr<WritableFile>> WritableFile::Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error(path, "cannot create", errno);
  return std::unique_ptr<WritableFile>(new WritableFile(fd, path));
}

Result<std::unique_ptr<WritableFile>> WritableFile::OpenForAppend(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Error(path, "cannot open for appending", errno);
  }
  return std::unique_ptr<WritableFile>(new WritableFile(fd, path));
}

Status WritableFile::Truncate(uint64_t size) {
  if (const int injected = fault::BeforeWriteStep("truncate " + path_)) {
    return Error(path_, "truncate failed", injected);
  }
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    return Error(path_, "truncate failed", errno);
  return Status::OK();
}

WritableFile::~WritableFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status WritableFile::Append(std::string_view data) {
  while (!data.empty()) {
    if (const int injected = fault::BeforeWriteStep("write " + path_)) {
      return Error(path_, "write failed", injected);
    }
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error(path_, "write failed", errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Status WritableFile::Sync() {
  if (const int injected = fault::BeforeWriteStep("fsync " + path_)) {
    return Error(path_, "fsync failed", injected);
  }
  if (::fsync(fd_) != 0) return Error(path_, "fsync failed", errno);
  return Status::OK();
}

Status WritableFile::Close() {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) return Error(path_, "close failed", errno);
  return Status::OK();
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (const int injected = fault::BeforeWriteStep("rename " + from + " " + to)) {
    return Error(to, "cannot rename " + from + " over it", injected);
  }
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return Error(to, "cannot rename " + from + " over it", errno);
  }
  return Status::OK();
}

Status RemoveFile(const std::string& path) {
  if (const int injected = fault::BeforeWriteStep("unlink " + path)) {
    return Error(path, "cannot remove", injected);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Error(path, "cannot remove", errno);
  return Status::OK();
}

Status SyncParentDir(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (const int injected = fault::BeforeWriteStep("fsync " + dir + "/")) {
    return Error(dir, "fsync of the directory failed", injected);
  }
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error(dir, "cannot open the directory", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Error(dir, "fsync of the directory failed", err);
  return Status::OK();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Error(path, "cannot open", errno);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IOError(path + ": not a regular file");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return Error(path, n < 0 ? "read failed" : "file shrank while being read", err);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

namespace {

// The lock files this process holds (or waits for), by device and inode: a
// second flock on one of them from this process would wait for itself. A
// forked child inherits the set with the parent's locks.
std::mutex& HeldMutex() {
  static std::mutex mu;
  return mu;
}
std::set<std::pair<uint64_t, uint64_t>>& Held() {
  static auto* held = new std::set<std::pair<uint64_t, uint64_t>>;
  return *held;
}

// The pid the lock's holder wrote into the lock file; 0 when there is none
// (yet) or it cannot be read.
int LockHolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  const long pid = std::strtol(buf, nullptr, 10);
  return pid > 0 && pid <= INT_MAX ? static_cast<int>(pid) : 0;
}

}  // namespace

Result<std::unique_ptr<FileLock>> FileLock::Acquire(const std::string& path, const LockWait& wait) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error(path, "cannot open the lock file", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error(path, "cannot stat the lock file", err);
  }
  const std::pair<uint64_t, uint64_t> key{st.st_dev, st.st_ino};
  {
    std::lock_guard lock(HeldMutex());
    if (!Held().insert(key).second) {
      ::close(fd);
      return Status::InvalidArgument(
          path +
          ": already locked by this process (the index is open for writing here, or in the "
          "parent this process was forked from); close it first");
    }
  }
  const auto give_up = [&](const Status& s) {
    ::close(fd);
    std::lock_guard lock(HeldMutex());
    Held().erase(key);
    return s;
  };
  // Tried without blocking, every 10 ms, until the first second has passed
  // (the holder is named then) and, with a timeout, until it runs out;
  // without one, flock then blocks.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  bool told = false;
  for (;;) {
    const bool poll = !told || wait.timeout_seconds >= 0;
    if (::flock(fd, poll ? LOCK_EX | LOCK_NB : LOCK_EX) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return give_up(Error(path, "cannot lock", errno));
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (!told && waited >= 1.0) {
      told = true;
      if (wait.on_wait) wait.on_wait(LockHolderPid(fd));
      continue;
    }
    if (wait.timeout_seconds >= 0 && waited >= wait.timeout_seconds) {
      const int pid = LockHolderPid(fd);
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", wait.timeout_seconds);
      return give_up(Status::IOError(path + ": still locked by " +
                                     (pid > 0 ? "pid " + std::to_string(pid) : "another process") +
                                     " after " + seconds +
                                     " s of waiting; another writer has the index"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The holder's pid, for those who wait next (best effort: the lock is
  // what matters).
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return std::unique_ptr<FileLock>(new FileLock(fd, key.first, key.second, ::getpid()));
}

FileLock::~FileLock() {
  ::close(fd_);
  // In a forked child this was the parent's lock: closing the child's copy
  // leaves the parent holding it, and the child's next Acquire waits for
  // the parent like any other process.
  std::lock_guard lock(HeldMutex());
  Held().erase({dev_, ino_});
}

bool FileLock::HeldByThisProcess() const { return ::getpid() == pid_; }

}  // namespace neardup::file
