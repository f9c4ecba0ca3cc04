// The scratch that some CUDA index kernels need beyond their inputs and outputs, planned with the rest of the memory
// (add_scratch_buffers: live while the call runs, shared with the other calls' scratches): topk, whose kernel runs
// the CPU kernel's selection over each line's indices (templates/cuda/kforge_index.cuh's topk_line) and needs an
// int32 entry per element of its line, or only k of them where the line is known to take partial_sort's path;
// argsort, whose kernel sorts each line's indices as the CPU kernel (argsort_line), an entry per element; rnn, whose
// projection kernel writes the gates of every step of a layer there (kforge_rnn.cuh); fft_r2c, whose cuFFT transform
// writes its one-sided spectrum there, after x permuted where its axes are not the last ones (kforge_cufft.cuh).
#pragma once

#include <vector>

#include "passes/memory_plan.h"

namespace kforge::passes {

struct FusionPlan;

/// The scratch entries a topk line of `len` elements takes: k where partial_sort's path is known at generation time
/// (k * 64 < len, the CPU kernel's rule), else len (nth_element's path needs the whole line). Codegen's stride.
SymExpr topk_line_entries(int64_t k, const SymExpr& len);

/// The scratch of every call outside the fused groups that needs one under --target cuda.
std::vector<ScratchNeed> cuda_index_scratch(const LoweredProgram& program, const FusionPlan& fusion);

}  // namespace kforge::passes
