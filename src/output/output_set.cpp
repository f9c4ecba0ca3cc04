#include "output/output_set.h"

#include <algorithm>
#include <filesystem>
#include <ostream>

namespace kforge {

std::string normalise_output_path(std::string_view path) {
  if (path == kStdoutPath) return std::string(path);
  std::string normal = std::filesystem::path(path).lexically_normal().generic_string();
  // "dir/" and "dir" name the same thing; a trailing separator is not part of the identity.
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

bool OutputSet::add(std::string path, std::string bytes, std::string_view what) {
  std::string key = normalise_output_path(path);
  if (std::find(normalised_.begin(), normalised_.end(), key) != normalised_.end()) return false;
  normalised_.push_back(std::move(key));
  files_.push_back({std::move(path), std::move(bytes), what});
  return true;
}

const OutputFile* OutputSet::find(std::string_view path) const {
  const std::string key = normalise_output_path(path);
  for (size_t i = 0; i < files_.size(); ++i) {
    if (normalised_[i] == key) return &files_[i];
  }
  return nullptr;
}

std::vector<std::string> OutputSet::sorted_paths() const {
  std::vector<std::string> paths;
  paths.reserve(files_.size());
  for (const OutputFile& f : files_) paths.push_back(f.path);
  std::sort(paths.begin(), paths.end());
  return paths;
}

void print_output_list(const OutputSet& outputs, std::ostream& out) {
  for (const std::string& path : outputs.sorted_paths()) {
    if (path == kStdoutPath) continue;
    out << path << '\n';
  }
  out.flush();
}

}  // namespace kforge
