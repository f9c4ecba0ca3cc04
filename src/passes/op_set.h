// OpSet: the ops a program may use: an OpLibrary, its op_compat metadata and the PIR signatures derived from
// them (opdef/pir_signature.h), indexed by PIR name ("pd_op.relu", "pd_op.relu_"). The verifier, shape
// inference and lowering look ops up here.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opdef/op_compat.h"
#include "opdef/op_library.h"
#include "opdef/pir_signature.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::passes {

class OpSet {
 public:
  /// Derives the signatures of `library` (`compat` may be null: then no attribute is mutable). Both must
  /// outlive the OpSet. Derivation errors go to `diags`.
  OpSet(const opdef::OpLibrary& library, const opdef::OpCompat* compat, DiagnosticEngine& diags);
  OpSet(const OpSet&) = delete;
  OpSet& operator=(const OpSet&) = delete;

  const opdef::OpLibrary& library() const { return library_; }
  const opdef::OpCompat* compat() const { return compat_; }
  const std::vector<opdef::PirOpSignature>& signatures() const { return signatures_; }

  /// The signature of a PIR op name ("pd_op.add", "pd_op.add_"), or null.
  const opdef::PirOpSignature* find(std::string_view pir_name) const;
  /// Every PIR name, in signature order (for did-you-mean).
  const std::vector<std::string>& pir_names() const { return names_; }

 private:
  const opdef::OpLibrary& library_;
  const opdef::OpCompat* compat_;
  std::vector<opdef::PirOpSignature> signatures_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> by_name_;
};

/// Ops every program may use that no op YAML defines: builtin.parameter, builtin.combine, builtin.split,
/// builtin.slice, builtin.shadow_output, pd_op.data, pd_op.feed, pd_op.fetch, and the control-flow ops
/// (pd_op.if, pd_op.while, cf.yield, ...) that the verifier checks structurally and lowering rejects.
bool is_builtin_op(const ir::Op& op);
/// Control flow: ops with regions and the ops that only appear inside them.
bool is_control_flow_op(const ir::Op& op);

}  // namespace kforge::passes
