// Copyright 2026 The neardup Authors.
//
// neardup: find and remove near-duplicate text. Each subcommand lives in its own
// file (cmd_*.cc) and only wires library calls together.

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>

#include "commands.h"
#include "common.h"
#include "output_files.h"

int main(int argc, char** argv) {
  CLI::App app{"neardup: find and remove near-duplicate text (Chinese first, English too)",
               "neardup"};
  app.set_version_flag("--version", "neardup " NEARDUP_VERSION);
  app.require_subcommand(1);
  neardup::cli::InstallSignalHandlers();
  neardup::cli::ExitCode exit_code;
  neardup::cli::AddAllCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits kExitUsage, not
    // CLI11's own codes (105 and up), with CLI11's message.
    return app.exit(e) == static_cast<int>(CLI::ExitCodes::Success) ? neardup::cli::kExitOk
                                                                    : neardup::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    // The library reports errors as Status; what still gets here is the
    // system refusing memory or threads.
    std::cerr << "neardup: error: out of memory\n";
    return neardup::cli::FinishOutputs(neardup::cli::kExitError);
  } catch (const std::exception& e) {
    std::cerr << "neardup: error: " << e.what() << "\n";
    return neardup::cli::FinishOutputs(neardup::cli::kExitError);
  }
  if (exit_code.value != neardup::cli::kExitError && !neardup::cli::StandardOutputWritten()) {
    return neardup::cli::FinishOutputs(neardup::cli::kExitError);
  }
  // Output files go in place only now, when the command succeeded.
  return neardup::cli::FinishOutputs(exit_code.value);
}
