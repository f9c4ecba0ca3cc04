// Device helpers of the index-mapped kernels that `kforge compile --target cuda` generates (NAME_kernels.cu,
// src/codegen/cuda_index.h): the source coordinates of Paddle's nearest and bilinear interpolation, computed
// exactly as Paddle's CPU kernels do (float32 ratios, the half-pixel centre in double), so that a kernel reads the
// same source elements and weights as kernels/nn.cc and kernels/resize.cc, and grid_sample's coordinates and pixels
// as kernels/losses.cc computes them. kforge copies this header beside the outputs when a program interpolates or
// samples a grid. Needs nvcc; no other dependency.
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

// grid_sample (kernels/losses.cc, Paddle's grid_sample_kernel.cc): the floor and round of T (float or double).
template <typename T>
__device__ __forceinline__ T grid_floor(T v) {
  if constexpr (sizeof(T) == 4) {
    return floorf(v);
  } else {
    return floor(v);
  }
}
template <typename T>
__device__ __forceinline__ T grid_round(T v) {
  if constexpr (sizeof(T) == 4) {
    return roundf(v);
  } else {
    return round(v);
  }
}

// Paddle's Unnormalize then Clip of one grid coordinate: [-1, 1] to pixels of an axis of `size` samples, clamped
// (padding 1: border) or folded (2: reflection) into range; 0: zeros, left as it is.
template <typename T>
__device__ __forceinline__ T grid_coordinate(T g, int64_t size, bool align_corners, int padding) {
  const int64_t max_val = size - 1;
  T v = align_corners ? (g + T(1)) * static_cast<T>(max_val * 0.5)
                      : (g + T(1)) * static_cast<T>((max_val + 1) * 0.5) - static_cast<T>(0.5);
  auto clamp = [max_val](T a) {
    const T low = a < T(0) ? T(0) : a;  // std::max(a, 0), std::min(., max_val): a NaN stays NaN
    return static_cast<T>(max_val) < low ? static_cast<T>(max_val) : low;
  };
  if (padding == 1) {
    v = clamp(v);
  } else if (padding == 2) {
    if (align_corners) {
      if (max_val == 0) return T(0);
      const T range = static_cast<T>(max_val * 2);
      const T a = v < T(0) ? -v : v;
      const T extra = a - grid_floor(a / range) * range;
      v = range - extra < extra ? range - extra : extra;
    } else {
      const T range = static_cast<T>((max_val + 1) * 2);
      const T shifted = v + static_cast<T>(0.5);
      const T a = shifted < T(0) ? -shifted : shifted;
      const T extra = a - grid_floor(a / range) * range;
      v = (range - extra < extra ? range - extra : extra) - static_cast<T>(0.5);
      v = clamp(v);
    }
  }
  return v;
}

// The pixel of an [h, w] plane at the rounded (x, y); 0 outside it (and for a NaN coordinate).
template <typename T>
__device__ __forceinline__ T grid_pixel(const T* plane, int64_t h, int64_t w, T x, T y) {
  if (!(x >= 0 && x <= static_cast<T>(w - 1) && y >= 0 && y <= static_cast<T>(h - 1))) return T(0);
  return plane[static_cast<int64_t>(grid_round(y)) * w + static_cast<int64_t>(grid_round(x))];
}

}  // namespace cuda_index
}  // namespace kforge

#endif  // KFORGE_INDEX_CUH_
