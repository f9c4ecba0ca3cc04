// Elementwise kernels: binary arithmetic with numpy broadcasting, activations, scale, clip, cast, where.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "transcendental.h"

namespace kforge::kernels {

using util::Tag;

namespace {

// ---- binary ---------------------------------------------------------------------------------------------------

// General broadcast: walks the output row by row with one strided offset per operand. Kept out of line so the
// common same-shape call does not pay for its stack frame. Unit dims are dropped and neighbouring dims that every
// operand steps through as one are merged first; a short last dim (a per-channel operand of an NHWC tensor with few
// channels: 4 in PP-OCR's det head) is walked with the one before it inside the row step, which otherwise costs
// more than its few elements. Every element is still op(x's, y's): the same bits.
template <typename T, typename Op>
KFORGE_NOINLINE void run_broadcast(const Tensor& x, const Tensor& y, Tensor* out, Op op) {
  const T* a = x.data_as<const T>();
  const T* b = y.data_as<const T>();
  T* o = out->data_as<T>();
  int64_t full[3][kMaxRank];
  util::broadcast_strides(x, out->ndim, full[0]);
  util::broadcast_strides(y, out->ndim, full[1]);
  util::contiguous_strides(out->dims, out->ndim, full[2]);
  int64_t dims[kMaxRank], strides[3][kMaxRank];
  int32_t rank = 0;
  for (int32_t i = 0; i < out->ndim; ++i) {
    if (out->dims[i] == 1) continue;
    bool merge = rank > 0;
    for (int k = 0; k < 3 && merge; ++k) merge = strides[k][rank - 1] == full[k][i] * out->dims[i];
    if (merge) {
      dims[rank - 1] *= out->dims[i];
      for (int k = 0; k < 3; ++k) strides[k][rank - 1] = full[k][i];
    } else {
      dims[rank] = out->dims[i];
      for (int k = 0; k < 3; ++k) strides[k][rank] = full[k][i];
      ++rank;
    }
  }
  if (rank == 0) {  // one element
    o[0] = op(a[0], b[0]);
    return;
  }
  // A short last dim goes inside the row step with the dim before it.
  constexpr int64_t kShortRow = 16;
  const bool pairs = rank >= 2 && dims[rank - 1] < kShortRow;
  util::NdCounter counter;
  counter.rank = pairs ? rank - 1 : rank;
  for (int32_t i = 0; i < counter.rank; ++i) counter.dims[i] = dims[i];
  const int64_t inner = dims[rank - 1], sa = strides[0][rank - 1], sb = strides[1][rank - 1];
  const int64_t outer = pairs ? dims[rank - 2] : 1;
  const int64_t oa = pairs ? strides[0][rank - 2] : 0, ob = pairs ? strides[1][rank - 2] : 0;
  const int64_t oo = pairs ? strides[2][rank - 2] : 0;
  int64_t offsets[3] = {0, 0, 0};
  do {
    const T* pa = a + offsets[0];
    const T* pb = b + offsets[1];
    T* po = o + offsets[2];
    for (int64_t r = 0; r < outer; ++r, pa += oa, pb += ob, po += oo) {
      for (int64_t j = 0; j < inner; ++j) po[j] = op(pa[j * sa], pb[j * sb]);
    }
  } while (counter.next(offsets, strides));
}

// `same` says x and y have the same dims (then so does out).
template <typename T, typename Op>
void run_binary(const Tensor& x, const Tensor& y, Tensor* out, bool same, Op op) {
  const T* a = x.data_as<const T>();
  const T* b = y.data_as<const T>();
  T* o = out->data_as<T>();
  const int64_t n = out->numel();
  if (same) {
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b[i]);
  } else if (y.numel() == 1 && x.numel() == n) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], bv);
  } else if (x.numel() == 1 && y.numel() == n) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = op(av, b[i]);
  } else if (n > 0) {
    run_broadcast<T>(x, y, out, op);
  }
}

