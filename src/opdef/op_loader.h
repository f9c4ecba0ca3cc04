// Loading op YAML files into an OpLibrary.
//
// Files are read in order. Each is a YAML sequence of op entries (`- op : name` or
// `- backward_op : name`; the key says whether the op is a backward op, as Paddle's parse_op.py
// --backward does for a whole file). A later entry may name an op defined earlier only to add the kforge
// extension keys (compute, reduce, pattern, row_pattern): an overlay, so Paddle's YAML stays unchanged. Any other
// entry for an existing name is a redefinition error that names both places.
//
// A file is loaded as a dense or a sparse op file (OpFileKind). Paddle's sparse_ops.yaml and
// sparse_backward.yaml define separate PIR ops (`_sp`, one per kernel) whose names repeat dense ones
// (`abs`): the ops of sparse files have their own name space, where the same rules apply.
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
class KeyTable;

/// Every key an op entry may have, as dotted paths ("op", "kernel.func", "reduce.init", ...), in the
/// order of Paddle's op YAML keys (schemas/op.schema.json) followed by the kforge extensions.
const std::vector<std::string>& known_op_keys();
/// The extension keys an overlay entry may add: compute, reduce, pattern, row_pattern.
const std::vector<std::string>& extension_keys();

/// How the ops of a file are named (docs/op-yaml.md).
enum class OpFileKind {
  kDense,   // ops.yaml, backward.yaml, fused_*.yaml, static_*.yaml, update_ops.yaml, kforge's own files
  kSparse,  // Paddle's sparse_ops.yaml / sparse_backward.yaml: Op::sparse, PIR ops `<kernel>_sp`
};

class OpLoader {
 public:
  OpLoader(SourceManager& sources, DiagnosticEngine& diags) : sources_(sources), diags_(diags) {}

  /// Reads `path` (reporting "cannot open" without a location if it cannot) and loads it.
  /// Returns false if this file produced an error.
  bool add_file(const std::string& path, OpFileKind kind = OpFileKind::kDense);
  /// Loads a buffer already registered in the SourceManager.
  bool add_buffer(uint32_t file, OpFileKind kind = OpFileKind::kDense);

  /// The library of every op loaded without error, in document order.
  OpLibrary finish() &&;

 private:
  void load_entry(const YamlContext& ctx, const YamlNode& entry, OpFileKind kind);
  void report_redefinition(const YamlContext& ctx, const KeyTable& keys, std::string_view name, SourceLoc loc,
                           SourceLoc previous, OpFileKind kind);

  SourceManager& sources_;
  DiagnosticEngine& diags_;
  OpLibrary library_;
  // Every op name seen so far (including ops left out because of errors) -> where it was defined and,
  // when it loaded, its index in library_.ops_.
  struct Definition {
    SourceLoc loc;
    size_t index = SIZE_MAX;
  };
  std::unordered_map<std::string, Definition> defined_[2];  // by OpFileKind: dense and sparse names
};

/// An op file to load and how (OpFileKind).
struct OpFile {
  std::string path;
  OpFileKind kind = OpFileKind::kDense;
};

/// Loads `paths` (dense op files) in order with one OpLoader.
OpLibrary load_op_library(const std::vector<std::string>& paths, SourceManager& sources, DiagnosticEngine& diags);
/// Loads `files` in order with one OpLoader.
OpLibrary load_op_library(const std::vector<OpFile>& files, SourceManager& sources, DiagnosticEngine& diags);

}  // namespace kforge::opdef
