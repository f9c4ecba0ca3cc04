// The template context of `kforge compile --target cpu` (program_context.h): ContextBuilder::build, which assembles
// it, and the calls: each kernel call's arguments, attributes, kernel contexts and declarations. The tables of
// tensors are in program_context_values.cpp, the data-dependent symbols in program_context_data_dependent.cpp.
#include "codegen/program_context.h"

#include <algorithm>
#include <numeric>

#include "codegen/program_context_builder.h"
#include "support/text.h"

namespace kforge::codegen {

namespace program_context_internal {

namespace {

char upper_ascii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// One statement a kernel call needs before it (program.cc.j2's `call.pre`): its kind, and the parts the template
// spells it with.
//   declare  TYPE NAME;                                  check   KFORGE_CALL(INDEX, CALL);
//   ints     const std::vector<int> NAME(FROM...);       local   const TYPE NAME{ITEMS}; (a SymbolicLocal)
//   relayout init_tensor(TENSOR, DTYPE, DIMS, ...);      pointers  a named array of tensor pointers
Value prep_entry(const std::string& kind, std::initializer_list<std::pair<const char*, Value>> parts) {
  Value v = Value::map();
  v.set("kind", kind);
  for (const auto& [key, value] : parts) v.set(key, value);
  return v;
}

// `const kforge::Tensor* const NAME[] = {ITEMS};` (`const_tensors`) or `kforge::Tensor* const NAME[] = {ITEMS};`.
Value pointer_array(const std::string& name, bool const_tensors, List items) {
  return prep_entry("pointers", {{"name", name}, {"const_tensors", const_tensors}, {"items", Value(std::move(items))}});
}

}  // namespace

void ContextBuilder::add_symbols(Value& ctx) {
  List symbols;
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim()) continue;  // data_symbols_value()
    Value sv = Value::map();
    const std::string input = input_idents_.at(s.input);
    sv.set("name", "s" + std::to_string(s.id));
    sv.set("id", static_cast<int64_t>(s.id));
    sv.set("input", input);
    sv.set("axis", static_cast<int64_t>(s.axis));
    sv.set("meaning", p_.inputs.at(s.input).name + ".dims[" + std::to_string(s.axis) + "]");
    sv.set("init", input + ".dims[" + std::to_string(s.axis) + "]");
    symbols.push_back(std::move(sv));
  }
  ctx.set("symbols", Value(std::move(symbols)));
}

std::string ContextBuilder::context_name(ir::DataType dtype, SourceLoc loc) {
  // "kCtx" and the dtype's name in camel case: float32 -> kCtxFloat32, the parts between '_' capitalised.
  std::string camel(ir::dtype_name(dtype));
  for (size_t i = 0; i < camel.size(); ++i) {
    if (i == 0 || camel[i - 1] == '_') camel[i] = upper_ascii(camel[i]);
  }
  std::erase(camel, '_');
  const std::string name = "kCtx" + camel;
  contexts_[name] = dtype_of(dtype, loc, "a kernel call");
  return name;
}

std::string ContextBuilder::named_attr(const KernelCall& call, const KernelArg& arg, const std::string& init) {
  // Shared only by the same argument of the same kernel (the strides of every conv2d, say), so each name
  // says what it is.
  const std::string type = constant_type(arg.type);
  const std::string key = call.kernel + "." + arg.name + ": " + type + " = " + init;
  auto it = attr_by_text_.find(key);
  if (it != attr_by_text_.end()) return it->second;
  const std::string name = attr_names_.take("kAttr_" + call.kernel + "_" + arg.name);
  attr_by_text_[key] = name;
  Value av = Value::map();
  av.set("name", name);
  av.set("type", type);
  av.set("init", init);
  attrs_.push_back(std::move(av));
  return name;
}


