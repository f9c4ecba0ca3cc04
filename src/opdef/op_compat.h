// Paddle's op_compat.yaml (docs/op-yaml.md): the legacy (fluid) names of ops and their
// arguments, and the `scalar:` / `int_array:` metadata that makes an attribute *mutable* (a PIR
// operand instead of an attribute, §2.8). It has its own schema and its own reader.
//
//   - op : add (elementwise_add)          phi name, optional legacy name
//     backward : add_grad (elementwise_add_grad), add_double_grad
//     inputs : {x : X, y : Y}              phi name -> legacy name; also outputs, attrs
//     scalar :                             also int_array
//       axis : {data_type : int, tensor_name : AxisTensor, tensors_name : ..., support_tensor : true}
//     extra : {attrs : [bool use_mkldnn = false], inputs : [...], outputs : [...]}
//     manual_signature : [add]             also complex_promote, drop_empty_grad
//     get_expected_kernel_type : {add : GetAddExpectedKernelType}
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opdef/op_library.h"
#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::opdef {

/// `phi_name (legacy_name)`; legacy is empty when not given.
struct CompatName {
  std::string name;
  std::string legacy;
  SourceLoc loc;
};

/// One `phi : legacy` pair of inputs / outputs / attrs.
struct CompatRename {
  std::string name;
  std::string legacy;
  SourceLoc loc;
};

/// One attribute under `scalar:` or `int_array:`.
struct MutableAttrInfo {
  std::string name;
  std::optional<std::string> data_type;
  std::optional<std::string> tensor_name;
  std::optional<std::string> tensors_name;
  std::optional<bool> support_tensor;
  SourceLoc loc;

  /// op_gen.py's rule: the attribute becomes an operand when support_tensor is true or a
  /// tensor_name / tensors_name is given.
  bool is_mutable() const { return support_tensor.value_or(false) || tensor_name || tensors_name; }
};

struct CompatExtra {
  std::vector<Attribute> attrs;  // `[bool use_mkldnn = false, ...]`, parsed like args
  std::vector<NameRef> inputs;
  std::vector<NameRef> outputs;
  SourceLoc loc;
};

struct CompatEntry {
  CompatName op;
  std::vector<CompatName> backward;
  std::vector<CompatRename> inputs;
  std::vector<CompatRename> outputs;
  std::vector<CompatRename> attrs;
  std::vector<MutableAttrInfo> scalar;     // in document order
  std::vector<MutableAttrInfo> int_array;  // in document order
  std::optional<CompatExtra> extra;
  std::vector<NameRef> manual_signature;
  std::vector<NameRef> complex_promote;
  std::vector<NameRef> drop_empty_grad;
  std::vector<std::pair<NameRef, NameRef>> get_expected_kernel_type;  // op -> function
  SourceLoc loc;

  const MutableAttrInfo* find_scalar(std::string_view attr) const;
  const MutableAttrInfo* find_int_array(std::string_view attr) const;
};

class OpCompat {
 public:
  OpCompat() = default;

  const std::vector<CompatEntry>& entries() const { return entries_; }
  /// The entry for op `name`: the first entry whose op name, or one of whose backward names, is
  /// `name` (op_gen.py OpCompatParser.get_compat).
  const CompatEntry* lookup(std::string_view name) const;

 private:
  friend class OpCompatReader;
  std::vector<CompatEntry> entries_;
  std::unordered_map<std::string, size_t> by_name_;  // op and backward names -> first entry
};

/// Every key of an op_compat entry, dotted ("scalar.*.data_type" for the per-attribute keys).
const std::vector<std::string>& known_op_compat_keys();

/// Reads op_compat buffer `file`. Errors are located; an entry with an error is left out. A name that
/// a previous entry already claims is a warning (the first entry wins, as in Paddle).
OpCompat read_op_compat(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);
/// Reads the file at `path` (an unlocated error if it cannot be read).
OpCompat load_op_compat(const std::string& path, SourceManager& sources, DiagnosticEngine& diags);

}  // namespace kforge::opdef
