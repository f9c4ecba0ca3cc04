// The CUDA class's dims read from a tensor's values (docs/compile.md, "Sizes that depend on data"): before the
// launch that runs a reshape / slice / expand / tile / full_with_tensor / arange whose shape argument is such a
// tensor, enqueue() copies that small integer tensor to the host (one wait for the stream), runs the op's shape
// rule on the host (runtime/kforge_shape_meta.h, the same code as the CPU kernel library's infer-meta) and binds
// each dim with bind_s<id>(), as the CPU class does before its call (codegen/data_symbols.h).
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

std::optional<std::string> CudaHostEmitter::host_arg(const passes::KernelCall& call, uint32_t index,
                                                    const passes::KernelArg& arg, tmpl::List& copies,
                                                    tmpl::List& converts) {
  const std::string local = "kf_c" + std::to_string(index) + "_" + cpp_identifier(arg.name);
  auto problem = [&](const std::string& why) -> std::optional<std::string> {
    diags_.error(call.loc, fmt::format("'{}': its output dims are read from a tensor's values, and --target cuda "
                                       "cannot pass argument '{}' of {} to the shape rule on the host: {}",
                                       call.pir_name, arg.name, call.infer_meta, why));
    return std::nullopt;
  };
  // A tensor of the device as a host tensor: only its dtype and dims (a shape rule reads no more), or, `values`,
  // its elements copied back.
  auto host_tensor = [&](uint32_t v, const std::string& name, bool values) -> std::optional<std::string> {
    const passes::LoweredValue& lv = p_.values[v];
    const std::optional<std::string> dtype = runtime_dtype(lv.dtype);
    if (!dtype) return problem("its dtype " + std::string(ir::dtype_name(lv.dtype)) + " has no runtime name");
    tmpl::Value t = tmpl::Value::map();
    t.set("name", name);
    t.set("dtype", *dtype);
    t.set("dims", dims_text(lv.dims));
    t.set("from", values ? value_binding(v) : std::string());
    copies.push_back(std::move(t));
    return name;
  };
  switch (arg.kind) {
    case passes::ArgKind::kTensor: {
      std::optional<std::string> t = host_tensor(arg.value, local, false);
      return t ? (arg.optional ? "&" : "") + *t : t;
    }
    case passes::ArgKind::kAbsentTensor:
      return arg.type == opdef::ArgType::kTensorList ? "kforge::TensorList{}" : "nullptr";
    case passes::ArgKind::kConstant: {
      std::string why;
      const std::optional<std::string> text = constant_literal(arg.constant, &why);
      if (!text) return problem(why);
      if (is_inline_constant(arg.type)) return *text;
      converts.push_back("const " + constant_type(arg.type) + " " + local + " = " + *text + ";");
      return local;
    }
    case passes::ArgKind::kTensorToAttr: {
      const bool scalar = opdef::is_scalar_type(arg.type);
      if (!scalar && arg.type != opdef::ArgType::kIntArray) return problem("it is neither an IntArray nor a Scalar");
      if (!host_tensor(arg.value, local + "_values", true)) return std::nullopt;
      converts.push_back(std::string(scalar ? "kforge::Scalar " : "kforge::IntArray ") + local + ";");
      converts.push_back(fmt::format("KFORGE_RETURN_IF_ERROR(kforge::{}({}_values, &{}));",
                                     scalar ? "scalar_from_tensor" : "int_array_from_tensor", local, local));
      return local;
    }
    case passes::ArgKind::kTensorListToAttr: {
      if (arg.type != opdef::ArgType::kIntArray) return problem("it is a list of tensors but no IntArray");
      std::string items;
      for (size_t k = 0; k < arg.values.size(); ++k) {
        const std::string name = fmt::format("{}_{}_values", local, k);
        if (!host_tensor(arg.values[k], name, true)) return std::nullopt;
        items += (k ? ", &" : "&") + name;
      }
      converts.push_back(fmt::format("const kforge::Tensor* const {}_list[] = {{{}}};", local, items));
      converts.push_back("kforge::IntArray " + local + ";");
      converts.push_back(fmt::format("KFORGE_RETURN_IF_ERROR(kforge::int_array_from_tensors(kforge::TensorList{{{}_list, "
                                     "{}}}, &{}));",
                                     local, arg.values.size(), local));
      return local;
    }
    case passes::ArgKind::kTensorList:
      return problem("it is a list of tensors");
    case passes::ArgKind::kSymbolic: {  // values computed from the dims at generation time
      std::vector<std::string> items, decls;
      for (const passes::SymExpr& e : arg.symbolic) items.push_back(size_(e));
      std::optional<std::string> text = symbolic_arg_text(arg.type, items, local, decls);
      for (const std::string& d : decls) converts.push_back(d);
      return text ? text : problem("its values come from the dims in a way the generated code cannot express");
    }
  }
  return std::nullopt;
}

