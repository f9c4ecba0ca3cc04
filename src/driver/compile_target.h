// The targets of `kforge compile --target NAME` (passes/compile_target.h says what a target states). The table
// lives here, above codegen/, because it names the backends' own facts (which ops a CUDA kernel computes in
// float32 only, which calls run cuDNN and need a scratch buffer).
#pragma once

#include <string>
#include <string_view>

#include "passes/compile_target.h"

namespace kforge::driver {

/// The target named `name`, or null.
const passes::CompileTarget* find_compile_target(std::string_view name);

/// "cpu or cuda": the known names, for a usage error.
std::string compile_target_names();

/// The names of the targets for which `has(target)` holds ("cuda"; "cpu or cuda"), for "FLAG needs --target ...".
std::string compile_target_names(bool (*has)(const passes::CompileTarget& target));

}  // namespace kforge::driver
