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

// Runs the neardup binary with `args` (no shell), feeding `stdin_data`.
CommandResult RunCli(const std::vector<std::string>& args, const std::string& stdin_data = "");

}  // namespace neardup::testing

// Skips the current test with a clear message when a shared data file is absent.
#define NEARDUP_REQUIRE_SHARED_DATA(var, relative)                           \
  std::string var;                                                           \
  do {                                                                       \
    auto _path = ::neardup::testing::SharedDataFile(relative);               \
    if (!_path)                                                              \
      GTEST_SKIP() << "shared data file " << (relative)                      \
                   << " is absent (../shared/data or $NEARDUP_SHARED_DATA)"; \
    var = *_path;                                                            \
  } while (0)

#endif  // NEARDUP_TESTS_TESTING_TEST_UTIL_H_