// Everything a binary kernel must verify before its loop; only called when the fast test in binary() fails, so
// the common case (same dims, matching dtypes, allocated output) costs a few compares.
KFORGE_COLD Status check_binary(DataType dtype, const Tensor& x, const Tensor& y, const Tensor* out, const char* name) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, name));
  if (x.dtype != dtype || y.dtype != dtype || out->dtype != dtype) {
    return Status::Error(name, ": x, y and out must all be ", dtype, ", got ", x.dtype, ", ", y.dtype, " and ",
                         out->dtype);
  }
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(util::broadcast_dims(x, y, name, &dims));
  if (!(out->ndim == static_cast<int32_t>(dims.size()) && std::equal(dims.begin(), dims.end(), out->dims))) {
    return Status::Error(name, ": out has dims ", out->dims_string(), ", expected ", util::dims_string(dims));
  }
  return Status::OK();
}

template <typename OpFactory>
Status binary(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out, const char* name,
              OpFactory factory) {
  const DataType dtype = util::kernel_dtype(ctx, x);
  const bool same = x.same_dims(y);
  const bool fast = same && out != nullptr && out->data != nullptr && x.dtype == dtype && y.dtype == dtype &&
                    out->dtype == dtype && out->same_dims(x);
  if (!fast) KFORGE_RETURN_IF_ERROR(check_binary(dtype, x, y, out, name));
  return util::visit_number(dtype, name, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return factory(Tag<T>{}, [&](auto op) { run_binary<T>(x, y, out, same, op); });
  });
}

// Most binary ops are one expression; `run` executes the loop with it.
#define KFORGE_SIMPLE_BINARY(NAME, EXPR)                                                            \
  Status NAME(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {           \
    return binary(ctx, x, y, out, #NAME, [](auto tag, auto run) -> Status {                        \
      using T = typename decltype(tag)::type;                                                      \
      run([](T a, T b) -> T { return EXPR; });                                                     \
      return Status::OK();                                                                         \
    });                                                                                            \
  }

// Paddle's FMaxFunctor / FMinFunctor: std::fmax / std::fmin, integers converted to float (int32) or double (int64)
// and rounded back with lrint (so an int32 beyond 2^24 rounds, as Paddle's does).
template <typename T>
T ignore_nan(T a, T b, bool larger) {
  if constexpr (std::is_floating_point<T>::value) {
    return larger ? std::fmax(a, b) : std::fmin(a, b);
  } else {
    using F = std::conditional_t<sizeof(T) <= 4, float, double>;
    const F fa = static_cast<F>(a), fb = static_cast<F>(b);
    const F r = larger ? std::fmax(fa, fb) : std::fmin(fa, fb);
    return static_cast<T>(std::llrint(r));
  }
}

template <typename T>
T power(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(std::llrint(std::pow(static_cast<double>(a), static_cast<double>(b))));
  } else {
    return std::pow(a, b);
  }
}

}  // namespace

KFORGE_SIMPLE_BINARY(add, a + b)
KFORGE_SIMPLE_BINARY(subtract, a - b)

// Paddle's multiply takes bool too (a logical and: Mask-RT-DETR's masks multiplied together).
Status multiply(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  if (util::kernel_dtype(ctx, x) == DataType::kBool) {
    KFORGE_RETURN_IF_ERROR(check_binary(DataType::kBool, x, y, out, "multiply"));
    run_binary<bool>(x, y, out, x.same_dims(y), [](bool a, bool b) -> bool { return a && b; });
    return Status::OK();
  }
  return binary(ctx, x, y, out, "multiply", [](auto tag, auto run) -> Status {
    using T = typename decltype(tag)::type;
    run([](T a, T b) -> T { return a * b; });
    return Status::OK();
  });
}
// maximum / minimum: NaN when either operand is NaN, as Paddle's MaximumFunctor / MinimumFunctor give it (a > b ?
// a : b alone kept b when a was NaN); a tie (0 and -0) gives b, as Paddle's.
KFORGE_SIMPLE_BINARY(maximum, a > b || util::is_nan(a) ? a : b)
KFORGE_SIMPLE_BINARY(minimum, a < b || util::is_nan(a) ? a : b)
KFORGE_SIMPLE_BINARY(fmax, ignore_nan<T>(a, b, true))
KFORGE_SIMPLE_BINARY(fmin, ignore_nan<T>(a, b, false))
KFORGE_SIMPLE_BINARY(elementwise_pow, power<T>(a, b))

#undef KFORGE_SIMPLE_BINARY

