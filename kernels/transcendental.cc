// The float32 loops of transcendental.h. Where the CPU has AVX2 they run math_avx2.h's 8-lane formulas (the
// scalar formulas' bits, at about twice the speed of the vectoriser's clone); elsewhere blocks of a fixed 16
// elements: a loop with a constant trip count vectorises under GCC's -O2 cost model (which refuses a loop that
// needs a scalar epilogue). Either way a block is read whole before it is written, so `out` may alias `in`, and
// the tail runs the same formula per element, so the split changes no bits.
#include "transcendental.h"

#include "kernel_util.h"
#include "math_avx2.h"

namespace kforge::kernels::util {
namespace {

constexpr int64_t kBlock = 16;

// The formula inlined into each clone (a lambda's call operator is a function of its own otherwise).
#if defined(__GNUC__)
#define KFORGE_MATH_LAMBDA __attribute__((always_inline))
#else
#define KFORGE_MATH_LAMBDA
#endif

template <typename F>
KFORGE_MATH_INLINE void map_blocks(const float* in, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float v[kBlock];
    for (int64_t k = 0; k < kBlock; ++k) v[k] = in[i + k];
    for (int64_t k = 0; k < kBlock; ++k) v[k] = f(v[k]);
    for (int64_t k = 0; k < kBlock; ++k) out[i + k] = v[k];
  }
  for (; i < n; ++i) out[i] = f(in[i]);
}

#if KFORGE_HAVE_MATH_AVX2
bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// map_blocks over 8 lanes: F's `vec` on whole vectors, its scalar twin `one` on the tail. (Functors, not
// lambdas: a lambda's call operator does not take its caller's target ISA.)
template <typename F>
KFORGE_AVX2_INLINE void map_avx2(const float* in, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, f.vec(_mm256_loadu_ps(in + i)));
  for (; i < n; ++i) out[i] = f.one(in[i]);
}

struct ExpOf {
  KFORGE_AVX2_INLINE __m256 vec(__m256 v) const { return avx2::exp(v); }
  KFORGE_AVX2_INLINE float one(float v) const { return math::exp(v); }
};
struct ErfOf {
  KFORGE_AVX2_INLINE __m256 vec(__m256 v) const { return avx2::erf(v); }
  KFORGE_AVX2_INLINE float one(float v) const { return math::erf(v); }
};
struct SigmoidOf {
  KFORGE_AVX2_INLINE __m256 vec(__m256 v) const { return avx2::sigmoid(v); }
  KFORGE_AVX2_INLINE float one(float v) const { return sigmoid_of(v); }
};
struct SiluOf {
  KFORGE_AVX2_INLINE __m256 vec(__m256 v) const { return avx2::silu(v); }
  KFORGE_AVX2_INLINE float one(float v) const { return silu_of(v); }
};
struct GeluErfOf {
  KFORGE_AVX2_INLINE __m256 vec(__m256 v) const { return avx2::gelu_erf(v); }
  KFORGE_AVX2_INLINE float one(float v) const { return gelu_erf_of(v); }
};
struct ExpShiftedOf {
  float shift;
  KFORGE_AVX2_INLINE __m256 vec(__m256 v) const { return avx2::exp(_mm256_sub_ps(v, _mm256_set1_ps(shift))); }
  KFORGE_AVX2_INLINE float one(float v) const { return math::exp(v - shift); }
};

KFORGE_AVX2 void map_transcendental_avx2(Transcendental op, const float* in, float* out, int64_t n) {
  switch (op) {
    case Transcendental::kExp: return map_avx2(in, out, n, ExpOf{});
    case Transcendental::kErf: return map_avx2(in, out, n, ErfOf{});
    case Transcendental::kSigmoid: return map_avx2(in, out, n, SigmoidOf{});
    case Transcendental::kSilu: return map_avx2(in, out, n, SiluOf{});
    case Transcendental::kGeluErf: return map_avx2(in, out, n, GeluErfOf{});
  }
}

KFORGE_AVX2 void map_exp_shifted_avx2(const float* in, float shift, float* out, int64_t n) {
  map_avx2(in, out, n, ExpShiftedOf{shift});
}
#endif

}  // namespace

KFORGE_MATH_CLONES void map_transcendental(Transcendental op, const float* in, float* out, int64_t n) {
#if KFORGE_HAVE_MATH_AVX2
  if (cpu_has_avx2()) return map_transcendental_avx2(op, in, out, n);
#endif
  switch (op) {
    case Transcendental::kExp: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return math::exp(v); });
    case Transcendental::kErf: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return math::erf(v); });
    case Transcendental::kSigmoid: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return sigmoid_of(v); });
    case Transcendental::kSilu: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return silu_of(v); });
    case Transcendental::kGeluErf: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return gelu_erf_of(v); });
  }
}

KFORGE_MATH_CLONES void map_exp_shifted(const float* in, float shift, float* out, int64_t n) {
#if KFORGE_HAVE_MATH_AVX2
  if (cpu_has_avx2()) return map_exp_shifted_avx2(in, shift, out, n);
#endif
  map_blocks(in, out, n, [shift](float v) KFORGE_MATH_LAMBDA { return math::exp(v - shift); });
}

Status transcendental_kernel(const KernelContext& ctx, const Tensor& x, Tensor* out, const char* name,
                             Transcendental op) {
  const DataType dtype = kernel_dtype(ctx, x);
  KFORGE_RETURN_IF_ERROR(require_output(out, name));
  if (x.dtype != dtype || out->dtype != dtype) {
    return Status::Error(name, ": x and out must be ", dtype, ", got ", x.dtype, " and ", out->dtype);
  }
  KFORGE_RETURN_IF_ERROR(require_dims(*out, x, name));
  return visit_float(dtype, name, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    map_transcendental(op, x.data_as<const T>(), out->data_as<T>(), x.numel());
    return Status::OK();
  });
}

}  // namespace kforge::kernels::util
