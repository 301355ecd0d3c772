// Copyright 2026 The neardup Authors.

#include "output_files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "commands.h"
#include "common.h"

namespace neardup::cli {
namespace {

// The registry, in fixed storage the signal handler may read.
constexpr int kMaxPending = 64;
constexpr size_t kMaxPath = 4096;
struct Pending {
  char temp[kMaxPath];
  // Read by the main thread only: where the file goes (a symbolic link's
  // target) and the path the user named.
  std::string final_path;
  std::string named_path;
};
Pending pending[kMaxPending];
std::atomic<int> pending_count{0};
// 1: pending[i].temp exists and must go on failure.
std::atomic<int> pending_live[kMaxPending];
std::atomic<bool> progress_shown{false};
bool run_failed = false;
int temp_serial = 0;

void WriteAll(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void RemovePending() {
  const int n = pending_count.load();
  for (int i = 0; i < n; ++i) {
    if (pending_live[i].exchange(0) == 1) ::unlink(pending[i].temp);
  }
}

extern "C" void OnSignal(int sig) {
  RemovePending();
  if (progress_shown.load()) WriteAll("\r\033[K");
  WriteAll(sig == SIGINT ? "neardup: interrupted (SIGINT); no output was put in place\n"
                         : "neardup: terminated (SIGTERM); no output was put in place\n");
  ::_exit(128 + sig);
}

// The directory `path` is in ("." for a bare name).
std::string DirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// The path a file written at `path` should replace: `path` itself, or when
// it is a symbolic link, the file the chain of links ends at (which need not
// exist yet). Only the last component is followed; a directory on the way
// is left as written, since rename(2) resolves it anyway.
Result<std::string> FollowLinks(const std::string& path) {
  namespace fs = std::filesystem;
  constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS
  fs::path current(path);
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hops == kMaxLinks) {
      return Status::IOError("cannot write " + path + ": too many levels of symbolic links");
    }
    std::error_code ec;
    const fs::path target = fs::read_symlink(current, ec);
    if (ec) {
      return Status::IOError("cannot write " + path + ": cannot read the symbolic link " +
                             current.string() + ": " + ec.message());
    }
    current = current.parent_path() / target;  // an absolute target replaces
  }
  const std::string resolved = current.string();
  if (resolved != path) {
    const std::string dir = DirectoryOf(resolved);
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::IOError("cannot write " + path + ": it is a symbolic link to " + resolved +
                             ", whose directory " + dir +
                             " does not exist; create it or remove the link");
    }
  }
  return resolved;
}

// fsync(2) of `path` (a closed file: its data reach the disk) or of a
// directory (the names in it do). Returns 0 or the errno.
int SyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return errno;
  int err = ::fsync(fd) != 0 ? errno : 0;
  // Some file systems cannot sync a directory (EINVAL): nothing more to do.
  if (directory && err == EINVAL) err = 0;
  ::close(fd);
  return err;
}

// Puts pending[i] in place durably: its data are synced, it is renamed over
// its final path and that directory is synced, so that a crash after this
// leaves the complete file under its final name, and a file put in place
// later (the summary) is never there without it. The error text, or "".
std::string PutInPlace(int i) {
  const Pending& p = pending[i];
  const std::string what =
      "neardup: error: cannot put " + p.named_path +
      (p.final_path != p.named_path ? " (a link to " + p.final_path + ")" : std::string()) +
      " in place: ";
  if (const int err = SyncPath(p.temp, false)) {
    return what + "fsync of " + p.temp + " failed: " + std::strerror(err);
  }
  if (std::rename(p.temp, p.final_path.c_str()) != 0) {
    const int err = errno;
    return what + std::strerror(err);
  }
  pending_live[i].store(0);
  const std::string dir = DirectoryOf(p.final_path);
  if (const int err = SyncPath(dir, true)) {
    return what + "fsync of the directory " + dir + " failed: " + std::strerror(err);
  }
  return "";
}

}  // namespace

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGXFSZ, SIG_IGN);
}

Result<std::string> BeginOutputFile(const std::string& path) {
  const int i = pending_count.load();
  namespace fs = std::filesystem;
  auto final_path = FollowLinks(path);
  if (!final_path.ok()) return final_path.status();
  const fs::path p(*final_path);
  const std::string temp =
      (p.parent_path() / ("." + p.filename().string() + ".neardup-" + std::to_string(::getpid()) +
                          "-" + std::to_string(temp_serial++) + ".tmp"))
          .string();
  if (i >= kMaxPending || temp.size() >= kMaxPath) {
    return Status::InvalidArgument("cannot write " + path +
                                   ": too many outputs or too long a path");
  }
  std::memcpy(pending[i].temp, temp.c_str(), temp.size() + 1);
  pending[i].final_path = *final_path;
  pending[i].named_path = path;
  pending_live[i].store(1);
  pending_count.store(i + 1);
  return temp;
}

int FinishOutputs(int exit_code) {
  const bool commit = exit_code == kExitOk || (exit_code == kExitBadInput && !run_failed);
  const int n = pending_count.load();
  for (int i = 0; commit && i < n; ++i) {
    if (pending_live[i].load() != 1) continue;
    const std::string error = PutInPlace(i);
    if (!error.empty()) {
      PrintErrorLine(error);
      RemovePending();
      return kExitError;
    }
  }
  RemovePending();
  return exit_code;
}

void DiscardOutputs() { RemovePending(); }

void MarkRunFailed() { run_failed = true; }

void SetProgressShown(bool shown) { progress_shown.store(shown); }

}  // namespace neardup::cli
