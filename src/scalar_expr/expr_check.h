// Name resolution and type rules of the scalar expression language.
//
// The checker takes a parsed Expression and what the op offers (ExprContext: its tensor inputs with their
// dtypes and its attributes with their scalar types) and returns a typed copy:
//  - every node has a compute type: bool < int32 < int64 < float32 < float64 (float16/bfloat16 inputs and
//    casts compute in float32, int8/uint8/int16 in int32);
//  - operands of arithmetic, comparisons, min/max/pow and select branches are promoted to their least upper
//    bound, except that *weak* operands (literals, attributes, and expressions of only those) adapt to a
//    strong operand (an input, `acc`, `n`, an explicit cast) of the same or a higher category
//    (bool < integer < float): `max(x, 0)` for a float32 x is float32, `x * alpha` for a float16 x with a
//    float attribute alpha computes in float32, `x + 1.5` for an int32 x is float32;
//  - every conversion is an explicit kCast node with `implicit` set, and literals are re-typed in place
//    (`0` becomes the float32 literal `0.0f`), so emitters print exactly what the tree says;
//  - errors: unknown names (with did-you-mean and the op's names), non-scalar attributes, arithmetic or
//    ordering on bool, non-bool operands of && || ! and of select's condition, bool mixed with numbers,
//    literals that do not fit their type.
// The math functions (exp, log, tanh, ...) compute in float: an integer argument becomes float32.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalar_expr/expr_parser.h"

namespace kforge::expr {

/// One name an op offers to its expressions.
struct ExprParam {
  enum class Kind { kInput, kAttribute };
  std::string name;
  Kind kind = Kind::kInput;
  std::optional<ScalarType> type;  // input: its dtype; attribute: its scalar type, nullopt if not one number
  std::string type_spelling;       // the attribute's declared type, for messages ("IntArray")
};

/// The names an op offers: tensor inputs (by dtype) and attributes (by scalar type). Built by the caller from
/// the op definition and, for inputs, the program's dtypes; deliberately independent of the opdef model.
class ExprContext {
 public:
  explicit ExprContext(std::string op_name = {}) : op_name_(std::move(op_name)) {}

  ExprContext& input(std::string name, ScalarType dtype);
  ExprContext& attribute(std::string name, ScalarType type);
  /// An attribute that is not one number (IntArray, str, DataType, ...): it can be named by `reduce: axis`
  /// but not used in an expression.
  ExprContext& opaque_attribute(std::string name, std::string type_spelling);

  const ExprParam* find(std::string_view name) const;
  const std::vector<ExprParam>& params() const { return params_; }
  const std::string& op_name() const { return op_name_; }

 private:
  std::string op_name_;
  std::vector<ExprParam> params_;
};

/// Which extra names are visible, for the parts of a reduction (see reduction.h). A plain `compute`
/// expression uses the default: inputs and attributes, no `acc`, no `n`.
struct ExprScope {
  std::string_view part = "compute";        // named in diagnostics: "compute", "init", "combine", "finalize"
  bool inputs = true;                       // may the op's tensor inputs be used
  std::optional<ScalarType> accumulator;    // `acc` with this compute type
  bool count = false;                       // `n`, the number of reduced elements (int64)
};

/// Type-checks `expr` against the op. Reports every error found (not only the first) and returns nullopt
/// if there was any. The result is a typed deep copy; `expr` itself is unchanged, so one parsed expression
/// serves every dtype it is used with.
std::optional<Expression> check_expression(const Expression& expr, const ExprContext& context,
                                           DiagnosticEngine& diags, const ExprScope& scope = {});

/// Converts a typed node to `target` (a compute type): returns it unchanged when it already has that type,
/// re-types a literal in place, or wraps it in an implicit kCast. Literals that cannot be represented
/// (3000000000 as int32, 2.5 as int64) are reported and give nullptr. ±inf converted to an integer type
/// becomes that type's highest / lowest value (so `init: "-inf"` works for an integer max).
NodePtr convert_to(NodePtr node, ScalarType target, DiagnosticEngine& diags);

}  // namespace kforge::expr
