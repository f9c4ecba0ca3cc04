// AST of the scalar expression language of the `compute` and `reduce` op YAML keys.
//
// One Node type for every kind keeps the tree easy to walk, copy and rewrite (the fusion pass inlines and
// folds). The parser (expr_parser.h) builds untyped trees; the checker (expr_check.h) returns a typed copy in
// which every node has a compute type and every implicit conversion is an explicit kCast node, so the
// emitters and the evaluator never decide types themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scalar_expr/scalar_type.h"
#include "support/source_manager.h"

namespace kforge::expr {

enum class NodeKind {
  kLiteral,  // 1, 2.5, inf, true
  kName,     // an op input, an attribute, `acc` or `n`
  kUnary,    // -a, !a
  kBinary,   // a + b, a < b, a && b, ...
  kSelect,   // c ? a : b  and  select(c, a, b): operands {c, a, b}
  kCall,     // min(a, b), exp(a), ...
  kCast,     // float32(a), ...; also the implicit conversions the checker inserts
};

enum class UnaryOp { kNeg, kNot };

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMod, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr };

/// Built-in functions other than casts and select (see expr_builtins.h for their rules).
enum class Function {
  kMin, kMax, kPow,
  kAbs, kFloor, kCeil, kTrunc,
  kExp, kExpm1, kLog, kLog1p, kLog2, kLog10, kSqrt, kRsqrt, kSigmoid, kErf,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh,
  kIsnan, kIsinf, kIsfinite,
};

/// What a name refers to; set by the checker.
enum class NameKind { kUnresolved, kInput, kAttribute, kAccumulator, kCount };

struct Literal {
  enum class Kind { kInt, kFloat, kBool };
  Kind kind = Kind::kInt;
  int64_t int_value = 0;
  double float_value = 0;  // as parsed (double); emitters and the evaluator round it to the node's type
  bool bool_value = false;
};

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  // Where diagnostics point: the operator of a unary or binary node, the '?' of `c ? a : b`, the name of a
  // call or cast, the first character of a name or literal. A byte offset into the expression text, and
  // the matching source location (invalid when the text has no source).
  uint32_t offset = 0;
  SourceLoc loc;

  Literal literal;                          // kLiteral
  std::string name;                         // kName: the name; kCall/kCast/kSelect: the function as spelled
  NameKind name_kind = NameKind::kUnresolved;  // kName, after checking
  UnaryOp unary = UnaryOp::kNeg;            // kUnary
  BinaryOp binary = BinaryOp::kAdd;         // kBinary
  Function function = Function::kMin;       // kCall
  ScalarType cast_to = ScalarType::kFloat32;  // kCast: the type as written (float16 stays float16)
  bool implicit = false;                    // kCast inserted by the checker
  bool spelled_select = false;              // kSelect written as select(c, a, b)

  // Set by the checker. `type` is always a compute type (bool, int32, int64, float32, float64). A weak
  // value (a literal or an attribute, or an expression of only those) adapts to the other operand's type
  // within its category, so `max(x, 0)` stays float for a float x and `x * scale` stays float16-in-float32.
  bool typed = false;
  ScalarType type = ScalarType::kBool;
  bool weak = false;

  std::vector<std::unique_ptr<Node>> operands;
};

using NodePtr = std::unique_ptr<Node>;

/// Deep copy.
NodePtr clone(const Node& node);

/// The operator's spelling: "+", "<=", "&&", "-" (unary), "!".
std::string_view spelling(BinaryOp op);
std::string_view spelling(UnaryOp op);

/// S-expression dump for tests and debugging: `(+ (* x scale) 1)`, `(select c a b)`, `(max x 0)`,
/// `(neg x)`, `(! c)`, `(float32 x)`. Literals print as parsed (`1`, `2.5`, `inf`, `true`); with_types appends
/// `:type` to every node and `~` to weak ones (`(max:float32 x:float32 0:float32~)`), and implicit casts
/// print as `(convert:float32 n:int64)`.
std::string dump(const Node& node, bool with_types = false);

/// The distinct names of one kind a checked tree reads, in order of first use: the inputs a fused loop
/// must load (`names_used(root, NameKind::kInput)`; full_like's `value` reads none), the attributes it needs.
std::vector<std::string> names_used(const Node& node, NameKind kind);

/// Calls `fn(node)` on every node, parents before children.
template <typename Fn>
void visit(const Node& node, Fn&& fn) {
  fn(node);
  for (const NodePtr& child : node.operands) visit(*child, fn);
}

}  // namespace kforge::expr
