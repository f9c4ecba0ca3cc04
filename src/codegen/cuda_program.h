// `kforge compile --target cuda`: renders a LoweredProgram and its FusionPlan into
//   DIR/NAME.h             the class (inputs, parameters and outputs are device tensors, GPUPlace()), from
//                          templates/program/cuda/program.h.j2 (codegen/cuda_class_context.h);
//   DIR/NAME.cu            its host code, from templates/program/cuda/program.cu.j2: checks, output allocation,
//                          the device workspace, one launch per fused group with an error check after each, and
//                          with --cuda-graph a graph per input-dims set;
//   DIR/NAME_kernels.cu    the fused kernels (codegen/cuda_kernels.h) and their launchers, in
//                          templates/program/cuda/kernels.cu.j2;
//   DIR/kforge_runtime.h, DIR/kforge_cuda_runtime.h, DIR/kforge_fused.cuh   the runtime headers;
//   with GEMM groups also kforge_gemm.cuh, kforge_half.cuh and kforge_cublaslt.cuh, and with
//   --multi-kernel-hints kforge_cuda_timer.cuh, kforge_gemm_f32.cuh, kforge_multikernel.h and, for 16-bit GEMM
//   sites with tensor-core variants, kforge_gemm_tc.cuh (codegen/cuda_gemm.h); kforge_half.cuh also when a
//   fused group loads or stores float16 / bfloat16 values (its conversions).
//   With row groups and --multi-kernel-hints also kforge_row_variants.cuh (codegen/cuda_row_variants.h).
// Every call is in a fused group (the CUDA backend has no per-op kernels; a GEMM group is a cuBLASLt or SIMT GEMM
// call), or runs as the CUDA target plan (passes/cuda_plan.h) says: a convolution, pool or batch norm of its form,
// an index map (a CudaIndexMap's for the data-movement and select ops and a batched matmul), a compaction, a copy,
// or nothing; the plan refused every other call at its place in the program before the backend runs.
// docs/compile.md ("--target cuda") documents the output.
#pragma once

#include "codegen/program_codegen.h"
#include "passes/cuda_plan.h"
#include "passes/fusion.h"
#include "passes/variants.h"

namespace kforge::codegen {

struct CudaFilesOptions {
  bool cuda_graph = false;  // --cuda-graph
  /// --multi-kernel-hints: passes::plan_cuda_gemm_variants (a dispatcher per GEMM group); null: cuBLASLt alone.
  const passes::MultiKernelPlan* multi_kernel = nullptr;
  /// --multi-kernel-hints: passes::plan_cuda_row_variants (a dispatcher per row group); null: the launchers
  /// choose by row length.
  const passes::MultiKernelPlan* row_multi_kernel = nullptr;
};

/// Adds the files above to `outputs`. `target_plan`: passes::plan_cuda's of `program` and `plan`. Returns false
/// after reporting errors.
bool generate_cuda_program_files(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                                 const passes::CudaPlan& target_plan, tmpl::Environment& env, const ProgramFilesOptions& options,
                                 const CudaFilesOptions& cuda, OutputSet& outputs);

/// The class header's template (templates/program/cuda/, context: codegen/cuda_class_context.h).
inline constexpr const char* kCudaClassHeaderTemplate = "program/cuda/program.h.j2";
/// Its host code's template (the class context plus the host keys of cuda_program.cpp).
inline constexpr const char* kCudaClassSourceTemplate = "program/cuda/program.cu.j2";
/// The fused kernels' file (the group kernels are text of codegen/cuda_kernels.h).
inline constexpr const char* kCudaKernelsTemplate = "program/cuda/kernels.cu.j2";
inline constexpr const char* kCudaRuntimeHeaderTemplate = "runtime/kforge_cuda_runtime.h";
inline constexpr const char* kCudaFusedHeaderTemplate = "cuda/kforge_fused.cuh";

}  // namespace kforge::codegen
