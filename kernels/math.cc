// Elementwise math: hardsigmoid, leaky_relu, prelu, relu6, sqrt, erf, log, sin, cos, abs, square, reciprocal, pow (Scalar exponent),
// floor_divide, remainder, masked_fill, swiglu. Formulas follow Paddle's phi CPU functors, written as kernels/fusion.yaml spells them, so
// fused and unfused results agree.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kforge_kernels.h"
#include "math_util.h"
#include "transcendental.h"

namespace kforge::kernels {

using util::Tag;

namespace {

KFORGE_COLD Status check_unary(DataType dtype, const Tensor& x, const Tensor* out, const char* op) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (x.dtype != dtype || out->dtype != dtype) {
    return Status::Error(op, ": x and out must be ", dtype, ", got ", x.dtype, " and ", out->dtype);
  }
  return util::require_dims(*out, x, op);
}

// out = f(x), out of x's dtype and dims. `floats_only` limits the kernel to float32 and float64, else int32 and
// int64 are accepted too; the factory builds the per-element function for the element type.
template <typename Factory>
Status unary(const KernelContext& ctx, const Tensor& x, Tensor* out, const char* op, bool floats_only,
             Factory factory) {
  const DataType dtype = util::kernel_dtype(ctx, x);
  const bool fast =
      out != nullptr && out->data != nullptr && x.dtype == dtype && out->dtype == dtype && out->same_dims(x);
  if (!fast) KFORGE_RETURN_IF_ERROR(check_unary(dtype, x, out, op));
  auto body = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    util::map_unary<T, T>(x, out, factory(Tag<T>{}));
    return Status::OK();
  };
  return floats_only ? util::visit_float(dtype, op, body) : util::visit_number(dtype, op, body);
}

#define KFORGE_FLOAT_UNARY(NAME, EXPR)                                         \
  Status NAME(const KernelContext& ctx, const Tensor& x, Tensor* out) {       \
    return unary(ctx, x, out, #NAME, true, [](auto tag) {                     \
      using T = typename decltype(tag)::type;                                 \
      return [](T v) -> T { return EXPR; };                                   \
    });                                                                       \
  }

// x ** e for an integer e >= 0 by squaring, as Eigen's integer pow; wraps on overflow like the hardware does
// (unsigned arithmetic: no undefined behaviour).
template <typename T>
T integer_power(T x, T e) {
  using U = typename std::make_unsigned<T>::type;
  U result = 1, base = static_cast<U>(x);
  for (U k = static_cast<U>(e); k != 0; k >>= 1) {
    if (k & 1u) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<T>(result);
}

}  // namespace

KFORGE_FLOAT_UNARY(relu6, std::min(std::max(v, T(0)), T(6)))
KFORGE_FLOAT_UNARY(sqrt, std::sqrt(v))
KFORGE_FLOAT_UNARY(log, std::log(v))
KFORGE_FLOAT_UNARY(sin, std::sin(v))
KFORGE_FLOAT_UNARY(cos, std::cos(v))

KFORGE_FLOAT_UNARY(reciprocal, T(1) / v)

Status erf(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  return util::transcendental_kernel(ctx, x, out, "erf", util::Transcendental::kErf);
}

#undef KFORGE_FLOAT_UNARY

Status square(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  return unary(ctx, x, out, "square", false, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T v) -> T {
      if constexpr (std::is_integral<T>::value) {
        // Wraps on overflow like the hardware does (unsigned arithmetic: no undefined behaviour).
        using U = typename std::make_unsigned<T>::type;
        return static_cast<T>(static_cast<U>(v) * static_cast<U>(v));
      } else {
        return v * v;
      }
    };
  });
}

Status hardsigmoid(const KernelContext& ctx, const Tensor& x, float slope, float offset, Tensor* out) {
  return unary(ctx, x, out, "hardsigmoid", true, [slope, offset](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = static_cast<T>(slope), b = static_cast<T>(offset);
    return [s, b](T v) -> T { return std::max(std::min(v * s + b, T(1)), T(0)); };
  });
}

Status leaky_relu(const KernelContext& ctx, const Tensor& x, float negative_slope, Tensor* out) {
  return unary(ctx, x, out, "leaky_relu", true, [negative_slope](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = static_cast<T>(negative_slope);
    const bool below_one = negative_slope < 1.0f;
    return [s, below_one](T v) -> T { return below_one ? std::max(v, s * v) : std::min(v, s * v); };
  });
}

