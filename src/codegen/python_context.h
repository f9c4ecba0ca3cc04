// Template values of the Python extension modules (templates/python/*.j2).
//
// A function of `kforge ops --python` (one item of `functions`):
//   name, doc, source, params[{name, local, kind, value_type, default, required}], call_args[], locals[],
//   list_locals[], returns[{name, local, kind, param_index}]
// where a param's kind is tensor, optional_tensor, tensor_list, optional_tensor_list, inplace_tensor,
// optional_inplace_tensor or attribute, and a return's kind is tensor, optional_tensor, tensor_list or inplace.
#pragma once

#include "codegen/python_ops_model.h"
#include "template/value.h"

namespace kforge::codegen {

tmpl::Value python_function_value(const PyFunction& fn);

}  // namespace kforge::codegen
