// The CUDA class's sizes that depend on data (docs/compile.md, "Sizes that depend on data"): nonzero and
// masked_select run as kforge_select.cuh's compactions, whose count comes back to the host (an 8-byte copy and a
// wait for the stream); then bind_s<id>() computes the sizes that need it and allocates the run-time device
// buffers, in the order and by the facts the CPU class binds them (codegen/data_symbols.h). What the CUDA target
// cannot bind is refused at the op: everything with --cuda-graph (a captured graph replays fixed sizes), dims read
// from a tensor's values by a shape rule that the host cannot run (cuda_shape_from_values.cpp runs those of
// kforge_shape_meta.h), and ops without a counting kernel.
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

std::set<uint32_t> CudaHostEmitter::check_data_symbols() {
  std::set<uint32_t> refused;
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim() || s.call == kNone || refused.contains(s.call)) continue;
    const passes::KernelCall& call = p_.calls.at(s.call);
    std::string why;
    if (cuda_.cuda_graph) {
      why = fmt::format("{} depends on the data{}: run() copies it back to the host in the middle of the run to size "
                        "what comes after, and a CUDA graph (--cuda-graph) replays the sizes it was captured with; "
                        "compile without --cuda-graph (the launches then run one by one)",
                        s.name, s.before_call ? " (it is read from a tensor's values)" : "");
    } else if (s.before_call && !passes::is_cuda_host_shape_rule(call.infer_meta)) {
      why = fmt::format("{} is read from a tensor's values by {}, which --target cuda does not run on the host (it "
                        "runs those of reshape, slice, expand, tile, full_with_tensor and arange: kforge_shape_meta.h; "
                        "--target cpu compiles it)",
                        s.name, call.infer_meta.empty() ? "no infer-meta" : call.infer_meta);
    } else if (s.before_call) {
      continue;
    } else if (!passes::is_cuda_compaction_op(call.op)) {
      why = fmt::format("{} depends on the data, and --target cuda has no kernel that counts it for '{}' yet "
                        "(nonzero, masked_select and unique have one; --target cpu compiles it)",
                        s.name, call.op);
    } else {
      continue;
    }
    refused.insert(s.call);
    diags_.error(call.loc, fmt::format("'{}': {}", call.pir_name, why));
  }
  return refused;
}

uint32_t CudaHostEmitter::gemm_data_symbol(const passes::GemmGroup& g) const {
  return data_.late_symbol(passes::SymShape{g.m, g.n, g.k, g.batch});
}

std::string CudaHostEmitter::dims_text(const passes::SymShape& dims) const {
  std::string out = "{";
  for (size_t d = 0; d < dims.size(); ++d) out += (d ? ", " : "") + size_(dims[d]);
  return out + "}";
}

std::optional<tmpl::Value> CudaHostEmitter::select_step(const passes::KernelCall& call, uint32_t index,
                                                       size_t launch, const std::string& description) {
  std::vector<uint32_t> in;
  for (const passes::KernelArg& a : call.args) {
    if (a.kind == passes::ArgKind::kTensor && a.value != kNone) in.push_back(a.value);
  }
  const uint32_t out = call.outputs.empty() || call.outputs[0].values.empty() ? kNone : call.outputs[0].values[0];
  const passes::Symbol* symbol = nullptr;
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim() && s.call == index && !s.before_call) symbol = &s;
  }
  const bool masked = call.op == "masked_select";
  if (call.op == "unique" && symbol != nullptr && in.size() == 1 && out != kNone) {
    return unique_step(call, in[0], *symbol, launch, description);
  }
  if (in.size() != (masked ? 2u : 1u) || out == kNone || symbol == nullptr) {
    diags_.error(call.loc, "--target cuda: " + call.op + " (" + call.pir_name + ") has no CUDA kernel for these "
                           "operands");
    return std::nullopt;
  }
  const passes::LoweredValue& x = p_.values[in[0]];
  const std::optional<std::string> type = element_type(x.dtype);
  if (!type || (masked && p_.values[in[1]].dtype != ir::DataType::kBool)) {
    diags_.error(call.loc, fmt::format("--target cuda: {} ({}) of {}{} has no CUDA kernel (bool, integer and float32 / "
                                       "float64 elements{} do)",
                                       call.op, call.pir_name, ir::dtype_name(x.dtype),
                                       masked ? " with a " + std::string(ir::dtype_name(p_.values[in[1]].dtype)) +
                                                    " mask"
                                              : "",
                                       masked ? " with a bool mask" : ""));
    return std::nullopt;
  }
  tmpl::List args = {typed_buffer(in[0], *type, true), dims_text(x.dims)};
  if (masked) {
    args.push_back(typed_buffer(in[1], "bool", true));
    args.push_back(dims_text(p_.values[in[1]].dims));
  }
  args.push_back(typed_buffer(out, masked ? *type : "int64_t", false));
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "select");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("function", call.op);
  step.set("args", tmpl::Value(std::move(args)));
  step.set("capacity", size_(symbol->bound));
  step.set("scratch_bytes", "kforge::cuda_select::scratch_bytes(" + size_(symbol->bound) + ")");
  step.set("symbol", "s" + std::to_string(symbol->id));
  step.set("meaning", symbol->name);
  select_steps_ = true;
  return step;
}

