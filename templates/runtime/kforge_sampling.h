// Sampling arithmetic of Paddle's CPU kernels written once for both targets: deformable_conv's DmcnIm2colBilinear,
// and bicubic_interp's source coordinates and cubic convolution (BicubicInterpolation, cubic_interp).
// The reference CPU kernel library calls it on the host (kernels/detection.cc), and a --target cuda class's
// index-mapped kernels on the device (templates/cuda/kforge_index.cuh), so that both read the same neighbours with
// the same weights in the same order. kforge copies this header beside the outputs with kforge_index.cuh. Needs only
// the C++ standard library (and nvcc for device code).
#ifndef KFORGE_SAMPLING_H_
#define KFORGE_SAMPLING_H_

#include <cmath>
#include <cstdint>

// Host and device under nvcc, an inline host function otherwise.
#if defined(__CUDACC__)
#define KFORGE_SAMPLING_FN __host__ __device__ __forceinline__
#else
#define KFORGE_SAMPLING_FN inline
#endif

namespace kforge {
namespace sampling {

// The floor of T (float or double): floorf / floor on the device, std::floor on the host.
template <typename T>
KFORGE_SAMPLING_FN T sample_floor(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    return floorf(v);
  } else {
    return floor(v);
  }
#else
  return std::floor(v);
#endif
}

// Paddle's DmcnIm2colBilinear: bilinear at (h, w) of one [height, width] plane, 0 outside.
template <typename T>
KFORGE_SAMPLING_FN T dmcn_bilinear(const T* plane, int64_t height, int64_t width, T h, T w) {
  const int64_t h_low = static_cast<int64_t>(sample_floor(h));
  const int64_t w_low = static_cast<int64_t>(sample_floor(w));
  const int64_t h_high = h_low + 1;
  const int64_t w_high = w_low + 1;
  const T lh = h - static_cast<T>(h_low);
  const T lw = w - static_cast<T>(w_low);
  const T hh = 1 - lh;
  const T hw = 1 - lw;
  const T v1 = (h_low >= 0 && w_low >= 0) ? plane[h_low * width + w_low] : T(0);
  const T v2 = (h_low >= 0 && w_high <= width - 1) ? plane[h_low * width + w_high] : T(0);
  const T v3 = (h_high <= height - 1 && w_low >= 0) ? plane[h_high * width + w_low] : T(0);
  const T v4 = (h_high <= height - 1 && w_high <= width - 1) ? plane[h_high * width + w_high] : T(0);
  const T w1 = hh * hw, w2 = hh * lw, w3 = lh * hw, w4 = lh * lw;
  return w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4;
}

// The index clamped into [0, n - 1] (bicubic_interp's taps at the border).
KFORGE_SAMPLING_FN int64_t clamp_index(int64_t v, int64_t n) {
  const int64_t below = v < n - 1 ? v : n - 1;
  return below > 0 ? below : 0;
}

// Paddle's cubic_interp (funcs/interpolate_function.h): the cubic convolution of A = -0.75 at t of four taps, in M
// (float for float32, double for float64).
template <typename M>
KFORGE_SAMPLING_FN M cubic_convolution1(M x, M a) {
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
template <typename M>
KFORGE_SAMPLING_FN M cubic_convolution2(M x, M a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}
template <typename M>
KFORGE_SAMPLING_FN M cubic_interp(M x0, M x1, M x2, M x3, M t) {
  const M a = M(-0.75);
  const M c0 = cubic_convolution2(t + M(1.0), a), c1 = cubic_convolution1(t, a);
  const M c2 = cubic_convolution1(M(1.0) - t, a), c3 = cubic_convolution2(M(1.0) - t + M(1.0), a);
  return x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3;
}

// bicubic_interp's source coordinate of output index o along one axis (Paddle's BicubicInterpolation): the index
// whose neighbours index - 1 .. index + 2 are the taps, and the fraction t past it.
template <typename M>
struct CubicSource {
  int64_t index;
  M t;
};
template <typename M>
KFORGE_SAMPLING_FN CubicSource<M> cubic_source(float ratio, int64_t o, bool align_corners) {
  // Paddle writes ratio * (o + 0.5) - 0.5 with a double literal: the product is computed in double.
  const M n = align_corners ? static_cast<M>(ratio * static_cast<float>(o))
                            : static_cast<M>(ratio * (static_cast<double>(o) + 0.5) - 0.5);
  const int64_t index = static_cast<int64_t>(sample_floor(static_cast<float>(n)));
  return {index, n - static_cast<M>(index)};
}

}  // namespace sampling
}  // namespace kforge

#endif  // KFORGE_SAMPLING_H_
