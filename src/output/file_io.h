// Small file-system helpers for the output layer: whole-file reads and atomic replacement.
#pragma once

#include <optional>
#include <string>

namespace kforge {

/// The bytes of a regular file, or nullopt if it does not exist or cannot be read.
std::optional<std::string> read_file_bytes(const std::string& path);

/// Writes `bytes` to `temp_path` (created or truncated). Returns false and sets `error` on failure;
/// a partial temp file is removed.
bool write_temp_file(const std::string& temp_path, const std::string& bytes, std::string& error);

/// Moves `temp_path` over `path`: rename(2), which is atomic within one file system; if rename fails
/// (e.g. the target is on another device through a bind mount), falls back to copy + delete.
bool replace_file(const std::string& temp_path, const std::string& path, std::string& error);

/// Opens an existing device or pipe (e.g. /dev/null) for writing and writes `bytes` to it.
bool write_in_place(const std::string& path, const std::string& bytes, std::string& error);

/// The temp-file name used beside `path`: "<path>.tmp.<pid>".
std::string temp_path_for(const std::string& path);

}  // namespace kforge