Status add_n(const KernelContext& ctx, TensorList inputs, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "add_n"));
  if (inputs.empty()) return Status::Error("add_n: no inputs");
  const DataType dtype = util::kernel_dtype(ctx, inputs[0]);
  for (size_t i = 0; i < inputs.size; ++i) {
    if (inputs[i].dtype != dtype || !inputs[i].same_dims(*out)) {
      return Status::Error("add_n: input ", i, " is ", inputs[i].dtype, " ", inputs[i].dims_string(), ", expected ",
                           dtype, " ", out->dims_string());
    }
  }
  if (out->dtype != dtype) return Status::Error("add_n: out must be ", dtype, ", got ", out->dtype);
  return util::visit_number(dtype, "add_n", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    const int64_t n = out->numel();
    // Accumulate in input order, as Paddle's CPU kernel does, so results match it bit for bit.
    const T* first = inputs[0].data_as<const T>();
    for (int64_t i = 0; i < n; ++i) o[i] = first[i];
    for (size_t k = 1; k < inputs.size; ++k) {
      const T* a = inputs[k].data_as<const T>();
      for (int64_t i = 0; i < n; ++i) o[i] += a[i];
    }
    return Status::OK();
  });
}

Status divide(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  return binary(ctx, x, y, out, "divide", [&](auto tag, auto run) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      const T* b = y.data_as<const T>();
      for (int64_t i = 0, n = y.numel(); i < n; ++i) {
        if (b[i] == 0) return Status::Error("divide: integer division by zero (y[", i, "] is 0)");
      }
    }
    run([](T a, T b) -> T { return a / b; });
    return Status::OK();
  });
}

// ---- unary ----------------------------------------------------------------------------------------------------

namespace {

KFORGE_COLD Status check_unary(DataType dtype, const Tensor& x, const Tensor* out, const char* name) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, name));
  if (x.dtype != dtype || out->dtype != dtype) {
    return Status::Error(name, ": x and out must be ", dtype, ", got ", x.dtype, " and ", out->dtype);
  }
  return util::require_dims(*out, x, name);
}

template <typename Visit, typename OpFactory>
Status unary(const KernelContext& ctx, const Tensor& x, Tensor* out, const char* name, Visit visit,
             OpFactory factory) {
  const DataType dtype = util::kernel_dtype(ctx, x);
  const bool fast =
      out != nullptr && out->data != nullptr && x.dtype == dtype && out->dtype == dtype && out->same_dims(x);
  if (!fast) KFORGE_RETURN_IF_ERROR(check_unary(dtype, x, out, name));
  return visit(dtype, name, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    auto op = factory(Tag<T>{});
    const T* a = x.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = op(a[i]);
    return Status::OK();
  });
}

struct VisitFloat {
  template <typename F>
  Status operator()(DataType d, const char* op, F&& f) const {
    return util::visit_float(d, op, f);
  }
};
struct VisitNumber {
  template <typename F>
  Status operator()(DataType d, const char* op, F&& f) const {
    return util::visit_number(d, op, f);
  }
};

#define KFORGE_UNARY(NAME, VISIT, EXPR)                                                             \
  Status NAME(const KernelContext& ctx, const Tensor& x, Tensor* out) {                            \
    return unary(ctx, x, out, #NAME, VISIT{}, [](auto tag) {                                       \
      using T = typename decltype(tag)::type;                                                      \
      return [](T v) -> T { return EXPR; };                                                        \
    });                                                                                            \
  }

}  // namespace

KFORGE_UNARY(relu, VisitNumber, v > T(0) ? v : T(0))
KFORGE_UNARY(tanh, VisitFloat, std::tanh(v))
KFORGE_UNARY(rsqrt, VisitFloat, T(1) / std::sqrt(v))
KFORGE_UNARY(floor, VisitFloat, std::floor(v))
KFORGE_UNARY(ceil, VisitFloat, std::ceil(v))
// Paddle's defaults: threshold 6, scale 6, offset 3.
KFORGE_UNARY(hardswish, VisitFloat, v * std::fmin(std::fmax(v + T(3), T(0)), T(6)) / T(6))

#undef KFORGE_UNARY

Status sigmoid(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  return util::transcendental_kernel(ctx, x, out, "sigmoid", util::Transcendental::kSigmoid);
}
Status exp(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  return util::transcendental_kernel(ctx, x, out, "exp", util::Transcendental::kExp);
}
Status silu(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  return util::transcendental_kernel(ctx, x, out, "silu", util::Transcendental::kSilu);
}
Status swish(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  return util::transcendental_kernel(ctx, x, out, "swish", util::Transcendental::kSilu);
}

