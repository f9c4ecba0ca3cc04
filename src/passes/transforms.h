// Program-to-program passes: dead-code removal and constant folding. Both keep the program verifiable and
// deterministic, and both report what they did by count (tests check the resulting program's dump()).
#pragma once

#include <cstddef>

#include "passes/analysis.h"
#include "passes/op_set.h"
#include "program/program.h"

namespace kforge::passes {

/// Erases top-level ops none of whose results is used, repeatedly, until none is left. Kept always: fetch
/// and shadow_output ops, program inputs (pd_op.data / pd_op.feed: the interface), parameters, ops with
/// regions, and ops whose op YAML declares `pir::SideEffectTrait` (unless their own is_test attribute is
/// true: inference dropout is pure). Returns the number of ops erased.
size_t eliminate_dead_code(ir::Program& program, const OpSet& ops);

/// Folds what the analysis knows into the program:
///   - a mutable attribute passed as an operand (reshape's shape, scale's scale, ...) whose contents are
///     static becomes the op's attribute (IntArray or Scalar of the signature's type) and the operand
///     becomes null, so the op producing it may die;
///   - a tensor-list operand of a mutable IntArray built by builtin.combine of known one-element tensors
///     is folded the same way.
/// Returns the number of operands folded. Run eliminate_dead_code afterwards.
size_t fold_constants(ir::Program& program, const OpSet& ops, const Analysis& analysis);

/// Rewrites ops into equivalent ones that fuse as expressions or that the targets already run, on the program as
/// read (declared types), before verification, so that they run inside fused groups on every target:
///   - pd_op.bitwise_and / or / not whose operands are declared bool become logical_and / or / not (Paddle's
///     bitwise kernels on bool are the logical ops; the expression language has no bitwise operators): masks built
///     with `&` (paddleformers' Qwen2 / Llama); so does pd_op.multiply of two bools (its kernel's x && y;
///     DETR-style detectors' masks);
///   - pd_op.swiglu(x, y) with y given becomes multiply(silu(x), y), the kernel's own formula (x / (1 + exp(-x)) * y;
///     without y it splits x, and stays);
///   - pd_op.depthwise_conv2d_transpose (what Paddle exports for a conv2d_transpose whose groups equal its input
///     channels, CenterNet's upsampling) becomes conv2d_transpose: the same signature, and Paddle's CPU kernel is
///     conv2d_transpose's (phi DepthwiseConv2dTransposeKernel calls it), so every target's conv2d_transpose path
///     (groups and all) runs it.
/// Returns the number of ops rewritten.
size_t canonicalize_ops(ir::Program& program);

}  // namespace kforge::passes
