#include "codegen/python_context.h"

namespace kforge::codegen {

namespace {

using tmpl::List;
using tmpl::Value;

const char* param_kind(PyParam::Kind kind) {
  switch (kind) {
    case PyParam::Kind::kTensor: return "tensor";
    case PyParam::Kind::kOptionalTensor: return "optional_tensor";
    case PyParam::Kind::kTensorList: return "tensor_list";
    case PyParam::Kind::kOptionalTensorList: return "optional_tensor_list";
    case PyParam::Kind::kInplaceTensor: return "inplace_tensor";
    case PyParam::Kind::kOptionalInplaceTensor: return "optional_inplace_tensor";
    case PyParam::Kind::kAttribute: return "attribute";
  }
  return "tensor";
}

const char* output_kind(PyOutput::Kind kind) {
  switch (kind) {
    case PyOutput::Kind::kTensor: return "tensor";
    case PyOutput::Kind::kOptionalTensor: return "optional_tensor";
    case PyOutput::Kind::kTensorList: return "tensor_list";
    case PyOutput::Kind::kInplace: return "inplace";
  }
  return "tensor";
}

Value strings(const std::vector<std::string>& items) {
  List list;
  for (const std::string& s : items) list.emplace_back(s);
  return Value(std::move(list));
}

}  // namespace

Value python_function_value(const PyFunction& fn) {
  Value v = Value::map();
  v.set("name", fn.name);
  v.set("doc", fn.doc);
  v.set("source", fn.source);
  List params;
  for (const PyParam& p : fn.params) {
    Value pv = Value::map();
    pv.set("name", p.name);
    pv.set("local", p.local);
    pv.set("kind", param_kind(p.kind));
    pv.set("value_type", p.value_type);
    pv.set("default", p.cpp_default);
    pv.set("required", p.required);
    params.push_back(std::move(pv));
  }
  v.set("params", Value(std::move(params)));
  v.set("call_args", strings(fn.call_args));
  v.set("locals", strings(fn.locals));
  v.set("list_locals", strings(fn.list_locals));
  List returns;
  for (const PyOutput& r : fn.returns) {
    Value rv = Value::map();
    rv.set("name", r.name);
    rv.set("local", r.local);
    rv.set("kind", output_kind(r.kind));
    rv.set("param_index", static_cast<int64_t>(r.param_index));
    returns.push_back(std::move(rv));
  }
  v.set("returns", Value(std::move(returns)));
  return v;
}

}  // namespace kforge::codegen
