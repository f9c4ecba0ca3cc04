// One entry point for every program format: picks the reader by the file's extension, or by its content
// when the extension says nothing.
#pragma once

#include <optional>
#include <string>

#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::ir {

/// The format of a registered buffer: `.json` is PIR JSON, `.yaml`/`.yml` is program YAML, `.txt`/`.pir`
/// is PIR text; for any other name, content starting with `{"` or `{ "` is PIR JSON, other content
/// starting with `{` is PIR text, and anything else is program YAML.
SourceFormat detect_program_format(const SourceManager& sources, uint32_t file);

/// Reads the registered buffer `file` with the reader its format calls for. Returns nullopt when any error
/// was reported. A PIR text file holding several programs gives the first, with a warning.
std::optional<Program> read_program(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

/// Registers the file at `path` (as the user spelled it) and reads it; an unreadable file is reported as
/// "kforge: error: cannot open 'PATH'".
std::optional<Program> read_program_file(SourceManager& sources, const std::string& path, DiagnosticEngine& diags);

}  // namespace kforge::ir
