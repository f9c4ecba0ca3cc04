// The op API model (op_api_model.h): for each op, whether and how it is generated: the kernel it calls, its dtype and
// place candidates, each function's parameters, calls and checks. The declarations of the kernels and infer-meta
// functions and the invoke form are built in op_api_decls.cpp.
#include "codegen/op_api_model.h"

#include <algorithm>

#include "codegen/op_api_builder.h"
#include "support/text.h"

namespace kforge::codegen {

namespace op_api_internal {

std::string qualified_meta(std::string_view func, std::string* name_space, std::string* name) {
  const size_t sep = func.rfind("::");
  if (sep != std::string_view::npos) {
    *name_space = "kforge::meta::" + std::string(func.substr(0, sep));
    *name = std::string(func.substr(sep + 2));
  } else {
    *name_space = "kforge::meta";
    *name = std::string(func);
  }
  return *name_space + "::" + *name;
}

// The C++ type a literal of a `param` list has in the declarations (`false` -> bool).
std::optional<std::string> literal_type(std::string_view text) {
  if (text == "true" || text == "false") return std::string("bool");
  if (!text.empty() && text.front() == '"') return std::string("const std::string&");
  std::string why;
  opdef::DefaultValue probe;
  probe.text = std::string(text);
  probe.kind = opdef::DefaultKind::kExpression;
  if (cpp_default_value(ArgType::kInt, probe, &why)) return std::string("int");
  if (cpp_default_value(ArgType::kDouble, probe, &why)) {
    return std::string(text.back() == 'f' || text.back() == 'F' ? "float" : "double");
  }
  return std::nullopt;
}

namespace {

constexpr std::string_view kReservedPrefix = "kforge_";

bool is_plain_identifier(std::string_view name) { return !name.empty() && cpp_identifier(name) == name; }

/// Names the generated code needs to mean what they mean: the helpers and locals (`kforge_*`) and the
/// unqualified types it spells (`int64_t`, `size_t`). An argument or op of such a name would shadow them.
/// Namespace names are not reserved: the name before `::` is looked up among namespaces and types only, so
/// a parameter called `std` (Paddle's gaussian has one) leaves `std::move` meaning what it means.
bool is_reserved_name(std::string_view name) {
  static const std::set<std::string_view> kReserved = {"int8_t",   "int16_t",  "int32_t",  "int64_t", "uint8_t",
                                                       "uint16_t", "uint32_t", "uint64_t", "size_t"};
  return name.compare(0, kReservedPrefix.size(), kReservedPrefix) == 0 || kReserved.count(name) != 0;
}

}  // namespace

std::optional<Skip> OpApiBuilder::check_expressible() const {
  auto check_name = [](std::string_view what, const std::string& name) -> std::optional<Skip> {
    if (!is_plain_identifier(name)) return Skip{std::string(what) + " '" + name + "' is not a C++ identifier"};
    if (is_reserved_name(name)) return Skip{std::string(what) + " '" + name + "' is a name generated code reserves"};
    return std::nullopt;
  };
  if (auto s = check_name("the name", op_.name)) return s;
  for (const Input& in : op_.inputs) {
    if (auto s = check_name("input", in.name)) return s;
  }
  for (const Attribute& a : op_.attributes) {
    if (auto s = check_name("attribute", a.name)) return s;
  }
  for (const Output& out : op_.outputs) {
    if (auto s = check_name("output", out.name)) return s;
    if (out.type == OutputType::kSelectedRows) return Skip{"output '" + out.name + "' is SelectedRows"};
  }
  // Sparse kernels take SparseCoo/SparseCsr tensors, which the API's kforge::Tensor cannot hold.
  if (op_.sparse) return Skip{"it is a sparse op: the generated API takes dense tensors only"};
  if (op_.invoke) return std::nullopt;
  if (op_.composite && !op_.kernel) return Skip{"it is composite-only (no kernel)"};
  if (!op_.kernel || op_.kernel->funcs.empty()) return Skip{"it has no kernel"};
  if (!op_.infer_meta) return Skip{"it has no infer_meta"};
  return std::nullopt;
}

std::optional<Skip> OpApiBuilder::choose_kernel() {
  for (const opdef::KernelFunc& func : op_.kernel->funcs) {
    bool dense = true;
    for (opdef::TensorKind k : func.input_kinds) dense = dense && k == opdef::TensorKind::kDense;
    for (opdef::TensorKind k : func.output_kinds) dense = dense && k == opdef::TensorKind::kDense;
    if (dense) {
      if (!is_plain_identifier(func.name)) return Skip{"kernel '" + func.name + "' is not a C++ identifier"};
      kernel_ = &func;
      return std::nullopt;
    }
  }
  std::vector<std::string> names;
  for (const opdef::KernelFunc& func : op_.kernel->funcs) names.push_back(func.name);
  return Skip{"it has no dense kernel (" + kforge::join(names, ", ") + " take sparse or selected-rows tensors)"};
}

std::vector<opdef::ParamItem> OpApiBuilder::kernel_param() const {
  if (op_.kernel && op_.kernel->param) return *op_.kernel->param;
  std::vector<opdef::ParamItem> items;
  for (const std::string& name : op_.effective_kernel_param()) items.push_back({name, false, {}});
  return items;
}

std::vector<opdef::ParamItem> OpApiBuilder::meta_param() const {
  if (op_.infer_meta && op_.infer_meta->param) return *op_.infer_meta->param;
  return kernel_param();
}

const opdef::InplacePair* OpApiBuilder::inplace_of_output(std::string_view output) const {
  for (const opdef::InplacePair& p : op_.inplace) {
    if (p.output == output) return &p;
  }
  return nullptr;
}

const opdef::InplacePair* OpApiBuilder::view_of_output(std::string_view output) const {
  for (const opdef::InplacePair& p : op_.view) {
    if (p.output == output) return &p;
  }
  return nullptr;
}

// The input expression that the dtype / place helpers of the generated code accept for any kind of
// tensor argument (kforge_dtype_of / kforge_place_of are overloaded for all of them).
std::optional<Skip> OpApiBuilder::dtype_candidates(ApiFunction& fn) const {
  const opdef::Kernel& kernel = *op_.kernel;
  if (!kernel.data_type || kernel.data_type->items.empty()) {
    fn.dtype_from_inputs = true;
    for (const Input& in : op_.inputs) fn.dtype_candidates.push_back("kforge_dtype_of(" + in.name + ")");
    return std::nullopt;
  }
  for (const opdef::Candidate& c : kernel.data_type->items) {
    std::string expr;
    if (c.is_constant) {
      opdef::DefaultValue constant;
      constant.text = c.name;
      constant.kind = opdef::DefaultKind::kEnumConstant;
      std::string why;
      const std::optional<std::string> value = cpp_default_value(ArgType::kDataType, constant, &why);
      if (!value) return Skip{"data_type candidate '" + c.name + "': " + why};
      expr = *value;
    } else if (op_.find_input(c.name) != nullptr) {
      expr = "kforge_dtype_of(" + c.name + ")";
    } else if (const Attribute* a = op_.find_attribute(c.name)) {
      if (a->type != ArgType::kDataType) {
        return Skip{"data_type candidate '" + c.name + "' is a " + arg_type_name(a->type) + " attribute"};
      }
      expr = c.name;
    } else {
      return Skip{"data_type candidate '" + c.name + "' is not an argument"};
    }
    fn.dtype_candidates.push_back(c.to_complex ? "kforge_complex_of(" + expr + ")" : expr);
  }
  return std::nullopt;
}

std::optional<Skip> OpApiBuilder::place_candidates(ApiFunction& fn) const {
  const opdef::Kernel& kernel = *op_.kernel;
  if (kernel.force_backend) {
    if (kernel.force_backend->name != "force_cpu") {
      return Skip{"force_backend '" + kernel.force_backend->name + "' is not supported"};
    }
    fn.forced_place = "kforge::CPUPlace()";
    return std::nullopt;
  }
  if (!kernel.backend || kernel.backend->items.empty()) {
    fn.place_from_inputs = true;
    for (const Input& in : op_.inputs) fn.place_candidates.push_back("kforge_place_of(" + in.name + ")");
    return std::nullopt;
  }
  for (const opdef::Candidate& c : kernel.backend->items) {
    if (op_.find_input(c.name) != nullptr) {
      fn.place_candidates.push_back("kforge_place_of(" + c.name + ")");
    } else if (const Attribute* a = op_.find_attribute(c.name); a != nullptr && a->type == ArgType::kPlace) {
      fn.place_candidates.push_back(c.name);
    } else {
      return Skip{"backend candidate '" + c.name + "' is neither a tensor input nor a Place attribute"};
    }
  }
  return std::nullopt;
}

std::optional<Skip> OpApiBuilder::call_args(const std::vector<opdef::ParamItem>& items, const ApiFunction& fn,
                                            std::vector<std::string>& args) const {
  for (const opdef::ParamItem& item : items) {
    if (item.is_literal) {
      if (!literal_type(item.text)) return Skip{"param literal '" + item.text + "' has no C++ type"};
      args.push_back(item.text);
    } else if (const Input* in = op_.find_input(item.text)) {
      // The twin's in-place list inputs are MutableTensorList; kernels take TensorList.
      bool mutable_list = false;
      if (fn.inplace_twin && in->is_list()) {
        for (const opdef::InplacePair& p : op_.inplace) mutable_list = mutable_list || p.input == in->name;
      }
      args.push_back(mutable_list ? "kforge_as_input(" + in->name + ")" : in->name);
    } else if (op_.find_attribute(item.text) != nullptr) {
      args.push_back(item.text);
    } else {
      return Skip{"param '" + item.text + "' is not an argument"};
    }
  }
  for (const ApiOutput& out : fn.outputs) {
    const std::string present = out.alias_is_pointer ? out.alias_input + " != nullptr"
                                : out.nullable && out.is_param ? out.name + " != nullptr"
                                                               : "";
    const std::string value = out.is_list ? out.local + ".list()" : "&" + out.local;
    const std::string none = out.is_list ? "kforge::MutableTensorList{}" : "nullptr";
    args.push_back(present.empty() ? value : "(" + present + " ? " + value + " : " + none + ")");
  }
  return std::nullopt;
}

std::optional<Skip> OpApiBuilder::build_function(bool inplace_twin, const std::string& name, ApiFunction& fn) {
  fn.name = name;
  fn.inplace_twin = inplace_twin;
  std::set<std::string> inplace_inputs;
  if (inplace_twin) {
    for (const opdef::InplacePair& p : op_.inplace) inplace_inputs.insert(p.input);
  }
  std::set<std::string> no_buffer;
  for (const opdef::NameRef& n : op_.no_need_buffer_names) no_buffer.insert(n.name);

  for (const Input& in : op_.inputs) {
    ApiParam p;
    p.name = in.name;
    p.role = ApiParam::Role::kInput;
    const bool mutated = inplace_inputs.count(in.name) != 0;
    if (in.is_list()) {
      p.type = mutated ? "kforge::MutableTensorList" : "kforge::TensorList";
    } else if (mutated) {
      p.type = in.optional ? "kforge::Tensor*" : "kforge::Tensor&";
    } else {
      p.type = param_type(in.type, in.optional);
    }
    fn.params.push_back(p);
    InputCheck check;
    check.name = in.name;
    check.kind = in.is_list() ? InputCheck::Kind::kList
                 : in.optional ? InputCheck::Kind::kOptionalTensor
                               : InputCheck::Kind::kTensor;
    check.needs_data = no_buffer.count(in.name) == 0;
    fn.checks.push_back(check);
  }

  for (const Output& out : op_.outputs) {
    ApiOutput o;
    o.name = out.name;
    // kforge_ctx is the kernel context's local.
    o.local = std::string(kReservedPrefix) + out.name + (out.name == "ctx" ? "_output" : "");
    o.is_list = out.type == OutputType::kTensorList;
    o.nullable = out.optional || out.intermediate;
    const opdef::InplacePair* inplace = inplace_twin ? inplace_of_output(out.name) : nullptr;
    const opdef::InplacePair* alias = inplace != nullptr ? inplace : view_of_output(out.name);
    if (alias != nullptr) {
      const Input* in = op_.find_input(alias->input);
      if (in == nullptr) return Skip{"'" + alias->input + "' of an inplace/view pair is not an input"};
      if (in->is_list() != o.is_list) {
        return Skip{"inplace/view pair (" + alias->input + " -> " + out.name + ") pairs a list with a tensor"};
      }
      o.alias_input = in->name;
      o.alias_is_pointer = in->optional && !in->is_list();
      if (inplace != nullptr) {
        o.write_back = true;
        o.is_param = false;
        o.nullable = o.alias_is_pointer;
      }
    }
    if (o.is_list) {
      if (!o.alias_input.empty()) {
        o.size = o.alias_input + ".size";
      } else if (!out.size_expr) {
        return Skip{"output '" + out.name + "' is a Tensor[] without a size expression"};
      } else {
        std::string why;
        std::optional<std::string> size = translate_size_expression(*out.size_expr, op_, &why);
        if (!size) return Skip{"size of output '" + out.name + "': " + why};
        o.size = *size;
      }
    }
    if (o.is_param) {
      ApiParam p;
      p.name = out.name;
      p.role = ApiParam::Role::kOutput;
      p.type = o.is_list ? "std::vector<kforge::Tensor>*" : "kforge::Tensor*";
      fn.params.push_back(p);
    }
    fn.outputs.push_back(o);
  }

  for (const Attribute& a : op_.attributes) {
    ApiParam p;
    p.name = a.name;
    p.role = ApiParam::Role::kAttribute;
    p.type = param_type(a.type, false);
    if (a.default_value) {
      std::string why;
      if (std::optional<std::string> value = cpp_default_value(a.type, *a.default_value, &why)) {
        p.default_value = *value;
      } else {
        p.default_note = "YAML default '" + a.default_value->text + "' is not used: " + why;
      }
    }
    fn.params.push_back(p);
  }
  // C++ defaults must trail: drop every default before the last parameter that has none.
  bool trailing = true;
  for (auto it = fn.params.rbegin(); it != fn.params.rend(); ++it) {
    if (it->default_value.empty()) trailing = false;
    if (!trailing && !it->default_value.empty()) {
      it->default_note = "YAML default '" + it->default_value + "' is not used: a later parameter has none";
      it->default_value.clear();
    }
  }
  for (const ApiParam& p : fn.params) {
    if (!p.default_note.empty()) fn.notes.push_back("'" + p.name + "': " + p.default_note);
  }

  if (op_.invoke) return std::nullopt;  // build_invoke fills the call
  if (auto s = dtype_candidates(fn)) return s;
  if (auto s = place_candidates(fn)) return s;
  std::string meta_ns, meta_name;
  fn.infer_meta.func = qualified_meta(op_.infer_meta->func, &meta_ns, &meta_name);
  if (auto s = call_args(meta_param(), fn, fn.infer_meta.args)) return s;
  fn.kernel.func = "kforge::kernels::" + kernel_->name;
  fn.kernel.args.push_back("kforge_ctx");
  if (auto s = call_args(kernel_param(), fn, fn.kernel.args)) return s;
  return std::nullopt;
}

namespace {

// Marks the attributes that no call, kernel-key candidate or size expression of `fn` names.
void mark_unused_params(ApiFunction& fn) {
  std::set<std::string, std::less<>> names;
  auto scan = [&names](std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      const char c = text[i];
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        const size_t begin = i;
        while (i < text.size() && ((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z') ||
                                   (text[i] >= '0' && text[i] <= '9') || text[i] == '_')) {
          ++i;
        }
        names.emplace(text.substr(begin, i - begin));
      } else if (c == '"') {  // string literals name nothing
        for (++i; i < text.size() && text[i] != '"'; ++i) {
          if (text[i] == '\\') ++i;
        }
        ++i;
      } else {
        ++i;
      }
    }
  };
  for (const ApiCall* call : {&fn.infer_meta, &fn.kernel, &fn.invoke}) {
    for (const std::string& arg : call->args) scan(arg);
  }
  for (const std::string& c : fn.dtype_candidates) scan(c);
  for (const std::string& c : fn.place_candidates) scan(c);
  for (const ApiOutput& o : fn.outputs) scan(o.size);
  for (ApiParam& p : fn.params) {
    if (p.role == ApiParam::Role::kAttribute) p.used = names.count(p.name) != 0;
  }
}

std::string decl_key(const FunctionDecl& d) {
  // The parameter types, each followed by ',': "ns::f(const kforge::Tensor&,float,".
  std::vector<std::string> types;
  for (const std::string& p : d.params) types.push_back(p.substr(0, p.rfind(' ')) + ",");
  return d.name_space + "::" + d.name + "(" + kforge::join(types, "");
}

void add_unique(std::vector<FunctionDecl>& into, std::set<std::string>& seen, std::vector<FunctionDecl>& from) {
  for (FunctionDecl& d : from) {
    if (seen.insert(decl_key(d)).second) into.push_back(std::move(d));
  }
}

}  // namespace

}  // namespace op_api_internal

