// The template context of one fused group for the CPU (templates/program/fused_cpu.j2): the function's
// signature, the statements of its loops and the call site. Every decision (index type, how each input is
// indexed, which statements run in which row pass, the row patterns' formulas) is made here from the
// FusedGroup (passes/fusion.h); the template only lays the loops out.
//
// Context of a group:
//   name "fused_0", comment, index_type "int32_t" | "int64_t", params [text],
//   setup [line]      at function scope: outer, inner, scalar loads
//   row_setup [line]  at the top of each row i: base, per-row loads
//   passes [{pre [line], body [line], post [line], block}]   one loop over j in [0, inner) per pass with a
//                     body; block > 0: it runs in blocks of `block`, then the rest (a body that calls kforge_math.h,
//                     and the passes of a softmax that keeps its exps: loops that vectorise)
//   runtime_math      a body calls kforge_math.h (the function gets KFORGE_MATH_CLONES)
//   vector_clones     no runtime_math, loops over j of a constant multiple of 32 elements (KFORGE_FUSED_CLONES)
//   row_end [line]    after the passes: per-row stores
// Statements: a line is a list of statements printed on one line; a statement is a map whose `kind` says which
// one fused_cpu.j2's `statement` macro spells, code giving only types, names and expressions:
//   let {type, name, value, const, unused}   [[maybe_unused]] const T name = value;
//   assign {target, op, value}               target op value;   (op "=", "+=", "*=", "/=")
//   walk {rest, at}                          index_t rest = base + j, at = 0;   (a strided element's offset)
//   buffer {type, name}                      std::vector<T> name(static_cast<size_t>(inner));
// Call site (an entry of `steps` with fused = true): name, comment, args [text], traces [{key, expr}].
// The formulas of softmax and layer_norm are those of kernels/linalg.cc (Paddle's CPU kernels):
// softmax's max, sum of exp(x - max) in the element type (kforge_math.h's row_max / row_sum), exp(x - max) / sum;
// layer_norm's mean and variance accumulated in double over the row, then (x - mean) * inv_std * scale + bias in
// the element type.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/size_table.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "template/value.h"

namespace kforge::codegen {

/// `sizes` spells the group's sizes and collects its size parameters (one GroupSizes per group, given to the
/// call after the function).
tmpl::Value fused_group_function(const passes::LoweredProgram& program, const passes::FusedGroup& group,
                                 SizeParams& sizes);

/// `tensor_expr(value)` is the C++ expression of a value's kforge::Tensor at the call site ("x",
/// "values_[3]", "parameters_[0]").
tmpl::Value fused_group_call(const passes::LoweredProgram& program, const passes::FusedGroup& group,
                             const SizeParams& sizes, const std::function<std::string(uint32_t)>& tensor_expr,
                             const std::string& where, bool trace_hooks);

}  // namespace kforge::codegen
