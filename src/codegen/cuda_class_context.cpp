#include "codegen/cuda_class_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "codegen/cpp_text.h"
#include "codegen/data_symbols.h"
#include "output/banner.h"

namespace kforge::codegen {

using tmpl::Value;

std::string cuda_input_ident(const passes::LoweredProgram& program, size_t index) {
  return cpp_identifier(program.inputs.at(index).name);
}

std::string cuda_output_ident(const passes::LoweredProgram& program, size_t index) {
  return cpp_identifier(program.outputs.at(index).name) + "_out";
}

std::string cuda_shape_text(const passes::SymShape& dims) {
  return bracket_list(dims, [](const passes::SymExpr& d) { return d.is_constant() ? cpp_int_expr(d) : "?"; });
}

bool cuda_eager_copy(const passes::LoweredProgram& program, size_t index) {
  const passes::ProgramOutput& o = program.outputs.at(index);
  return o.copy && DataSymbols(program).late_symbol(program.values[o.value].dims) == passes::kNone;
}

namespace {

// The eager copies (cuda_eager_copy) among the first `count` outputs of `program`.
size_t eager_copies(const passes::LoweredProgram& program, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n = cuda_eager_copy(program, i) ? n + 1 : n;
  return n;
}

}  // namespace

size_t cuda_binding_slots(const passes::LoweredProgram& program) {
  return program.buffers.size() + eager_copies(program, program.outputs.size());
}

size_t cuda_copy_slot(const passes::LoweredProgram& program, size_t index) {
  return program.buffers.size() + eager_copies(program, index);
}

namespace {

Value tensor_entry(const std::string& name, ir::DataType dtype, const passes::SymShape& dims) {
  Value v = Value::map();
  v.set("name", name);
  v.set("dtype_name", std::string(ir::dtype_name(dtype)));
  v.set("shape_text", cuda_shape_text(dims));
  return v;
}

// "{s0, sizes[3]}": the dims as run() spells them.
std::string dims_list(const passes::SymShape& dims, const SizeExpr& size) { return braced_list(dims, size); }

// What run() and bind_parameter() compare a tensor `x` with: dtype, rank, place, then each dim known at
// generation time (`dynamic_nonnegative`: a dim known only at run time must not be negative), then `more`.
std::string mismatch_condition(const std::string& x, const std::string& dtype, const passes::SymShape& dims,
                               bool dynamic_nonnegative, const std::vector<std::string>& more = {}) {
  std::vector<std::string> mismatches = {fmt::format("{}.dtype != {}", x, dtype),
                                         fmt::format("{}.ndim != {}", x, dims.size()),
                                         x + ".place.backend != kforge::Backend::kGPU"};
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].is_constant()) mismatches.push_back(fmt::format("{}.dims[{}] != {}", x, d, cpp_int_expr(dims[d])));
    else if (dynamic_nonnegative) mismatches.push_back(fmt::format("{}.dims[{}] < 0", x, d));
  }
  mismatches.insert(mismatches.end(), more.begin(), more.end());
  return fmt::format("{}", fmt::join(mismatches, " || "));
}

// The symbol that dim d of input i shares with another input's dim (the two met in a broadcast and were unified:
// AnalysisOptions::symbol_aliases), or null when the dim is static or its symbol is its own.
const passes::Symbol* shared_symbol(const passes::LoweredProgram& p, size_t i, size_t d) {
  uint32_t id = 0;
  if (!p.values[p.inputs[i].value].dims[d].is_symbol(&id) || id >= p.symbols.size()) return nullptr;
  const passes::Symbol& owner = p.symbols[id];
  return owner.input == i && owner.axis == d ? nullptr : &owner;
}

