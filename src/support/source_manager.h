// Source buffers and locations shared by every front end (templates, op YAML, programs).
//
// A SourceLoc is a (file id, byte offset) pair; line and column are computed lazily from a per-file
// line-start table, so front ends that only know line/column (yaml-cpp marks, JSON positions) convert
// once through loc_at(). Buffers are owned here and never move, so string_views into them stay valid
// for the life of the SourceManager.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

struct SourceLoc {
  static constexpr uint32_t kNoFile = UINT32_MAX;
  uint32_t file = kNoFile;
  uint32_t offset = 0;

  bool valid() const { return file != kNoFile; }
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

/// 1-based line and column of a location, as printed in diagnostics.
struct LineCol {
  uint32_t line = 0;
  uint32_t col = 0;
};

/// Copying a SourceManager shares its buffers, which never change once added: the copy starts with the same
/// file ids (locations into them resolve in both), and what is added to either afterwards is its own.
class SourceManager {
 public:
  SourceManager();

  /// Registers a buffer. `display_path` is the path exactly as the user spelled it; it is what
  /// diagnostics print. The contents are normalised: a UTF-8 BOM is dropped, CRLF becomes LF.
  uint32_t add_buffer(std::string display_path, std::string contents);

  /// Reads a regular file of at most max_file_bytes() from disk and registers it (support/input_file.h). Returns
  /// false if it cannot, with `reason` saying why in a few words ("it is a directory").
  bool add_file(const std::string& path, uint32_t& id, std::string& reason);

  /// The input size limit of add_file: --max-input-bytes, kDefaultMaxInputBytes unless set.
  uint64_t max_file_bytes() const { return max_file_bytes_; }
  void set_max_file_bytes(uint64_t bytes) { max_file_bytes_ = bytes; }

  std::string_view contents(uint32_t file) const;
  const std::string& path(uint32_t file) const;
  size_t file_count() const { return files_.size(); }

  LineCol line_col(SourceLoc loc) const;
  /// The text of the line holding `loc`, without its newline.
  std::string_view line_text(SourceLoc loc) const;
  /// Location of 1-based (line, col) in `file`; clamps to the end of the line or buffer.
  SourceLoc loc_at(uint32_t file, uint32_t line, uint32_t col) const;
  SourceLoc loc_of_offset(uint32_t file, size_t offset) const { return {file, static_cast<uint32_t>(offset)}; }

 private:
  struct File {
    std::string path;
    std::string text;
    std::vector<uint32_t> line_starts;  // offset of the first byte of every line
  };
  std::vector<std::shared_ptr<const File>> files_;
  uint64_t max_file_bytes_;
};

}  // namespace kforge
