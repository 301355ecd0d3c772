// Copyright 2026 The neardup Authors.
//
// The subcommands of the neardup tool. Each Add*Command registers one
// subcommand on `app`; when it runs, it stores its exit status in *exit_code.

#ifndef NEARDUP_TOOLS_NEARDUP_COMMANDS_H_
#define NEARDUP_TOOLS_NEARDUP_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace neardup::cli {

// Exit statuses of the tool.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;     // the job could not be done
inline constexpr int kExitUsage = 2;     // bad command line, parser errors included
inline constexpr int kExitBadInput = 3;  // --strict and some input was bad

struct ExitCode {
  int value = kExitOk;
};

void AddSegmentCommand(CLI::App& app, ExitCode* exit_code);
void AddKeywordsCommand(CLI::App& app, ExitCode* exit_code);
void AddFingerprintCommand(CLI::App& app, ExitCode* exit_code);
void AddCompareCommand(CLI::App& app, ExitCode* exit_code);
void AddDedupCommand(CLI::App& app, ExitCode* exit_code);
void AddIndexCommand(CLI::App& app, ExitCode* exit_code);
void AddStoreCommand(CLI::App& app, ExitCode* exit_code);
void AddEvalCommand(CLI::App& app, ExitCode* exit_code);
void AddIdfCommand(CLI::App& app, ExitCode* exit_code);
void AddExplainCommand(CLI::App& app, ExitCode* exit_code);
void AddServeCommand(CLI::App& app, ExitCode* exit_code);
void AddCalibrateCommand(CLI::App& app, ExitCode* exit_code);

inline void AddAllCommands(CLI::App& app, ExitCode* exit_code) {
  AddSegmentCommand(app, exit_code);
  AddKeywordsCommand(app, exit_code);
  AddFingerprintCommand(app, exit_code);
  AddCompareCommand(app, exit_code);
  AddDedupCommand(app, exit_code);
  AddIndexCommand(app, exit_code);
  AddStoreCommand(app, exit_code);
  AddEvalCommand(app, exit_code);
  AddIdfCommand(app, exit_code);
  AddExplainCommand(app, exit_code);
  AddServeCommand(app, exit_code);
  AddCalibrateCommand(app, exit_code);
}

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_COMMANDS_H_
