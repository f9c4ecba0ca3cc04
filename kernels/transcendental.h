// The library's formulas of exp, erf, sigmoid, silu / swish and gelu (erf form) over kforge_math.h's exp and erf,
// the ones kforge's fused loops spell (kernels/fusion.yaml's expressions as src/scalar_expr/expr_emit.cpp writes
// them), so that a kernel, the fused loop that replaces it and conv2d_fused's epilogue (activation.h) give the
// same bits; and their float32 loops, vectorised. Internal to kernels/.
#ifndef KFORGE_KERNELS_TRANSCENDENTAL_H_
#define KFORGE_KERNELS_TRANSCENDENTAL_H_

#include <cstdint>

#include "kforge_math.h"
#include "kforge_runtime.h"

namespace kforge::kernels::util {

template <typename T>
KFORGE_MATH_INLINE T sigmoid_of(T v) {
  return T(1) / (T(1) + math::exp(-v));
}

template <typename T>
KFORGE_MATH_INLINE T silu_of(T v) {
  return v / (T(1) + math::exp(-v));
}

template <typename T>
KFORGE_MATH_INLINE T gelu_erf_of(T v) {
  return T(0.5) * v * (T(1) + math::erf(v * static_cast<T>(0.70710678118654752440)));
}

enum class Transcendental { kExp, kErf, kSigmoid, kSilu, kGeluErf };

template <typename T>
T transcendental(Transcendental op, T v) {
  switch (op) {
    case Transcendental::kExp: return math::exp(v);
    case Transcendental::kErf: return math::erf(v);
    case Transcendental::kSigmoid: return sigmoid_of(v);
    case Transcendental::kSilu: return silu_of(v);
    case Transcendental::kGeluErf: return gelu_erf_of(v);
  }
  return v;
}

/// out[i] = transcendental(op, in[i]) for i < n; `out` may be `in`. Vectorised, AVX2 where the CPU has it.
void map_transcendental(Transcendental op, const float* in, float* out, int64_t n);

/// out[i] = exp(in[i] - shift) for i < n (softmax's exps); `out` may be `in`.
void map_exp_shifted(const float* in, float shift, float* out, int64_t n);

/// map_transcendental for float32 and the scalar formula for other types.
template <typename T>
void map_transcendental(Transcendental op, const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = transcendental(op, in[i]);
}

template <typename T>
void map_exp_shifted(const T* in, T shift, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = math::exp(in[i] - shift);
}

/// The kernel of an op whose output is transcendental(op, x) elementwise: float32 or float64, out of x's dims.
Status transcendental_kernel(const KernelContext& ctx, const Tensor& x, Tensor* out, const char* name,
                             Transcendental op);

}  // namespace kforge::kernels::util

#endif  // KFORGE_KERNELS_TRANSCENDENTAL_H_
