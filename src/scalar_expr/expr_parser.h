// Hand-written parser of the scalar expression language (`compute:` and the parts of `reduce:`).
//
// Grammar (C precedence, lowest first; all binary operators left-associative, `?:` right-associative):
//   expr     := or ('?' expr ':' expr)?
//   or       := and ('||' and)*
//   and      := equality ('&&' equality)*
//   equality := relation (('==' | '!=') relation)?        comparisons do not chain
//   relation := additive (('<' | '<=' | '>' | '>=') additive)?
//   additive := term (('+' | '-') term)*
//   term     := unary (('*' | '/' | '%') unary)*
//   unary    := ('-' | '!') unary | primary
//   primary  := NUMBER | 'inf' | 'true' | 'false' | NAME | NAME '(' (expr (',' expr)*)? ')' | '(' expr ')'
// NUMBER is an integer (`0`, `42`) or a float (`2.5`, `.5`, `1.`, `1e-5`), without a suffix. Callable names:
// the functions of expr_builtins.h, the casts float16/bfloat16/float32/float64/int32/int64/bool, and
// select(c, a, b) (the same node as `c ? a : b`). Function names and arity are checked here; names and
// types by the checker.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "scalar_expr/expr_ast.h"
#include "support/diagnostics.h"

namespace kforge::expr {

/// A parsed (untyped) expression and where it came from. Copyable (deep copy).
struct Expression {
  std::string text;
  SourceLoc loc;  // location of the value's first character as the loader gave it
  NodePtr root;

  Expression() = default;
  Expression(std::string t, SourceLoc l, NodePtr r) : text(std::move(t)), loc(l), root(std::move(r)) {}
  Expression(const Expression& other);
  Expression& operator=(const Expression& other);
  Expression(Expression&&) = default;
  Expression& operator=(Expression&&) = default;
};

/// Parses `text`, the value of a YAML scalar that starts at `loc` in `sources` (loc may be invalid and
/// sources null for text without a file). Reports the first syntax error to `diags` at its exact column
/// and returns nullopt.
std::optional<Expression> parse_expression(std::string_view text, SourceLoc loc, const SourceManager* sources,
                                           DiagnosticEngine& diags);

}  // namespace kforge::expr