Status gelu(const KernelContext& ctx, const Tensor& x, bool approximate, Tensor* out) {
  if (!approximate) return util::transcendental_kernel(ctx, x, out, "gelu", util::Transcendental::kGeluErf);
  return unary(ctx, x, out, "gelu", VisitFloat{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T v) -> T {
      const T k = static_cast<T>(0.79788456080286535587989211986876);  // sqrt(2 / pi)
      return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
    };
  });
}

Status thresholded_relu(const KernelContext& ctx, const Tensor& x, float threshold, float value, Tensor* out) {
  return unary(ctx, x, out, "thresholded_relu", VisitFloat{}, [threshold, value](auto tag) {
    using T = typename decltype(tag)::type;
    const T t = static_cast<T>(threshold), v = static_cast<T>(value);
    return [t, v](T a) -> T { return a > t ? a : v; };
  });
}

Status scale(const KernelContext& ctx, const Tensor& x, const Scalar& scale, const Scalar& bias, bool bias_after_scale,
             Tensor* out) {
  return unary(ctx, x, out, "scale", VisitNumber{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = scale.to<T>(), b = bias.to<T>();
    const bool after = bias_after_scale;
    return [s, b, after](T v) -> T { return after ? v * s + b : (v + b) * s; };
  });
}

Status clip(const KernelContext& ctx, const Tensor& x, const Scalar& min, const Scalar& max, Tensor* out) {
  if (min.to<double>() > max.to<double>()) {
    return Status::Error("clip: min ", min.to<double>(), " is greater than max ", max.to<double>());
  }
  return unary(ctx, x, out, "clip", VisitNumber{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lo = min.to<T>(), hi = max.to<T>();
    return [lo, hi](T v) -> T { return v < lo ? lo : (v > hi ? hi : v); };
  });
}

// ---- cast and where -------------------------------------------------------------------------------------------

Status cast(const KernelContext& ctx, const Tensor& x, DataType dtype, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "cast"));
  const DataType in_dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != in_dtype) return Status::Error("cast: x is ", x.dtype, " but the kernel dtype is ", in_dtype);
  if (out->dtype != dtype) return Status::Error("cast: out is ", out->dtype, " but dtype is ", dtype);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "cast"));
  const int64_t n = x.numel();
  if (in_dtype == dtype) {
    util::copy_bytes(out->data, x.data, x.bytes());
    return Status::OK();
  }
  // Converting in place would overwrite elements not yet read when the output type is wider.
  const bool in_place = out->data == x.data && n > 0;
  util::Scratch<unsigned char> copy(ctx, in_place ? x.bytes() : 0);
  const void* src = x.data;
  if (in_place) {
    std::memcpy(copy.data(), x.data, x.bytes());
    src = copy.data();
  }
  return util::visit_plain(in_dtype, "cast", [&](auto in_tag) -> Status {
    using From = typename decltype(in_tag)::type;
    return util::visit_plain(dtype, "cast", [&](auto out_tag) -> Status {
      using To = typename decltype(out_tag)::type;
      const From* a = static_cast<const From*>(src);
      To* o = out->data_as<To>();
      for (int64_t i = 0; i < n; ++i) o[i] = util::convert<To>(a[i]);
      return Status::OK();
    });
  });
}

Status where(const KernelContext& ctx, const Tensor& condition, const Tensor& x, const Tensor& y, Tensor* out) {
  (void)ctx;  // Paddle selects the kernel from the last input; x's dtype is the one that matters
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "where"));
  if (condition.dtype != DataType::kBool) return Status::Error("where: condition must be bool, got ", condition.dtype);
  if (y.dtype != x.dtype || out->dtype != x.dtype) {
    return Status::Error("where: x, y and out must have one dtype, got ", x.dtype, ", ", y.dtype, " and ",
                         out->dtype);
  }
  if (!condition.same_dims(x) || !y.same_dims(x)) {
    return Status::Error("where: condition ", condition.dims_string(), ", x ", x.dims_string(), " and y ",
                         y.dims_string(), " must have the same dims");
  }
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "where"));
  return util::visit_plain(x.dtype, "where", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const bool* c = condition.data_as<const bool>();
    const T* a = x.data_as<const T>();
    const T* b = y.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = c[i] ? a[i] : b[i];
    return Status::OK();
  });
}

}  // namespace kforge::kernels
