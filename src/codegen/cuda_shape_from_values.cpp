// The CUDA class's dims read from a tensor's values (docs/compile.md, "Sizes that depend on data"): before the
// launch that runs a reshape / slice / expand / tile / full_with_tensor / arange whose shape argument is such a
// tensor, enqueue() copies that small integer tensor to the host (one wait for the stream), runs the op's shape
// rule on the host (runtime/kforge_shape_meta.h, the same code as the CPU kernel library's infer-meta) and binds
// each dim with bind_s<id>(), as the CPU class does before its call (codegen/data_symbols.h).
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

namespace {

// One of a shape read's arguments made on the host (data_dependent.j2's shape_read_step spells it): `kind`
// "constant" (const `type` `name` = `from`), "scalar_from_tensor" / "int_array_from_tensor" (a `type` from the
// copied-back tensor `from`), "int_array_from_tensors" (an IntArray from the tensors `items`), "tensor_list" (a
// TensorList of the tensors `items`), or "local" (a
// `type` `name` from the dims' expressions `items`, a Scalar where `scalar`: cpp_text's SymbolicLocal).
tmpl::Value convert(const std::string& kind, const std::string& name, const std::string& type,
                    const std::string& from) {
  tmpl::Value c = tmpl::Value::map();
  c.set("kind", kind);
  c.set("name", name);
  c.set("type", type);
  c.set("from", from);
  return c;
}

}  // namespace

std::string CudaHostEmitter::host_arg(uint32_t index, const passes::KernelArg& arg, tmpl::List& copies,
                                     tmpl::List& converts) {
  // The CUDA target plan refused every argument spelled here with no spelling (passes/cuda_plan_shape_read.cpp:
  // dtypes with no runtime name, constants with no literal, lists of tensors, values from the dims of other types).
  const std::string local = "kf_c" + std::to_string(index) + "_" + cpp_identifier(arg.name);
  // A tensor of the device as a host tensor: only its dtype and dims (a shape rule reads no more), or, `values`,
  // its elements copied back.
  auto host_tensor = [&](uint32_t v, const std::string& name, bool values) {
    const passes::LoweredValue& lv = p_.values[v];
    tmpl::Value t = tmpl::Value::map();
    t.set("name", name);
    t.set("dtype", *runtime_dtype(lv.dtype));
    t.set("dims", dims_text(lv.dims));
    t.set("from", values ? value_binding(v) : std::string());
    copies.push_back(std::move(t));
    return name;
  };
  // A rule that reads tensors' values itself (the interpolations' size tensors) gets those copied back.
  const bool values = passes::cuda_host_rule_reads_values(p_.calls[index].infer_meta, arg);
  switch (arg.kind) {
    case passes::ArgKind::kTensor: return (arg.optional ? "&" : "") + host_tensor(arg.value, local, values);
    case passes::ArgKind::kConstant: {
      std::string why;
      const std::string text = *constant_literal(arg.constant, &why);
      if (is_inline_constant(arg.type)) return text;
      converts.push_back(convert("constant", local, constant_type(arg.type), text));
      return local;
    }
    case passes::ArgKind::kTensorToAttr: {
      const bool scalar = opdef::is_scalar_type(arg.type);
      converts.push_back(convert(scalar ? "scalar_from_tensor" : "int_array_from_tensor", local,
                                 scalar ? "Scalar" : "IntArray", host_tensor(arg.value, local + "_values", true)));
      return local;
    }
    case passes::ArgKind::kTensorListToAttr: {
      tmpl::List items;
      for (size_t k = 0; k < arg.values.size(); ++k) {
        items.push_back(host_tensor(arg.values[k], fmt::format("{}_{}_values", local, k), true));
      }
      tmpl::Value c = convert("int_array_from_tensors", local, "IntArray", "");
      c.set("items", tmpl::Value(std::move(items)));
      converts.push_back(std::move(c));
      return local;
    }
    case passes::ArgKind::kSymbolic: {  // values computed from the dims at generation time
      std::vector<std::string> items;
      for (const passes::SymExpr& e : arg.symbolic) items.push_back(size_(e));
      const SymbolicArg symbolic = *symbolic_arg(arg.type, items, local);
      if (const std::optional<SymbolicLocal>& l = symbolic.local) {  // its local, spelled by data_dependent.j2
        tmpl::Value c = convert("local", l->name, l->type, "");
        c.set("items", tmpl::Value(tmpl::List(l->items.begin(), l->items.end())));
        c.set("scalar", l->scalar);
        converts.push_back(std::move(c));
      }
      return symbolic.text;
    }
    case passes::ArgKind::kTensorList: {  // a values rule's (the plan refused the others)
      if (arg.values.empty()) break;
      tmpl::List items;
      for (size_t k = 0; k < arg.values.size(); ++k) {
        items.push_back(host_tensor(arg.values[k], fmt::format("{}_{}_values", local, k), values));
      }
      tmpl::Value c = convert("tensor_list", local, "TensorList", "");
      c.set("items", tmpl::Value(std::move(items)));
      converts.push_back(std::move(c));
      return local;
    }
    case passes::ArgKind::kAbsentTensor: break;
  }
  return arg.type == opdef::ArgType::kTensorList ? "kforge::TensorList{}" : "nullptr";  // absent
}

