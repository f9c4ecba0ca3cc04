// Rewrites of typed expressions for the fusion pass and the kernel generator: substituting names (to inline
// a producer's expression into its consumer, or to bind attributes to the constants a program gives them)
// and folding constant subtrees. Every function returns a new typed tree and leaves its argument alone; the
// result is typed exactly like the input (same node types, conversions where a substitute's type differs).
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "scalar_expr/expr_ast.h"
#include "scalar_expr/expr_eval.h"

namespace kforge::expr {

/// Replaces name nodes: `replace(name_node)` returns nullptr to keep the name, or a typed tree to put in
/// its place (converted to the name's type with an implicit cast where the types differ).
NodePtr substitute(const Node& typed, const std::function<NodePtr(const Node& name)>& replace);

/// As substitute, but a name the checker converted implicitly (a weak attribute checked at float32, then widened
/// for a float64 operand) is replaced by its substitute converted straight to the type of that use: a value read
/// at run time (an attribute from a tensor, which Paddle keeps in the tensor's precision) is not narrowed through
/// the name's own type.
NodePtr substitute_at_use(const Node& typed, const std::function<NodePtr(const Node& name)>& replace);

/// Makes a typed literal node of compute type `type` holding `value` (converted like a C++ cast); nullopt
/// for a value the type cannot hold (a float out of an integer type's range).
NodePtr make_literal(const Value& value, ScalarType type);

/// Replaces every attribute whose value `value_of` knows by a literal of the type the expression uses it
/// in: with `approximate = false` bound, gelu's select folds (fold_constants) to its erf branch.
NodePtr bind_attributes(const Node& typed, const std::function<std::optional<Value>(std::string_view)>& value_of);

/// Folds what is constant: operators and calls whose operands are all literals (evaluated with the
/// evaluator's semantics, which are the emitted code's), selects with a literal condition, and && / ||
/// with a literal operand. A subtree whose evaluation fails (integer division by zero) is kept as written.
NodePtr fold_constants(const Node& typed);

}  // namespace kforge::expr
