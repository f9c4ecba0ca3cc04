#include "codegen/ops_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/op_api_defaults.h"

namespace kforge::codegen {

namespace {

using tmpl::List;
using tmpl::Value;

const char* role_name(ApiParam::Role role) {
  switch (role) {
    case ApiParam::Role::kInput: return "input";
    case ApiParam::Role::kOutput: return "output";
    case ApiParam::Role::kAttribute: return "attribute";
  }
  return "input";
}

const char* check_kind(InputCheck::Kind kind) {
  switch (kind) {
    case InputCheck::Kind::kTensor: return "tensor";
    case InputCheck::Kind::kOptionalTensor: return "optional";
    case InputCheck::Kind::kList: return "list";
  }
  return "tensor";
}

Value string_list(const std::vector<std::string>& items) {
  List list;
  list.reserve(items.size());
  for (const std::string& s : items) list.emplace_back(s);
  return Value(std::move(list));
}

Value call_value(const ApiCall& call) {
  Value v = Value::map();
  v.set("func", call.func);
  v.set("args", string_list(call.args));
  return v;
}

// `kforge_first_dtype({a, b})` for several candidates, the candidate itself for one.
std::string first_of(const std::string& helper, const std::vector<std::string>& candidates, const std::string& none) {
  if (candidates.empty()) return none;
  if (candidates.size() == 1) return candidates.front();
  return fmt::format("{}({{{}}})", helper, fmt::join(candidates, ", "));
}

std::string dtype_expression(const ApiFunction& fn) {
  if (fn.dtype_from_inputs) {
    // Paddle's kernel key parser: the last input's dtype (complex promoted); one input needs no helper.
    if (fn.dtype_candidates.size() == 1) return fn.dtype_candidates.front();
    return first_of("kforge_kernel_dtype", fn.dtype_candidates, "kforge::DataType::kUndefined");
  }
  return first_of("kforge_first_dtype", fn.dtype_candidates, "kforge::DataType::kUndefined");
}

std::string place_expression(const ApiFunction& fn) {
  if (!fn.forced_place.empty()) return fn.forced_place;
  const std::string helper = fn.place_from_inputs ? "kforge_kernel_place" : "kforge_first_place";
  if (fn.place_candidates.empty()) return "kforge::CPUPlace()";
  return fmt::format("{}({{{}}})", helper, fmt::join(fn.place_candidates, ", "));
}

Value output_value(const ApiOutput& o) {
  Value v = Value::map();
  v.set("name", o.name);
  v.set("local", o.local);
  v.set("is_list", o.is_list);
  v.set("nullable", o.nullable);
  v.set("required", !o.nullable);
  v.set("size", o.size);
  // When the output is computed at all: always, when the caller passed it, or when its in-place input
  // is present.
  std::string present;
  if (o.alias_is_pointer) {
    present = o.alias_input + " != nullptr";
  } else if (o.nullable && o.is_param) {
    present = o.name + " != nullptr";
  }
  v.set("present", present);
  v.set("aliases", !o.alias_input.empty());
  v.set("alias_expr", o.alias_is_pointer ? "*" + o.alias_input : o.alias_input);
  v.set("alias_input", o.alias_input);
  v.set("write_back", o.write_back);
  v.set("is_param", o.is_param);
  return v;
}

Value function_value(const ApiFunction& fn) {
  Value v = Value::map();
  v.set("name", fn.name);
  v.set("inplace_twin", fn.inplace_twin);
  v.set("notes", string_list(fn.notes));
  List params;
  for (const ApiParam& p : fn.params) {
    Value pv = Value::map();
    pv.set("name", p.name);
    pv.set("type", p.type);
    pv.set("default", p.default_value);
    pv.set("role", role_name(p.role));
    pv.set("used", p.used);
    params.push_back(std::move(pv));
  }
  v.set("params", Value(std::move(params)));
  List checks;
  for (const InputCheck& c : fn.checks) {
    Value cv = Value::map();
    cv.set("name", c.name);
    cv.set("kind", check_kind(c.kind));
    cv.set("needs_data", c.needs_data);
    checks.push_back(std::move(cv));
  }
  v.set("checks", Value(std::move(checks)));
  List outputs;
  for (const ApiOutput& o : fn.outputs) outputs.push_back(output_value(o));
  v.set("outputs", Value(std::move(outputs)));
  v.set("is_invoke", fn.is_invoke);
  if (fn.is_invoke) {
    v.set("invoke", call_value(fn.invoke));
  } else {
    v.set("dtype", dtype_expression(fn));
    v.set("place", place_expression(fn));
    v.set("infer_meta", call_value(fn.infer_meta));
    v.set("kernel", call_value(fn.kernel));
  }
  return v;
}

}  // namespace

Value op_api_value(const OpApi& op) {
  Value v = Value::map();
  v.set("name", op.name);
  v.set("source", op.source);
  v.set("generated", op.generated);
  v.set("skip_reason", op.skip_reason);
  List functions;
  for (const ApiFunction& fn : op.functions) functions.push_back(function_value(fn));
  v.set("functions", Value(std::move(functions)));
  return v;
}

Value args_info_value(const opdef::Op& op, const opdef::OpCompat* compat, bool has_api) {
  const opdef::CompatEntry* entry = compat != nullptr ? compat->lookup(op.name) : nullptr;
  // As in the PIR signatures: the Scalars of sparse forward ops stay attributes (op_gen.py).
  const bool scalars_mutable = !(op.sparse && !op.is_backward);
  Value v = Value::map();
  v.set("name", op_api_name(op));
  v.set("has_api", has_api);
  List inputs;
  for (const opdef::Input& in : op.inputs) {
    Value iv = Value::map();
    iv.set("name", in.name);
    iv.set("type", arg_type_name(in.type));
    iv.set("optional", in.optional);
    inputs.push_back(std::move(iv));
  }
  v.set("inputs", Value(std::move(inputs)));
  List attributes;
  for (const opdef::Attribute& a : op.attributes) {
    Value av = Value::map();
    av.set("name", a.name);
    av.set("type", arg_type_name(a.type));
    av.set("has_default", a.default_value.has_value());
    av.set("default", a.default_value ? a.default_value->text : std::string());
    const opdef::MutableAttrInfo* info = nullptr;
    if (entry != nullptr) {
      info = scalars_mutable ? entry->find_scalar(a.name) : nullptr;
      if (info == nullptr) info = entry->find_int_array(a.name);
    }
    av.set("mutable", info != nullptr && info->is_mutable());
    attributes.push_back(std::move(av));
  }
  v.set("attributes", Value(std::move(attributes)));
  List outputs;
  for (const opdef::Output& o : op.outputs) {
    Value ov = Value::map();
    ov.set("name", o.name);
    ov.set("type", std::string(opdef::output_type_spelling(o.type)));
    ov.set("optional", o.optional);
    ov.set("intermediate", o.intermediate);
    ov.set("has_size", o.size_expr.has_value());
    ov.set("size", o.size_expr.value_or(""));
    outputs.push_back(std::move(ov));
  }
  v.set("outputs", Value(std::move(outputs)));
  auto pairs = [](const std::vector<opdef::InplacePair>& items) {
    List list;
    for (const opdef::InplacePair& p : items) {
      Value pv = Value::map();
      pv.set("input", p.input);
      pv.set("output", p.output);
      list.push_back(std::move(pv));
    }
    return Value(std::move(list));
  };
  v.set("inplace", pairs(op.inplace));
  v.set("view", pairs(op.view));
  return v;
}

Value decl_value(const FunctionDecl& decl) {
  Value v = Value::map();
  v.set("name_space", decl.name_space);
  v.set("name", decl.name);
  v.set("params", string_list(decl.params));
  return v;
}

}  // namespace kforge::codegen
