// kforge pooling for `kforge compile --target cuda` (header-only, CUDA runtime only): Paddle's pool2d, max or
// average, NCHW or NHWC, with explicit / SAME / VALID padding resolved by kforge at generation time, ceil mode
// (in the output size kforge computed), exclusive or inclusive averages, global and adaptive pooling. One
// thread per output element, with Paddle's windows, as the reference kernel computes them (kernels/nn.cc):
//   plain:    [o * stride - pad, o * stride - pad + k) clipped to the input (the end clipped first);
//   adaptive: [floor(o * in / out), ceil((o + 1) * in / out)).
// Averages divide by the clipped window's size when exclusive or adaptive, else by k_h * k_w. Max starts from
// -FLT_MAX. Sums accumulate in T.
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

namespace kforge {
namespace cuda_pool {

// What one pool2d is: the window is fixed at generation time; the spatial dims are literals where they are known
// then and computed from the input's dims where not; the batch is given separately. Dims of the logical NCHW
// tensors: input [n, c, h, w], output [n, c, out_h, out_w]. A global pool is the adaptive pool to 1 x 1.
struct Pool2dGeometry {
  int c, h, w, out_h, out_w;
  int k_h, k_w, stride_h, stride_w, pad_top, pad_left;
  bool nhwc, is_max, exclusive, adaptive;
};

__device__ __forceinline__ void pool_window(int64_t o, int64_t in, int64_t out, int64_t k, int64_t stride,
                                            int64_t pad, bool adaptive, int64_t* start, int64_t* end) {
  if (adaptive) {
    *start = o * in / out;
    *end = ((o + 1) * in + out - 1) / out;
    return;
  }
  *start = o * stride - pad;
  *end = *start + k < in ? *start + k : in;
  *start = *start > 0 ? *start : 0;
}

template <typename T>
__global__ void pool2d_kernel(const T* x, T* y, Pool2dGeometry g, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t b, ch, oh, ow;
    if (g.nhwc) {
      ch = i % g.c;
      ow = (i / g.c) % g.out_w;
      oh = (i / (static_cast<int64_t>(g.c) * g.out_w)) % g.out_h;
      b = i / (static_cast<int64_t>(g.c) * g.out_w * g.out_h);
    } else {
      ow = i % g.out_w;
      oh = (i / g.out_w) % g.out_h;
      ch = (i / (static_cast<int64_t>(g.out_w) * g.out_h)) % g.c;
      b = i / (static_cast<int64_t>(g.out_w) * g.out_h * g.c);
    }
    // Strides of the input in elements: NCHW (c*h*w, h*w, w, 1), NHWC (h*w*c, 1, w*c, c).
    const int64_t plane = static_cast<int64_t>(g.h) * g.w;
    const int64_t sn = plane * g.c;
    const int64_t sc = g.nhwc ? 1 : plane;
    const int64_t sh = g.nhwc ? static_cast<int64_t>(g.w) * g.c : g.w;
    const int64_t sw = g.nhwc ? g.c : 1;
    int64_t h0, h1, w0, w1;
    pool_window(oh, g.h, g.out_h, g.k_h, g.stride_h, g.pad_top, g.adaptive, &h0, &h1);
    pool_window(ow, g.w, g.out_w, g.k_w, g.stride_w, g.pad_left, g.adaptive, &w0, &w1);
    const T* base = x + b * sn + ch * sc;
    T acc = g.is_max ? static_cast<T>(-FLT_MAX) : T(0);
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t w = w0; w < w1; ++w) {
        const T v = base[h * sh + w * sw];
        acc = g.is_max ? (acc > v ? acc : v) : acc + v;
      }
    }
    if (!g.is_max) {
      const int64_t count = (g.exclusive || g.adaptive) ? (h1 - h0) * (w1 - w0) : static_cast<int64_t>(g.k_h) * g.k_w;
      acc /= static_cast<T>(count);
    }
    y[i] = acc;
  }
}

// Launches the pooling of x (batch n) into y on `stream`; cudaGetLastError().
template <typename T>
cudaError_t pool2d(const T* x, T* y, const Pool2dGeometry& g, int64_t n, cudaStream_t stream) {
  const int64_t total = n * g.c * g.out_h * g.out_w;
  if (total == 0) return cudaSuccess;
  const int64_t blocks = (total + 255) / 256;
  pool2d_kernel<T><<<static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16), 256, 0, stream>>>(x, y, g, total);
  return cudaGetLastError();
}

}  // namespace cuda_pool
}  // namespace kforge