// "x.dims[d] != y.dims[a]" for every dim of input i that shares another input's symbol, so that run() refuses
// unequal ones.
std::vector<std::string> shared_symbol_conditions(const passes::LoweredProgram& p, size_t i) {
  std::vector<std::string> conditions;
  for (size_t d = 0; d < p.values[p.inputs[i].value].dims.size(); ++d) {
    if (const passes::Symbol* owner = shared_symbol(p, i, d)) {
      conditions.push_back(fmt::format("{}.dims[{}] != {}.dims[{}]", cuda_input_ident(p, i), d,
                                       cuda_input_ident(p, owner->input), owner->axis));
    }
  }
  return conditions;
}

// Input i's shape in run()'s message: "[?, 12, 64]", with a dim that shares another input's symbol named after
// that dim: "[tgt.dims[0], 12, 64]" (the header's list of inputs keeps "?": tools read it).
std::string input_shape_text(const passes::LoweredProgram& p, size_t i) {
  const passes::SymShape& dims = p.values[p.inputs[i].value].dims;
  std::vector<std::string> shown;
  for (size_t d = 0; d < dims.size(); ++d) {
    const passes::Symbol* owner = shared_symbol(p, i, d);
    shown.push_back(owner != nullptr ? owner->name : dims[d].is_constant() ? cpp_int_expr(dims[d]) : "?");
  }
  return fmt::format("[{}]", fmt::join(shown, ", "));
}

Value gemm_entry(const CudaGemmSummary& gemm) {
  if (gemm.count == 0) return Value(false);
  Value v = Value::map();
  v.set("count", static_cast<int64_t>(gemm.count));
  v.set("types", gemm.types);
  v.set("kernels", gemm.kernels);
  v.set("multi_kernel", gemm.multi_kernel);
  v.set("float32", gemm.float32);
  return v;
}

}  // namespace

