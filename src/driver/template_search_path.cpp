#include "driver/template_search_path.h"

#include <filesystem>
#include <system_error>

#ifndef KFORGE_BUILTIN_TEMPLATE_DIR
#error "KFORGE_BUILTIN_TEMPLATE_DIR must be defined by the build (see src/meson.build)"
#endif

namespace kforge::driver {

namespace fs = std::filesystem;

std::optional<std::string> builtin_template_dir() {
  std::error_code ec;
  // An installed binary uses the templates installed with it, even if a source tree is still around.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "kforge" / "templates";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  if (fs::is_directory(KFORGE_BUILTIN_TEMPLATE_DIR, ec)) return std::string(KFORGE_BUILTIN_TEMPLATE_DIR);
  return std::nullopt;
}

std::vector<std::string> template_search_path(const std::vector<std::string>& user_dirs,
                                              const std::vector<std::string>& command_dirs) {
  std::vector<std::string> path = user_dirs;
  path.insert(path.end(), command_dirs.begin(), command_dirs.end());
  if (std::optional<std::string> builtin = builtin_template_dir()) path.push_back(*builtin);
  return path;
}

}  // namespace kforge::driver
