// What `kforge --version` prints: kforge's own version and the versions of what it emits, read from the
// template directory this binary actually uses (an installed kforge and a source tree may differ).
#pragma once

#include <string>

namespace kforge::driver {

/// Several lines: "kforge X.Y.Z", the built-in templates' directory and version (templates/VERSION), and the
/// version macros of the runtime headers copied beside generated code.
std::string version_text();

}  // namespace kforge::driver
