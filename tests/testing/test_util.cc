// Copyright 2026 The neardup Authors.

#include "tests/testing/test_util.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace neardup::testing {

std::string SourceDir() { return NEARDUP_SOURCE_DIR; }

std::optional<std::string> SharedDataFile(const std::string& relative) {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("NEARDUP_SHARED_DATA")) roots.emplace_back(env);
  roots.push_back(SourceDir() + "/../shared/data");
  for (const std::string& root : roots) {
    std::filesystem::path p = std::filesystem::path(root) / relative;
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p.lexically_normal().string();
  }
  return std::nullopt;
}

bool InCi() {
  const char* env = std::getenv("CI");
  return env != nullptr && std::string_view(env) == "true";
}

bool Sanitized() { return std::getenv("NEARDUP_SANITIZED") != nullptr; }

std::string MakeTempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(base ? base : "/tmp") /
                              ("neardup_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<nlohmann::json> ParseJsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

void ExecCli(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string path = NEARDUP_CLI_PATH;
  argv.push_back(path.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(path.c_str(), argv.data());
  _exit(127);
}

CommandResult RunCli(const std::vector<std::string>& args, const std::string& stdin_data) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    ExecCli(args);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (stdin_data.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (out_open) fds[out_i = n++] = {out_pipe[0], POLLIN, 0};
    if (err_open) fds[err_i = n++] = {err_pipe[0], POLLIN, 0};
    if (in_fd >= 0) fds[in_i = n++] = {in_fd, POLLOUT, 0};
    if (poll(fds, n, -1) < 0) break;
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = write(in_fd, stdin_data.data() + written, stdin_data.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 || written == stdin_data.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
    if (out_i >= 0 && (fds[out_i].revents & (POLLIN | POLLHUP))) {
      const ssize_t r = read(out_pipe[0], buf, sizeof(buf));
      if (r <= 0)
        out_open = false;
      else
        result.out.append(buf, static_cast<size_t>(r));
    }
    if (err_i >= 0 && (fds[err_i].revents & (POLLIN | POLLHUP))) {
      const ssize_t r = read(err_pipe[0], buf, sizeof(buf));
      if (r <= 0)
        err_open = false;
      else
        result.err.append(buf, static_cast<size_t>(r));
    }
  }
  if (in_fd >= 0) close(in_fd);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace neardup::testing
