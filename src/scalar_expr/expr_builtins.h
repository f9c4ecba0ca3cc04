// The table of built-in functions of the expression language: names, arity and typing class. The emitters
// keep their own spellings per target; this table is what the parser, the checker and did-you-mean share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalar_expr/expr_ast.h"

namespace kforge::expr {

/// How a function types its arguments and result.
enum class FunctionClass {
  kFloatMath,  // float in, float out; integer arguments compute in float32 (exp, log, sqrt, tanh, ...)
  kSameType,   // numeric in, same type out; identity on integers for floor/ceil/trunc (abs, floor, ...)
  kMinMax,     // two numeric arguments, promoted; result of their type
  kPow,        // two numeric arguments, promoted to at least float32
  kPredicate,  // float in, bool out (isnan, isinf, isfinite)
};

struct FunctionInfo {
  Function function;
  std::string_view name;
  int arity;
  FunctionClass cls;
};

const FunctionInfo& function_info(Function f);
std::optional<FunctionInfo> find_function(std::string_view name);

/// Casts spelled as calls: float16, bfloat16, float32, float64, int32, int64, bool.
std::optional<ScalarType> find_cast(std::string_view name);

/// Every callable name (functions, casts and `select`), for did-you-mean suggestions.
const std::vector<std::string>& callable_names();

}  // namespace kforge::expr