tmpl::Value CudaHostEmitter::shape_read_step(uint32_t index) {
  const passes::KernelCall& call = p_.calls[index];
  tmpl::List copies, converts, args;
  for (const passes::KernelArg& arg : call.infer_meta_args) args.push_back(host_arg(index, arg, copies, converts));
  tmpl::List symbols;
  for (uint32_t id : data_.bind_order()) {
    const passes::Symbol& s = p_.symbols[id];
    if (s.call != index || !s.before_call) continue;
    tmpl::Value sv = tmpl::Value::map();  // of the call's one output (the plan refused more)
    sv.set("name", "s" + std::to_string(id));
    sv.set("axis", static_cast<int64_t>(s.axis));
    sv.set("meaning", s.name);
    symbols.push_back(std::move(sv));
  }
  tmpl::Value step = tmpl::Value::map();
  step.set("description", call_description(index));
  step.set("copies", tmpl::Value(std::move(copies)));
  step.set("converts", tmpl::Value(std::move(converts)));
  step.set("function", call.infer_meta);
  step.set("args", tmpl::Value(std::move(args)));
  step.set("meta_out", "kf_c" + std::to_string(index) + "_meta_out");
  step.set("symbols", tmpl::Value(std::move(symbols)));
  shape_meta_ = true;
  shape_meta_interp_ = shape_meta_interp_ || passes::is_cuda_host_values_rule(call.infer_meta);
  return step;
}

void CudaHostEmitter::build_shape_reads(const std::set<uint32_t>& refused) {
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim() || !s.before_call || refused.contains(s.call) || shape_reads_.contains(s.call)) continue;
    shape_reads_.emplace(s.call, shape_read_step(s.call));
  }
}

bool CudaHostEmitter::shape_read_ready_early(uint32_t c, const std::set<uint32_t>& bound) const {
  // Every data-dependent dim bound before c's (bind order is by call) must be bound by now, or earlier in the batch.
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim() && s.call < c && !bound.contains(s.call)) return false;
  }
  // The tensors it copies back are the program's inputs or constants (on the device before the first launch), and
  // their dims need no dim known from data (they are set before the batch's wait).
  for (const passes::KernelArg& a : p_.calls[c].infer_meta_args) {
    std::vector<uint32_t> values = a.values;
    if (a.kind == passes::ArgKind::kTensor || a.kind == passes::ArgKind::kTensorToAttr) values = {a.value};
    if (a.kind == passes::ArgKind::kSymbolic || a.kind == passes::ArgKind::kConstant) values.clear();
    for (uint32_t v : values) {
      if (p_.values[v].defined_by != kNone || data_.late_symbol(p_.values[v].dims) != kNone) return false;
    }
  }
  return true;
}

void CudaHostEmitter::place_shape_reads(const std::vector<uint32_t>& calls, std::set<uint32_t>& placed,
                                        tmpl::List& out) const {
  // Before the launch of `calls`: the reads of the calls it runs and of those before it; and, so that they share
  // its wait, the reads of later calls whose tensors are ready already (shape_read_ready_early), all in call order.
  const uint32_t first = calls.empty() ? static_cast<uint32_t>(p_.calls.size()) : calls.front();
  std::set<uint32_t> bound;  // the calls whose data-dependent dims are bound before the batch's binds end
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim() && (s.before_call ? placed.contains(s.call) : s.call < first)) bound.insert(s.call);
  }
  tmpl::List reads;
  for (const auto& [c, step] : shape_reads_) {
    const bool here = std::find(calls.begin(), calls.end(), c) != calls.end();
    if (placed.contains(c)) continue;
    if (c >= first && !here && (reads.empty() || !shape_read_ready_early(c, bound))) continue;
    placed.insert(c);
    bound.insert(c);
    reads.push_back(step);
  }
  if (reads.empty()) return;
  tmpl::Value batch = tmpl::Value::map();
  batch.set("kind", "shape_read");
  batch.set("reads", tmpl::Value(std::move(reads)));
  out.push_back(std::move(batch));
}

}  // namespace kforge::codegen::cuda_program_internal
