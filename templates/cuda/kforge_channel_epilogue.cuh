// kforge per-channel epilogues for `kforge compile --target cuda` (header-only, CUDA runtime only): what follows a
// convolution in a convolution group (passes/fusion.h) — per-channel bias, inference batch norm, activation,
// residual add — as one elementwise kernel over a [n, channels, spatial] tensor, NCHW or NHWC. kforge_cudnn.cuh
// runs it in place over a convolution's output; an inference batch_norm that no convolution group took is the
// same kernel alone, out of place. The batch norm is y * (scale / sqrt(var + eps)) + (shift - mean * scale /
// sqrt(var + eps)), the order of the reference kernel (kernels/nn.cc); the activations are those of
// conv2d_fused with the formulas of kernels/activation.h.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace kforge {
namespace cuda_conv {

// The activations of conv2d_fused (kernels/activation.h), with the same formulas.
enum class Activation : int {
  kNone, kRelu, kRelu6, kLeakyRelu, kClip, kHardswish, kSigmoid, kTanh, kSwish, kGelu, kGeluTanh,
};

// A convolution's epilogue: absent operands are null. Per-channel vectors have the output's channel count.
struct Epilogue {
  const float* bias;                    // + bias[c]
  const float* mean;                    // inference batch norm (all four, or mean null: none; scale and
  const float* variance;                //   shift may be null: 1 and 0)
  const float* scale;
  const float* shift;
  const float* residual;                // + residual[i] (the output's shape)
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

// The epilogue of output element i (channel c) applied to v, the convolution's value there.
__device__ __forceinline__ float apply_epilogue(const Epilogue& e, float v, int64_t c, int64_t i) {
  if (e.bias != nullptr) v += e.bias[c];
  if (e.mean != nullptr) {
    const float inv_std = 1.0f / sqrtf(e.variance[c] + e.epsilon);
    const float scale = (e.scale != nullptr ? e.scale[c] : 1.0f) * inv_std;
    const float shift = (e.shift != nullptr ? e.shift[c] : 0.0f) - e.mean[c] * scale;
    v = v * scale + shift;
  }
  if (!e.activation_after_residual) v = activate(e.activation, v, e.alpha, e.beta);
  if (e.residual != nullptr) v += e.residual[i];
  if (e.activation_after_residual) v = activate(e.activation, v, e.alpha, e.beta);
  return v;
}

// y[i] = epilogue(x[i]) over the n * channels * spatial elements of the output (x == y: in place), kVector
// consecutive elements per step: 4 (float4 loads and stores) where they share a plane (NCHW, spatial % 4 == 0) or
// are consecutive channels (NHWC, channels % 4 == 0) and the pointers are 16-byte aligned, else 1. I: the index
// type, 32-bit where the tensor fits (64-bit divisions by run-time values cost tens of instructions each).
template <int kVector, typename I>
__global__ void __launch_bounds__(256) conv_epilogue_kernel(const float* x, float* y, Epilogue e, I total,
                                                            I channels, I spatial, bool nhwc) {
  using Vec = typename std::conditional<kVector == 4, float4, float>::type;
  for (I t = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       t < total / kVector; t += static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x)) {
    const I i = t * kVector;
    const I c = nhwc ? i % channels : (i / spatial) % channels;
    Vec v = *reinterpret_cast<const Vec*>(x + i);
    float* f = reinterpret_cast<float*>(&v);
#pragma unroll
    for (int j = 0; j < kVector; ++j) f[j] = apply_epilogue(e, f[j], nhwc ? c + j : c, static_cast<int64_t>(i) + j);
    *reinterpret_cast<Vec*>(y + i) = v;
  }
}

template <int kVector, typename I>
void launch_channel_epilogue(const float* x, float* y, const Epilogue& e, int64_t total, int64_t channels,
                             int64_t spatial, bool nhwc, cudaStream_t stream) {
  const int64_t blocks = (total / kVector + 255) / 256;
  conv_epilogue_kernel<kVector, I><<<static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16), 256, 0,
                                     stream>>>(x, y, e, static_cast<I>(total), static_cast<I>(channels),
                                               static_cast<I>(spatial), nhwc);
}

// y = epilogue(x) over a [n, channels, spatial] tensor (NCHW, or NHWC: channels last); cudaGetLastError().
inline cudaError_t channel_epilogue(const float* x, float* y, const Epilogue& e, int64_t n, int64_t channels,
                                    int64_t spatial, bool nhwc, cudaStream_t stream) {
  const int64_t total = n * channels * spatial;
  if (total == 0) return cudaSuccess;
  const auto aligned = [](const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vector = (nhwc ? channels % 4 == 0 : spatial % 4 == 0) && aligned(x) && aligned(y) &&
                      aligned(e.residual);
  const bool wide = total >= (int64_t{1} << 30);
  if (vector) {
    if (wide) {
      launch_channel_epilogue<4, int64_t>(x, y, e, total, channels, spatial, nhwc, stream);
    } else {
      launch_channel_epilogue<4, int32_t>(x, y, e, total, channels, spatial, nhwc, stream);
    }
  } else if (wide) {
    launch_channel_epilogue<1, int64_t>(x, y, e, total, channels, spatial, nhwc, stream);
  } else {
    launch_channel_epilogue<1, int32_t>(x, y, e, total, channels, spatial, nhwc, stream);
  }
  return cudaGetLastError();
}

}  // namespace cuda_conv
}  // namespace kforge