Status elu(const KernelContext& ctx, const Tensor& x, float alpha, Tensor* out) {
  return unary(ctx, x, out, "elu", true, [alpha](auto tag) {
    using T = typename decltype(tag)::type;
    const T a = static_cast<T>(alpha);
    return [a](T v) -> T {
      if constexpr (std::is_floating_point<T>::value) {
        return v < T(0) ? a * (math::exp(v) - T(1)) : v;
      } else {
        return v;  // (never run: floats only)
      }
    };
  });
}

// prelu as Paddle's PReluKernel (cpu/prelu_kernel.cc): out = x > 0 ? x : alpha[j] * x, where j is 0 ("all"), the
// element's channel ("channel": dim 1 for NCHW, the last dim for NHWC) or its place within one batch item
// ("element"). alpha's size for the mode is PReluInferMeta's check.
Status prelu(const KernelContext& ctx, const Tensor& x, const Tensor& alpha, const std::string& data_format,
             const std::string& mode, Tensor* out) {
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::PReluInferMeta(x, alpha, data_format, mode, &expected));
  const DataType dtype = util::kernel_dtype(ctx, x);
  KFORGE_RETURN_IF_ERROR(check_unary(dtype, x, out, "prelu"));
  if (alpha.dtype != dtype) return Status::Error("prelu: alpha must be ", dtype, ", got ", alpha.dtype);
  // element i uses alpha[(i / inner) % period]: one value, one per channel, or one per element of a batch item.
  int64_t inner = 1, period = 1;
  if (mode == "channel") {
    const bool channel_last = !(data_format == "NCHW" || data_format == "NCDHW" || data_format == "NCL");
    period = channel_last ? x.dims[x.ndim - 1] : x.dims[1];
    for (int32_t d = channel_last ? x.ndim : 2; d < x.ndim; ++d) inner *= x.dims[d];
  } else if (mode == "element") {
    for (int32_t d = 1; d < x.ndim; ++d) period *= x.dims[d];
  }
  return util::visit_float(dtype, "prelu", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xs = x.data_as<const T>();
    const T* as = alpha.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      const T v = xs[i];
      o[i] = v > T(0) ? v : as[(i / inner) % period] * v;
    }
    return Status::OK();
  });
}

Status abs(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  if (x.dtype == DataType::kComplex64 || x.dtype == DataType::kComplex128) return util::complex_abs(x, out);
  return unary(ctx, x, out, "abs", false, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T v) -> T {
      if constexpr (std::is_integral<T>::value) {
        // |lowest| wraps to lowest, as std::abs does on the hardware, without the undefined negation.
        using U = typename std::make_unsigned<T>::type;
        return v < 0 ? static_cast<T>(U(0) - static_cast<U>(v)) : v;
      } else {
        return std::fabs(v);
      }
    };
  });
}

Status pow(const KernelContext& ctx, const Tensor& x, const Scalar& y, Tensor* out) {
  // Paddle's PowFunctor: x.pow(static_cast<T>(factor)) with a float factor.
  const float factor = y.to<float>();
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (dtype == DataType::kInt32 || dtype == DataType::kInt64) {
    const double limit = dtype == DataType::kInt32 ? 2147483647.0 : 9.2233720368547758e18;
    if (!(factor >= 0.0f)) {
      return Status::Error("pow: the exponent of an integer tensor must not be negative, got ", factor);
    }
    if (!(static_cast<double>(factor) < limit)) {
      return Status::Error("pow: the exponent ", factor, " does not fit x's type ", dtype);
    }
  }
  return unary(ctx, x, out, "pow", false, [factor](auto tag) {
    using T = typename decltype(tag)::type;
    const T e = static_cast<T>(factor);
    return [e](T v) -> T {
      if constexpr (std::is_integral<T>::value) {
        return integer_power(v, e);
      } else {
        return std::pow(v, e);
      }
    };
  });
}

// ---- binary ---------------------------------------------------------------------------------------------------

namespace {

template <typename T>
bool is_negative(T v) {
  if constexpr (std::is_unsigned<T>::value) {
    return false;
  } else {
    return v < 0;
  }
}

// Python's a // b (Paddle's FloorDivideFunctor); b != 0 for integers (checked before the loop).
template <typename T>
T floor_div(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if constexpr (std::is_signed<T>::value) {
      // lowest / -1 overflows: wrap as the negation does, instead of trapping.
      using U = typename std::make_unsigned<T>::type;
      if (b == T(-1)) return static_cast<T>(U(0) - static_cast<U>(a));
    }
    const T quot = static_cast<T>(a / b);
    if (is_negative(a) != is_negative(b) && static_cast<T>(a % b) != 0) return static_cast<T>(quot - 1);
    return quot;
  } else {
    if (b == 0) return a / b;  // IEEE: inf, -inf or nan
    const T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
    return floordiv;
  }
}

}  // namespace