std::optional<tmpl::Value> CudaHostEmitter::shape_read_step(uint32_t index) {
  const passes::KernelCall& call = p_.calls[index];
  tmpl::List copies, converts, args;
  for (const passes::KernelArg& arg : call.infer_meta_args) {
    std::optional<std::string> text = host_arg(call, index, arg, copies, converts);
    if (!text) return std::nullopt;
    args.push_back(*text);
  }
  tmpl::List symbols;
  for (uint32_t id : data_.bind_order()) {
    const passes::Symbol& s = p_.symbols[id];
    if (s.call != index || !s.before_call) continue;
    if (call.outputs.size() != 1 || call.outputs[0].is_list) {
      diags_.error(call.loc, "'" + call.pir_name + "': its output dims are read from a tensor's values, which "
                             "--target cuda does for one output only");
      return std::nullopt;
    }
    tmpl::Value sv = tmpl::Value::map();
    sv.set("name", "s" + std::to_string(id));
    sv.set("axis", static_cast<int64_t>(s.axis));
    sv.set("meaning", s.name);
    symbols.push_back(std::move(sv));
  }
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "shape_read");
  step.set("description", call_description(index));
  step.set("copies", tmpl::Value(std::move(copies)));
  step.set("converts", tmpl::Value(std::move(converts)));
  step.set("function", call.infer_meta);
  step.set("args", tmpl::Value(std::move(args)));
  step.set("meta_out", "kf_c" + std::to_string(index) + "_meta_out");
  step.set("symbols", tmpl::Value(std::move(symbols)));
  shape_meta_ = true;
  return step;
}

void CudaHostEmitter::build_shape_reads(const std::set<uint32_t>& refused) {
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim() || !s.before_call || refused.contains(s.call) || shape_reads_.contains(s.call)) continue;
    if (std::optional<tmpl::Value> step = shape_read_step(s.call)) shape_reads_.emplace(s.call, std::move(*step));
  }
}

void CudaHostEmitter::place_shape_reads(const std::vector<uint32_t>& calls, std::set<uint32_t>& placed,
                                        tmpl::List& out) const {
  // Before the launch of `calls`: the reads of the calls it runs and of those before it.
  const uint32_t first = calls.empty() ? static_cast<uint32_t>(p_.calls.size()) : calls.front();
  for (const auto& [c, step] : shape_reads_) {
    const bool here = std::find(calls.begin(), calls.end(), c) != calls.end();
    if (placed.contains(c) || (c >= first && !here)) continue;
    placed.insert(c);
    // The tensors it copies back must be written by launches already enqueued, not by the fused group it precedes.
    auto group = [&](uint32_t call) { return call < plan_.call_group.size() ? plan_.call_group[call] : kNone; };
    for (const passes::KernelArg& a : p_.calls[c].infer_meta_args) {
      if (a.kind != passes::ArgKind::kTensorToAttr && a.kind != passes::ArgKind::kTensorListToAttr) continue;
      std::vector<uint32_t> values = a.values;
      if (a.kind == passes::ArgKind::kTensorToAttr) values = {a.value};
      for (uint32_t v : values) {
        const uint32_t producer = p_.values[v].defined_by;
        if (producer != kNone && group(c) != kNone && group(producer) == group(c)) {
          diags_.error(p_.calls[c].loc, fmt::format("'{}': its output dims are read from the values of '{}', which "
                                                    "--target cuda computes in the same launch (a fused group); "
                                                    "--target cpu compiles it",
                                                    p_.calls[c].pir_name, a.name));
        }
      }
    }
    out.push_back(step);
  }
}

}  // namespace kforge::codegen::cuda_program_internal
