// Comparisons (equal, not_equal, greater_than, greater_equal, less_than, less_equal) and logical_and, logical_or,
// logical_not: numpy broadcasting, bool results; bitwise_and, bitwise_or, bitwise_xor, bitwise_not (x's dtype). Paddle 3.3 compares floats exactly (NaN equals nothing).
#include <cstdint>
#include <type_traits>

#include "kforge_kernels.h"
#include "math_util.h"

namespace kforge::kernels {

using util::Tag;

namespace {

// x and y of one dtype, out bool with their broadcast dims. The in-place twins (`equal_`) write bools over x's
// buffer: each output byte lands on an element already read, so aliasing is safe.
template <typename Visit, typename Op>
Status compare(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out, const char* name, Visit visit,
               Op op) {
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || y.dtype != dtype) {
    return Status::Error(name, ": x and y must both be ", dtype, ", got ", x.dtype, " and ", y.dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::check_broadcast_out(x, y, out, DataType::kBool, name));
  return visit(dtype, name, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    util::map_binary<T, T, bool>(x, y, out, [op](T a, T b) -> bool { return op(a, b); });
    return Status::OK();
  });
}

struct VisitPlain {
  template <typename F>
  Status operator()(DataType d, const char* op, F&& f) const {
    return util::visit_plain(d, op, f);
  }
};

// Paddle's logical kernels: bool, int8, int16, int32, int64, float32, float64 (no uint8).
struct VisitLogical {
  template <typename F>
  Status operator()(DataType d, const char* op, F&& f) const {
    if (d == DataType::kUInt8) return util::unsupported_dtype(op, d);
    return util::visit_plain(d, op, f);
  }
};

}  // namespace

#define KFORGE_COMPARE(NAME, VISIT, EXPR)                                                       \
  Status NAME(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {       \
    return compare(ctx, x, y, out, #NAME, VISIT{}, [](auto a, auto b) -> bool { return EXPR; }); \
  }

KFORGE_COMPARE(equal, VisitPlain, a == b)
KFORGE_COMPARE(not_equal, VisitPlain, a != b)
KFORGE_COMPARE(greater_than, VisitPlain, a > b)
KFORGE_COMPARE(greater_equal, VisitPlain, a >= b)
KFORGE_COMPARE(less_than, VisitPlain, a < b)
KFORGE_COMPARE(less_equal, VisitPlain, a <= b)
KFORGE_COMPARE(logical_and, VisitLogical, a != 0 && b != 0)
KFORGE_COMPARE(logical_or, VisitLogical, a != 0 || b != 0)

#undef KFORGE_COMPARE

Status logical_not(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  static constexpr const char* kOp = "logical_not";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, " but the kernel dtype is ", dtype);
  if (out->dtype != DataType::kBool) return Status::Error(kOp, ": out must be bool, got ", out->dtype);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, kOp));
  return VisitLogical{}(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    util::map_unary<T, bool>(x, out, [](T v) -> bool { return v == 0; });
    return Status::OK();
  });
}

namespace {

template <typename Op>
Status bitwise_binary(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out, const char* name,
                      Op op) {
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || y.dtype != dtype) {
    return Status::Error(name, ": x and y must both be ", dtype, ", got ", x.dtype, " and ", y.dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::check_broadcast_out(x, y, out, dtype, name));
  return util::visit_integral(dtype, name, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    util::map_binary<T, T, T>(x, y, out, [op](T a, T b) -> T { return static_cast<T>(op(a, b)); });
    return Status::OK();
  });
}

}  // namespace

Status bitwise_and(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  return bitwise_binary(ctx, x, y, out, "bitwise_and", [](auto a, auto b) { return a & b; });
}

Status bitwise_or(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  return bitwise_binary(ctx, x, y, out, "bitwise_or", [](auto a, auto b) { return a | b; });
}

Status bitwise_xor(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  return bitwise_binary(ctx, x, y, out, "bitwise_xor", [](auto a, auto b) { return a ^ b; });
}

Status bitwise_not(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  static constexpr const char* kOp = "bitwise_not";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || out->dtype != dtype) {
    return Status::Error(kOp, ": x and out must be ", dtype, ", got ", x.dtype, " and ", out->dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, kOp));
  return util::visit_integral(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      util::map_unary<T, T>(x, out, [](T v) -> T { return !v; });
    } else {
      util::map_unary<T, T>(x, out, [](T v) -> T { return static_cast<T>(~v); });
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
