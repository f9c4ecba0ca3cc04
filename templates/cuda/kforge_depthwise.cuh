// kforge direct depthwise convolution for `kforge compile --target cuda` (header-only, CUDA runtime only): an NHWC
// depthwise conv2d (one filter per channel: groups == in channels == out channels) as one kernel with the
// convolution group's epilogue applied in registers. cuDNN's NHWC depthwise convolutions measured 1.6x slower than
// its NCHW ones on mobilenet_v2 (H100, BENCHMARKS.md); this kernel keeps such models in NHWC and saves the epilogue's
// second pass over the output. kforge_cudnn.cuh's ConvSite runs it instead of cuDNN where it applies.
//
// Each thread computes kVector adjacent channels of one output pixel (4 where the channel count and the pointers
// allow 4-element vector accesses, else 1): the threads of a warp read consecutive channels of the same input pixels,
// so every load is coalesced. The r * s taps of a channel are read from Paddle's filter [c, 1, r, s] (the same bytes
// as cuDNN's KRSC filter of a depthwise convolution), or, where the generated code rewrote the filter when the
// parameters were bound (fold_filter: the batch norm folded in), from the tap-major [r, s, c] copy, where a tap's four
// channels are one vector load instead of four scalar ones. 3 x 3 windows unroll; offsets are 32-bit where they fit.
//
// The input, the filter and the output are one element type T: float, or __half / __nv_bfloat16 (kforge compile
// --precision), whose values are converted to float on load; the products are summed and the epilogue applied in
// float, and the result rounded to T when it is stored.
#ifndef KFORGE_DEPTHWISE_CUH_
#define KFORGE_DEPTHWISE_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kforge_channel_epilogue.cuh"

namespace kforge {
namespace cuda_conv {

// Input [n, h, w, c], filter [c, r, s] (or tap-major [r, s, c]: DepthwiseShape::tap_major); strides, pads and
// dilations as conv2d's.
struct DepthwiseShape {
  int64_t n, h, w, c, out_h, out_w;
  int r, s, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  bool tap_major = false;  // the filter is [r, s, c]: a tap's four channels are one vector load
  float input_max = 0.0f;  // > 0: inputs are clamped at this (the relu6 of the convolution that produced them)
};

// One thread per kVector channels of one output pixel. kR x kS > 0: the window's size as a constant (the loops
// unroll; 3 x 3 is mobilenet's), 0: d.r x d.s at run time. I: the index type, 32-bit where every offset fits
// (64-bit divisions by run-time values cost tens of instructions each). kTapMajor: the filter's layout. T: the
// element type; kVector elements are one Vector<T, kVector> (kforge_channel_epilogue.cuh).
template <typename T, int kVector, bool kTapMajor, int kR, int kS, typename I>
__global__ void __launch_bounds__(256) depthwise_nhwc_kernel(const T* __restrict__ x, const T* __restrict__ w, T* y,
                                                             DepthwiseShape d, Epilogue e) {
  using Vec = Vector<T, kVector>;
  const int r = kR > 0 ? kR : d.r, s = kS > 0 ? kS : d.s;
  const I c = static_cast<I>(d.c), h = static_cast<I>(d.h), wd = static_cast<I>(d.w);
  const I out_h = static_cast<I>(d.out_h), out_w = static_cast<I>(d.out_w);
  const I groups_of_c = c / kVector;
  const I total = static_cast<I>(d.n) * out_h * out_w * groups_of_c;
  for (I t = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); t < total;
       t += static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x)) {
    const I c0 = (t % groups_of_c) * kVector;
    const I pixel = t / groups_of_c;
    const I ow = pixel % out_w, rest = pixel / out_w;
    const I oh = rest % out_h, b = rest / out_h;
    const I ih0 = oh * d.stride_h - d.pad_h, iw0 = ow * d.stride_w - d.pad_w;
    const T* base = x + b * h * wd * c + c0;
    float acc[kVector];
#pragma unroll
    for (int j = 0; j < kVector; ++j) acc[j] = 0.0f;
#pragma unroll
    for (int ii = 0; ii < r; ++ii) {
      const I ih = ih0 + static_cast<I>(ii) * d.dilation_h;
      if (ih < 0 || ih >= h) continue;
#pragma unroll
      for (int kk = 0; kk < s; ++kk) {
        const I iw = iw0 + static_cast<I>(kk) * d.dilation_w;
        if (iw < 0 || iw >= wd) continue;
        const Vec in = __ldg(reinterpret_cast<const Vec*>(base + (ih * wd + iw) * c));
        const T* iv = reinterpret_cast<const T*>(&in);
        float v[kVector];
#pragma unroll
        for (int j = 0; j < kVector; ++j) v[j] = cuda::to_float(iv[j]);
        if (d.input_max > 0.0f) {
#pragma unroll
          for (int j = 0; j < kVector; ++j) v[j] = fminf(v[j], d.input_max);
        }
        const int tap = ii * s + kk;
        if constexpr (kTapMajor) {
          const Vec f = __ldg(reinterpret_cast<const Vec*>(w + static_cast<I>(tap) * c + c0));
          const T* fv = reinterpret_cast<const T*>(&f);
#pragma unroll
          for (int j = 0; j < kVector; ++j) acc[j] += v[j] * cuda::to_float(fv[j]);
        } else {
#pragma unroll
          for (int j = 0; j < kVector; ++j) acc[j] += v[j] * cuda::to_float(__ldg(w + (c0 + j) * r * s + tap));
        }
      }
    }
    const I out = pixel * c + c0;
    alignas(sizeof(Vec)) T result[kVector];
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      result[j] = cuda::from_float<T>(apply_epilogue<T>(e, acc[j], static_cast<int64_t>(c0 + j), out + j));
    }
    *reinterpret_cast<Vec*>(y + out) = *reinterpret_cast<const Vec*>(result);
  }
}

