#include "passes/op_set.h"

namespace kforge::passes {

OpSet::OpSet(const opdef::OpLibrary& library, const opdef::OpCompat* compat, DiagnosticEngine& diags)
    : library_(library), compat_(compat) {
  // Ops Paddle writes by hand (expand, ...) are ordinary ops with kernels here: derive them too.
  opdef::PirSignatureOptions options;
  options.manual_ops.clear();
  options.vjp_only_ops.clear();
  signatures_ = opdef::derive_pir_signatures(library, compat, diags, options);
  for (size_t i = 0; i < signatures_.size(); ++i) {
    names_.push_back(signatures_[i].name);
    by_name_.emplace(signatures_[i].name, i);  // the first wins; derivation reports duplicates
  }
}

const opdef::PirOpSignature* OpSet::find(std::string_view pir_name) const {
  auto it = by_name_.find(std::string(pir_name));
  return it == by_name_.end() ? nullptr : &signatures_[it->second];
}

bool is_control_flow_op(const ir::Op& op) {
  if (!op.regions.empty()) return true;
  if (op.dialect == "cf") return true;
  static const char* const kNames[] = {"if", "while", "pylayer", "select_input", "select_output"};
  if (op.dialect == "pd_op") {
    for (const char* n : kNames) {
      if (op.name == n) return true;
    }
  }
  return false;
}

bool is_builtin_op(const ir::Op& op) {
  if (op.dialect == "builtin") {
    return op.name == "parameter" || op.name == "combine" || op.name == "split" || op.name == "slice" ||
           op.name == "shadow_output" || op.name == "constant" || op.name == "set_parameter";
  }
  if (op.dialect == "pd_op" && (op.name == "data" || op.name == "feed" || op.name == "fetch")) return true;
  return is_control_flow_op(op);
}

}  // namespace kforge::passes
