// Internal to passes/: what plan_cuda (cuda_plan.cpp) asks of the index part of the plan (cuda_plan_index.cpp).
#pragma once

#include <map>
#include <set>
#include <string>

#include "passes/cuda_plan.h"

namespace kforge::passes::cuda_plan_internal {

/// How each call outside every group of `fusion` runs (CudaPlan::runs), the index maps' forms
/// (CudaPlan::index_maps) and the computing ops' (CudaPlan::compute_forms): call_why gets the reasons an index map
/// or a computing op cannot run (reported as "has no CUDA kernel: "), call_refusal the whole message of a call no
/// kernel runs or a batched matmul that cannot run. Needs the plan's no_gemm and the scratch buffers (topk's) in
/// place.
void plan_runs(const LoweredProgram& program, const FusionPlan& fusion, CudaPlan& plan,
               std::map<uint32_t, std::string>& call_why, std::map<uint32_t, std::string>& call_refusal);
/// The calls whose dims the host reads from a tensor's values by a rule it runs (is_cuda_host_shape_rule) and whose
/// arguments it cannot pass there (a list of tensors, a dtype with no runtime name, values computed in the same fused
/// launch, ...) or that have more than one output: call_refusal gets the whole message, at the op
/// (cuda_plan_shape_read.cpp).
void plan_shape_reads(const LoweredProgram& program, const FusionPlan& fusion,
                      std::map<uint32_t, std::string>& call_refusal);

}  // namespace kforge::passes::cuda_plan_internal