std::optional<tmpl::Value> CudaHostEmitter::unique_step(const passes::KernelCall& call, uint32_t x,
                                                       const passes::Symbol& symbol, size_t launch,
                                                       const std::string& description) {
  // out, indices, inverse, counts by name (kernels/ops.yaml); a missing or unread one is null.
  std::map<std::string, uint32_t> outputs;
  for (const passes::CallOutput& o : call.outputs) {
    if (!o.values.empty() && o.values[0] != kNone) outputs.emplace(o.name, o.values[0]);
  }
  auto value = [&](const char* name) { return outputs.contains(name) ? outputs.at(name) : kNone; };
  ir::DataType index_dtype = ir::DataType::kInt64;
  for (const char* name : {"indices", "inverse", "counts"}) {
    if (value(name) != kNone) index_dtype = p_.values[value(name)].dtype;
  }
  // Along an axis (axis=[a], the shape rule's only form with one): x as [outer, x.dims[a], inner].
  const passes::KernelArg* axis_arg = call.arg("axis");
  const bool along_axis = axis_arg != nullptr && axis_arg->kind == passes::ArgKind::kConstant &&
                          !axis_arg->constant.ints.empty();
  const passes::SymShape& xd = p_.values[x].dims;
  passes::SymExpr outer = 1, inner = 1;
  if (along_axis) {
    const int64_t rank = static_cast<int64_t>(xd.size());
    const int64_t a = axis_arg->constant.ints[0] < 0 ? axis_arg->constant.ints[0] + rank : axis_arg->constant.ints[0];
    if (axis_arg->constant.ints.size() != 1 || a < 0 || a >= rank) {
      diags_.error(call.loc, "--target cuda: unique (" + call.pir_name + ") along more than one axis, or an axis out "
                             "of range, has no CUDA kernel");
      return std::nullopt;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d < a) outer = outer * xd[static_cast<size_t>(d)];
      if (d > a) inner = inner * xd[static_cast<size_t>(d)];
    }
  }
  const std::optional<std::string> type = element_type(p_.values[x].dtype);
  if (!type || value("out") == kNone ||
      (index_dtype != ir::DataType::kInt32 && index_dtype != ir::DataType::kInt64)) {
    diags_.error(call.loc, fmt::format("--target cuda: unique ({}) of {} with {} indices has no CUDA kernel (bool, "
                                       "integer and float32 / float64 elements with int32 or int64 indices do)",
                                       call.pir_name, ir::dtype_name(p_.values[x].dtype), ir::dtype_name(index_dtype)));
    return std::nullopt;
  }
  const std::string index_type = index_dtype == ir::DataType::kInt32 ? "int32_t" : "int64_t";
  auto pointer = [&](const char* name, const std::string& t) {
    return value(name) == kNone ? "static_cast<" + t + "*>(nullptr)" : typed_buffer(value(name), t, false);
  };
  tmpl::List args = {typed_buffer(x, *type, true), pointer("out", *type), pointer("indices", index_type),
                     pointer("inverse", index_type), pointer("counts", index_type)};
  if (along_axis) {
    args.push_back("static_cast<int64_t>(" + size_(outer) + ")");
    args.push_back("static_cast<int64_t>(" + size_(inner) + ")");
  }
  const std::string capacity = size_(symbol.bound);
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "select");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("function", std::string(along_axis ? "unique_axis<" : "unique<") + *type + ", " + index_type + ">");
  step.set("args", tmpl::Value(std::move(args)));
  step.set("capacity", capacity);
  step.set("scratch_bytes", along_axis ? "kforge::cuda_select::unique_axis_scratch_bytes(" + capacity + ")"
                                       : "kforge::cuda_select::unique_scratch_bytes<" + *type + ">(" + capacity + ")");
  step.set("symbol", "s" + std::to_string(symbol.id));
  step.set("meaning", symbol.name);
  unique_steps_ = select_steps_ = true;
  return step;
}

