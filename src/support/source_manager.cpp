#include "support/source_manager.h"

#include <algorithm>
#include <cstring>

#include "support/input_file.h"

namespace kforge {

namespace {

std::string normalise(std::string text) {
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    text.erase(0, 3);
  }
  if (text.find('\r') == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace

SourceManager::SourceManager() : max_file_bytes_(kDefaultMaxInputBytes) {}

uint32_t SourceManager::add_buffer(std::string display_path, std::string contents) {
  auto file = std::make_shared<File>();
  file->path = std::move(display_path);
  file->text = normalise(std::move(contents));
  file->line_starts.push_back(0);
  // memchr rather than a byte loop: data files of a megabyte are common, and long lines are too.
  const char* const begin = file->text.data();
  const char* const end = begin + file->text.size();
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))); ) {
    ++p;
    file->line_starts.push_back(static_cast<uint32_t>(p - begin));
  }
  files_.push_back(std::move(file));
  return static_cast<uint32_t>(files_.size() - 1);
}

bool SourceManager::add_file(const std::string& path, uint32_t& id, std::string& reason) {
  // Never past the ceiling, whatever was set: locations are 32-bit offsets.
  std::optional<std::string> text = read_input_file(path, std::min(max_file_bytes_, kMaxInputBytesCeiling), reason);
  if (!text) return false;
  id = add_buffer(path, std::move(*text));
  return true;
}

std::string_view SourceManager::contents(uint32_t file) const { return files_.at(file)->text; }

const std::string& SourceManager::path(uint32_t file) const { return files_.at(file)->path; }

LineCol SourceManager::line_col(SourceLoc loc) const {
  if (!loc.valid() || loc.file >= files_.size()) return {};
  const File& f = *files_[loc.file];
  auto it = std::upper_bound(f.line_starts.begin(), f.line_starts.end(), loc.offset);
  const size_t line_index = static_cast<size_t>(it - f.line_starts.begin()) - 1;
  return {static_cast<uint32_t>(line_index + 1), loc.offset - f.line_starts[line_index] + 1};
}

std::string_view SourceManager::line_text(SourceLoc loc) const {
  if (!loc.valid() || loc.file >= files_.size()) return {};
  const File& f = *files_[loc.file];
  const LineCol lc = line_col(loc);
  const size_t begin = f.line_starts[lc.line - 1];
  size_t end = f.text.find('\n', begin);
  if (end == std::string::npos) end = f.text.size();
  return std::string_view(f.text).substr(begin, end - begin);
}

SourceLoc SourceManager::loc_at(uint32_t file, uint32_t line, uint32_t col) const {
  const File& f = *files_.at(file);
  if (line == 0) line = 1;
  if (col == 0) col = 1;
  if (line > f.line_starts.size()) return {file, static_cast<uint32_t>(f.text.size())};
  const uint32_t begin = f.line_starts[line - 1];
  uint32_t end = line < f.line_starts.size() ? f.line_starts[line] - 1 : static_cast<uint32_t>(f.text.size());
  return {file, std::min(begin + col - 1, end)};
}

}  // namespace kforge
