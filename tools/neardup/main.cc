// Copyright 2026 The neardup Authors.
//
// neardup: find and remove near-duplicate text. Each subcommand lives in its own
// file (cmd_*.cc) and only wires library calls together.

#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"neardup: find and remove near-duplicate text (Chinese first, English too)",
               "neardup"};
  app.set_version_flag("--version", "neardup " NEARDUP_VERSION);
  app.require_subcommand(1);
  neardup::cli::ExitCode exit_code;
  neardup::cli::AddAllCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code.value;
}
