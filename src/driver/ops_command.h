// `kforge ops --ops FILE... [--op-compat FILE] -o DIR [--namespace NS] [--prefix P] [--shards N]`: the op
// library of an op YAML set (typed API, dispatch, args-info table, kernel declarations, runtime header).
#pragma once

#include <CLI/CLI.hpp>

#include "driver/common_options.h"

namespace kforge::driver {

/// Adds the `ops` subcommand to `app`; when it is chosen, `action` is set to run it.
void register_ops_command(CLI::App& app, CommandAction& action);

}  // namespace kforge::driver
