#include "passes/verify.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "passes/attr_values.h"
#include "support/text.h"

namespace kforge::passes {

namespace {

using ir::Op;
using ir::Program;
using ir::Type;
using ir::ValueId;

/// Attributes Paddle attaches to ops for its own bookkeeping; never "unknown".
bool is_bookkeeping_attribute(std::string_view name) {
  static const std::unordered_set<std::string_view> kNames = {
      "stop_gradient", "persistable",  "op_callstack", "struct_name",     "is_persistable", "op_role",
      "op_namescope",  "op_device",    "with_quant_attr", "dist_attr",    "op_dist_attr",   "__l_trainable__",
      "is_test_attr",  "use_mkldnn",   "use_onednn",   "use_cudnn",       "name_scope",     "op_role_var",
      "kernel_name",   "kernel_key",   "op_name",      "origin_id",       "is_inplace",     "tensor_name",
      "sub_block",     "mkldnn_data_type", "onednn_data_type", "is_persistable_var", "chunk_id"};
  return kNames.contains(name);
}

class Verifier {
 public:
  Verifier(Program& program, const OpSet& ops, DiagnosticEngine& diags, const VerifyOptions& options)
      : program_(program), ops_(ops), diags_(diags), options_(options) {}

  bool run() {
    const size_t errors = diags_.error_count();
    std::set<uint32_t> defined;
    verify_block(program_.top_block(), defined);
    return diags_.error_count() == errors;
  }

 private:
  /// How messages name an op: as the source writes it.
  std::string op_name(const Op& op) const {
    if (program_.format == ir::SourceFormat::kProgramYaml && op.dialect == "pd_op") return op.name;
    return op.full_name();
  }

  SourceLoc operand_loc(const Op& op, size_t i) const {
    if (i < op.operand_locs.size() && op.operand_locs[i].valid()) return op.operand_locs[i];
    return op.loc;
  }

  SourceLoc name_loc(const Op& op) const { return op.name_loc.valid() ? op.name_loc : op.loc; }

  void verify_block(ir::BlockId block_id, std::set<uint32_t> defined) {
    const ir::Block& block = program_.block(block_id);
    for (ValueId arg : block.args) defined.insert(arg.index);
    const std::vector<ir::OpId> ops = block.ops;  // verification may edit attributes, never the op list
    for (ir::OpId id : ops) {
      Op& op = program_.op(id);
      if (op.erased) continue;
      check_operands_defined(op, defined);
      verify_op(op);
      for (size_t r = 0; r < op.regions.size(); ++r) {
        for (ir::BlockId inner : op.regions[r].blocks) verify_block(inner, defined);
      }
      for (ValueId result : op.results) defined.insert(result.index);
    }
  }

  void check_operands_defined(const Op& op, const std::set<uint32_t>& defined) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ValueId v = op.operands[i];
      if (!v.valid()) continue;
      if (v.index >= program_.value_capacity()) {
        diags_.error(operand_loc(op, i), fmt::format("operand {} of '{}' refers to a value that does not exist", i,
                                                     op_name(op)));
        continue;
      }
      if (!defined.contains(v.index)) {
        const ir::Value& value = program_.value(v);
        Diagnostic d{Severity::kError, operand_loc(op, i),
                     fmt::format("operand {} of '{}' uses value '{}' before its definition", i, op_name(op),
                                 value.source_id.empty() ? fmt::format("#{}", v.index) : value.source_id),
                     {}};
        if (value.loc.valid()) d.note("it is defined here", value.loc);
        diags_.report(std::move(d));
      }
    }
  }

  void verify_op(Op& op) {
    if (is_builtin_op(op)) {
      verify_builtin(op);
      return;
    }
    if (op.dialect == "pd_kernel" || op.dialect == "kernel" || op.dialect == "custom_kernel") {
      diags_.error(name_loc(op), fmt::format("'{}' is a kernel-dialect op; kforge reads programs before kernel "
                                             "lowering (save the program without lowering it)",
                                             op.full_name()));
      return;
    }
    const opdef::PirOpSignature* sig = ops_.find(op.full_name());
    if (!sig) {
      report_unknown_op(op);
      return;
    }
    verify_operands(op, *sig);
    verify_attributes(op, *sig);
    verify_results(op, *sig);
  }

