// `kforge render TEMPLATE --data DATA... -o OUT`: renders one user template with YAML/JSON data.
#pragma once

#include <CLI/CLI.hpp>

#include "driver/common_options.h"

namespace kforge::driver {

/// Adds the `render` subcommand to `app`; when it is chosen, `action` is set to run it.
void register_render_command(CLI::App& app, CommandAction& action);

}  // namespace kforge::driver
