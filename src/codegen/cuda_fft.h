// The host code of fft_r2c and of `real` / `abs` of its complex result under `kforge compile --target cuda`: the
// template context of each step (templates/program/cuda/fft.j2) from the form the CUDA target plan chose for it
// (passes/cuda_plan.h's CudaFft and CudaComplexPart). Both run through templates/cuda/kforge_cufft.cuh: cuFFT's
// real-to-complex transform with a plan kept per call site, and one kernel per complex part. Nothing here fails.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/cuda_conv.h"
#include "passes/cuda_plan.h"
#include "template/value.h"

namespace kforge::codegen {

/// The context of one fft_r2c step (`fft_step`): number (its plan's index in the class's FftState), launch,
/// description, type ("float" / "double"), shape (the C++ initializer of kforge::cuda_fft::FftShape: literals, or
/// expressions over the symbols), x, out (pointer expressions, out as the element type of its parts) and scratch
/// (the call's scratch buffer).
tmpl::Value cuda_fft_step(const passes::CudaFft& site, int64_t number, int64_t launch, const std::string& description,
                          const CudaBufferExpr& buffer, const SizeExpr& size, const std::string& scratch);

/// The context of one complex-part step (`complex_part_step`): launch, description, type, part (the
/// kforge::cuda_fft::Part enumerator), z, y (pointer expressions) and count.
tmpl::Value cuda_complex_part_step(const passes::CudaComplexPart& site, int64_t launch, const std::string& description,
                                   const CudaBufferExpr& buffer, const SizeExpr& size);

inline constexpr const char* kCudaFftHeaderTemplate = "cuda/kforge_cufft.cuh";

}  // namespace kforge::codegen
