#include "codegen/python_ops_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cpp_text.h"
#include "codegen/op_api_defaults.h"
#include "support/text.h"

namespace kforge::codegen {

namespace {

// The C++ type of a local holding an attribute value (the API takes some by const reference).
std::string value_type(opdef::ArgType type) {
  if (type == opdef::ArgType::kPlace) return "kforge::Place";
  return is_inline_constant(type) ? param_type(type, false) : constant_type(type);
}

bool is_inplace_input(const opdef::Op& op, const std::string& name) {
  for (const opdef::InplacePair& p : op.inplace) {
    if (p.input == name) return true;
  }
  return false;
}

// The Python function of one API function, or the reason it has none.
bool build_function(const OpApi& api, const ApiFunction& fn, PyFunction& out, std::string& why) {
  const opdef::Op& op = *api.op;
  out.name = fn.name;
  out.source = api.source;
  std::vector<std::string> signature;
  for (const ApiParam& p : fn.params) {
    if (p.role == ApiParam::Role::kOutput) continue;
    PyParam py;
    py.name = p.name;
    py.local = "arg_" + p.name;
    if (p.role == ApiParam::Role::kInput) {
      const opdef::Input* in = op.find_input(p.name);
      if (in == nullptr) {
        why = "input '" + p.name + "' is not in the YAML";
        return false;
      }
      const bool mutated = fn.inplace_twin && is_inplace_input(op, p.name);
      if (in->is_list()) {
        if (mutated) {
          why = "its Tensor[] input '" + p.name + "' is updated in place";
          return false;
        }
        py.kind = in->optional ? PyParam::Kind::kOptionalTensorList : PyParam::Kind::kTensorList;
      } else if (mutated) {
        py.kind = in->optional ? PyParam::Kind::kOptionalInplaceTensor : PyParam::Kind::kInplaceTensor;
      } else {
        py.kind = in->optional ? PyParam::Kind::kOptionalTensor : PyParam::Kind::kTensor;
      }
      py.required = !in->optional;
      if (in->optional) py.doc_default = "None";
    } else {
      const opdef::Attribute* a = op.find_attribute(p.name);
      if (a == nullptr) {
        why = "attribute '" + p.name + "' is not in the YAML";
        return false;
      }
      py.kind = PyParam::Kind::kAttribute;
      py.value_type = value_type(a->type);
      std::string unused;
      if (a->default_value) {
        if (std::optional<std::string> value = cpp_default_value(a->type, *a->default_value, &unused)) {
          py.cpp_default = *value;
          py.doc_default = a->default_value->text;
          py.required = false;
        }
      }
    }
    signature.push_back(py.name + (py.doc_default.empty() ? "" : "=" + py.doc_default));
    out.params.push_back(std::move(py));
  }
  auto param_index = [&](const std::string& name) {
    for (size_t i = 0; i < out.params.size(); ++i) {
      if (out.params[i].name == name) return i;
    }
    return out.params.size();
  };

  for (const ApiOutput& o : fn.outputs) {
    const opdef::Output* yaml = nullptr;
    for (const opdef::Output& candidate : op.outputs) {
      if (candidate.name == o.name) yaml = &candidate;
    }
    if (yaml != nullptr && yaml->intermediate) continue;
    PyOutput r;
    r.name = o.name;
    if (!o.is_param) {
      r.kind = PyOutput::Kind::kInplace;
      r.param_index = param_index(o.alias_input);
    } else {
      r.local = "out_" + o.name;
      r.kind = o.is_list ? PyOutput::Kind::kTensorList
               : o.nullable ? PyOutput::Kind::kOptionalTensor
                            : PyOutput::Kind::kTensor;
      (o.is_list ? out.list_locals : out.locals).push_back(r.local);
    }
    out.returns.push_back(std::move(r));
  }

  for (const ApiParam& p : fn.params) {
    if (p.role == ApiParam::Role::kOutput) {
      bool returned = false;
      for (const PyOutput& r : out.returns) returned = returned || (r.name == p.name && !r.local.empty());
      out.call_args.push_back(returned ? "&out_" + p.name : "nullptr");  // intermediate: not computed
      continue;
    }
    const PyParam& py = out.params[param_index(p.name)];
    switch (py.kind) {
      case PyParam::Kind::kTensor:
      case PyParam::Kind::kTensorList:
      case PyParam::Kind::kOptionalTensorList: out.call_args.push_back(py.local + ".get()"); break;
      case PyParam::Kind::kOptionalTensor: out.call_args.push_back(py.local + ".get_if()"); break;
      case PyParam::Kind::kInplaceTensor: out.call_args.push_back("*" + py.local); break;
      case PyParam::Kind::kOptionalInplaceTensor:
      case PyParam::Kind::kAttribute: out.call_args.push_back(py.local); break;
    }
  }

  std::vector<std::string> returned;
  for (const PyOutput& r : out.returns) {
    returned.push_back(r.kind == PyOutput::Kind::kTensorList       ? "list[Tensor]"
                       : r.kind == PyOutput::Kind::kOptionalTensor ? "Tensor | None"
                                                                  : "Tensor");
  }
  const std::string result = returned.empty()       ? "None"
                             : returned.size() == 1 ? returned[0]
                                                    : fmt::format("({})", fmt::join(returned, ", "));
  out.doc = fn.name + "(" + kforge::join(signature, ", ") + ") -> " + result + "\n\nThe op '" + api.name + "' (" + api.source + ")" +
            (fn.inplace_twin ? ", updating its inputs in place: they must be Tensors of this module." : ".");
  return true;
}

}  // namespace

PyOpModule build_python_op_module(const OpApiModel& model) {
  PyOpModule module;
  for (const OpApi& api : model.ops) {
    if (!api.generated) continue;
    for (const ApiFunction& fn : api.functions) {
      PyFunction py;
      std::string why;
      if (build_function(api, fn, py, why)) {
        module.functions.push_back(std::move(py));
      } else {
        module.skipped.push_back(fn.name + ": " + why);
      }
    }
  }
  return module;
}

}  // namespace kforge::codegen