std::string ContextBuilder::bind_arg(const KernelCall& call, uint32_t index, const KernelArg& arg, List& pre) {
  const std::string local = "kf_c" + std::to_string(index) + "_" + cpp_identifier(arg.name);
  const std::string call_index = std::to_string(index);
  auto tensor_list = [&](const std::vector<uint32_t>& values, const std::string& name) {
    List items;
    for (uint32_t v : values) items.push_back("&" + expr(v));
    pre.push_back(pointer_array(name, true, std::move(items)));
    return "kforge::TensorList{" + name + ", " + std::to_string(values.size()) + "}";
  };
  switch (arg.kind) {
    case ArgKind::kTensor: return (arg.optional ? "&" : "") + expr(arg.value);
    case ArgKind::kAbsentTensor: return arg.type == opdef::ArgType::kTensorList ? "kforge::TensorList{}" : "nullptr";
    case ArgKind::kTensorList:
      if (arg.values.empty()) return "kforge::TensorList{}";
      return tensor_list(arg.values, local + "_list");
    case ArgKind::kConstant: {
      std::string why;
      std::optional<std::string> text = constant_literal(arg.constant, &why);
      if (!text) {
        error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " is " + why +
                            ", which the generated code cannot express");
        return "{}";
      }
      return is_inline_constant(arg.type) ? *text : named_attr(call, arg, *text);
    }
    case ArgKind::kTensorToAttr:
    case ArgKind::kTensorListToAttr: {
      const bool is_scalar = opdef::is_scalar_type(arg.type);
      const bool is_int_array = arg.type == opdef::ArgType::kIntArray || arg.type == opdef::ArgType::kIntList ||
                                arg.type == opdef::ArgType::kInt64List;
      if (!is_scalar && !is_int_array) {
        error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " comes from a tensor, which only IntArray "
                        "and Scalar arguments can");
        return "{}";
      }
      if (arg.kind == ArgKind::kTensorListToAttr && is_scalar) {
        error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " is a Scalar made of a list of tensors");
        return "{}";
      }
      const std::string holder = is_scalar ? "kforge::Scalar" : "kforge::IntArray";
      pre.push_back(prep_entry("declare", {{"type", holder}, {"name", local}}));
      std::string source;
      if (arg.kind == ArgKind::kTensorToAttr) {
        source = (is_scalar ? "kforge::scalar_from_tensor(" : "kforge::int_array_from_tensor(") + expr(arg.value) + ", &" +
                 local + ")";
      } else {
        source = "kforge::int_array_from_tensors(" + tensor_list(arg.values, local + "_list") + ", &" + local + ")";
      }
      pre.push_back(prep_entry("check", {{"index", call_index}, {"call", source}}));
      if (arg.type == opdef::ArgType::kIntList) {
        pre.push_back(prep_entry("ints", {{"name", local + "_ints"}, {"from", local}}));
        return local + "_ints";
      }
      if (arg.type == opdef::ArgType::kInt64List) return local + ".values()";
      return local;
    }
    case ArgKind::kSymbolic: {
      std::vector<std::string> items;
      for (const SymExpr& e : arg.symbolic) items.push_back(sym(e));
      if (std::optional<SymbolicArg> bound = symbolic_arg(arg.type, items, local)) {
        if (const std::optional<SymbolicLocal>& l = bound->local) {
          pre.push_back(prep_entry("local", {{"type", l->type},
                                             {"name", l->name},
                                             {"items", Value(List(l->items.begin(), l->items.end()))},
                                             {"scalar", l->scalar}}));
        }
        return bound->text;
      }
      error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " depends on the input dims in a way the "
                      "generated code cannot express");
      return "{}";
    }
  }
  return "{}";
}

void ContextBuilder::declare_kernel(const KernelCall& call) {
  if (kernel_decls_.count(call.kernel) != 0) return;
  List params;
  params.push_back("const kforge::KernelContext& ctx");
  for (const KernelArg& arg : call.args) {
    params.push_back(param_type(arg.type, arg.optional) + " " + cpp_identifier(arg.name));
  }
  for (const passes::CallOutput& out : call.outputs) {
    params.push_back(std::string(out.is_list ? "kforge::MutableTensorList " : "kforge::Tensor* ") + cpp_identifier(out.name));
  }
  Value decl = Value::map();
  decl.set("name", call.kernel);
  decl.set("params", Value(std::move(params)));
  kernel_decls_[call.kernel] = decl;
  kernel_order_.push_back(call.kernel);
}

