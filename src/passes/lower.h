// Lowering a verified, analysed Program to a LoweredProgram (lowered_program.h), the memory plan, and the
// whole pipeline that `kforge compile` and the reference interpreter run.
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

struct PipelineOptions {
  VerifyOptions verify;
  AnalysisOptions analysis;
  LowerOptions lower;
  bool fold_constants = true;
  bool eliminate_dead_code = true;
  uint32_t alignment = 64;
  /// The activation layout plan (layout.h); kNchw leaves the program's layouts as they are.
  LayoutChoice layout = LayoutChoice::kNchw;
  LayoutOptions layout_options;
  /// Where to put what the layout plan did (may be null).
  LayoutReport* layout_report = nullptr;
  /// The compute precision plan (precision.h): float16 or bfloat16 rewrites the program's float32 activations and
  /// parameters; float32 leaves them. The converted parameters' file dtypes go to LoweredProgram's parameters.
  ir::DataType precision = ir::DataType::kFloat32;
  /// Ops the target computes in float32 only: they stay float32 between casts (plan_precision's float32_ops).
  std::set<std::string> precision_float32_ops;
  /// false (--io-precision compute): the float32 inputs and outputs take the precision's dtype instead of casts.
  bool precision_float32_interface = true;
  /// Where to put what the precision plan did (may be null).
  PrecisionReport* precision_report = nullptr;
  /// Input dims that meet in a broadcast share one symbol (broadcast_symbol_aliases, analysis.h): the analysis
  /// runs again with those aliases when the first found any. Also sets AnalysisOptions::equal_broadcast_dims: the
  /// other symbolic dims that meet in a broadcast are taken as equal (LoweredProgram::dim_equalities).
  bool unify_broadcast_symbols = false;
};

/// verify -> analyze (again with the symbol aliases, when unify_broadcast_symbols found any) -> fold_constants -> eliminate_dead_code -> analyze (again, when anything changed) ->
/// apply_inferred_types -> plan_layouts -> plan_precision (after each that changed anything: verify, analyze and
/// apply_inferred_types again) -> lower -> plan_memory. The program is normalised in place (attributes converted and
/// defaulted, constants folded, dead ops erased, inferred types written back), so a caller can dump it.
/// Returns nullopt when any error was reported.
std::optional<LoweredProgram> compile_program(ir::Program& program, const OpSet& ops, DiagnosticEngine& diags,
                                              const PipelineOptions& options = {});

}  // namespace kforge::passes
