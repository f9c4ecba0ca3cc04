// The pipeline: every pass `kforge compile` and `kforge lint` run on a program, in order, for one target
// (compile_target.h). The commands parse their flags into a CompileTarget and CompileChoices, call run_pipeline,
// and hand its CompiledProgram to the target's backend in codegen/; nothing flows back from codegen to the passes.
//
//   verify -> analysis (shapes, constants; fold, dead code) -> layout -> precision -> lower   (compile_program)
//     -> fusion -> memory (the plan, fused groups' values, concats in place) -> multi-kernel -> target plan
//
// A new pass goes where its inputs are ready: on the program (before lower) in compile_program, on the lowered
// program and its fusion plan in run_pipeline; what it needs to know of the target is a field of CompileTarget.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "passes/analysis.h"
#include "passes/compile_target.h"
#include "passes/concat_in_place.h"
#include "passes/cuda_plan.h"
#include "passes/split_views.h"
#include "passes/fusion.h"
#include "passes/layout.h"
#include "passes/lower.h"
#include "passes/lowered_program.h"
#include "passes/op_set.h"
#include "passes/precision.h"
#include "passes/variants.h"
#include "passes/verify.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::passes {

/// The options of the program passes (compile_program); run_pipeline makes them from a target and the choices.
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

/// The program passes, up to the memory plan: if-conversion and canonical ops (if_conversion.h, transforms.h) ->
/// verify -> analyze (again with the symbol aliases, when
/// unify_broadcast_symbols found any) -> fold_constants -> eliminate_dead_code -> analyze (again, when anything
/// changed) -> apply_inferred_types -> plan_layouts -> plan_precision (after each that changed anything: verify,
/// analyze and apply_inferred_types again) -> lower -> plan_memory. The program is normalised in place (attributes
/// converted and defaulted, constants folded, dead ops erased, inferred types written back), so a caller can dump
/// it. Returns nullopt when any error was reported.
std::optional<LoweredProgram> compile_program(ir::Program& program, const OpSet& ops, DiagnosticEngine& diags,
                                              const PipelineOptions& options = {});

/// What the user chose (the compile command's flags); the defaults are `kforge lint`'s.
struct CompileChoices {
  LayoutChoice layout = LayoutChoice::kNchw;         // --layout (auto: CompileTarget::auto_layout)
  bool layout_by_isa = false;                        // --layout auto: also plan CompileTarget::isa_layout
  ir::DataType precision = ir::DataType::kFloat32;   // --precision
  bool float32_interface = true;                     // not --io-precision compute
  bool fuse = true;                                  // not --no-fuse
  bool trace_hooks = false;                          // --trace-hooks: every value is read as a dense tensor
  std::vector<int64_t> multi_kernel_hints;           // --multi-kernel-hints
  int64_t scratch_bytes = 0;                         // --cudnn-workspace-mib, in bytes
  bool cuda_graph = false;                           // --cuda-graph: no dim sized by data (the CUDA target plan)
  bool dump = false;                                 // --dump-lowered: fill CompiledProgram::dump
};

/// Everything the passes decided, for the backend.
struct CompiledProgram {
  LoweredProgram lowered;
  FusionPlan fusion;
  /// Variants of kernel calls (CompileTarget::kernel_call_variants), of GEMM groups and of row groups.
  MultiKernelPlan multi_kernel, gemm_variants, row_variants;
  /// The CUDA target plan (CompileTarget::cuda_plan): what runs each convolution, pool, batch norm and GEMM.
  CudaPlan cuda;
  /// --dump-lowered: the layout and precision reports (when they ran), the lowered program, the groups and the
  /// concat placements.
  std::string dump;
  /// The layout the program was planned in.
  LayoutChoice layout = LayoutChoice::kNchw;
  /// --layout auto on a target with an isa_layout, where blocked_plan_pays (isa_layouts.h): the whole program
  /// planned again in that layout, with the same interface; the class holds both and picks one by the machine's
  /// ISA when it is constructed. Null otherwise: one plan, the code of --layout auto alone.
  std::unique_ptr<CompiledProgram> isa_plan;
};

/// The whole pipeline (the comment at the top) for `target`. Returns nullopt when any error was reported.
/// `second_plan_diags`: where the second layout plan of --layout auto (CompileChoices::layout_by_isa,
/// isa_layouts.h) reports, an engine whose output is dropped (the first plan reported the program's problems; a
/// second plan that fails leaves the first alone); null: no second plan.
std::optional<CompiledProgram> run_pipeline(ir::Program& program, const OpSet& ops, const CompileTarget& target,
                                            const CompileChoices& choices, DiagnosticEngine& diags,
                                            DiagnosticEngine* second_plan_diags = nullptr);

}  // namespace kforge::passes
