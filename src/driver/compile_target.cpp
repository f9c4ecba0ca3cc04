#include "driver/compile_target.h"

#include <array>
#include <vector>

#include "passes/cuda_plan_index.h"

namespace kforge::driver {

namespace {

using passes::CompileBackend;
using passes::CompileTarget;
using passes::LayoutChoice;

constexpr std::array<CompileTarget, 2> kTargets = {{
    // The CPU calls the kernel library's matmul (or its multi-kernel variants) and convolutions; bias + gelu fuse
    // as an elementwise group; its fused loops have no 16-bit type. --layout auto is NHWC: the kernel library's
    // oneDNN convolutions are fastest on it (BENCHMARKS.md).
    {
        .name = "cpu",
        .backend = CompileBackend::kCpu,
        .auto_layout = LayoutChoice::kNhwc,
        .isa_layout = LayoutChoice::kNchw8c,  // and NCHW8c where it pays, picked on AVX2 machines (isa_layouts.h)
        .blocked_layout = true,  // NCHW8c is the kernel library's (oneDNN's nChw8c)
        .layout_transposed_convolutions = true,
        .unify_broadcast_symbols = false,
        .half_precision = false,  // the kernel library's convolutions and loops are float32
        .float32_ops = nullptr,
        .sizes_from_output_dims = false,
        .alignment = 64,
        .single_call_groups = false,
        .gemm_groups = false,
        .half_floats = false,
        .conv_groups = true,
        .absorb_transposes = false,
        .attention_groups = false,
        .pack_sibling_gemms = false,  // no GEMM groups
        .concat_in_place = true,
        .split_views = true,
        .kernel_call_variants = true,
        .cuda_plan = false,
        .cuda_graph = false,
    },
    // CUDA has no per-op kernels: every op with `compute` becomes a generated kernel, every matmul a GEMM, every
    // convolution a cuDNN call with its bias / batch norm / activation / residual as one epilogue kernel; a
    // transpose next to a generated kernel runs inside it; 16-bit attention is one fused kernel. --layout auto is
    // NHWC: cuDNN's tensor-core convolutions (KRSC filters, kforge_cudnn.cuh) are fastest on it; its transposed
    // convolutions stay NCHW.
    {
        .name = "cuda",
        .backend = CompileBackend::kCuda,
        .auto_layout = LayoutChoice::kNhwc,
        .blocked_layout = false,  // the CUDA kernels take NCHW and NHWC
        .layout_transposed_convolutions = false,
        // CUDA kernels index every dim by an expression: two dynamic input dims that meet in a broadcast (a
        // decoder's target and memory batches) become one symbol, checked equal at run time.
        .unify_broadcast_symbols = true,
        .half_precision = true,
        .float32_ops = &passes::cuda_float32_index_ops,
        // The CUDA interpolation kernels take their size from the output's dims: size tensors known from the dims
        // (`size=[h * 2, w * 2]`) are left out, and the ops computing them are not called.
        .sizes_from_output_dims = true,
        // cudaMalloc's alignment, which cuBLASLt asks of its workspace: cuDNN's workspaces are buffers of the plan.
        .alignment = 256,
        .single_call_groups = true,
        .gemm_groups = true,
        .half_floats = true,
        .conv_groups = true,
        .absorb_transposes = true,
        .attention_groups = true,
        .pack_sibling_gemms = true,
        .concat_in_place = false,
        .split_views = false,
        .kernel_call_variants = false,
        // What runs each convolution, pool, batch norm and GEMM (passes/cuda_plan.h); each cuDNN convolution's
        // workspace is a buffer of the plan, live while it runs, as topk's scratch.
        .cuda_plan = true,
        .cuda_graph = true,
    },
}};

std::string join_names(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  }
  return out;
}

}  // namespace

const CompileTarget* find_compile_target(std::string_view name) {
  for (const CompileTarget& target : kTargets) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

std::string compile_target_names() {
  return compile_target_names([](const CompileTarget&) { return true; });
}

std::string compile_target_names(bool (*has)(const CompileTarget& target)) {
  std::vector<std::string_view> names;
  for (const CompileTarget& target : kTargets) {
    if (has(target)) names.push_back(target.name);
  }
  return join_names(names);
}

}  // namespace kforge::driver
