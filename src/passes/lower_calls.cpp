// Lowering, the calls: each live op to a kernel call (lower_internal.h): its operands bound to the kernel's
// parameters (inputs, attributes, literals, known contents), the dtype its kernel runs in, its results; and the
// call and value of each data-dependent symbol.
#include "passes/lower_internal.h"

namespace kforge::passes::lower_internal {

std::vector<ValueId> Lowerer::list_elements(ValueId list) const {
  const ir::OpId def = program_.defining_op(list);
  if (def.valid() && program_.op(def).is("builtin", "combine")) return program_.op(def).operands;
  auto it = split_of_.find(list.index);
  if (it != split_of_.end()) return it->second;
  return {};
}

std::optional<size_t> Lowerer::operand_index(const opdef::PirOpSignature& sig, const std::string& name) const {
  for (size_t i = 0; i < sig.operands.size(); ++i) {
    if (sig.operands[i].name == name) return i;
  }
  return std::nullopt;
}

AttrConstant Lowerer::constant_from_data(const KnownData& d, opdef::ArgType type) const {
  AttrConstant c;
  c.type = type;
  if (type == opdef::ArgType::kIntArray || type == opdef::ArgType::kIntList || type == opdef::ArgType::kInt64List) {
    for (int64_t i = 0; i < d.numel(); ++i) c.ints.push_back(*d.int_at(i).constant());
  } else if (opdef::is_scalar_type(type)) {
    c.scalar.dtype = d.dtype;
    c.scalar.is_floating = ir::is_floating(d.dtype);
    if (c.scalar.is_floating) c.scalar.float_value = d.float_at(0);
    else c.scalar.int_value = *d.int_at(0).constant();
  } else if (type == opdef::ArgType::kFloat || type == opdef::ArgType::kDouble) {
    c.float_value = d.float_at(0);
  } else {
    c.int_value = *d.int_at(0).constant();
  }
  return c;
}

bool Lowerer::bind(const Op& op, const opdef::PirOpSignature& sig, const std::string& item, bool is_literal, KernelArg* arg) {
  const opdef::Op& def = *sig.op;
  arg->name = item;
  if (is_literal) {
    arg->kind = ArgKind::kConstant;
    AttrConstant& c = arg->constant;
    if (item == "true" || item == "false") {
      c.type = opdef::ArgType::kBool;
      c.bool_value = item == "true";
    } else if (item.find_first_of(".eE") != std::string::npos && item.find('"') == std::string::npos) {
      c.type = opdef::ArgType::kDouble;
      c.float_value = std::strtod(item.c_str(), nullptr);
    } else if (!item.empty() && item[0] == '"') {
      c.type = opdef::ArgType::kStr;
      c.string_value = item.substr(1, item.size() >= 2 ? item.size() - 2 : 0);
    } else {
      c.type = opdef::ArgType::kInt64;
      c.int_value = std::strtoll(item.c_str(), nullptr, 0);
    }
    arg->type = c.type;
    return true;
  }
  if (const opdef::Input* in = def.find_input(item)) {
    arg->type = in->type;
    arg->optional = in->optional;
    auto idx = operand_index(sig, item);
    const ValueId v = idx && *idx < op.operands.size() ? op.operands[*idx] : ValueId{};
    if (!v.valid() || size_from_output_dims(op, item, v)) {
      arg->kind = ArgKind::kAbsentTensor;
      return true;
    }
    if (in->is_list()) {
      arg->kind = ArgKind::kTensorList;
      for (ValueId e : list_elements(v)) arg->values.push_back(lowered(e));
    } else {
      arg->kind = ArgKind::kTensor;
      arg->value = lowered(v);
    }
    return true;
  }
  const opdef::Attribute* attr = def.find_attribute(item);
  if (!attr) {
    diags_.error(op.loc, fmt::format("'{}': the kernel param '{}' names no argument of '{}'", name_of(op), item,
                                     def.name));
    return false;
  }
  arg->type = attr->type;
  auto idx = operand_index(sig, item);
  const ValueId v = idx && *idx < op.operands.size() ? op.operands[*idx] : ValueId{};
  if (v.valid()) {
    const ValueInfo& vi = info(v);
    if (vi.is_vector) {
      if (attr_known(v)) {
        std::vector<SymExpr> ints;
        for (const ValueInfo& e : vi.elements) ints.push_back(e.data->int_at(0));
        bind_known_ints(ints, arg);
      } else {
        arg->kind = ArgKind::kTensorListToAttr;
        for (ValueId e : list_elements(v)) arg->values.push_back(lowered(e));
      }
    } else if (vi.data && vi.data->is_static()) {
      arg->kind = ArgKind::kConstant;
      arg->constant = constant_from_data(*vi.data, attr->type);
    } else if (attr_known(v)) {
      std::vector<SymExpr> ints;
      for (int64_t i = 0; i < vi.data->numel(); ++i) ints.push_back(vi.data->int_at(i));
      bind_known_ints(ints, arg);
    } else {
      arg->kind = ArgKind::kTensorToAttr;
      arg->value = lowered(v);
    }
    return true;
  }
  const ir::Attribute* a = op.attr(item);
  if (!a) {
    diags_.error(op.loc, fmt::format("'{}' has no value for the attribute '{}'", name_of(op), item));
    return false;
  }
  arg->kind = ArgKind::kConstant;
  arg->constant = to_constant(*a, attr->type);
  return true;
}

void Lowerer::bind_known_ints(const std::vector<SymExpr>& ints, KernelArg* arg) {
  bool all_constant = true;
  for (const SymExpr& e : ints) all_constant = all_constant && e.is_constant();
  if (all_constant) {
    arg->kind = ArgKind::kConstant;
    arg->constant.type = arg->type;
    if (opdef::is_scalar_type(arg->type)) {
      arg->constant.scalar = {ir::DataType::kInt64, false, 0, ints.empty() ? 0 : *ints[0].constant()};
    } else {
      for (const SymExpr& e : ints) arg->constant.ints.push_back(*e.constant());
      if (!ints.empty()) arg->constant.int_value = *ints[0].constant();
    }
    return;
  }
  arg->kind = ArgKind::kSymbolic;
  arg->symbolic = ints;
}

ir::DataType Lowerer::resolve_kernel_dtype(const Op& op, const opdef::PirOpSignature& sig, const KernelCall& call) {
  const opdef::Op& def = *sig.op;
  auto tensor_dtype = [&](const std::string& name) -> ir::DataType {
    for (const KernelArg& a : call.args) {
      if (a.name != name) continue;
      if (a.kind == ArgKind::kTensor) return out_.values[a.value].dtype;
      if (a.kind == ArgKind::kTensorList && !a.values.empty()) return out_.values[a.values[0]].dtype;
    }
    auto idx = operand_index(sig, name);
    if (idx && *idx < op.operands.size() && op.operands[*idx].valid()) {
      const ValueInfo& vi = info(op.operands[*idx]);
      if (vi.is_vector) return vi.elements.empty() ? ir::DataType::kUndefined : vi.elements[0].dtype;
      return vi.dtype;
    }
    return ir::DataType::kUndefined;
  };
  if (def.kernel && def.kernel->data_type) {
    for (const opdef::Candidate& cand : def.kernel->data_type->items) {
      ir::DataType d = ir::DataType::kUndefined;
      if (def.find_attribute(cand.name)) {
        const ir::Attribute* a = op.attr(cand.name);
        if (a && a->kind == ir::AttrKind::kDataType) d = a->dtype;
      } else if (def.find_input(cand.name)) {
        d = tensor_dtype(cand.name);
      }
      if (d != ir::DataType::kUndefined) return d;
    }
  }
  for (const opdef::Input& in : def.inputs) {
    const ir::DataType d = tensor_dtype(in.name);
    if (d != ir::DataType::kUndefined) return d;
  }
  for (const CallOutput& o : call.outputs) {
    for (uint32_t v : o.values) {
      if (v != kNone) return out_.values[v].dtype;
    }
  }
  return ir::DataType::kUndefined;
}

uint32_t Lowerer::result_value(const Op& op, size_t i, const ValueInfo& vi, uint32_t call) {
  const ValueId source = i < op.results.size() ? op.results[i] : ValueId{};
  const uint32_t v = add_value(source, ValueRole::kComputed, vi.dtype, vi.dims, op.loc);
  out_.values[v].defined_by = call;
  return v;
}

const ValueInfo* Lowerer::result_info(const Op& op, size_t i) const {
  if (i < op.results.size()) return &info(op.results[i]);
  auto it = analysis_.omitted_results.find(op.id.index);
  if (it == analysis_.omitted_results.end() || i >= it->second.size()) return nullptr;
  return &it->second[i];
}

void Lowerer::build_call(const Op& op) {
  const opdef::PirOpSignature& sig = *signature_.at(op.id.index);
  const opdef::Op& def = *sig.op;
  if (sig.kernel.empty() || !def.kernel) {
    Diagnostic d{Severity::kError, op.name_loc.valid() ? op.name_loc : op.loc,
                 fmt::format("'{}' has no kernel: its definition {}", name_of(op),
                             def.invoke ? "invokes another op" : "is composite only"),
                 {}};
    d.note(fmt::format("'{}' is defined here", def.name), def.loc);
    diags_.report(std::move(d));
    return;
  }
  KernelCall call;
  call.op = def.name;
  call.pir_name = sig.name;
  call.inplace_twin = sig.inplace;
  call.def = &def;
  call.signature = &sig;
  call.kernel = sig.kernel;
  call.infer_meta = sig.infer_meta;
  call.source = op.id;
  call.loc = op.loc;
  const uint32_t index = static_cast<uint32_t>(out_.calls.size());

  // Outputs first, so the argument binding can refer to this call's values.
  for (size_t i = 0; i < def.outputs.size(); ++i) {
    const opdef::Output& o = def.outputs[i];
    CallOutput co;
    co.name = o.name;
    co.is_list = o.type == opdef::OutputType::kTensorList;
    co.optional = o.optional || o.intermediate;
    const ValueInfo* vi = result_info(op, i);
    if (!vi || !vi->known) {
      diags_.error(op.loc, fmt::format("kforge does not know the shape of output '{}' of '{}'", o.name, name_of(op)));
      return;
    }
    const bool used = i < op.results.size() && needed_.contains(op.results[i].index);
    if (co.is_list) {
      const ValueId list = i < op.results.size() ? op.results[i] : ValueId{};
      std::vector<ValueId> elements = list.valid() ? list_elements(list) : std::vector<ValueId>{};
      for (size_t e = 0; e < vi->elements.size(); ++e) {
        const ValueId src = e < elements.size() ? elements[e] : ValueId{};
        const uint32_t v = add_value(src, ValueRole::kComputed, vi->elements[e].dtype, vi->elements[e].dims, op.loc);
        out_.values[v].defined_by = index;
        co.values.push_back(v);
      }
    } else if (!used && co.optional) {
      co.values.push_back(kNone);
    } else {
      co.values.push_back(result_value(op, i, *vi, index));
    }
    call.outputs.push_back(std::move(co));
  }
  bool ok = true;
  const std::vector<opdef::ParamItem> kernel_params = def.kernel->param ? *def.kernel->param : std::vector<opdef::ParamItem>{};
  if (def.kernel->param) {
    for (const opdef::ParamItem& p : kernel_params) {
      KernelArg a;
      ok = ok && bind(op, sig, p.text, p.is_literal, &a);
      call.args.push_back(std::move(a));
    }
  } else {
    for (const std::string& n : def.effective_kernel_param()) {
      KernelArg a;
      ok = ok && bind(op, sig, n, false, &a);
      call.args.push_back(std::move(a));
    }
  }
  if (def.infer_meta) {
    if (def.infer_meta->param) {
      for (const opdef::ParamItem& p : *def.infer_meta->param) {
        KernelArg a;
        ok = ok && bind(op, sig, p.text, p.is_literal, &a);
        call.infer_meta_args.push_back(std::move(a));
      }
    } else {
      call.infer_meta_args = call.args;
    }
  }
  if (!ok) return;
  call.kernel_dtype = resolve_kernel_dtype(op, sig, call);
  out_.calls.push_back(std::move(call));
}

void Lowerer::build_calls() {
  // Kernel list outputs reach their users through builtin.split: remember its results.
  for (ir::OpId id : order_) {
    const Op& op = program_.op(id);
    if (op.is("builtin", "split") && op.operands.size() == 1 && op.operands[0].valid()) {
      split_of_[op.operands[0].index] = op.results;
    }
  }
  for (ir::OpId id : order_) {
    if (class_.at(id.index) == OpClass::kCall && live_calls_.contains(id.index)) build_call(program_.op(id));
  }
}

void Lowerer::bind_data_dependent_symbols() {
  for (Symbol& s : out_.symbols) {
    if (s.is_input_dim()) continue;
    for (uint32_t c = 0; c < out_.calls.size(); ++c) {
      if (out_.calls[c].source != s.op) continue;
      const Op& op = program_.op(s.op);
      uint32_t v = s.result < op.results.size() ? lowered(op.results[s.result]) : kNone;
      if (s.element != kNone) {  // an element of a list output: the call's value for it
        const std::vector<CallOutput>& outs = out_.calls[c].outputs;
        v = s.result < outs.size() && s.element < outs[s.result].values.size() ? outs[s.result].values[s.element]
                                                                               : kNone;
      }
      if (v == kNone) break;
      s.call = c;
      s.value = v;
      if (s.before_call) break;  // read from the infer-meta before the call: laid out at its size
      // Every output the kernel writes that the symbol sizes (unique's out, indices and counts) is laid out for
      // the bound.
      for (const CallOutput& o : out_.calls[c].outputs) {
        for (uint32_t w : o.values) {
          if (w == kNone) continue;
          LoweredValue& value = out_.values[w];
          for (size_t a = 0; a < value.dims.size(); ++a) {
            uint32_t id = kNone;
            if (!value.dims[a].is_symbol(&id) || id != s.id) continue;
            if (value.capacity.empty()) value.capacity = value.dims;
            value.capacity[a] = s.bound;
          }
        }
      }
      break;
    }
  }
}

bool Lowerer::data_dependent(const SymExpr& e) const {
  for (uint32_t id : e.symbols()) {
    if (id < out_.symbols.size() && !out_.symbols[id].is_input_dim()) return true;
  }
  return false;
}

}  // namespace kforge::passes::lower_internal
