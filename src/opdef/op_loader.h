// Loading op YAML files into an OpLibrary.
//
// Files are read in order. Each is a YAML sequence of op entries (`- op : name` or
// `- backward_op : name`). A later entry may name an op defined earlier only to add the kforge
// extension keys (compute, reduce, pattern, row_pattern): an overlay, so Paddle's YAML stays unchanged. Any other
// entry for an existing name is a redefinition error that names both places.
//
// Errors (malformed values, unknown names) are reported at their exact line and column and the op is
// left out of the library; unknown and duplicated keys are warnings. Loading never throws: check
// DiagnosticEngine::has_errors() afterwards.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "opdef/op_library.h"
#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::opdef {

struct YamlNode;
struct YamlContext;

/// Every key an op entry may have, as dotted paths ("op", "kernel.func", "reduce.init", ...), in the
/// order of paddle-formats.md §2.2 followed by the kforge extensions.
const std::vector<std::string>& known_op_keys();
/// The extension keys an overlay entry may add: compute, reduce, pattern, row_pattern.
const std::vector<std::string>& extension_keys();

class OpLoader {
 public:
  OpLoader(SourceManager& sources, DiagnosticEngine& diags) : sources_(sources), diags_(diags) {}

  /// Reads `path` (reporting "cannot open" without a location if it cannot) and loads it.
  /// Returns false if this file produced an error.
  bool add_file(const std::string& path);
  /// Loads a buffer already registered in the SourceManager.
  bool add_buffer(uint32_t file);

  /// The library of every op loaded without error, in document order.
  OpLibrary finish() &&;

 private:
  void load_entry(const YamlContext& ctx, const YamlNode& entry);

  SourceManager& sources_;
  DiagnosticEngine& diags_;
  OpLibrary library_;
  // Every op name seen so far (including ops left out because of errors) -> where it was defined and,
  // when it loaded, its index in library_.ops_.
  struct Definition {
    SourceLoc loc;
    size_t index = SIZE_MAX;
  };
  std::unordered_map<std::string, Definition> defined_;
};

/// Loads `paths` in order with one OpLoader.
OpLibrary load_op_library(const std::vector<std::string>& paths, SourceManager& sources, DiagnosticEngine& diags);

}  // namespace kforge::opdef