  void report_unknown_op(const Op& op) {
    const bool yaml = program_.format == ir::SourceFormat::kProgramYaml && op.dialect == "pd_op";
    Diagnostic d{Severity::kError, name_loc(op), fmt::format("unknown op '{}'", op_name(op)), {}};
    std::vector<std::string>& candidates = yaml ? yaml_op_names_ : pir_op_names_;
    if (candidates.empty()) {  // made once per program, not once per unknown op
      for (const std::string& n : ops_.pir_names()) {
        if (!yaml) {
          candidates.push_back(n);
        } else if (n.starts_with("pd_op.")) {
          candidates.push_back(n.substr(6));
        }
      }
    }
    const std::string written = yaml ? op.name : op.full_name();
    std::optional<std::string> match = closest_match(written, candidates);
    if (!match && written.size() >= 4) {
      // Two edits (a swapped pair of letters, `rleu`) is still a plausible typo of a longer name.
      size_t best = 3;
      for (const std::string& c : candidates) {
        const size_t d = edit_distance(written, c, 2);
        if (d < best) {
          best = d;
          match = c;
        }
      }
    }
    if (auto m = match) {
      d.note(fmt::format("did you mean '{}'?", *m));
    } else if (written.ends_with("_") && ops_.find(op.dialect + "." + op.name.substr(0, op.name.size() - 1))) {
      d.note(fmt::format("'{}' exists, but has no in-place form", op.name.substr(0, op.name.size() - 1)));
    } else {
      d.note("the op set does not define it (add it to an op YAML file given with --ops)");
    }
    diags_.report(std::move(d));
  }

  static std::string operand_names(const opdef::PirOpSignature& sig) {
    std::vector<std::string> names;
    for (const auto& o : sig.operands) names.push_back(o.optional || o.mutable_attr ? o.name + "?" : o.name);
    return join(names, ", ");
  }

  void verify_operands(Op& op, const opdef::PirOpSignature& sig) {
    const size_t expected = sig.operands.size();
    if (op.operands.size() > expected) {
      Diagnostic d{Severity::kError, operand_loc(op, expected),
                   fmt::format("'{}' takes {} operand{} ({}), but {} are given", op_name(op), expected,
                               expected == 1 ? "" : "s", operand_names(sig), op.operands.size()),
                   {}};
      if (sig.op) d.note(fmt::format("'{}' is defined here", sig.op->name), sig.op->loc);
      diags_.report(std::move(d));
      return;
    }
    if (op.operands.size() < expected) {
      // Trailing optional inputs and mutable attributes may be left out: hand-written programs give mutable
      // attributes as attributes, and so do programs of Paddle versions where they were not yet operands.
      bool all_omittable = true;
      for (size_t i = op.operands.size(); i < expected; ++i) {
        all_omittable = all_omittable && (sig.operands[i].optional || sig.operands[i].mutable_attr);
      }
      if (!all_omittable) {
        Diagnostic d{Severity::kError, op.loc,
                     fmt::format("'{}' takes {} operand{} ({}), but {} {} given", op_name(op), expected,
                                 expected == 1 ? "" : "s", operand_names(sig), op.operands.size(),
                                 op.operands.size() == 1 ? "is" : "are"),
                     {}};
        if (sig.op) d.note(fmt::format("'{}' is defined here", sig.op->name), sig.op->loc);
        diags_.report(std::move(d));
        return;
      }
      while (op.operands.size() < expected) {
        op.operands.push_back(ValueId{});
        if (!op.operand_locs.empty()) op.operand_locs.push_back(SourceLoc{});
      }
    }
    for (size_t i = 0; i < expected; ++i) {
      const opdef::PirOperand& so = sig.operands[i];
      const ValueId v = op.operands[i];
      if (!v.valid()) {
        if (!so.optional && !so.mutable_attr) {
          diags_.error(operand_loc(op, i), fmt::format("operand '{}' of '{}' is required, but none is given", so.name,
                                                       op_name(op)));
        }
        continue;
      }
      if (v.index >= program_.value_capacity()) continue;
      const Type& t = program_.type_of(v);
      const bool wants_vector = so.type.starts_with("pir::VectorType");
      if (t.is_none()) continue;
      if (so.mutable_attr) {
        if (!t.is_tensor() && !t.is_vector()) {
          diags_.error(operand_loc(op, i), fmt::format("operand '{}' of '{}' must be a tensor (it gives the "
                                                       "attribute's value), got {}",
                                                       so.name, op_name(op), ir::to_string(t)));
        }
        continue;
      }
      if (wants_vector && !t.is_vector()) {
        diags_.error(operand_loc(op, i),
                     fmt::format("operand '{}' of '{}' must be a list of tensors (a builtin.combine result), got {}",
                                 so.name, op_name(op), ir::to_string(t)));
      } else if (!wants_vector && !t.is_tensor()) {
        diags_.error(operand_loc(op, i), fmt::format("operand '{}' of '{}' must be a dense tensor, got {}", so.name,
                                                     op_name(op), ir::to_string(t)));
      }
    }
  }

