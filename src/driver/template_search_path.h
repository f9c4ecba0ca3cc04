// Where templates are looked up: --template-dir directories first (in order), then directories a
// command adds (render: the directory of TEMPLATE), then kforge's built-in templates last.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kforge::driver {

/// The built-in templates directory: `<binary dir>/../share/kforge/templates` when kforge is installed,
/// else the source tree's templates/ compiled in as KFORGE_BUILTIN_TEMPLATE_DIR; nullopt if neither
/// exists.
std::optional<std::string> builtin_template_dir();

/// The full search path, first match wins.
std::vector<std::string> template_search_path(const std::vector<std::string>& user_dirs,
                                              const std::vector<std::string>& command_dirs);

}  // namespace kforge::driver
