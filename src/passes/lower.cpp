#include "passes/lower.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "passes/attr_values.h"
#include "passes/transforms.h"

namespace kforge::passes {

namespace {

using ir::Op;
using ir::ValueId;

/// What one top-level op becomes.
enum class OpClass { kFeed, kParameter, kFetch, kWiring, kConstant, kCall, kOther };

class Lowerer {
 public:
  Lowerer(const ir::Program& program, const OpSet& ops, const Analysis& analysis, DiagnosticEngine& diags,
          const LowerOptions& options)
      : program_(program), ops_(ops), analysis_(analysis), diags_(diags), options_(options) {}

  std::optional<LoweredProgram> run() {
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

 private:
  // ---- classification and liveness -----------------------------------------------------------------------

  const ValueInfo& info(ValueId v) const { return analysis_.values.at(v.index); }

  std::string name_of(const Op& op) const {
    if (program_.format == ir::SourceFormat::kProgramYaml && op.dialect == "pd_op") return op.name;
    return op.full_name();
  }

  bool is_static_constant(ValueId v) const {
    const ValueInfo& i = info(v);
    if (!i.known || i.is_vector || !i.data || !i.data->is_static()) return false;
    return i.data->splat || i.data->numel() <= options_.max_constant_elements;
  }

  void classify() {
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

  /// The operands of a call that it reads as tensors (mutable attributes known at generation time are not).
  std::vector<ValueId> tensor_operands(const Op& op) const {
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

  /// An interpolation size input left out under LowerOptions::sizes_from_output_dims: its integer contents are
  /// known, so the shape rule put them in the output's dims.
  bool size_from_output_dims(const Op& op, const std::string& input, ValueId v) const {
    if (!options_.sizes_from_output_dims || !v.valid() || (input != "out_size" && input != "size_tensor")) return false;
    const std::string& name = signature_.at(op.id.index)->op->name;
    if (name != "nearest_interp" && name != "bilinear_interp") return false;
    return attr_known(v);
  }

  /// A mutable attribute's operand whose contents are known (statically or as symbol expressions).
  bool attr_known(ValueId v) const {
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

  void need(ValueId v) {
    if (v.valid()) needed_.insert(v.index);
  }

  void mark_needed() {
    for (size_t k = order_.size(); k-- > 0;) {
      const Op& op = program_.op(order_[k]);
      const OpClass c = class_.at(op.id.index);
      switch (c) {
        case OpClass::kFetch:
          for (ValueId v : op.operands) need(v);
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
          if (!live) break;
          live_calls_.insert(op.id.index);
          for (ValueId v : tensor_operands(op)) need(v);
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

  // ---- values --------------------------------------------------------------------------------------------

  uint32_t add_value(ValueId source, ValueRole role, ir::DataType dtype, SymShape dims, SourceLoc loc) {
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

  uint32_t lowered(ValueId v) const { return v.valid() ? value_index_.at(v.index) : kNone; }

  void build_interface() {
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

  // ---- calls ---------------------------------------------------------------------------------------------

  /// The program values of a list operand: the operands of the builtin.combine that made it, or the results
  /// of the builtin.split of a kernel's list output.
  std::vector<ValueId> list_elements(ValueId list) const {
    const ir::OpId def = program_.defining_op(list);
    if (def.valid() && program_.op(def).is("builtin", "combine")) return program_.op(def).operands;
    auto it = split_of_.find(list.index);
    if (it != split_of_.end()) return it->second;
    return {};
  }

  std::optional<size_t> operand_index(const opdef::PirOpSignature& sig, const std::string& name) const {
    for (size_t i = 0; i < sig.operands.size(); ++i) {
      if (sig.operands[i].name == name) return i;
    }
    return std::nullopt;
  }

  AttrConstant constant_from_data(const KnownData& d, opdef::ArgType type) const {
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

  /// Binds one param item of `op` (an input, an attribute or a literal).
  bool bind(const Op& op, const opdef::PirOpSignature& sig, const std::string& item, bool is_literal, KernelArg* arg) {
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

  void bind_known_ints(const std::vector<SymExpr>& ints, KernelArg* arg) {
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

  ir::DataType resolve_kernel_dtype(const Op& op, const opdef::PirOpSignature& sig, const KernelCall& call) {
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

  /// A computed value for result `i` of `op` (or a scratch value for a result the op leaves out).
  uint32_t result_value(const Op& op, size_t i, const ValueInfo& vi, uint32_t call) {
    const ValueId source = i < op.results.size() ? op.results[i] : ValueId{};
    const uint32_t v = add_value(source, ValueRole::kComputed, vi.dtype, vi.dims, op.loc);
    out_.values[v].defined_by = call;
    return v;
  }

  const ValueInfo* result_info(const Op& op, size_t i) const {
    if (i < op.results.size()) return &info(op.results[i]);
    auto it = analysis_.omitted_results.find(op.id.index);
    if (it == analysis_.omitted_results.end() || i >= it->second.size()) return nullptr;
    return &it->second[i];
  }

  void build_call(const Op& op) {
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

  void build_calls() {
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

  /// Each data-dependent symbol gets the call and the value whose dim it is; found by the kernel, that value is laid
  /// out for the symbol's bound (LoweredValue::capacity). A symbol of an op that is not called (dead code) binds nothing: no value
  /// that is computed mentions it.
  void bind_data_dependent_symbols() {
    for (Symbol& s : out_.symbols) {
      if (s.is_input_dim()) continue;
      for (uint32_t c = 0; c < out_.calls.size(); ++c) {
        if (out_.calls[c].source != s.op) continue;
        const Op& op = program_.op(s.op);
        const uint32_t v = s.result < op.results.size() ? lowered(op.results[s.result]) : kNone;
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

  /// Whether `e` mentions a data-dependent symbol (known only once its op ran).
  bool data_dependent(const SymExpr& e) const {
    for (uint32_t id : e.symbols()) {
      if (id < out_.symbols.size() && !out_.symbols[id].is_input_dim()) return true;
    }
    return false;
  }

  void build_outputs() {
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

  // ---- buffers -------------------------------------------------------------------------------------------

  uint32_t find(std::vector<uint32_t>& parent, uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }

  void assign_buffers() {
    const uint32_t n = static_cast<uint32_t>(out_.values.size());
    const uint32_t calls = static_cast<uint32_t>(out_.calls.size());
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0u);
    auto is_owned = [&](uint32_t v) { return out_.values[v].role == ValueRole::kComputed; };
    // A view or in-place output sized by a data-dependent dim that its input is not (a reshape to a shape read at run
    // time) keeps a buffer of its own: one buffer would be laid out at run time, after the input is written.
    auto sized_apart = [&](uint32_t in, uint32_t o) {
      return data_dependent(out_.values[in].bytes()) != data_dependent(out_.values[o].bytes());
    };

    // Reads and writes per value, in call order.
    std::vector<uint32_t> last_use(n, 0);
    std::vector<bool> has_use(n, false);
    for (uint32_t c = 0; c < calls; ++c) {
      for (const KernelArg& a : out_.calls[c].args) {
        if (a.value != kNone) {
          last_use[a.value] = c;
          has_use[a.value] = true;
        }
        for (uint32_t v : a.values) {
          if (v != kNone) {
            last_use[v] = c;
            has_use[v] = true;
          }
        }
      }
    }
    // In-place twins: the output shares its input's storage (when kforge owns that storage).
    struct Write {
      uint32_t call, input, output;
    };
    std::vector<Write> writes;
    auto pair_values = [&](const KernelCall& call, const opdef::InplacePair& p, uint32_t* in, uint32_t* out) {
      *in = *out = kNone;
      for (const KernelArg& a : call.args) {
        if (a.name == p.input && a.kind == ArgKind::kTensor) *in = a.value;
      }
      for (const CallOutput& o : call.outputs) {
        if (o.name == p.output && !o.is_list && !o.values.empty()) *out = o.values[0];
      }
    };
    for (uint32_t c = 0; c < calls; ++c) {
      const KernelCall& call = out_.calls[c];
      if (!call.inplace_twin) continue;
      for (const opdef::InplacePair& p : call.def->inplace) {
        uint32_t in, o;
        pair_values(call, p, &in, &o);
        if (in == kNone || o == kNone) continue;
        writes.push_back({c, in, o});
        if (is_owned(in) && !sized_apart(in, o)) parent[find(parent, o)] = find(parent, in);
      }
    }
    // Views share storage unless that storage is written in place after the view is made.
    for (uint32_t c = 0; c < calls; ++c) {
      const KernelCall& call = out_.calls[c];
      if (call.inplace_twin) continue;
      for (const opdef::InplacePair& p : call.def->view) {
        uint32_t in, o;
        pair_values(call, p, &in, &o);
        if (in == kNone || o == kNone || !is_owned(in) || sized_apart(in, o)) continue;
        bool written_later = false;
        for (const Write& w : writes) {
          const uint32_t g = find(parent, w.input);
          written_later = written_later || (w.call > c && (g == find(parent, in) || g == find(parent, o)));
        }
        if (!written_later) parent[find(parent, o)] = find(parent, in);
      }
    }

    // One buffer per group.
    std::map<uint32_t, uint32_t> buffer_of_root;
    for (uint32_t v = 0; v < n; ++v) {
      LoweredValue& value = out_.values[v];
      if (value.role == ValueRole::kComputed && value.defined_by == kNone) continue;
      const uint32_t root = find(parent, v);
      auto [it, inserted] = buffer_of_root.emplace(root, static_cast<uint32_t>(out_.buffers.size()));
      if (inserted) {
        Buffer b;
        b.index = it->second;
        switch (value.role) {
          case ValueRole::kInput: b.kind = BufferKind::kInput; break;
          case ValueRole::kParameter: b.kind = BufferKind::kParameter; break;
          case ValueRole::kConstant: b.kind = BufferKind::kConstant; break;
          case ValueRole::kComputed: b.kind = BufferKind::kWorkspace; break;
        }
        b.role_index = value.role_index;
        if (value.role == ValueRole::kComputed) {
          b.first_call = value.defined_by;
          b.last_call = value.defined_by;
        } else {
          b.first_call = 0;
          b.last_call = calls == 0 ? 0 : calls - 1;
        }
        out_.buffers.push_back(std::move(b));
      }
      Buffer& b = out_.buffers[it->second];
      value.buffer = b.index;
      b.values.push_back(v);
      // A data-dependent result's buffer holds its capacity, which its views (a reshape of it) never exceed.
      const SymExpr bytes = value.buffer_bytes();
      if (!value.capacity.empty()) {
        b.size_bytes = bytes;
      } else if (b.values.size() == 1) {
        b.size_bytes = bytes;
      } else if (!std::any_of(b.values.begin(), b.values.end(),
                              [&](uint32_t w) { return !out_.values[w].capacity.empty(); })) {
        b.size_bytes = SymExpr::max(b.size_bytes, bytes);
      }
      if (value.role == ValueRole::kComputed) {
        b.first_call = std::min(b.first_call, value.defined_by);
        b.last_call = std::max(b.last_call, value.defined_by);
        if (has_use[v]) b.last_call = std::max(b.last_call, last_use[v]);
      }
    }
    // Sized by a data-dependent dim: allocated at run time, once the dim is known.
    for (Buffer& b : out_.buffers) {
      if (b.kind == BufferKind::kWorkspace && data_dependent(b.size_bytes)) b.kind = BufferKind::kRuntime;
    }
    // Fetched values computed by a call live in the caller's output tensor: the first fetch of a workspace
    // buffer takes it over; any other fetch copies (so does a fetch of a data-dependent size: its dims are known
    // only after the call).
    for (uint32_t k = 0; k < out_.outputs.size(); ++k) {
      ProgramOutput& o = out_.outputs[k];
      Buffer& b = out_.buffers[out_.values[o.value].buffer];
      if (b.kind == BufferKind::kWorkspace && b.values.size() >= 1 &&
          out_.values[o.value].bytes() == b.size_bytes) {
        b.kind = BufferKind::kOutput;
        b.role_index = k;
        b.last_call = calls == 0 ? 0 : calls - 1;
        o.copy = false;
      } else {
        o.copy = true;
        // Copied after the last call: its memory must stay untouched until then.
        if (b.kind == BufferKind::kWorkspace || b.kind == BufferKind::kRuntime) b.last_call = calls == 0 ? 0 : calls - 1;
      }
    }
  }

  const ir::Program& program_;
  const OpSet& ops_;
  const Analysis& analysis_;
  DiagnosticEngine& diags_;
  const LowerOptions& options_;
  LoweredProgram out_;

  std::vector<ir::OpId> order_;
  std::map<uint32_t, OpClass> class_;
  std::map<uint32_t, const opdef::PirOpSignature*> signature_;
  std::set<uint32_t> needed_;      // program value indices read by a live op or fetched
  std::set<uint32_t> live_calls_;  // op indices
  std::vector<uint32_t> value_index_;
  std::map<uint32_t, std::vector<ValueId>> split_of_;
};

}  // namespace

std::optional<LoweredProgram> lower_program(const ir::Program& program, const OpSet& ops, const Analysis& analysis,
                                            DiagnosticEngine& diags, const LowerOptions& options) {
  return Lowerer(program, ops, analysis, diags, options).run();
}

}  // namespace kforge::passes