  /// Converts, or fills from the default, the attribute `name` of YAML type `type`. `required`: a missing
  /// attribute without a default is an error.
  void check_attribute(Op& op, const opdef::Attribute& def) {
    const ir::NamedAttribute* present = op.named_attr(def.name);
    if (present) {
      std::string why;
      std::optional<ir::Attribute> converted = convert_attribute(present->value, def.type, &why);
      if (!converted) {
        const SourceLoc at = present->value.loc.valid() ? present->value.loc
                             : present->name_loc.valid() ? present->name_loc
                                                         : op.loc;
        Diagnostic d{Severity::kError, at,
                     fmt::format("attribute '{}' of '{}' has the wrong type: {}", def.name, op_name(op), why), {}};
        d.note(fmt::format("'{}' is declared as '{}' here", def.name, opdef::arg_type_info(def.type).spelling),
               def.loc);
        diags_.report(std::move(d));
        return;
      }
      if (!(present->value == *converted)) op.set_attr(def.name, std::move(*converted), present->name_loc);
      return;
    }
    if (def.default_value) {
      std::string why;
      std::optional<ir::Attribute> value = default_attribute(*def.default_value, def.type, &why);
      if (value) {
        value->loc = SourceLoc{};
        op.set_attr(def.name, std::move(*value));
        return;
      }
      Diagnostic d{Severity::kError, op.loc,
                   fmt::format("'{}' has no attribute '{}', and its default cannot be used: {}", op_name(op), def.name,
                               why),
                   {}};
      d.note("the default is here", def.default_value->loc);
      diags_.report(std::move(d));
      return;
    }
    Diagnostic d{Severity::kError, op.loc,
                 fmt::format("'{}' is missing the attribute '{}' ({}), which has no default", op_name(op), def.name,
                             opdef::arg_type_info(def.type).spelling),
                 {}};
    d.note(fmt::format("'{}' is declared here", def.name), def.name_loc);
    diags_.report(std::move(d));
  }

