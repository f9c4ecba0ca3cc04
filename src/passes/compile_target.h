// What `kforge compile --target NAME` means, said once: every fact about a target that the pipeline
// (passes/pipeline.h) or the compile command asks, so that neither compares a target's name. The table of targets
// is src/driver/compile_target.cpp, the one place that names the backends' own facts (it sits above codegen/).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "passes/layout.h"

namespace kforge::passes {

/// Which backend of codegen/ renders a target's program.
enum class CompileBackend {
  kCpu,   // codegen/program_codegen.h: NAME.h, NAME.cc calling the kernel library
  kCuda,  // codegen/cuda_program.h: NAME.h, NAME.cu, NAME_kernels.cu
};

struct CompileTarget {
  std::string_view name;  // as --target spells it
  CompileBackend backend = CompileBackend::kCpu;

  // --- layout (plan_layouts) ---
  /// What --layout auto means.
  LayoutChoice auto_layout = LayoutChoice::kNhwc;
  /// --layout auto also plans this layout (kNchw: none) and, where the plan differs materially from auto_layout's
  /// (blocked_plan_pays, isa_layouts.h), the class holds both and picks one at construction from the machine's ISA.
  LayoutChoice isa_layout = LayoutChoice::kNchw;
  /// --layout nchw8c is accepted (the kernel library's blocked nChw8c, oneDNN's).
  bool blocked_layout = false;
  /// LayoutOptions::transposed_convolutions: conv2d_transpose may join an NHWC region.
  bool layout_transposed_convolutions = true;

  // --- analysis ---
  /// PipelineOptions::unify_broadcast_symbols: the backend indexes every dim by an expression, so two dynamic
  /// input dims that meet in a broadcast become one symbol, checked equal at run time.
  bool unify_broadcast_symbols = false;

  // --- precision (plan_precision) ---
  /// --precision float16 / bfloat16 is accepted.
  bool half_precision = false;
  /// The ops whose kernels compute in float32 (and float64) only: they stay float32 between casts. Null: none.
  const std::set<std::string>& (*float32_ops)() = nullptr;

  // --- lower (lower_program) ---
  /// LowerOptions::sizes_from_output_dims: the interpolation kernels take their size from the output's dims.
  bool sizes_from_output_dims = false;

  // --- memory (plan_memory) ---
  /// The workspace buffers' alignment in bytes.
  uint32_t alignment = 64;

  // --- fusion (FusionOptions) ---
  /// A lone fusible call still becomes a group (the target has no per-op kernels).
  bool single_call_groups = false;
  /// matmul (+ bias [+ gelu]) as one GEMM group.
  bool gemm_groups = false;
  /// Groups load and store float16 / bfloat16 values.
  bool half_floats = false;
  /// The op set's conv2d_fused makes convolution groups.
  bool conv_groups = false;
  /// Transposes next to elementwise / row groups become their index maps.
  bool absorb_transposes = false;
  /// Scaled dot-product attention as one fused kernel (16-bit; float32 where it pays).
  bool attention_groups = false;

  // --- memory after fusion ---
  /// GEMM groups that multiply one x by parameter weights of one shape run as one batched product
  /// (pack_sibling_gemms), their outputs side by side.
  bool pack_sibling_gemms = false;
  /// A concat's inputs are written in their slices of its output (place_concat_inputs).
  bool concat_in_place = false;
  /// A split's pieces are views of its input where they are contiguous slices of it (make_split_views).
  bool split_views = false;

  // --- multi-kernel ---
  /// --multi-kernel-hints give variants to the kernel calls (plan_multi_kernels); otherwise to the GEMM and row
  /// groups (plan_cuda_gemm_variants, plan_cuda_row_variants).
  bool kernel_call_variants = true;

  // --- target plan ---
  /// The CUDA target plan (cuda_plan.h, plan_cuda): each convolution, pool, batch norm and GEMM given its form or
  /// refused at the op, and a scratch buffer of --cudnn-workspace-mib per cuDNN convolution in the memory plan;
  /// false: no plan, and the flag is not accepted.
  bool cuda_plan = false;

  // --- codegen ---
  /// --cuda-graph is accepted.
  bool cuda_graph = false;
};

}  // namespace kforge::passes
