// kforge per-channel epilogues for `kforge compile --target cuda` (header-only, CUDA runtime only): what follows a
// convolution in a convolution group (passes/fusion.h) — per-channel bias, inference batch norm, activation,
// residual add — as one elementwise kernel over a [n, channels, spatial] tensor, NCHW or NHWC. kforge_cudnn.cuh
// runs it in place over a convolution's output; an inference batch_norm that no convolution group took is the
// same kernel alone, out of place. The batch norm is y * (scale / sqrt(var + eps)) + (shift - mean * scale /
// sqrt(var + eps)), the order of the reference kernel (kernels/nn.cc); the activations are those of
// conv2d_fused with the formulas of kernels/activation.h.
//
// The tensor's element type T is float, __half or __nv_bfloat16 (kforge compile --precision): a 16-bit value is
// loaded, converted to float, the epilogue computed in float, and the result rounded to nearest even when it is
// stored (kforge_half.cuh). The per-channel vectors (bias, batch norm) are float32 whatever T is; the residual is T.
#ifndef KFORGE_CHANNEL_EPILOGUE_CUH_
#define KFORGE_CHANNEL_EPILOGUE_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kforge_half.cuh"

namespace kforge {
namespace cuda_conv {

// The activations of conv2d_fused (kernels/activation.h), with the same formulas.
enum class Activation : int {
  kNone, kRelu, kRelu6, kLeakyRelu, kClip, kHardswish, kSigmoid, kTanh, kSwish, kGelu, kGeluTanh,
};

// A convolution's epilogue: absent operands are null. Per-channel vectors have the output's channel count and are
// float32; the residual has the output's element type (the T of the kernels below).
struct Epilogue {
  const float* bias;                    // + bias[c]
  const float* mean;                    // inference batch norm (all four, or mean null: none; scale and
  const float* variance;                //   shift may be null: 1 and 0)
  const float* scale;
  const float* shift;
  const void* residual;                 // + residual[i] (the output's shape and element type)
  float epsilon;
  Activation activation;
  float alpha, beta;                    // leaky_relu's slope; clip's min and max
  bool activation_after_residual;
};

__device__ __forceinline__ float activate(Activation a, float v, float alpha, float beta) {
  switch (a) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.0f ? v : 0.0f;
    case Activation::kRelu6: return fminf(fmaxf(v, 0.0f), 6.0f);
    case Activation::kLeakyRelu: return v > 0.0f ? v : alpha * v;
    case Activation::kClip: return v < alpha ? alpha : (v > beta ? beta : v);
    case Activation::kHardswish: return v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f;
    case Activation::kSigmoid: return 1.0f / (1.0f + expf(-v));
    case Activation::kTanh: return tanhf(v);
    case Activation::kSwish: return v / (1.0f + expf(-v));
    case Activation::kGelu: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    case Activation::kGeluTanh:
      return 0.5f * v * (1.0f + tanhf(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
  }
  return v;
}

// The epilogue of output element i (channel c) applied to v, the convolution's value there; T: the element type of
// the residual (the output's).
template <typename T = float>
__device__ __forceinline__ float apply_epilogue(const Epilogue& e, float v, int64_t c, int64_t i) {
  if (e.bias != nullptr) v += e.bias[c];
  if (e.mean != nullptr) {
    const float inv_std = 1.0f / sqrtf(e.variance[c] + e.epsilon);
    const float scale = (e.scale != nullptr ? e.scale[c] : 1.0f) * inv_std;
    const float shift = (e.shift != nullptr ? e.shift[c] : 0.0f) - e.mean[c] * scale;
    v = v * scale + shift;
  }
  if (!e.activation_after_residual) v = activate(e.activation, v, e.alpha, e.beta);
  if (e.residual != nullptr) v += cuda::to_float(static_cast<const T*>(e.residual)[i]);
  if (e.activation_after_residual) v = activate(e.activation, v, e.alpha, e.beta);
  return v;
}

// kVector (1 or 4) consecutive elements of type T as one load or store: T itself for one; for four, float4 (16 bytes)
// for floats and uint2 (8 bytes) for 16-bit values, reinterpreted in registers as T[4].
template <typename T, int kVector>
using Vector = typename std::conditional<
    kVector == 1, T, typename std::conditional<std::is_same<T, float>::value, float4, uint2>::type>::type;

// Whether p (null or not) may be accessed as four elements of T at a time: aligned to 4 * sizeof(T) bytes.
template <typename T>
inline bool vector_aligned(const void* p) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % (4 * sizeof(T)) == 0;
}

// y[i] = epilogue(x[i]) over the n * channels * spatial elements of the output (x == y: in place), kVector
// consecutive elements per step: 4 (one 4 * sizeof(T)-byte load and store: Vector) where they share a plane (NCHW,
// spatial % 4 == 0) or are consecutive channels (NHWC, channels % 4 == 0) and the pointers are aligned to that size,
// else 1. I: the index type, 32-bit where the tensor fits (64-bit divisions by run-time values cost tens of
// instructions each).
template <typename T, int kVector, typename I>
__global__ void __launch_bounds__(256) conv_epilogue_kernel(const T* x, T* y, Epilogue e, I total, I channels,
                                                            I spatial, bool nhwc) {
  using Vec = Vector<T, kVector>;
  for (I t = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       t < total / kVector; t += static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x)) {
    const I i = t * kVector;
    const I c = nhwc ? i % channels : (i / spatial) % channels;
    Vec v = *reinterpret_cast<const Vec*>(x + i);
    T* f = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      f[j] = cuda::from_float<T>(
          apply_epilogue<T>(e, cuda::to_float(f[j]), nhwc ? c + j : c, static_cast<int64_t>(i) + j));
    }
    *reinterpret_cast<Vec*>(y + i) = v;
  }
}

