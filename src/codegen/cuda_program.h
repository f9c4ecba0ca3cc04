// `kforge compile --target cuda`: renders a LoweredProgram and its FusionPlan into
//   DIR/NAME.h             the class (inputs, parameters and outputs are device tensors, GPUPlace());
//   DIR/NAME.cu            its host code: checks, output allocation, the device workspace, one launch per fused
//                          group with an error check after each, and with --cuda-graph a graph per input-dims set;
//   DIR/NAME_kernels.cu    the fused kernels (codegen/cuda_kernels.h) and their launchers;
//   DIR/kforge_runtime.h, DIR/kforge_cuda_runtime.h, DIR/kforge_fused.cuh   the runtime headers.
// Every call must be in a fused group (the CUDA backend has no per-op kernels); a call that is not is an error
// at its place in the program, except a view whose output shares its input's buffer (nothing to do on the
// device). docs/compile.md ("--target cuda") documents the output.
#pragma once

#include "codegen/program_codegen.h"
#include "passes/fusion.h"

namespace kforge::codegen {

struct CudaFilesOptions {
  bool cuda_graph = false;  // --cuda-graph
};

/// Adds the files above to `outputs`. Returns false after reporting errors.
bool generate_cuda_program_files(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                                 tmpl::Environment& env, const ProgramFilesOptions& options,
                                 const CudaFilesOptions& cuda, OutputSet& outputs);

inline constexpr const char* kCudaRuntimeHeaderTemplate = "runtime/kforge_cuda_runtime.h";
inline constexpr const char* kCudaFusedHeaderTemplate = "cuda/kforge_fused.cuh";

}  // namespace kforge::codegen
