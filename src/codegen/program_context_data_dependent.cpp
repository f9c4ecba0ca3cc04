// The CPU program context's data-dependent symbols: sizes known only once a call has run (or its infer-meta before
// it), bound in the order codegen/data_symbols.h gives (shared with the CUDA class), the infer-meta call that gives
// them (run_time_meta), and the values, buffers and sizes laid out once each is known (data_symbols_value,
// add_late_sizes).
#include "codegen/program_context_builder.h"

namespace kforge::codegen::program_context_internal {

std::optional<Value> ContextBuilder::run_time_meta(const KernelCall& call, uint32_t index, const List& args,
                                                   List& pre) {
  const bool needed = std::any_of(p_.symbols.begin(), p_.symbols.end(), [&](const passes::Symbol& s) {
    return !s.is_input_dim() && s.before_call && s.call == index;
  });
  if (!needed) return std::nullopt;
  if (call.infer_meta.empty()) {
    error(call.loc, call.pir_name + ": its output dims are read from a tensor at run time, but its op has no "
                    "infer_meta function to compute them");
    return std::nullopt;
  }
  // The infer-meta's arguments: the kernel's own where they are the same (a shape converted from a tensor once).
  std::map<std::string, std::string> by_name;
  for (size_t i = 0; i < call.args.size(); ++i) by_name[call.args[i].name] = args[i].as_string();
  List meta_args, params, outputs;
  for (const KernelArg& arg : call.infer_meta_args) {
    auto it = by_name.find(arg.name);
    meta_args.push_back(it != by_name.end() ? it->second : bind_arg(call, index, arg, pre));
    params.push_back(param_type(arg.type, arg.optional) + " " + cpp_identifier(arg.name));
  }
  for (const passes::CallOutput& out : call.outputs) {
    if (out.is_list) {
      error(call.loc, call.pir_name + ": its output dims are read from a tensor at run time, which kforge does not "
                      "do for a list of outputs ('" + out.name + "')");
      return std::nullopt;
    }
    outputs.push_back(meta_output(index, out.name));
    meta_args.push_back("&" + meta_output(index, out.name));
    params.push_back("kforge::Tensor* " + cpp_identifier(out.name));
  }
  if (!meta_decls_.contains(call.infer_meta)) {
    Value decl = Value::map();
    decl.set("name", call.infer_meta);
    decl.set("params", Value(std::move(params)));
    meta_decls_[call.infer_meta] = std::move(decl);
  }
  Value meta = Value::map();
  meta.set("function", call.infer_meta);
  meta.set("args", Value(std::move(meta_args)));
  meta.set("outputs", Value(std::move(outputs)));
  return meta;
}

List ContextBuilder::data_symbols_value() {
  const std::vector<uint32_t> order = data_.bind_order();  // the data-dependent symbols that are bound
  std::map<uint32_t, uint32_t> runtime_slot;  // kRuntime buffer index -> runtime_ slot
  for (const Buffer& b : p_.buffers) {
    // Only buffers of values the class holds: one whose values all live in a fused loop's registers needs none.
    const bool held = std::any_of(b.values.begin(), b.values.end(), [&](uint32_t v) { return slots_.contains(v); });
    if (b.kind == BufferKind::kRuntime && held) runtime_slot.emplace(b.index, static_cast<uint32_t>(runtime_slot.size()));
  }
  List out;
  std::vector<std::string> known;  // input dims, then each data-dependent one as it is bound
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim()) known.push_back("s" + std::to_string(s.id));
  }
  for (uint32_t id : order) {
    const passes::Symbol& s = p_.symbols[id];
    const std::string name = "s" + std::to_string(id);
    known.push_back(name);
    Value sv = Value::map();
    sv.set("id", static_cast<int64_t>(id));
    sv.set("name", name);
    sv.set("meaning", s.name);
    sv.set("call", static_cast<int64_t>(s.call));
    sv.set("before", s.before_call);
    if (s.before_call) {
      // From the infer-meta's output (run_time_meta) that is this value.
      std::string output;
      for (const passes::CallOutput& o : p_.calls.at(s.call).outputs) {
        if (std::find(o.values.begin(), o.values.end(), s.value) != o.values.end()) output = o.name;
      }
      sv.set("init", meta_output(s.call, output) + ".dims[" + std::to_string(s.axis) + "]");
      sv.set("bound", "");
    } else {
      sv.set("init", expr(s.value) + ".dims[" + std::to_string(s.axis) + "]");
      sv.set("bound", sym(s.bound));
    }
    List params;
    for (const std::string& k : known) params.push_back(k);
    sv.set("params", Value(std::move(params)));
    List runtime;
    for (const auto& [buffer, slot] : runtime_slot) {
      const Buffer& b = p_.buffers[buffer];
      if (late_symbol(b.size_bytes) != id) continue;
      Value rv = Value::map();
      rv.set("slot", static_cast<int64_t>(slot));
      rv.set("bytes", sym(b.size_bytes));
      runtime.push_back(std::move(rv));
    }
    sv.set("runtime", Value(std::move(runtime)));
    List values;
    for (const auto& [index, slot] : slots_) {
      const LoweredValue& v = p_.value(index);
      const Buffer& b = p_.buffers.at(v.buffer);
      // A value sized by a data-dependent symbol, or a data-dependent result whose capacity one sizes (nonzero over
      // the rois of distribute_fpn_proposals), laid out once both its dims and its buffer are known: a buffer the
      // memory plan shares with a value sized by a later symbol (a reshape of nonzero's gather_nd) is reserved
      // only then.
      const bool late = is_late(v);
      if (!late && (v.capacity.empty() || b.kind != BufferKind::kRuntime)) continue;
      passes::SymShape laid_out = late ? v.dims : v.capacity;
      if (b.kind == BufferKind::kRuntime) laid_out.push_back(b.size_bytes);
      if (late_symbol(laid_out) != id) continue;
      Value vv = Value::map();
      vv.set("slot", static_cast<int64_t>(slot));
      vv.set("dtype", dtype_of(v.dtype, v.loc, "value " + v.source_id));
      vv.set("dims", dims_init(is_late(v) ? v.dims : v.capacity));
      std::string data = "nullptr";  // an output's memory: run() points it at the caller's tensor
      if (b.kind == BufferKind::kRuntime) {
        data = "runtime_[" + std::to_string(runtime_slot.at(b.index)) + "].data" +
               (v.buffer_offset.constant() == std::optional<int64_t>(0) ? "" : " + " + sym(v.buffer_offset));
      } else if (b.kind == BufferKind::kWorkspace) {
        data = "workspace_ + " + sym(b.offset + v.buffer_offset);
      }
      vv.set("data", data);
      vv.set("comment", v.label() + ": " + std::string(ir::dtype_name(v.dtype)) +
                            (v.defined_by != passes::kNone ? ", " + p_.calls.at(v.defined_by).pir_name : ""));
      values.push_back(std::move(vv));
    }
    sv.set("values", Value(std::move(values)));
    out.push_back(std::move(sv));
  }
  return out;
}

void ContextBuilder::add_late_sizes(List& data_symbols) {
  for (Value& sv : data_symbols) {
    const uint32_t id = static_cast<uint32_t>(sv.find("id")->as_int());
    sv.set("sizes", sizes_.definitions_value([&](uint32_t k) { return late_symbol(sizes_.expression(k)) == id; }));
  }
}

}  // namespace kforge::codegen::program_context_internal
