// The float32 loops of transcendental.h. Each runs blocks of a fixed 16 elements: a loop with a constant trip
// count vectorises under GCC's -O2 cost model (which refuses a loop that needs a scalar epilogue), and the
// block is read whole before it is written, so `out` may alias `in`. The tail runs the same formula per element,
// so the split changes no bits.
#include "transcendental.h"

#include "kernel_util.h"

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

}  // namespace

KFORGE_MATH_CLONES void map_transcendental(Transcendental op, const float* in, float* out, int64_t n) {
  switch (op) {
    case Transcendental::kExp: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return math::exp(v); });
    case Transcendental::kErf: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return math::erf(v); });
    case Transcendental::kSigmoid: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return sigmoid_of(v); });
    case Transcendental::kSilu: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return silu_of(v); });
    case Transcendental::kGeluErf: return map_blocks(in, out, n, [](float v) KFORGE_MATH_LAMBDA { return gelu_erf_of(v); });
  }
}

KFORGE_MATH_CLONES void map_exp_shifted(const float* in, float shift, float* out, int64_t n) {
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
