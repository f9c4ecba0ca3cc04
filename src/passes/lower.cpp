// Lowering a program to kernel calls (lower.h): which top-level ops become calls and which values are live, the
// lowered program's values, inputs, parameters, constants and outputs. The calls are built in lower_calls.cpp,
// the buffers assigned in lower_buffers.cpp.
#include "passes/lower.h"

#include "passes/lower_internal.h"

namespace kforge::passes {

namespace lower_internal {

std::optional<LoweredProgram> Lowerer::run() {
  const size_t errors = diags_.error_count();
  out_.name = program_.name;
  out_.format = program_.format;
  out_.symbols = analysis_.symbols;
  out_.dim_equalities = analysis_.dim_equalities;
  value_index_.assign(program_.value_capacity(), kNone);
  classify();
  mark_needed();
  if (diags_.error_count() > errors) return std::nullopt;
  build_interface();
  build_calls();
  bind_data_dependent_symbols();
  build_outputs();
  if (diags_.error_count() > errors) return std::nullopt;
  assign_buffers();
  return std::move(out_);
}

std::string Lowerer::name_of(const Op& op) const {
  if (program_.format == ir::SourceFormat::kProgramYaml && op.dialect == "pd_op") return op.name;
  return op.full_name();
}

bool Lowerer::is_static_constant(ValueId v) const {
  const ValueInfo& i = info(v);
  if (!i.known || i.is_vector || !i.data || !i.data->is_static()) return false;
  return i.data->splat || i.data->numel() <= options_.max_constant_elements;
}

void Lowerer::classify() {
  for (ir::OpId id : program_.top_level_ops()) {
    const Op& op = program_.op(id);
    if (op.erased) continue;
    order_.push_back(id);
    OpClass c = OpClass::kOther;
    if (op.is("pd_op", "data") || op.is("pd_op", "feed")) {
      c = OpClass::kFeed;
    } else if (op.is("builtin", "parameter")) {
      c = OpClass::kParameter;
    } else if (op.is("pd_op", "fetch") || op.is("builtin", "shadow_output")) {
      c = OpClass::kFetch;
    } else if (op.is("builtin", "combine") || op.is("builtin", "split") || op.is("builtin", "slice")) {
      c = OpClass::kWiring;
    } else if (const opdef::PirOpSignature* sig = ops_.find(op.full_name()); sig && !is_builtin_op(op)) {
      bool all_known = !op.results.empty();
      for (ValueId r : op.results) all_known = all_known && is_static_constant(r);
      const bool inplace = sig->inplace;  // a twin writes its input: never fold it away
      c = all_known && !inplace ? OpClass::kConstant : OpClass::kCall;
      signature_[id.index] = sig;
    }
    class_[id.index] = c;
  }
}

std::vector<ValueId> Lowerer::tensor_operands(const Op& op) const {
  std::vector<ValueId> out;
  const opdef::PirOpSignature* sig = signature_.at(op.id.index);
  for (size_t i = 0; i < op.operands.size() && i < sig->operands.size(); ++i) {
    const ValueId v = op.operands[i];
    if (!v.valid()) continue;
    if (sig->operands[i].mutable_attr && attr_known(v)) continue;
    if (size_from_output_dims(op, sig->operands[i].name, v)) continue;
    out.push_back(v);
  }
  return out;
}

bool Lowerer::size_from_output_dims(const Op& op, const std::string& input, ValueId v) const {
  if (!options_.sizes_from_output_dims || !v.valid() || (input != "out_size" && input != "size_tensor")) return false;
  const std::string& name = signature_.at(op.id.index)->op->name;
  if (name != "nearest_interp" && name != "bilinear_interp" && name != "linear_interp") return false;
  return attr_known(v);
}

bool Lowerer::attr_known(ValueId v) const {
  const ValueInfo& i = info(v);
  if (!i.known) return false;
  if (i.is_vector) {
    for (const ValueInfo& e : i.elements) {
      if (!e.data || e.data->numel() != 1 || ir::is_floating(e.data->dtype)) return false;
    }
    return true;
  }
  return i.data.has_value() && (i.data->is_static() || !ir::is_floating(i.data->dtype));
}

void Lowerer::need(ValueId v) {
  if (v.valid()) needed_.insert(v.index);
}

void Lowerer::mention_counts(ValueId v) {
  if (!v.valid() || v.index >= analysis_.values.size()) return;
  auto mention = [this](const SymExpr& e) {
    for (uint32_t id : e.symbols()) {
      const Symbol& s = analysis_.symbols.at(id);
      if (!s.is_input_dim()) counting_ops_.insert(s.op.index);
    }
  };
  auto mention_info = [&](const ValueInfo& i) {
    for (const SymExpr& d : i.dims) mention(d);
    if (i.data) {
      for (const SymExpr& e : i.data->ints) mention(e);
    }
  };
  const ValueInfo& i = info(v);
  mention_info(i);
  for (const ValueInfo& e : i.elements) mention_info(e);
}

void Lowerer::mark_needed() {
  for (size_t k = order_.size(); k-- > 0;) {
    const Op& op = program_.op(order_[k]);
    const OpClass c = class_.at(op.id.index);
    switch (c) {
      case OpClass::kFetch:
        for (ValueId v : op.operands) {
          need(v);
          mention_counts(v);
        }
        break;
      case OpClass::kWiring: {
        bool any = false;
        for (ValueId r : op.results) any = any || needed_.contains(r.index);
        if (any) {
          for (ValueId v : op.operands) need(v);
        }
        break;
      }
      case OpClass::kConstant:
        break;  // its results are data; its operands are not read
      case OpClass::kCall: {
        const opdef::PirOpSignature* sig = signature_.at(op.id.index);
        bool live = false;
        for (ValueId r : op.results) live = live || needed_.contains(r.index);
        // An in-place twin also matters when a later op reads the operand it overwrites.
        if (sig->inplace) {
          for (const opdef::InplacePair& p : sig->op->inplace) {
            for (size_t i = 0; i < sig->operands.size() && i < op.operands.size(); ++i) {
              if (sig->operands[i].name == p.input && op.operands[i].valid() &&
                  needed_.contains(op.operands[i].index)) {
                live = true;
              }
            }
          }
        }
        for (const opdef::NameRef& t : sig->op->traits) {
          const ir::Attribute* is_test = op.attr("is_test");
          if (t.name.find("SideEffectTrait") != std::string::npos &&
              !(is_test && is_test->kind == ir::AttrKind::kBool && is_test->bool_value)) {
            live = true;
          }
        }
        // An op whose count a live op mentions runs even when nothing reads its elements (a program that reads
        // only the shape of distribute_fpn_proposals' rois): the count is known only once it ran.
        live = live || counting_ops_.contains(op.id.index);
        if (!live) break;
        live_calls_.insert(op.id.index);
        for (ValueId v : tensor_operands(op)) need(v);
        for (ValueId v : op.operands) mention_counts(v);
        for (ValueId r : op.results) mention_counts(r);
        break;
      }
      case OpClass::kOther:
        if (is_control_flow_op(op)) {
          // Generated code is one straight line of calls planned at generation time (memory included); a
          // branch or loop on a run-time value would need a plan per path. Say what the user can do instead.
          const bool loop = op.full_name().find("while") != std::string::npos;
          diags_.error(op.name_loc.valid() ? op.name_loc : op.loc,
                       fmt::format("control flow ('{}') is not supported: kforge generates straight-line code, and "
                                   "{} depends on a value known only at run time; export the model with the "
                                   "condition decided in Python (a fixed configuration flag, a loop over a constant "
                                   "range), so that paddle.jit.save writes no '{}'",
                                   op.full_name(),
                                   loop ? "how many times its body runs" : "which of its branches runs",
                                   op.full_name()));
        } else {
          diags_.error(op.name_loc.valid() ? op.name_loc : op.loc,
                       fmt::format("'{}' has no kernel in the op set", name_of(op)));
        }
        break;
      case OpClass::kFeed:
      case OpClass::kParameter: break;
    }
  }
}

uint32_t Lowerer::add_value(ValueId source, ValueRole role, ir::DataType dtype, SymShape dims, SourceLoc loc) {
  LoweredValue v;
  v.index = static_cast<uint32_t>(out_.values.size());
  v.source = source;
  if (source.valid()) {
    const ir::Value& pv = program_.value(source);
    v.name = pv.name;
    v.source_id = pv.source_id;
    if (!loc.valid()) loc = pv.loc;
    value_index_[source.index] = v.index;
  }
  v.dtype = dtype;
  v.dims = std::move(dims);
  v.role = role;
  v.loc = loc;
  if (source.valid() && role == ValueRole::kComputed && (ir::is_integer(dtype) || dtype == ir::DataType::kBool)) {
    const ValueInfo& i = info(source);
    constexpr int64_t kMostKnown = 64;  // shape-sized values, not tensors of data
    if (i.known && !i.is_vector && i.data && !i.data->ints.empty() && i.data->numel() <= kMostKnown) {
      for (int64_t e = 0; e < i.data->numel(); ++e) v.known.push_back(i.data->int_at(i.data->splat ? 0 : e));
    }
  }
  out_.values.push_back(std::move(v));
  return out_.values.back().index;
}

void Lowerer::build_interface() {
  for (ir::OpId id : order_) {
    const Op& op = program_.op(id);
    const OpClass c = class_.at(id.index);
    if (c == OpClass::kFeed && op.results.size() == 1) {
      const ValueInfo& i = info(op.results[0]);
      ProgramInput in;
      in.name = op.string_attr("name");
      in.dtype = i.dtype;
      in.loc = op.loc;
      for (const SymExpr& d : i.dims) in.declared_dims.push_back(d.constant().value_or(ir::kDynamicDim));
      in.value = add_value(op.results[0], ValueRole::kInput, i.dtype, i.dims, op.loc);
      out_.values.back().role_index = static_cast<uint32_t>(out_.inputs.size());
      out_.inputs.push_back(std::move(in));
    } else if (c == OpClass::kParameter && op.results.size() == 1) {
      const ValueInfo& i = info(op.results[0]);
      ProgramParameter p;
      p.name = op.string_attr("parameter_name");
      p.loc = op.loc;
      p.value = add_value(op.results[0], ValueRole::kParameter, i.dtype, i.dims, op.loc);
      out_.values.back().role_index = static_cast<uint32_t>(out_.parameters.size());
      out_.parameters.push_back(std::move(p));
    } else if (c == OpClass::kConstant) {
      for (ValueId r : op.results) {
        if (!needed_.contains(r.index)) continue;
        const KnownData& d = *info(r).data;
        ConstantData cd;
        cd.dtype = d.dtype;
        cd.dims = d.dims;
        cd.splat = d.splat;
        cd.floats = d.floats;
        for (const SymExpr& e : d.ints) cd.ints.push_back(*e.constant());
        cd.loc = op.loc;
        SymShape dims(d.dims.begin(), d.dims.end());
        cd.value = add_value(r, ValueRole::kConstant, d.dtype, dims, op.loc);
        out_.values.back().role_index = static_cast<uint32_t>(out_.constants.size());
        out_.constants.push_back(std::move(cd));
      }
    }
  }
}

void Lowerer::build_outputs() {
  const bool earlier_errors = diags_.has_errors();
  uint32_t position = 0;
  for (ir::OpId id : order_) {
    const Op& op = program_.op(id);
    if (class_.at(id.index) != OpClass::kFetch || op.operands.empty()) continue;
    ProgramOutput o;
    const bool fetch = op.is("pd_op", "fetch");
    o.name = op.string_attr(fetch ? "name" : "output_name");
    const ir::Attribute* col = op.attr("col");
    o.col = fetch && col && col->is_integer() ? static_cast<uint32_t>(col->int_value) : position;
    o.value = lowered(op.operands[0]);
    o.loc = op.loc;
    ++position;
    if (o.value == kNone) {
      if (!earlier_errors) diags_.error(op.loc, fmt::format("output '{}' has no value kforge can compute", o.name));
      continue;
    }
    out_.outputs.push_back(std::move(o));
  }
}

}  // namespace lower_internal

std::optional<LoweredProgram> lower_program(const ir::Program& program, const OpSet& ops, const Analysis& analysis,
                                            DiagnosticEngine& diags, const LowerOptions& options) {
  return lower_internal::Lowerer(program, ops, analysis, diags, options).run();
}

}  // namespace kforge::passes