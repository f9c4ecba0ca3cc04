// `kforge lint --ops FILE... [--op-compat FILE] [--print-signatures] [--werror] [PROGRAM...]`: loads op YAML
// (and Paddle's op_compat.yaml), reports every error and warning, and optionally prints the derived PIR
// op signatures as JSON. Each PROGRAM is then checked as `kforge compile` checks it (verification, shape
// inference, kernels), with no code generated.
#pragma once

#include <CLI/CLI.hpp>

#include "driver/common_options.h"

namespace kforge::driver {

/// Adds the `lint` subcommand to `app`; when it is chosen, `action` is set to run it.
void register_lint_command(CLI::App& app, CommandAction& action);

}  // namespace kforge::driver
