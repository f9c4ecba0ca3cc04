// Template values of `kforge ops`: the OpApiModel as maps and lists that templates/ops/*.j2 read.
// Every C++ decision (types, defaults, expressions, conditions) is made here or in op_api_model.cpp;
// the templates only lay the pieces out.
//
// An API function (one item of `op.functions`):
//   name, inplace_twin, notes[], params[{name, type, default?, role}], checks[{name, kind, needs_data}],
//   outputs[{name, local, is_list, nullable, required, size, present, alias_expr, write_back, is_param}],
//   dtype, place (C++ expressions), infer_meta{func, args[]}, kernel{func, args[]}, is_invoke, invoke{...}
// An op: name, source, generated, skip_reason, functions[].
// An args-info entry: name, symbol, has_api, inputs[{name, type, optional}], attributes[{name, type,
//   default?, mutable}], outputs[{name, type, optional, intermediate, size?}], inplace[{input, output}], view[]
// A declaration: name_space, name, params[].
#pragma once

#include "codegen/op_api_model.h"
#include "opdef/op_compat.h"
#include "template/value.h"

namespace kforge::codegen {

tmpl::Value op_api_value(const OpApi& op);
tmpl::Value args_info_value(const opdef::Op& op, const opdef::OpCompat* compat, bool has_api);
tmpl::Value decl_value(const FunctionDecl& decl);

}  // namespace kforge::codegen
