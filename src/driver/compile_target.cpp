#include "driver/compile_target.h"

#include <array>

namespace kforge::driver {

namespace {

constexpr std::array<CompileTarget, 2> kTargets = {{
    // The CPU calls the kernel library's matmul (or its multi-kernel variants) and convolutions; bias + gelu fuse
    // as an elementwise group; its fused loops have no 16-bit type.
    {"cpu", CompileBackend::kCpu, /*single_call_groups=*/false, /*gemm_groups=*/false, /*half_floats=*/false,
     /*conv_groups=*/true, /*absorb_transposes=*/false, /*attention_groups=*/false, /*kernel_call_variants=*/true,
     /*cuda_graph=*/false},
    // CUDA has no per-op kernels: every op with `compute` becomes a generated kernel, every matmul a GEMM, every
    // convolution a cuDNN call with its bias / batch norm / activation / residual as one epilogue kernel; a
    // transpose next to a generated kernel runs inside it; 16-bit attention is one fused kernel.
    {"cuda", CompileBackend::kCuda, /*single_call_groups=*/true, /*gemm_groups=*/true, /*half_floats=*/true,
     /*conv_groups=*/true, /*absorb_transposes=*/true, /*attention_groups=*/true, /*kernel_call_variants=*/false,
     /*cuda_graph=*/true},
}};

}  // namespace

const CompileTarget* find_compile_target(std::string_view name) {
  for (const CompileTarget& target : kTargets) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

std::string compile_target_names() {
  std::string out;
  for (size_t i = 0; i < kTargets.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == kTargets.size() ? " or " : ", ") + std::string(kTargets[i].name);
  }
  return out;
}

}  // namespace kforge::driver