  void verify_attributes(Op& op, const opdef::PirOpSignature& sig) {
    const opdef::Op* def = sig.op;
    if (!def) return;
    std::vector<std::string> known;
    for (const opdef::PirAttribute& a : sig.attributes) {
      known.push_back(a.name);
      if (const opdef::Attribute* yaml = def->find_attribute(a.name)) check_attribute(op, *yaml);
    }
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      const opdef::PirOperand& so = sig.operands[i];
      if (!so.mutable_attr) continue;
      known.push_back(so.name);
      const bool given_as_operand = i < op.operands.size() && op.operands[i].valid();
      if (given_as_operand) continue;  // the operand gives the value; an attribute of that name is ignored
      if (const opdef::Attribute* yaml = def->find_attribute(so.name)) check_attribute(op, *yaml);
    }
    if (!options_.warn_unknown_attributes) return;
    for (const ir::NamedAttribute& a : op.attributes) {
      if (std::find(known.begin(), known.end(), a.name) != known.end() || is_bookkeeping_attribute(a.name)) continue;
      Diagnostic d{Severity::kWarning, a.name_loc.valid() ? a.name_loc : op.loc,
                   fmt::format("unknown attribute '{}' of '{}' is ignored", a.name, op_name(op)), {}};
      if (auto m = closest_match(a.name, known)) d.note(fmt::format("did you mean '{}'?", *m));
      diags_.report(std::move(d));
    }
  }

  void verify_results(Op& op, const opdef::PirOpSignature& sig) {
    const size_t expected = sig.results.size();
    const bool may_omit = program_.format == ir::SourceFormat::kProgramYaml || program_.format == ir::SourceFormat::kBuilt;
    if (op.results.size() > expected || (op.results.size() < expected && !may_omit)) {
      std::vector<std::string> names;
      for (const auto& r : sig.results) names.push_back(r.name);
      diags_.error(op.loc, fmt::format("'{}' has {} result{} ({}), but {} {} given", op_name(op), expected,
                                       expected == 1 ? "" : "s", join(names, ", "), op.results.size(),
                                       op.results.size() == 1 ? "is" : "are"));
      return;
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      const Type& t = program_.type_of(op.results[i]);
      if (t.is_none()) continue;
      const bool wants_vector = sig.results[i].type.starts_with("pir::VectorType");
      if (wants_vector != t.is_vector() || (!wants_vector && !t.is_tensor())) {
        const ir::Value& v = program_.value(op.results[i]);
        diags_.error(v.loc.valid() ? v.loc : op.loc,
                     fmt::format("result '{}' of '{}' is declared as {}, but the op gives {}", sig.results[i].name,
                                 op_name(op), ir::to_string(t),
                                 wants_vector ? "a list of tensors" : "a dense tensor"));
      }
    }
  }

  // ---- builtin ops ---------------------------------------------------------------------------------------

  bool expect_counts(const Op& op, size_t operands, size_t results) {
    if (op.operands.size() != operands) {
      diags_.error(op.loc, fmt::format("'{}' takes {} operand{}, but {} {} given", op.full_name(), operands,
                                       operands == 1 ? "" : "s", op.operands.size(),
                                       op.operands.size() == 1 ? "is" : "are"));
      return false;
    }
    if (op.results.size() != results) {
      diags_.error(op.loc, fmt::format("'{}' has {} result{}, but {} {} given", op.full_name(), results,
                                       results == 1 ? "" : "s", op.results.size(),
                                       op.results.size() == 1 ? "is" : "are"));
      return false;
    }
    return true;
  }

  void expect_string_attr(const Op& op, std::string_view name) {
    const ir::Attribute* a = op.attr(name);
    if (!a) {
      diags_.error(op.loc, fmt::format("'{}' is missing the attribute '{}'", op.full_name(), name));
    } else if (a->kind != ir::AttrKind::kString) {
      diags_.error(a->loc.valid() ? a->loc : op.loc,
                   fmt::format("attribute '{}' of '{}' must be a string, got {}", name, op.full_name(),
                               ir::attr_kind_name(a->kind)));
    }
  }

  void verify_builtin(Op& op) {
    if (is_control_flow_op(op)) return;  // checked structurally; lowering rejects it
    if (op.is("builtin", "parameter")) {
      if (expect_counts(op, 0, 1)) expect_string_attr(op, "parameter_name");
    } else if (op.is("pd_op", "data") || op.is("pd_op", "feed")) {
      if (expect_counts(op, 0, 1)) expect_string_attr(op, "name");
    } else if (op.is("pd_op", "fetch")) {
      if (expect_counts(op, 1, 1)) expect_string_attr(op, "name");
    } else if (op.is("builtin", "shadow_output")) {
      if (expect_counts(op, 1, 0)) expect_string_attr(op, "output_name");
    } else if (op.is("builtin", "combine")) {
      if (op.results.size() != 1) {
        expect_counts(op, op.operands.size(), 1);
        return;
      }
      for (size_t i = 0; i < op.operands.size(); ++i) {
        if (!op.operands[i].valid()) {
          diags_.error(operand_loc(op, i), fmt::format("operand {} of 'builtin.combine' is null", i));
          continue;
        }
        const Type& t = program_.type_of(op.operands[i]);
        if (!t.is_none() && !t.is_tensor()) {
          diags_.error(operand_loc(op, i), fmt::format("operand {} of 'builtin.combine' must be a tensor, got {}", i,
                                                       ir::to_string(t)));
        }
      }
    } else if (op.is("builtin", "split") || op.is("builtin", "slice")) {
      if (op.operands.size() != 1 || !op.operands[0].valid()) {
        expect_counts(op, 1, op.results.size());
        if (op.operands.size() == 1) diags_.error(op.loc, fmt::format("the operand of '{}' is null", op.full_name()));
        return;
      }
      const Type& t = program_.type_of(op.operands[0]);
      if (!t.is_none() && !t.is_vector()) {
        diags_.error(operand_loc(op, 0), fmt::format("the operand of '{}' must be a list of tensors, got {}",
                                                     op.full_name(), ir::to_string(t)));
      } else if (t.is_vector() && op.is("builtin", "split") && t.elements.size() != op.results.size()) {
        diags_.error(op.loc, fmt::format("'builtin.split' of a list of {} tensors has {} results", t.elements.size(),
                                         op.results.size()));
      }
    }
  }

  Program& program_;
  const OpSet& ops_;
  DiagnosticEngine& diags_;
  const VerifyOptions& options_;
  // The names an unknown op is compared with for "did you mean" (PIR names; program YAML's without "pd_op.").
  std::vector<std::string> pir_op_names_, yaml_op_names_;
};

}  // namespace

bool verify_program(ir::Program& program, const OpSet& ops, DiagnosticEngine& diags, const VerifyOptions& options) {
  return Verifier(program, ops, diags, options).run();
}

}  // namespace kforge::passes
