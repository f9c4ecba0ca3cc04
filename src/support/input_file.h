// Reading the files kforge is given (programs, op YAML, data, templates): regular files only, with a size limit.
//
// A hostile or mistaken path must be one error, at once: a directory, a FIFO without a writer (which would
// block an open(2)), a device such as /dev/zero (which never ends) or a file larger than the limit is refused
// before anything is read, and a file that grows while it is read stops at the limit (docs/fuzzing.md, "Limits").
// A symlink to a regular file is followed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kforge {

class DiagnosticEngine;
class SourceManager;

/// The default of --max-input-bytes: far above any real program, op file, template or data file.
inline constexpr uint64_t kDefaultMaxInputBytes = uint64_t{1} << 30;
/// The most --max-input-bytes may allow: source locations are 32-bit offsets.
inline constexpr uint64_t kMaxInputBytesCeiling = (uint64_t{1} << 32) - 1;

/// The whole of the regular file `path`, if it holds at most `max_bytes` bytes. Otherwise nullopt, and
/// `reason` says why in a few words: "it is a directory", "it is not a regular file (a FIFO)",
/// "it is larger than N bytes (--max-input-bytes)", or the system's error ("no such file or directory").
std::optional<std::string> read_input_file(const std::string& path, uint64_t max_bytes, std::string& reason);

/// read_input_file, reporting a failure located at the path: "path: error: cannot read the <what>: <reason>"
/// (`what`: "op file", "program", ...). nullopt once reported.
std::optional<std::string> read_input_file(const std::string& path, uint64_t max_bytes, DiagnosticEngine& diags,
                                           std::string_view what);

/// The same, registering the file with `sources` (under its limit): the id of the buffer.
std::optional<uint32_t> load_input_file(SourceManager& sources, DiagnosticEngine& diags, const std::string& path,
                                        std::string_view what);

}  // namespace kforge
