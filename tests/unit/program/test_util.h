// Helpers shared by the program unit tests: read a program from an in-memory buffer and capture the
// diagnostics exactly as the command line would print them.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "program/program.h"
#include "program/program_reader.h"
#include "support/diagnostics.h"

namespace kforge::ir::test {

struct ReadResult {
  std::optional<Program> program;
  std::string diagnostics;  // everything printed, summary line included
};

/// Reads `text` as if it were the file `path` (the format comes from the extension, as for real files).
inline ReadResult read_buffer(const std::string& path, const std::string& text) {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const uint32_t file = sources.add_buffer(path, text);
  ReadResult r;
  r.program = read_program(sources, file, diags);
  diags.print_summary();
  r.diagnostics = out.str();
  return r;
}

/// The diagnostics of reading `text`, which must fail.
inline std::string read_errors(const std::string& path, const std::string& text) {
  ReadResult r = read_buffer(path, text);
  CHECK_FALSE(r.program.has_value());
  return r.diagnostics;
}

/// `<source root>/../shared/refdata/paddle/<sub>`, or "" when that folder is absent (tests then SKIP).
inline std::string refdata_dir(const std::string& sub) {
  const std::filesystem::path dir = std::filesystem::path(KFORGE_SOURCE_ROOT) / ".." / "shared" / "refdata" /
                                    "paddle" / sub;
  return std::filesystem::is_directory(dir) ? dir.lexically_normal().string() : std::string();
}

/// An attribute as a reader that had to guess its kind gives it (kind_guessed set).
inline Attribute guessed(Attribute a) {
  a.kind_guessed = true;
  return a;
}

/// The whole file at `path` ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kforge::ir::test