Status floor_divide(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  static constexpr const char* kOp = "floor_divide";
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || y.dtype != dtype) {
    return Status::Error(kOp, ": x and y must be ", dtype, ", got ", x.dtype, " and ", y.dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::check_broadcast_out(x, y, out, dtype, kOp));
  auto body = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      const T* b = y.data_as<const T>();
      for (int64_t i = 0, n = y.numel(); i < n; ++i) {
        if (b[i] == 0) return Status::Error(kOp, ": integer division by zero (y[", i, "] is 0)");
      }
    }
    util::map_binary<T, T, T>(x, y, out, [](T a, T b) { return floor_div(a, b); });
    return Status::OK();
  };
  switch (dtype) {
    case DataType::kInt8: return body(Tag<int8_t>{});
    case DataType::kUInt8: return body(Tag<uint8_t>{});
    case DataType::kInt16: return body(Tag<int16_t>{});
    default: return util::visit_number(dtype, kOp, body);
  }
}

namespace {

// Paddle's RemainderFunctor: the truncated remainder (fmod for floats), moved by y when its sign differs from y's,
// so the result takes the divisor's sign (Python's %). The fused expression in kernels/fusion.yaml is the same.
template <typename T>
T floor_mod(T a, T b) {
  T r;
  if constexpr (std::is_integral<T>::value) {
    if (std::is_signed<T>::value && b == T(-1)) return T(0);  // lowest % -1 would trap
    r = static_cast<T>(a % b);
  } else {
    r = std::fmod(a, b);
  }
  if (r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
  return r;
}

}  // namespace

Status remainder(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  static constexpr const char* kOp = "remainder";
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || y.dtype != dtype) {
    return Status::Error(kOp, ": x and y must be ", dtype, ", got ", x.dtype, " and ", y.dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::check_broadcast_out(x, y, out, dtype, kOp));
  return util::visit_number(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      const T* b = y.data_as<const T>();
      for (int64_t i = 0, n = y.numel(); i < n; ++i) {
        if (b[i] == 0) return Status::Error(kOp, ": integer remainder by zero (y[", i, "] is 0)");
      }
    }
    util::map_binary<T, T, T>(x, y, out, [](T a, T b) { return floor_mod(a, b); });
    return Status::OK();
  });
}

Status masked_fill(const KernelContext& ctx, const Tensor& x, const Tensor& mask, const Tensor& value, Tensor* out) {
  static constexpr const char* kOp = "masked_fill";
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || value.dtype != dtype) {
    return Status::Error(kOp, ": x and value must be ", dtype, ", got ", x.dtype, " and ", value.dtype);
  }
  if (mask.dtype != DataType::kBool) return Status::Error(kOp, ": mask must be bool, got ", mask.dtype);
  if (value.numel() != 1) return Status::Error(kOp, ": value must have one element, got ", value.dims_string());
  KFORGE_RETURN_IF_ERROR(util::check_broadcast_out(x, mask, out, dtype, kOp));
  return util::visit_plain(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T v = value.data_as<const T>()[0];
    util::map_binary<T, bool, T>(x, mask, out, [v](T a, bool m) { return m ? v : a; });
    return Status::OK();
  });
}

Status swiglu(const KernelContext& ctx, const Tensor& x, const Tensor* y, Tensor* out) {
  static constexpr const char* kOp = "swiglu";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, " but the kernel dtype is ", dtype);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::SwiGLUInferMeta(x, y, &expected));
  if (out->dtype != expected.dtype) return Status::Error(kOp, ": out is ", out->dtype, ", expected ", expected.dtype);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, expected, kOp));
  // Rows of n outputs; without y, a row of x holds a (n values) then b (n values).
  const int64_t n = out->ndim == 0 ? 1 : out->dims[out->ndim - 1];
  const int64_t rows = n == 0 ? 0 : out->numel() / n;
  const int64_t stride = y != nullptr ? n : 2 * n;
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* a = x.data_as<const T>();
    const T* b = y != nullptr ? y->data_as<const T>() : a + n;
    T* o = out->data_as<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const T* ar = a + r * stride;
      const T* br = b + r * stride;
      T* orow = o + r * n;
      for (int64_t j = 0; j < n; ++j) orow[j] = util::silu_of(ar[j]) * br[j];
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
