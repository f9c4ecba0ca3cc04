#include "output/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <system_error>

#include "output/file_io.h"
#include "output/unified_diff.h"

namespace kforge {

namespace fs = std::filesystem;

namespace {

/// Regular files under the owned directories, spelled as "<owned dir>/<relative path>", sorted.
std::vector<std::string> files_under(const std::vector<std::string>& dirs) {
  std::vector<std::string> found;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      found.push_back((fs::path(dir) / fs::relative(it->path(), dir, ec)).generic_string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

CheckResult check_outputs(const OutputSet& outputs, const CheckOptions& options, std::ostream& out) {
  CheckResult result;
  for (const OutputFile& file : outputs.files()) {
    if (file.path == kStdoutPath) continue;
    const std::optional<std::string> on_disk = read_file_bytes(file.path);
    if (!on_disk) {
      ++result.missing;
      out << "missing file: " << file.path << '\n';
      continue;
    }
    if (*on_disk == file.bytes) continue;
    ++result.stale;
    DiffOptions diff_options;
    diff_options.max_lines = options.diff_max_lines;
    out << unified_diff(*on_disk, file.bytes, file.path + " (on disk)", file.path + " (regenerated)",
                        diff_options);
  }
  for (const std::string& path : files_under(options.owned_dirs)) {
    if (outputs.find(path) != nullptr) continue;
    ++result.unexpected;
    out << "unexpected file: " << path << '\n';
  }
  if (!result.up_to_date()) {
    std::vector<std::string> parts;
    if (result.stale) parts.push_back(fmt::format("{} stale", result.stale));
    if (result.missing) parts.push_back(fmt::format("{} missing", result.missing));
    if (result.unexpected) parts.push_back(fmt::format("{} unexpected", result.unexpected));
    std::string summary;
    for (size_t i = 0; i < parts.size(); ++i) summary += (i ? ", " : "") + parts[i];
    out << "kforge: outputs are out of date (" << summary << ")\n";
    if (!options.regenerate_command.empty()) out << "regenerate with:\n  " << options.regenerate_command << '\n';
  }
  out.flush();
  return result;
}

}  // namespace kforge