Value ContextBuilder::call_context(const KernelCall& call, uint32_t index) {
  declare_kernel(call);
  List pre, args, traces;
  for (const KernelArg& arg : call.args) args.push_back(bind_arg(call, index, arg, pre));
  for (const passes::CallOutput& out : call.outputs) {
    std::vector<std::string> ptrs;
    for (uint32_t v : out.values) {
      // A data-dependent result: its kernel wrote the last run's count into its dims; lay it out for the most again.
      if (v != passes::kNone && !p_.value(v).capacity.empty()) {
        const LoweredValue& value = p_.value(v);
        pre.push_back(prep_entry("relayout", {{"tensor", expr(v)},
                                              {"dtype", dtype_of(value.dtype, value.loc, "value " + value.source_id)},
                                              {"dims", dims_init(value.capacity)}}));
      }
      if (v == passes::kNone || p_.value(v).buffer == passes::kNone) {
        if (!out.optional && !out.is_list) {
          error(call.loc, "internal: output '" + out.name + "' of " + call.pir_name + " is needed by its kernel but has no buffer");
        }
        ptrs.push_back("nullptr");
        continue;
      }
      ptrs.push_back("&" + expr(v));
      if (options_.trace_hooks) {
        Value t = Value::map();
        t.set("key", trace_key(p_.value(v)));
        t.set("expr", expr(v));
        traces.push_back(std::move(t));
      }
    }
    if (!out.is_list) {
      args.push_back(ptrs.empty() ? "nullptr" : ptrs[0]);
      continue;
    }
    const std::string name = "kf_c" + std::to_string(index) + "_" + cpp_identifier(out.name) + "_list";
    pre.push_back(pointer_array(name, false, List(ptrs.begin(), ptrs.end())));
    args.push_back("kforge::MutableTensorList{" + name + ", " + std::to_string(ptrs.size()) + "}");
  }
  std::optional<Value> meta = run_time_meta(call, index, args, pre);
  Value cv = Value::map();
  cv.set("index", static_cast<int64_t>(index));
  cv.set("meta", meta ? std::move(*meta) : Value(false));
  cv.set("kernel", call.kernel);
  cv.set("callee", multi_kernel_callee(options_.multi_kernel, call, index));
  cv.set("pir_name", call.pir_name);
  cv.set("where", where(call.loc));
  cv.set("ctx", context_name(call.kernel_dtype, call.loc));
  cv.set("pre", Value(std::move(pre)));
  cv.set("args", Value(std::move(args)));
  cv.set("traces", Value(std::move(traces)));
  return cv;
}

std::optional<Value> ContextBuilder::build() {
  program_display_ = banner_input_path(options_.program_path, options_.output_dir + "/" + options_.class_name + ".h");
  IdentifierScope input_scope({"inputs", "outputs"});
  for (const passes::ProgramInput& in : p_.inputs) input_idents_.push_back(input_scope.take(in.name));

  Value ctx = Value::map();
  ctx.set("class_name", options_.class_name);
  ctx.set("header", options_.class_name + ".h");
  set_namespace_keys(ctx, options_);
  std::string guarded = namespace_guard_prefix(options_) + cpp_identifier(options_.class_name);
  std::transform(guarded.begin(), guarded.end(), guarded.begin(), upper_ascii);
  ctx.set("guard", "KFORGE_GENERATED_" + guarded + "_H_");
  ctx.set("source", program_display_);
  ctx.set("program_name", p_.name);
  ctx.set("trace_hooks", options_.trace_hooks);
  // Static: no dynamic dims. (A dynamic program may have a constant workspace, 0 bytes when every value it
  // computes is an output or lives in a fused loop; it still needs its dims at run time.)
  const bool is_static = p_.plan.is_static() && p_.symbols.empty();
  ctx.set("is_static", is_static);
  // workspace_bytes() and resize() read the workspace's size from their own table, `sizes`.
  ctx.set("workspace_bytes",
          sizes_.ref(p_.plan.workspace_bytes, [](uint32_t k) { return "sizes[" + std::to_string(k) + "]"; }));
  ctx.set("has_workspace", !is_static || p_.plan.workspace_bytes.constant().value_or(0) != 0);
  if (is_static) ctx.set("unshared_bytes", sym(p_.plan.unshared_bytes));
  ctx.set("num_calls", static_cast<int64_t>(p_.calls.size()));

  add_symbols(ctx);
  add_inputs(ctx);
  add_parameters(ctx);
  add_values(ctx);
  add_outputs(ctx);
  add_constants(ctx);
  List run_params, run_generic_args;
  for (size_t i = 0; i < input_idents_.size(); ++i) {
    run_params.push_back("const kforge::Tensor& " + input_idents_[i]);
    run_generic_args.push_back("*inputs.items[" + std::to_string(i) + "]");
  }
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    run_params.push_back("kforge::Tensor* " + ctx.find("outputs")->as_list()[i].find("ident")->as_string());
    run_generic_args.push_back("outputs.items[" + std::to_string(i) + "]");
  }
  ctx.set("run_params", Value(std::move(run_params)));
  ctx.set("run_generic_args", Value(std::move(run_generic_args)));
  List calls, steps, fused_groups;
  const passes::FusionPlan* fusion = options_.fusion;
  for (uint32_t i = 0; i < p_.calls.size(); ++i) {
    const uint32_t group = fusion && i < fusion->call_group.size() ? fusion->call_group[i] : passes::kNone;
    if (group == passes::kNone) {
      Value cv = call_context(p_.calls[i], i);
      cv.set("fused", false);
      steps.push_back(cv);
      calls.push_back(std::move(cv));
      continue;
    }
    // A fused call: named in error messages (kCallNames) but never called.
    Value cv = Value::map();
    cv.set("index", static_cast<int64_t>(i));
    cv.set("kernel", p_.calls[i].kernel);
    cv.set("pir_name", p_.calls[i].pir_name);
    cv.set("where", where(p_.calls[i].loc));
    cv.set("fused", true);
    calls.push_back(std::move(cv));
    const passes::FusedGroup& g = fusion->groups[group];
    if (g.position != i) continue;
    if (g.kind == passes::GroupKind::kConv) {  // one library call (conv2d_fused), errors named after the conv
      Value step = call_context(g.conv_call, g.calls.front());
      step.set("fused", false);
      steps.push_back(std::move(step));
      continue;
    }
    SizeParams group_sizes(sizes_, member_size);
    fused_groups.push_back(fused_group_function(p_, g, group_sizes));
    steps.push_back(fused_group_call(p_, g, group_sizes, [this](uint32_t v) { return expr(v); },
                                     where(p_.calls[g.calls.front()].loc), options_.trace_hooks));
  }
  ctx.set("calls", Value(std::move(calls)));
  ctx.set("steps", Value(std::move(steps)));
  bool runtime_math = false;  // a group calls kforge_math.h: the source includes it, and it is emitted beside
  bool fused_clones = false;  // a group gets KFORGE_FUSED_CLONES: the source defines it
  for (const Value& g : fused_groups) {
    runtime_math = runtime_math || g.find("runtime_math")->as_bool();
    fused_clones = fused_clones || g.find("vector_clones")->as_bool();
  }
  ctx.set("runtime_math", runtime_math);
  ctx.set("fused_clones", fused_clones);
  ctx.set("fused_groups", Value(std::move(fused_groups)));
  ctx.set("attrs", Value(attrs_));
  List contexts;
  for (const auto& [name, dtype] : contexts_) {
    Value c = Value::map();
    c.set("name", name);
    c.set("dtype", dtype);
    contexts.push_back(std::move(c));
  }
  ctx.set("contexts", Value(std::move(contexts)));
  List decls;
  std::vector<std::string> sorted = kernel_order_;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& name : sorted) decls.push_back(kernel_decls_.at(name));
  ctx.set("kernel_decls", Value(std::move(decls)));
  List meta_decls;
  for (const auto& [name, decl] : meta_decls_) meta_decls.push_back(decl);
  ctx.set("meta_decls", Value(std::move(meta_decls)));
  add_multi_kernel_context(ctx, p_, options_.multi_kernel,
                           [this](const passes::KernelCall& call) { return where(call.loc); });
  sizes_.add_program_sizes(p_);
  List data_symbols = data_symbols_value();
  // Last: everything above registered the sizes it uses. compute_sizes() computes those of the input dims; each
  // bind_s<id>() those that need its data-dependent dim.
  add_late_sizes(data_symbols);
  ctx.set("num_runtime_buffers", std::accumulate(data_symbols.begin(), data_symbols.end(), int64_t{0},
                                                 [](int64_t n, const Value& d) {
                                                   return n + static_cast<int64_t>(d.find("runtime")->as_list().size());
                                                 }));
  ctx.set("data_symbols", Value(std::move(data_symbols)));
  ctx.set("num_sizes", static_cast<int64_t>(sizes_.size()));
  ctx.set("sizes", sizes_.definitions_value([&](uint32_t k) { return late_symbol(sizes_.expression(k)) == passes::kNone; }));
  if (!ok_) return std::nullopt;
  return ctx;
}

}  // namespace program_context_internal

