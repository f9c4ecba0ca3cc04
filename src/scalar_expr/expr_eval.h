// Constant evaluator of typed expressions: the reference semantics of the language.
//
// Every node computes in its own compute type exactly as the emitted C++ does: float32 nodes in `float`
// (with the same <cmath> functions: std::exp(float), 1.0f / std::sqrt(x), std::max, ...), float64 in
// `double`, integers in int32_t / int64_t. Where the emitted code would have undefined behaviour the
// evaluator reports an error instead: integer division or remainder by zero, INT_MIN / -1, a float cast to
// an integer type that cannot hold it (or NaN). Signed integer +, -, * wrap in two's complement.
// Used for constant folding and as the oracle of the fused-kernel tests.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "scalar_expr/expr_ast.h"

namespace kforge::expr {

/// One scalar: its compute type and the payload that type uses.
struct Value {
  ScalarType type = ScalarType::kFloat32;
  double f = 0;     // float32 (already rounded to float) and float64
  int64_t i = 0;    // int32 and int64
  bool b = false;   // bool

  static Value of_bool(bool v) { return {ScalarType::kBool, 0, 0, v}; }
  static Value of_int(int64_t v, ScalarType t = ScalarType::kInt64) { return {t, 0, v, false}; }
  static Value of_float(double v, ScalarType t = ScalarType::kFloat64) {
    return {t, t == ScalarType::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v, 0, false};
  }
  /// The value as a double (bool 0/1, integers exactly up to 2^53).
  double as_double() const;
  friend bool operator==(const Value&, const Value&) = default;
};

/// "float32 0.5", "int64 3", "bool true".
std::string to_string(const Value& v);

/// Converts like a C++ static_cast to the compute type of `target`; nullopt (and `error` set) for a float
/// that an integer type cannot hold.
std::optional<Value> convert_value(const Value& v, ScalarType target, std::string* error = nullptr);

/// Values of the names. Values of any type are accepted and converted to the type the checker gave the
/// name (an attribute given as float64 0.1 becomes float32 0.1f where the expression uses it as float32).
struct EvalBindings {
  std::function<std::optional<Value>(std::string_view)> input;
  std::function<std::optional<Value>(std::string_view)> attribute;
  std::optional<Value> accumulator;
  std::optional<int64_t> count;

  static EvalBindings from_maps(std::map<std::string, Value, std::less<>> inputs,
                                std::map<std::string, Value, std::less<>> attributes);
};

/// Evaluates a typed node. On failure returns nullopt and sets `error` (if given) to a lowercase message:
/// "integer division by zero", "no value for input 'x'", "value 1e+10 is out of range for int32", ...
std::optional<Value> evaluate(const Node& typed, const EvalBindings& bindings, std::string* error = nullptr);

}  // namespace kforge::expr