std::string op_api_name(const opdef::Op& op) { return op.sparse ? op.name + "_sp" : op.name; }

size_t OpApiModel::generated_count() const {
  return static_cast<size_t>(std::count_if(ops.begin(), ops.end(), [](const OpApi& op) { return op.generated; }));
}

OpApiModel build_op_api_model(const opdef::OpLibrary& library, const SourceManager& sources,
                              const std::vector<std::string>& display_paths) {
  OpApiModel model;
  model.ops.resize(library.ops().size());
  std::set<std::string> kernel_keys, meta_keys;
  std::unordered_map<std::string, const OpApi*> generated;
  std::set<std::string> function_names;
  for (const opdef::Op& op : library.ops()) {
    if (!op.sparse) function_names.insert(op.name);
  }

  // Invoke ops call other generated ops, which may come later in the file: they go second.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < library.ops().size(); ++i) {
      const opdef::Op& op = library.ops()[i];
      if ((pass == 0) == op.invoke.has_value()) continue;
      OpApi& api = model.ops[i];
      api.op = &op;
      api.name = op_api_name(op);
      const std::string& path = op.file < display_paths.size() && !display_paths[op.file].empty()
                                    ? display_paths[op.file]
                                    : std::string(sources.path(op.loc.file));
      api.source = path + ":" + std::to_string(sources.line_col(op.loc).line);

      op_api_internal::OpApiBuilder builder(op);
      std::optional<op_api_internal::Skip> skip = builder.check_expressible();
      if (!skip && !op.invoke) skip = builder.choose_kernel();
      // Ops whose name ends in '_' and that have inplace pairs exist only in place (adam_, full_).
      const bool only_inplace = !op.inplace.empty() && op.name.back() == '_';
      std::vector<ApiFunction> functions(1);
      if (!skip) skip = builder.build_function(only_inplace, op.name, functions[0]);
      if (!skip && op.invoke) skip = builder.build_invoke(generated, functions[0]);
      if (!skip && !op.inplace.empty() && !only_inplace && !op.invoke) {
        if (function_names.count(op.name + "_") != 0) {
          functions[0].notes.push_back("no in-place twin: the op '" + op.name + "_' has its name");
        } else {
          functions.emplace_back();
          skip = builder.build_function(true, op.name + "_", functions.back());
        }
      }
      std::vector<FunctionDecl> kernels, metas;
      if (!skip && !op.invoke) skip = builder.build_decls(kernels, metas);
      if (skip) {
        api.skip_reason = skip->reason;
        continue;
      }
      api.generated = true;
      for (ApiFunction& fn : functions) op_api_internal::mark_unused_params(fn);
      api.functions = std::move(functions);
      op_api_internal::add_unique(model.kernels, kernel_keys, kernels);
      op_api_internal::add_unique(model.metas, meta_keys, metas);
      generated.emplace(op.name, &api);
    }
  }
  return model;
}

}  // namespace kforge::codegen