template <typename T, int kVector, typename I>
void launch_channel_epilogue(const T* x, T* y, const Epilogue& e, int64_t total, int64_t channels, int64_t spatial,
                             bool nhwc, cudaStream_t stream) {
  const int64_t blocks = (total / kVector + 255) / 256;
  conv_epilogue_kernel<T, kVector, I><<<static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16), 256, 0,
                                        stream>>>(x, y, e, static_cast<I>(total), static_cast<I>(channels),
                                                  static_cast<I>(spatial), nhwc);
}

// y = epilogue(x) over a [n, channels, spatial] tensor (NCHW, or NHWC: channels last) of T (float, __half or
// __nv_bfloat16; e.residual is T too); cudaGetLastError().
template <typename T>
cudaError_t channel_epilogue(const T* x, T* y, const Epilogue& e, int64_t n, int64_t channels, int64_t spatial,
                             bool nhwc, cudaStream_t stream) {
  const int64_t total = n * channels * spatial;
  if (total == 0) return cudaSuccess;
  const bool vector = (nhwc ? channels % 4 == 0 : spatial % 4 == 0) && vector_aligned<T>(x) && vector_aligned<T>(y) &&
                      vector_aligned<T>(e.residual);
  const bool wide = total >= (int64_t{1} << 30);
  if (vector) {
    if (wide) {
      launch_channel_epilogue<T, 4, int64_t>(x, y, e, total, channels, spatial, nhwc, stream);
    } else {
      launch_channel_epilogue<T, 4, int32_t>(x, y, e, total, channels, spatial, nhwc, stream);
    }
  } else if (wide) {
    launch_channel_epilogue<T, 1, int64_t>(x, y, e, total, channels, spatial, nhwc, stream);
  } else {
    launch_channel_epilogue<T, 1, int32_t>(x, y, e, total, channels, spatial, nhwc, stream);
  }
  return cudaGetLastError();
}

}  // namespace cuda_conv
}  // namespace kforge

#endif  // KFORGE_CHANNEL_EPILOGUE_CUH_
