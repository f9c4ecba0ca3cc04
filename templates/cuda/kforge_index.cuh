// Device helpers of the index-mapped kernels that `kforge compile --target cuda` generates (NAME_kernels.cu,
// src/codegen/cuda_index.h): the source coordinates of Paddle's nearest and bilinear interpolation, computed
// exactly as Paddle's CPU kernels do (float32 ratios, the half-pixel centre in double), so that a kernel reads the
// same source elements and weights as kernels/nn.cc and kernels/resize.cc. kforge copies this header beside the
// outputs when a program interpolates. Needs nvcc; no other dependency.
#ifndef KFORGE_INDEX_CUH_
#define KFORGE_INDEX_CUH_

#include <cuda_runtime.h>

#include <cstdint>

namespace kforge {
namespace cuda_index {

// Source units per output unit along one axis: (in - 1) / (out - 1) with align_corners, else 1 / scale when a
// scale was given (scale > 0), else in / out; 0 for an output of one element.
__device__ __forceinline__ float interp_ratio(int64_t in, int64_t out, float scale, bool align_corners) {
  if (out <= 1) return 0.f;
  if (align_corners) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return scale > 0.f ? static_cast<float>(1. / scale) : static_cast<float>(in) / static_cast<float>(out);
}

// The source index of output index o for nearest interpolation.
__device__ __forceinline__ int64_t nearest_source(float ratio, int64_t o, int64_t in, bool align_corners) {
  const int64_t i = align_corners ? static_cast<int64_t>(ratio * static_cast<float>(o) + 0.5f)
                                  : static_cast<int64_t>(ratio * static_cast<float>(o));
  return i < in ? i : in - 1;
}

// The two source indices of output index o for bilinear interpolation and their weights.
struct Tap {
  int64_t lo, hi;
  float w_lo, w_hi;
};

// align_flag: align_mode 0 without align_corners (half-pixel centres), else o * ratio.
__device__ __forceinline__ Tap bilinear_tap(int64_t o, int64_t in, float ratio, bool align_flag) {
  // Paddle writes ratio * (o + 0.5) - 0.5 with a double literal: the product is computed in double.
  const double centre = static_cast<double>(ratio) * (static_cast<double>(o) + 0.5) - 0.5;
  int64_t lo = align_flag ? static_cast<int64_t>(static_cast<int>(centre))
                          : static_cast<int64_t>(static_cast<int>(ratio * static_cast<float>(o)));
  lo = lo > 0 ? lo : 0;
  const int64_t hi = lo + 1 < in - 1 ? lo + 1 : in - 1;
  float src = static_cast<float>(centre);
  src = src > 0 ? src : 0;
  const float d = align_flag ? src - static_cast<float>(lo) : ratio * static_cast<float>(o) - static_cast<float>(lo);
  return Tap{lo, hi, 1.f - d, d};
}

}  // namespace cuda_index
}  // namespace kforge

#endif  // KFORGE_INDEX_CUH_
