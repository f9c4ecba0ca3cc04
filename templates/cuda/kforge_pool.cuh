// kforge pooling for `kforge compile --target cuda` (header-only, CUDA runtime only): Paddle's pool2d, max or
// average, NCHW or NHWC, with explicit / SAME / VALID padding resolved by kforge at generation time, ceil mode
// (in the output size kforge computed), exclusive or inclusive averages, global and adaptive pooling. One
// thread per output element, with Paddle's windows, as the reference kernel computes them (kernels/nn.cc):
//   plain:    [o * stride - pad, o * stride - pad + k) clipped to the input (the end clipped first);
//   adaptive: [floor(o * in / out), ceil((o + 1) * in / out)).
// Averages divide by the clipped window's size when exclusive or adaptive, else by k_h * k_w. T: float, double, or
// the 16-bit __half / __nv_bfloat16 (kforge compile --precision), which compute in float (kforge_half.cuh: converted
// on load, the result rounded to nearest even on store). Sums and maxima are taken in that compute type (T for float
// and double, float for 16-bit); max starts from -FLT_MAX for float and double, from -infinity for 16-bit (what
// -FLT_MAX rounds to in either 16-bit type).
#ifndef KFORGE_POOL_CUH_
#define KFORGE_POOL_CUH_

#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kforge_half.cuh"

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

// The input window [start, end) of output position o along one dim (the adaptive bounds in 64 bits: o * in can
// pass 2^31 where the tensors' offsets do not).
template <typename I>
__device__ __forceinline__ void pool_window(I o, I in, I out, I k, I stride, I pad, bool adaptive, I* start, I* end) {
  if (adaptive) {
    *start = static_cast<I>(static_cast<int64_t>(o) * in / out);
    *end = static_cast<I>(((static_cast<int64_t>(o) + 1) * in + out - 1) / out);
    return;
  }
  *start = o * stride - pad;
  *end = *start + k < in ? *start + k : in;
  *start = *start > 0 ? *start : 0;
}

// The type pool2d_kernel<T> computes in: T for float and double, float for the 16-bit types; the conversions to and
// from it, and where max starts.
template <typename T>
struct PoolCompute {
  using type = T;
  static __device__ __forceinline__ T load(T v) { return v; }
  static __device__ __forceinline__ T store(T v) { return v; }
  static __device__ __forceinline__ T lowest() { return static_cast<T>(-FLT_MAX); }
};
template <typename T>
struct PoolCompute16 {
  using type = float;
  static __device__ __forceinline__ float load(T v) { return cuda::to_float(v); }
  static __device__ __forceinline__ T store(float v) { return cuda::from_float<T>(v); }
  static __device__ __forceinline__ float lowest() { return -INFINITY; }
};
template <>
struct PoolCompute<__half> : PoolCompute16<__half> {};
template <>
struct PoolCompute<__nv_bfloat16> : PoolCompute16<__nv_bfloat16> {};

// One thread per output element. I: the index type, 32-bit where the tensors fit (64-bit divisions by run-time
// values cost tens of instructions each).
template <typename T, typename I>
__global__ void __launch_bounds__(256) pool2d_kernel(const T* x, T* y, Pool2dGeometry g, I total) {
  using Compute = PoolCompute<T>;
  using A = typename Compute::type;
  const I c = g.c, h = g.h, w = g.w, out_h = g.out_h, out_w = g.out_w;
  // Strides of the input in elements: NCHW (c*h*w, h*w, w, 1), NHWC (h*w*c, 1, w*c, c).
  const I plane = h * w;
  const I sn = plane * c;
  const I sc = g.nhwc ? 1 : plane;
  const I sh = g.nhwc ? w * c : w;
  const I sw = g.nhwc ? c : 1;
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); i < total;
       i += static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x)) {
    I b, ch, oh, ow;
    if (g.nhwc) {
      ch = i % c;
      const I pixel = i / c;
      ow = pixel % out_w;
      oh = (pixel / out_w) % out_h;
      b = pixel / (out_w * out_h);
    } else {
      ow = i % out_w;
      const I row = i / out_w;
      oh = row % out_h;
      ch = (row / out_h) % c;
      b = row / (out_h * c);
    }
    I h0, h1, w0, w1;
    pool_window<I>(oh, h, out_h, g.k_h, g.stride_h, g.pad_top, g.adaptive, &h0, &h1);
    pool_window<I>(ow, w, out_w, g.k_w, g.stride_w, g.pad_left, g.adaptive, &w0, &w1);
    const T* base = x + b * sn + ch * sc;
    A acc = g.is_max ? Compute::lowest() : A(0);
    for (I ih = h0; ih < h1; ++ih) {
      for (I iw = w0; iw < w1; ++iw) {
        const A v = Compute::load(base[ih * sh + iw * sw]);
        acc = g.is_max ? (acc > v ? acc : v) : acc + v;
      }
    }
    if (!g.is_max) {
      const int64_t count = (g.exclusive || g.adaptive) ? static_cast<int64_t>(h1 - h0) * (w1 - w0)
                                                        : static_cast<int64_t>(g.k_h) * g.k_w;
      acc /= static_cast<A>(count);
    }
    y[i] = Compute::store(acc);
  }
}

// Launches the pooling of x (batch n) into y on `stream` (T: float, double, __half or __nv_bfloat16);
// cudaGetLastError().
template <typename T>
cudaError_t pool2d(const T* x, T* y, const Pool2dGeometry& g, int64_t n, cudaStream_t stream) {
  const int64_t total = n * g.c * g.out_h * g.out_w;
  if (total == 0) return cudaSuccess;
  const int64_t blocks = (total + 255) / 256;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  const int64_t input = n * g.c * static_cast<int64_t>(g.h) * g.w;
  if (total < (int64_t{1} << 30) && input < (int64_t{1} << 30)) {
    pool2d_kernel<T, int32_t><<<grid, 256, 0, stream>>>(x, y, g, static_cast<int32_t>(total));
  } else {
    pool2d_kernel<T, int64_t><<<grid, 256, 0, stream>>>(x, y, g, total);
  }
  return cudaGetLastError();
}

}  // namespace cuda_pool
}  // namespace kforge

#endif  // KFORGE_POOL_CUH_