template <typename T, int kVector, bool kTapMajor, typename I>
void launch_depthwise(const T* x, const T* w, T* y, const DepthwiseShape& d, const Epilogue& e, unsigned grid,
                      cudaStream_t stream) {
  if (d.r == 3 && d.s == 3) {
    depthwise_nhwc_kernel<T, kVector, kTapMajor, 3, 3, I><<<grid, 256, 0, stream>>>(x, w, y, d, e);
  } else {
    depthwise_nhwc_kernel<T, kVector, kTapMajor, 0, 0, I><<<grid, 256, 0, stream>>>(x, w, y, d, e);
  }
}

template <typename T, int kVector, bool kTapMajor>
void launch_depthwise(const T* x, const T* w, T* y, const DepthwiseShape& d, const Epilogue& e, unsigned grid,
                      bool wide, cudaStream_t stream) {
  if (wide) {
    launch_depthwise<T, kVector, kTapMajor, int64_t>(x, w, y, d, e, grid, stream);
  } else {
    launch_depthwise<T, kVector, kTapMajor, int32_t>(x, w, y, d, e, grid, stream);
  }
}

// y = epilogue(depthwise_conv(x, w)) on `stream`, x, w, y and e.residual of T (float, __half or __nv_bfloat16);
// cudaGetLastError().
template <typename T>
cudaError_t depthwise_nhwc(const T* x, const T* w, T* y, const DepthwiseShape& d, const Epilogue& e,
                           cudaStream_t stream) {
  // Vector accesses need 4 * sizeof(T)-byte alignment (vector_aligned; these pointers are never null).
  const bool vector = d.c % 4 == 0 && vector_aligned<T>(x) && vector_aligned<T>(y) &&
                      (!d.tap_major || vector_aligned<T>(w));
  const int64_t threads = d.n * d.out_h * d.out_w * (vector ? d.c / 4 : d.c);
  if (threads == 0) return cudaSuccess;
  // 32-bit offsets where the largest tensor and the thread count fit (with room for the grid stride's last step).
  const int64_t largest = d.n * (d.h * d.w > d.out_h * d.out_w ? d.h * d.w : d.out_h * d.out_w) * d.c;
  const bool wide = largest >= (int64_t{1} << 30) || threads >= (int64_t{1} << 30);
  const int64_t blocks = (threads + 255) / 256;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  if (vector) {
    if (d.tap_major) {
      launch_depthwise<T, 4, true>(x, w, y, d, e, grid, wide, stream);
    } else {
      launch_depthwise<T, 4, false>(x, w, y, d, e, grid, wide, stream);
    }
  } else {
    if (d.tap_major) {
      launch_depthwise<T, 1, true>(x, w, y, d, e, grid, wide, stream);
    } else {
      launch_depthwise<T, 1, false>(x, w, y, d, e, grid, wide, stream);
    }
  }
  return cudaGetLastError();
}

}  // namespace cuda_conv
}  // namespace kforge

#endif  // KFORGE_DEPTHWISE_CUH_
