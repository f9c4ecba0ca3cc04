// What `kforge compile --target NAME` means, said once: which groups the fusion pass makes for the target,
// what --multi-kernel-hints give variants to, which flags it takes, and which backend renders it. The compile
// command asks this description instead of comparing the target's name.
#pragma once

#include <string>
#include <string_view>

namespace kforge::driver {

enum class CompileBackend {
  kCpu,   // codegen/program_codegen.h: NAME.h, NAME.cc calling the kernel library
  kCuda,  // codegen/cuda_program.h: NAME.h, NAME.cu, NAME_kernels.cu
};

struct CompileTarget {
  std::string_view name;  // as --target spells it
  CompileBackend backend;
  /// passes::FusionOptions: a lone fusible call still becomes a group (the target has no per-op kernels).
  bool single_call_groups;
  /// passes::FusionOptions: matmul (+ bias [+ gelu]) as one GEMM group.
  bool gemm_groups;
  /// passes::FusionOptions: groups load and store float16 / bfloat16 values.
  bool half_floats;
  /// passes::FusionOptions: the op set's conv2d_fused makes convolution groups.
  bool conv_groups;
  /// passes::FusionOptions: transposes next to elementwise / row groups become their index maps.
  bool absorb_transposes;
  /// passes::FusionOptions: 16-bit scaled dot-product attention as one fused kernel.
  bool attention_groups;
  /// --multi-kernel-hints give variants to the kernel calls (passes::plan_multi_kernels); otherwise to the GEMM
  /// and row groups (passes::plan_cuda_gemm_variants, plan_cuda_row_variants).
  bool kernel_call_variants;
  /// --cuda-graph is accepted.
  bool cuda_graph;
};

/// The target named `name`, or null.
const CompileTarget* find_compile_target(std::string_view name);

/// "cpu or cuda": the known names, for a usage error.
std::string compile_target_names();

}  // namespace kforge::driver