Value build_cuda_class_context(const passes::LoweredProgram& p, const passes::FusionPlan& plan,
                               const ProgramFilesOptions& options, const CudaClassParts& parts) {
  // The runtime's enumerator of a tensor's dtype (the CUDA target plan refused a dtype it has none for:
  // passes::plan_cuda_tensor_dtypes).
  auto dtype_of = [](ir::DataType dtype) { return runtime_dtype(dtype).value_or("kforge::DataType::kUndefined"); };
  const std::string& cls = options.codegen.class_name;
  Value ctx = Value::map();
  ctx.set("class_name", cls);
  ctx.set("header", cls + ".h");
  set_namespace_keys(ctx, options.codegen);
  ctx.set("guard", "KFORGE_GENERATED_" + namespace_guard_prefix(options.codegen) + cls + "_CUDA_H_");
  ctx.set("source", banner_input_path(options.codegen.program_path, options.codegen.output_dir + "/" + cls + ".h"));
  ctx.set("program_name", p.name);
  ctx.set("num_launches", static_cast<int64_t>(plan.groups.size() + parts.library_calls));
  ctx.set("cuda_graph", parts.cuda_graph);
  ctx.set("constants", !p.constants.empty());
  // std::array<T, 0> would do, but the generated code has always sized them at least 1.
  ctx.set("num_buffers", static_cast<int64_t>(std::max<size_t>(1, cuda_binding_slots(p))));
  ctx.set("num_symbols", static_cast<int64_t>(std::max<size_t>(1, p.symbols.size())));
  ctx.set("gemm", gemm_entry(parts.gemm));
  ctx.set("rows", parts.row_dispatchers);
  ctx.set("convs", static_cast<int64_t>(parts.convs));
  ctx.set("half_convs", parts.half_convs);
  ctx.set("pools", static_cast<int64_t>(parts.pools));

  const DataSymbols data(p);
  tmpl::List inputs, parameters, outputs, run_params, run_generic_args;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const passes::ProgramInput& in = p.inputs[i];
    const passes::SymShape& dims = p.values[in.value].dims;
    Value v = tensor_entry(in.name, in.dtype, dims);
    v.set("ident", cuda_input_ident(p, i));
    // What kInputSpecs says of it (generic callers: tools/run-model), as the CPU class does.
    v.set("dtype", dtype_of(in.dtype));
    v.set("rank", static_cast<int64_t>(dims.size()));
    v.set("spec_dims", cpp_known_dims(dims));
    v.set("condition", mismatch_condition(cuda_input_ident(p, i), dtype_of(in.dtype),
                                          dims, true, shared_symbol_conditions(p, i)));
    v.set("required_shape_text", input_shape_text(p, i));
    inputs.push_back(std::move(v));
    run_params.push_back("const kforge::Tensor& " + cuda_input_ident(p, i));
    run_generic_args.push_back("*inputs.items[" + std::to_string(i) + "]");
  }
  std::map<std::string, size_t> parameter_index;  // name -> index, in name order (the .pdiparams order)
  bool converted_parameters = false;
  for (const passes::ProgramParameter& pa : p.parameters) {
    const passes::LoweredValue& v = p.values[pa.value];
    const std::string dtype = dtype_of(v.dtype);
    Value e = tensor_entry(pa.name, v.dtype, v.dims);
    e.set("condition", mismatch_condition("value", dtype, v.dims, false));
    // What the Python module's parameter table (kforge::ParameterSpec) says of it, as the CPU context does.
    e.set("dtype", dtype);
    // What a .pdiparams file holds: the dtype before --precision converted it (load_parameters rounds it then).
    const ir::DataType stored = p.file_dtype(pa);
    e.set("stored_dtype", stored == v.dtype ? dtype : dtype_of(stored));
    e.set("stored_dtype_name", std::string(ir::dtype_name(stored)));
    converted_parameters = converted_parameters || stored != v.dtype;
    e.set("rank", static_cast<int64_t>(v.dims.size()));
    e.set("dims", cpp_known_dims(v.dims));
    parameter_index.emplace(pa.name, parameters.size());
    parameters.push_back(std::move(e));
  }
  tmpl::List file_order;
  for (const auto& [name, index] : parameter_index) file_order.push_back(Value(static_cast<int64_t>(index)));
  ctx.set("parameter_file_order", Value(std::move(file_order)));
  ctx.set("converted_parameters", converted_parameters);
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const passes::LoweredValue& v = p.values[p.outputs[i].value];
    Value o = tensor_entry(p.outputs[i].name, v.dtype, v.dims);
    o.set("index", static_cast<int64_t>(i));
    o.set("ident", cuda_output_ident(p, i));
    o.set("dtype", dtype_of(v.dtype));
    o.set("dims", dims_list(v.dims, parts.size));
    // Sized by data: allocated once its dims are known, after the last launch (cuda_data_dependent.cpp).
    o.set("late", data.late_symbol(v.dims) != passes::kNone);
    outputs.push_back(std::move(o));
    run_params.push_back("kforge::Tensor* " + cuda_output_ident(p, i));
    run_generic_args.push_back("outputs.items[" + std::to_string(i) + "]");
  }
  ctx.set("inputs", Value(std::move(inputs)));
  ctx.set("parameters", Value(std::move(parameters)));
  ctx.set("outputs", Value(std::move(outputs)));
  tmpl::List symbols;
  for (const passes::Symbol& sym : p.symbols) {
    if (!sym.is_input_dim()) continue;  // a data-dependent one: bound in enqueue() (cuda_data_dependent.cpp)
    Value v = Value::map();
    v.set("id", static_cast<int64_t>(sym.id));
    v.set("init", cuda_input_ident(p, sym.input) + ".dims[" + std::to_string(sym.axis) + "]");
    symbols.push_back(std::move(v));
  }
  ctx.set("symbols", Value(std::move(symbols)));
  ctx.set("run_params", Value(std::move(run_params)));
  ctx.set("run_generic_args", Value(std::move(run_generic_args)));
  return ctx;
}

}  // namespace kforge::codegen
