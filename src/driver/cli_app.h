// The top-level `kforge` command: description, --version, help text, parse-error handling and the
// exception guard around the chosen command. main.cpp only wires these to the subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include "driver/common_options.h"

namespace kforge::driver {

/// Sets up the top-level app: description, --version, the help footer, "a command is required".
void configure_app(CLI::App& app);

/// Prints what a CLI11 ParseError calls for and returns the exit code: --help and --version print to
/// stdout and return 0; every real parse error prints "kforge: error: ..." plus a hint to stderr and
/// returns 2 (CLI11's own codes start at 100 and are not used).
int handle_parse_error(const CLI::App& app, const CLI::ParseError& error);

/// Runs the action the chosen subcommand set; an exception escaping it (a bug, never bad input) is
/// reported as an internal error with exit code 1 instead of a crash.
int run_action(const CommandAction& action);

}  // namespace kforge::driver