void set_namespace_keys(tmpl::Value& ctx, const ProgramCodegenOptions& options) {
  ctx.set("namespace", options.cpp_namespace);
  ctx.set("qualified_class_name",
          options.cpp_namespace.empty() ? options.class_name : options.cpp_namespace + "::" + options.class_name);
}

std::string namespace_guard_prefix(const ProgramCodegenOptions& options) {
  if (options.cpp_namespace.empty()) return "";
  // a::b -> "a_b_"
  std::vector<std::string> parts;
  const std::string_view ns = options.cpp_namespace;
  for (size_t begin = 0, sep = 0; begin <= ns.size(); begin = sep + 2) {
    sep = std::min(ns.find("::", begin), ns.size());
    parts.emplace_back(ns.substr(begin, sep - begin));
  }
  return kforge::join(parts, "_") + "_";
}

std::optional<tmpl::Value> build_program_context(const passes::LoweredProgram& program, const SourceManager& sources,
                                                 const ProgramCodegenOptions& options, DiagnosticEngine& diags) {
  // Twice: the first build collects the sizes in the order code generation asks for them, which depends on the
  // compiler that built kforge; the second numbers them canonically (SizeTable::canonical). Only the first can
  // report: the second sees the same program.
  program_context_internal::ContextBuilder first(program, sources, options, diags);
  if (!first.build()) return std::nullopt;
  program_context_internal::ContextBuilder second(program, sources, options, diags, first.sizes().canonical());
  return second.build();
}

}  // namespace kforge::codegen