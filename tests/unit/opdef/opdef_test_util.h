// Shared fixtures of the opdef unit tests: a SourceManager + DiagnosticEngine writing to a string,
// so tests compare the full diagnostic text (path:line:col, source line, caret, notes).
#pragma once

#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "opdef/located_text.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "opdef/pir_signature.h"

namespace kforge::opdef::testing {

struct Fixture {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags{sources, out};

  /// Registers `text` as buffer "v" and returns it as a value whose characters are its own bytes.
  LocatedText value(const std::string& text) {
    const uint32_t file = sources.add_buffer("v", text);
    return LocatedText::contiguous(text, {file, 0});
  }

  /// Loads op YAML buffers (name, text) in order with one loader, as dense op files.
  OpLibrary load(const std::vector<std::pair<std::string, std::string>>& files) {
    OpLoader loader(sources, diags);
    for (const auto& [name, text] : files) loader.add_buffer(sources.add_buffer(name, text));
    return std::move(loader).finish();
  }
  /// Loads op YAML buffers (name, text, kind) in order with one loader.
  OpLibrary load_kinds(const std::vector<std::tuple<std::string, std::string, OpFileKind>>& files) {
    OpLoader loader(sources, diags);
    for (const auto& [name, text, kind] : files) loader.add_buffer(sources.add_buffer(name, text), kind);
    return std::move(loader).finish();
  }
  OpLibrary load(const std::string& text) { return load({{"ops.yaml", text}}); }

  OpCompat load_compat(const std::string& text) {
    return read_op_compat(sources, sources.add_buffer("op_compat.yaml", text), diags);
  }

  std::string messages() const { return out.str(); }
};

/// The signature of op `name` in `sigs`, or null.
inline const PirOpSignature* find_signature(const std::vector<PirOpSignature>& sigs, const std::string& name) {
  for (const PirOpSignature& s : sigs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace kforge::opdef::testing
