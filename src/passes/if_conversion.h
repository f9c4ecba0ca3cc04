// If-conversion: a `pd_op.if` whose branches only compute becomes straight-line code that computes both branches
// and selects each result, so that programs Paddle exports with a branch on a run-time value compile
// (paddleformers' Qwen2 and Llama branch on `sequence length > 1` to build their causal mask).
//
//   %r = pd_op.if(%cond) { then ops; cf.yield(%a) } { else ops; cf.yield(%b) }
// becomes
//   then ops; else ops                                        (hoisted before the if, in order)
//   %m = pd_op.logical_or(pd_op.full_like(%a, 0, bool), %cond)  (the condition broadcast to %a's dims)
//   %r = pd_op.where(%m, %a, %b)                              (or %a alone where both branches yield it)
//
// Both branches run, whichever the condition says: the results are the same as Paddle's, but the untaken branch's
// work is done too (cheap for the mask-building branches exports have) and must be valid for the program's
// shapes -- an untaken branch that would fail (a reshape to a size only the other case has) fails the run.
// Converted: ifs whose branches hold no op with effects beyond its results (in-place ops, those ending in '_';
// print, assert) and no nested control flow but other ifs (converted first, innermost first); `pd_op.while` and
// anything else is left for the lowering's located error.
#pragma once

#include <cstddef>

#include "program/program.h"

namespace kforge::passes {

/// Converts every convertible pd_op.if of the program (top level and nested); returns how many.
size_t convert_ifs(ir::Program& program);

}  // namespace kforge::passes
