// The `reduce:` op YAML key: a reduction described by expressions.
//
//   reduce: {init: "0", combine: "acc + x", finalize: "acc / n", axis: axis}
//
//  - init      the accumulator's starting value, an expression of the attributes only (`0`, `-inf`, `1`);
//              it must be the identity of combine, because tree reductions start every partial with it;
//  - combine   the next accumulator from `acc` and one element of the reduced input (named as the op
//              names it, usually `x`), plus attributes; it must be associative and commutative, because
//              parallel reductions combine partial accumulators in any order (`merge` below);
//  - finalize  optional: the result from `acc`, `n` (the number of reduced elements, int64) and attributes;
//  - axis      the name of the op attribute that lists the reduced axes (`axis` in Paddle's sum/mean/max).
//
// The accumulator type is, in order: the one the caller asks for; init's type when init is not a bare
// number (`float64(0)` accumulates in float64, `false` in bool); else the reduced input's compute type
// (a float16 input accumulates in float32).
#pragma once

#include <optional>
#include <string>

#include "scalar_expr/expr_check.h"

namespace kforge::expr {

/// One string of op YAML as the loader keeps it: its value and the location of its first character.
struct RawString {
  std::string text;
  SourceLoc loc;
};

/// The `reduce:` mapping as the loader keeps it; absent keys are nullopt.
struct RawReduce {
  std::optional<RawString> init;
  std::optional<RawString> combine;
  std::optional<RawString> finalize;
  std::optional<RawString> axis;
  SourceLoc loc;  // the `reduce` key, for missing-key errors
};

/// A parsed reduction (untyped).
struct Reduction {
  Expression init;
  Expression combine;
  std::optional<Expression> finalize;
  std::string axis;
  SourceLoc axis_loc;
  SourceLoc loc;
};

/// Parses the three expressions and checks that init, combine and axis are present and axis is a name.
/// Reports every error found; nullopt if any.
std::optional<Reduction> parse_reduction(const RawReduce& raw, const SourceManager* sources, DiagnosticEngine& diags);

/// A reduction checked against one op and input dtype.
struct TypedReduction {
  std::string input;               // the reduced tensor input (the one combine reads)
  ScalarType input_type;           // its compute type
  ScalarType accumulator;          // compute type of `acc`
  Expression init;                 // of type `accumulator`
  Expression combine;              // of type `accumulator`, over `acc` and the input
  Expression merge;                // combine with the input read as another partial accumulator (type
                                   // `accumulator`): emit it with the input name mapped to that partial
  std::optional<Expression> finalize;  // over `acc` and `n`
  ScalarType result;               // finalize's type, or `accumulator` without finalize
  std::string axis;                // the axis attribute's name
};

/// Checks a reduction against the op (its inputs with dtypes, its attributes). The reduced input is the one
/// tensor input that combine names (the op's first input if it names none). `accumulator` overrides the
/// accumulator type. Reports every error found; nullopt if any.
std::optional<TypedReduction> check_reduction(const Reduction& reduction, const ExprContext& context,
                                              DiagnosticEngine& diags,
                                              std::optional<ScalarType> accumulator = std::nullopt);

}  // namespace kforge::expr
