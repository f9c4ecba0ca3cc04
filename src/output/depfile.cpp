#include "output/depfile.h"

#include <algorithm>

namespace kforge {

std::string escape_make_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    switch (c) {
      case ' ': out += "\\ "; break;
      case '$': out += "$$"; break;
      case '#': out += "\\#"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_depfile(const std::vector<std::string>& targets, const std::vector<std::string>& deps) {
  std::string out;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (i > 0) out += ' ';
    out += escape_make_path(targets[i]);
  }
  out += ':';
  std::vector<std::string_view> seen;
  for (const std::string& dep : deps) {
    if (std::find(seen.begin(), seen.end(), dep) != seen.end()) continue;
    seen.push_back(dep);
    out += " \\\n  ";
    out += escape_make_path(dep);
  }
  out += '\n';
  return out;
}

}  // namespace kforge
