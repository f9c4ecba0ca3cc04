// Internal to passes/: what plan_cuda (cuda_plan.cpp) asks of the index part of the plan (cuda_plan_index.cpp).
#pragma once

#include <optional>
#include <string>

#include "passes/cuda_plan_index.h"

namespace kforge::passes::cuda_plan_internal {

/// How call c, outside every group, runs; nullopt when no kernel runs it. `no_gemm`: c is a matmul the plan found
/// no GEMM form for (CudaPlan::no_gemm).
std::optional<CudaRun> cuda_call_run(const LoweredProgram& program, uint32_t c, bool no_gemm);

/// The refusal of a call outside every group that no kernel runs (the whole message, "--target cuda: op ...").
std::string no_kernel_message(const KernelCall& call);

}  // namespace kforge::passes::cuda_plan_internal
