// Copyright 2026 The neardup Authors.
//
// Helpers shared by the test binaries: where the evaluation data lives, and how
// to run the neardup tool and capture what it prints.

#ifndef NEARDUP_TESTS_TESTING_TEST_UTIL_H_
#define NEARDUP_TESTS_TESTING_TEST_UTIL_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace neardup::testing {

// The repository's root (NEARDUP_SOURCE_DIR at build time).
std::string SourceDir();

// The path of `relative` inside ../shared/data beside the repository (or
// $NEARDUP_SHARED_DATA), or nullopt when that file is absent.
std::optional<std::string> SharedDataFile(const std::string& relative);

// A fresh empty directory under the test temp dir; removed by the caller's
// fixture or left for inspection.
std::string MakeTempDir(const std::string& name);

void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// Parses JSON Lines (one object per line); throws on malformed lines.
std::vector<nlohmann::json> ParseJsonLines(const std::string& text);

// In a forked child: replaces the process with the neardup binary run with
// `args` (exit status 127 when it cannot be run).
[[noreturn]] void ExecCli(const std::vector<std::string>& args);

// Runs the neardup binary with `args` (no shell), feeding `stdin_data`.
CommandResult RunCli(const std::vector<std::string>& args, const std::string& stdin_data = "");

// True when the environment variable CI is "true" (GitHub Actions, GitLab CI
// and most other CI services set it). There, data a test needs is part of
// the setup: its absence is a failure, not a reason to skip.
bool InCi();

// True in the sanitizer build (scripts/test.sh sets NEARDUP_SANITIZED=1):
// tests scale their sizes down, or skip what sanitizers cannot run.
bool Sanitized();

}  // namespace neardup::testing

// Declares std::string `var` holding the path of shared data file `relative`
// (SharedDataFile). When the file is absent the test is skipped with a clear
// message, or fails when InCi(): in CI a skip would hide a broken setup.
// Use in a TEST body or in a function returning void.
#define NEARDUP_REQUIRE_SHARED_DATA(var, relative)                                        \
  std::string var;                                                                        \
  do {                                                                                    \
    auto _path = ::neardup::testing::SharedDataFile(relative);                            \
    if (!_path) {                                                                         \
      if (::neardup::testing::InCi()) {                                                   \
        FAIL() << "shared data file " << (relative)                                       \
               << " is absent (../shared/data or $NEARDUP_SHARED_DATA) and CI=true: the " \
                  "CI setup must provide it";                                             \
      }                                                                                   \
      GTEST_SKIP() << "shared data file " << (relative)                                   \
                   << " is absent (../shared/data or $NEARDUP_SHARED_DATA)";              \
    }                                                                                     \
    var = *_path;                                                                         \
  } while (0)

// For a test whose oracle needs something outside the repository (a Debian
// package, a tool): skips with `message` outside CI, fails in CI.
#define NEARDUP_SKIP_OUTSIDE_CI(message)                                 \
  do {                                                                   \
    if (::neardup::testing::InCi()) FAIL() << (message) << " (CI=true)"; \
    GTEST_SKIP() << (message);                                           \
  } while (0)

#endif  // NEARDUP_TESTS_TESTING_TEST_UTIL_H_
