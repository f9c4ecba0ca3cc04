#pragma once

#include <CLI/CLI.hpp>

#include "driver/common_options.h"

namespace kforge::driver {

/// `kforge compile PROGRAM --ops FILE... [--op-compat FILE] -o DIR --name NAME --target cpu`.
void register_compile_command(CLI::App& app, CommandAction& action);

}  // namespace kforge::driver