tmpl::List CudaHostEmitter::data_symbols_value() {
  std::map<uint32_t, uint32_t> runtime_slot;  // kRuntime buffer index -> runtime_ slot
  for (const Buffer& b : p_.buffers) {
    if (b.kind == BufferKind::kRuntime) runtime_slot.emplace(b.index, static_cast<uint32_t>(runtime_slot.size()));
  }
  num_runtime_buffers_ = runtime_slot.size();
  tmpl::List out;
  tmpl::List known;  // input dims, then each data-dependent one as it is bound
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim()) known.push_back("s" + std::to_string(s.id));
  }
  for (uint32_t id : data_.bind_order()) {
    const passes::Symbol& s = p_.symbols[id];
    const std::string name = "s" + std::to_string(id);
    tmpl::List earlier = known;  // what bind_s<id>() reads from the bindings
    known.push_back(name);
    tmpl::Value sv = tmpl::Value::map();
    sv.set("id", static_cast<int64_t>(id));
    sv.set("name", name);
    sv.set("meaning", s.name);
    sv.set("call", static_cast<int64_t>(s.call));
    sv.set("before", s.before_call);
    sv.set("bound", comment_size(s.bound));
    sv.set("params", tmpl::Value(known));
    tmpl::List reads;
    for (const tmpl::Value& k : earlier) {
      tmpl::Value r = tmpl::Value::map();
      r.set("name", k);
      r.set("id", static_cast<int64_t>(std::stoul(k.as_string().substr(1))));
      reads.push_back(std::move(r));
    }
    sv.set("reads", tmpl::Value(std::move(reads)));
    tmpl::List runtime;
    for (const auto& [buffer, slot] : runtime_slot) {
      const Buffer& b = p_.buffers[buffer];
      if (data_.late_symbol(b.size_bytes) != id) continue;
      tmpl::Value rv = tmpl::Value::map();
      rv.set("slot", static_cast<int64_t>(slot));
      rv.set("buffer", static_cast<int64_t>(buffer));
      rv.set("bytes", size_(b.size_bytes));
      runtime.push_back(std::move(rv));
    }
    sv.set("runtime", tmpl::Value(std::move(runtime)));
    // The GEMMs whose M, N, K or batch it gives: checked against the kernels' int range here, not in run().
    sv.set("gemm_checks", gemm_.checks([&](const passes::GemmGroup& g) { return gemm_data_symbol(g) == id; }));
    out.push_back(std::move(sv));
  }
  return out;
}

tmpl::List CudaHostEmitter::late_output_copies() {
  tmpl::List copies;
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    const passes::ProgramOutput& out = p_.outputs[i];
    const passes::LoweredValue& v = p_.values[out.value];
    if (data_.late_symbol(v.dims) == kNone) continue;
    if (!out.copy) {  // lower_buffers.cpp copies every output sized by data
      diags_.error(out.loc, "--target cuda: output '" + out.name + "' is sized by data but not copied");
      continue;
    }
    tmpl::Value c = tmpl::Value::map();
    c.set("index", static_cast<int64_t>(i));
    c.set("name", out.name);
    c.set("dtype", runtime_dtype(v.dtype).value_or("kforge::DataType::kUndefined"));  // reported by the class context
    c.set("dims", dims_text(v.dims));
    c.set("from", value_binding(out.value));
    c.set("bytes", size_(v.bytes()));
    copies.push_back(std::move(c));
  }
  return copies;
}

void CudaHostEmitter::add_data_dependent_keys(tmpl::Value& ctx, tmpl::List data_symbols) {
  for (tmpl::Value& sv : data_symbols) {
    const uint32_t id = static_cast<uint32_t>(sv.find("id")->as_int());
    sv.set("sizes", sizes_.definitions_value([&](uint32_t k) { return data_.late_symbol(sizes_.expression(k)) == id; }));
  }
  ctx.set("data_symbols", tmpl::Value(std::move(data_symbols)));
  // The size table (every entry, bind_s<id>()'s too) and whether there is one: a dim of an input or of data.
  ctx.set("num_sizes", static_cast<int64_t>(sizes_.size()));
  ctx.set("dynamic", !p_.symbols.empty());
  ctx.set("late_outputs", std::any_of(p_.outputs.begin(), p_.outputs.end(), [&](const passes::ProgramOutput& o) {
            return data_.late_symbol(p_.values[o.value].dims) != kNone;
          }));
  ctx.set("num_runtime_buffers", static_cast<int64_t>(num_runtime_buffers_));
  ctx.set("select_steps", select_steps_);
}

}  // namespace kforge::codegen::cuda_program_internal
