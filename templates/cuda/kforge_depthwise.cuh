// kforge direct depthwise convolution for `kforge compile --target cuda` (header-only, CUDA runtime only): an NHWC
// depthwise conv2d (one filter per channel: groups == in channels == out channels) as one kernel with the
// convolution group's epilogue applied in registers. cuDNN's NHWC depthwise convolutions measured 1.6x slower than
// its NCHW ones on mobilenet_v2 (H100, BENCHMARKS.md); this kernel keeps such models in NHWC and saves the epilogue's
// second pass over the output. kforge_cudnn.cuh's ConvSite runs it instead of cuDNN where it applies.
//
// Each thread computes kVector adjacent channels of one output pixel (4 where the channel count and the pointers
// allow float4 accesses, else 1): the threads of a warp read consecutive channels of the same input pixels, so every
// load is coalesced; the r * s taps of a channel are read from Paddle's filter [c, 1, r, s] (the same bytes as
// cuDNN's KRSC filter of a depthwise convolution).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kforge_channel_epilogue.cuh"

namespace kforge {
namespace cuda_conv {

// Input [n, h, w, c], filter [c, r, s], output [n, out_h, out_w, c]; strides, pads and dilations as conv2d's.
struct DepthwiseShape {
  int64_t n, h, w, c, out_h, out_w;
  int r, s, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

template <int kVector>
__global__ void depthwise_nhwc_kernel(const float* __restrict__ x, const float* __restrict__ w, float* y,
                                      DepthwiseShape d, Epilogue e) {
  using Vec = typename std::conditional<kVector == 4, float4, float>::type;
  const int64_t groups_of_c = d.c / kVector;
  const int64_t total = d.n * d.out_h * d.out_w * groups_of_c;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c0 = (t % groups_of_c) * kVector;
    const int64_t pixel = t / groups_of_c;
    const int64_t ow = pixel % d.out_w, oh = (pixel / d.out_w) % d.out_h, b = pixel / (d.out_w * d.out_h);
    float acc[kVector];
    for (int j = 0; j < kVector; ++j) acc[j] = 0.0f;
    for (int i = 0; i < d.r; ++i) {
      const int64_t ih = oh * d.stride_h - d.pad_h + static_cast<int64_t>(i) * d.dilation_h;
      if (ih < 0 || ih >= d.h) continue;
      for (int k = 0; k < d.s; ++k) {
        const int64_t iw = ow * d.stride_w - d.pad_w + static_cast<int64_t>(k) * d.dilation_w;
        if (iw < 0 || iw >= d.w) continue;
        const Vec in = *reinterpret_cast<const Vec*>(x + ((b * d.h + ih) * d.w + iw) * d.c + c0);
        const float* v = reinterpret_cast<const float*>(&in);
        const int tap = i * d.s + k;
        for (int j = 0; j < kVector; ++j) acc[j] += v[j] * w[(c0 + j) * d.r * d.s + tap];
      }
    }
    const int64_t out = pixel * d.c + c0;
    float result[kVector];
    for (int j = 0; j < kVector; ++j) result[j] = apply_epilogue(e, acc[j], c0 + j, out + j);
    *reinterpret_cast<Vec*>(y + out) = *reinterpret_cast<const Vec*>(result);
  }
}

// y = epilogue(depthwise_conv(x, w)) on `stream`; cudaGetLastError().
inline cudaError_t depthwise_nhwc(const float* x, const float* w, float* y, const DepthwiseShape& d,
                                  const Epilogue& e, cudaStream_t stream) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vector = d.c % 4 == 0 && aligned(x) && aligned(y);
  const int64_t threads = d.n * d.out_h * d.out_w * (vector ? d.c / 4 : d.c);
  if (threads == 0) return cudaSuccess;
  const int64_t blocks = (threads + 255) / 256;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  if (vector) {
    depthwise_nhwc_kernel<4><<<grid, 256, 0, stream>>>(x, w, y, d, e);
  } else {
    depthwise_nhwc_kernel<1><<<grid, 256, 0, stream>>>(x, w, y, d, e);
  }
  return cudaGetLastError();
}

}  // namespace cuda_conv
}  // namespace kforge
