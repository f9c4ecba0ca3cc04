#include "scalar_expr/expr_builtins.h"

#include <array>

namespace kforge::expr {

namespace {

using FC = FunctionClass;

constexpr std::array<FunctionInfo, 29> kFunctions = {{
    {Function::kMin, "min", 2, FC::kMinMax},
    {Function::kMax, "max", 2, FC::kMinMax},
    {Function::kPow, "pow", 2, FC::kPow},
    {Function::kAbs, "abs", 1, FC::kSameType},
    {Function::kFloor, "floor", 1, FC::kSameType},
    {Function::kCeil, "ceil", 1, FC::kSameType},
    {Function::kTrunc, "trunc", 1, FC::kSameType},
    {Function::kExp, "exp", 1, FC::kFloatMath},
    {Function::kExpm1, "expm1", 1, FC::kFloatMath},
    {Function::kLog, "log", 1, FC::kFloatMath},
    {Function::kLog1p, "log1p", 1, FC::kFloatMath},
    {Function::kLog2, "log2", 1, FC::kFloatMath},
    {Function::kLog10, "log10", 1, FC::kFloatMath},
    {Function::kSqrt, "sqrt", 1, FC::kFloatMath},
    {Function::kRsqrt, "rsqrt", 1, FC::kFloatMath},
    {Function::kSigmoid, "sigmoid", 1, FC::kFloatMath},
    {Function::kErf, "erf", 1, FC::kFloatMath},
    {Function::kSin, "sin", 1, FC::kFloatMath},
    {Function::kCos, "cos", 1, FC::kFloatMath},
    {Function::kTan, "tan", 1, FC::kFloatMath},
    {Function::kAsin, "asin", 1, FC::kFloatMath},
    {Function::kAcos, "acos", 1, FC::kFloatMath},
    {Function::kAtan, "atan", 1, FC::kFloatMath},
    {Function::kSinh, "sinh", 1, FC::kFloatMath},
    {Function::kCosh, "cosh", 1, FC::kFloatMath},
    {Function::kTanh, "tanh", 1, FC::kFloatMath},
    {Function::kIsnan, "isnan", 1, FC::kPredicate},
    {Function::kIsinf, "isinf", 1, FC::kPredicate},
    {Function::kIsfinite, "isfinite", 1, FC::kPredicate},
}};

constexpr std::array<std::pair<std::string_view, ScalarType>, 7> kCasts = {{
    {"float16", ScalarType::kFloat16},
    {"bfloat16", ScalarType::kBFloat16},
    {"float32", ScalarType::kFloat32},
    {"float64", ScalarType::kFloat64},
    {"int32", ScalarType::kInt32},
    {"int64", ScalarType::kInt64},
    {"bool", ScalarType::kBool},
}};

}  // namespace

const FunctionInfo& function_info(Function f) {
  for (const FunctionInfo& info : kFunctions) {
    if (info.function == f) return info;
  }
  return kFunctions[0];  // unreachable: every Function is in the table (checked by a unit test)
}

std::optional<FunctionInfo> find_function(std::string_view name) {
  for (const FunctionInfo& info : kFunctions) {
    if (info.name == name) return info;
  }
  return std::nullopt;
}

std::optional<ScalarType> find_cast(std::string_view name) {
  for (const auto& [spelled, type] : kCasts) {
    if (spelled == name) return type;
  }
  return std::nullopt;
}

const std::vector<std::string>& callable_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const FunctionInfo& info : kFunctions) all.emplace_back(info.name);
    for (const auto& cast : kCasts) all.emplace_back(cast.first);
    all.emplace_back("select");
    return all;
  }();
  return names;
}

}  // namespace kforge::expr
