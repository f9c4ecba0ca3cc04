// Lowering a verified, analysed Program to a LoweredProgram (lowered_program.h). The passes around it run in
// pipeline.h's order.
#pragma once

#include <optional>

#include "passes/analysis.h"
#include "passes/layout.h"
#include "passes/precision.h"
#include "passes/lowered_program.h"
#include "passes/memory_plan.h"
#include "passes/op_set.h"
#include "passes/verify.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::passes {

struct LowerOptions {
  /// Values with static known contents of at most this many elements become constants (a splat of any
  /// size too); larger ones keep the call that computes them.
  int64_t max_constant_elements = 4096;
  /// Interpolation's out_size / size_tensor inputs whose contents are known at generation time (constants or
  /// expressions of the dims: `size=[h * 2, w * 2]` from paddle.shape) are left out (absent): the output's dims
  /// already hold them. For backends whose interpolation kernel takes the size from the output's dims (--target
  /// cuda), so that the ops computing those tensors (shape64, slice, scale, ...) are not called.
  bool sizes_from_output_dims = false;
};

/// Lowers the top-level block. Errors at the op: an op without a kernel (`invoke`/composite-only ops, or
/// control flow), a shape that depends on run-time data, a kernel argument that cannot be bound. Buffers are
/// assigned (aliasing included) but not placed: run plan_memory afterwards.
std::optional<LoweredProgram> lower_program(const ir::Program& program, const OpSet& ops, const Analysis& analysis,
                                            DiagnosticEngine& diags, const LowerOptions& options = {});

}  // namespace kforge::passes
