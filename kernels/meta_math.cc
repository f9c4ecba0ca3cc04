// Infer-meta of the math, comparison, creation and scan ops (Paddle's shape rules; their generation-time twins
// over symbolic dims are in src/passes/shape_rules_math.cpp).
#include <string>
#include <vector>

#include "kforge_kernels.h"
#include "math_util.h"

namespace kforge::meta {

namespace u = kernels::util;

namespace {

Status set_meta(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

// Binary ops whose operands share a dtype and broadcast; the result has `dtype`.
Status broadcast_meta(const Tensor& x, const Tensor& y, DataType dtype, const char* op, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(u::require_same_dtype(x, y, op, "x", "y"));
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(u::broadcast_dims(x, y, op, &dims));
  return set_meta(out, dtype, dims, op);
}

Status axis_error(const char* op, int64_t axis, const Tensor& x) {
  return Status::Error(op, ": axis ", axis, " is out of range for x ", x.dims_string());
}

}  // namespace

Status RealAndImagInferMeta(const Tensor& x, Tensor* out) {
  // The real part's dtype: complex64 -> float32, complex128 -> float64; real dtypes are unchanged.
  const DataType d = x.dtype == DataType::kComplex64    ? DataType::kFloat32
                     : x.dtype == DataType::kComplex128 ? DataType::kFloat64
                                                        : x.dtype;
  return set_meta(out, d, x.shape(), "RealAndImagInferMeta");
}

Status FFTR2CInferMeta(const Tensor& x, const std::vector<int64_t>& axes, const std::string& normalization,
                       bool forward, bool onesided, Tensor* out) {
  // Paddle's FFTR2CInferMeta: x's dims, the last of axes n / 2 + 1 when onesided; complex of x's float dtype. The
  // axes' checks are the kernel's (pocketfft's) and get_norm_from_string's.
  (void)forward;
  static constexpr const char* kOp = "FFTR2CInferMeta";
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": x must be float32 or float64, got ", x.dtype);
  }
  if (normalization != "backward" && normalization != "forward" && normalization != "ortho" && !normalization.empty()) {
    return Status::Error(kOp, ": normalization must be backward, forward or ortho, got '", normalization, "'");
  }
  if (axes.empty()) return Status::Error(kOp, ": axes must not be empty");
  std::vector<int64_t> dims = x.shape(), seen;
  for (int64_t a : axes) {
    int64_t n = a;
    if (!u::normalize_axis(a, x.ndim, &n)) return axis_error(kOp, a, x);
    for (int64_t s : seen) {
      if (s == n) return Status::Error(kOp, ": axis ", a, " is repeated in axes");
    }
    seen.push_back(n);
    if (dims[static_cast<size_t>(n)] <= 0) {
      return Status::Error(kOp, ": axis ", a, " of x ", x.dims_string(), " is empty");
    }
  }
  if (onesided) dims[static_cast<size_t>(seen.back())] = dims[static_cast<size_t>(seen.back())] / 2 + 1;
  return set_meta(out, x.dtype == DataType::kFloat32 ? DataType::kComplex64 : DataType::kComplex128, dims, kOp);
}

Status CompareInferMeta(const Tensor& x, const Tensor& y, Tensor* out) {
  return broadcast_meta(x, y, DataType::kBool, "CompareInferMeta", out);
}

Status LogicalBinaryInferMeta(const Tensor& x, const Tensor& y, Tensor* out) {
  return broadcast_meta(x, y, DataType::kBool, "LogicalBinaryInferMeta", out);
}

Status LogicalNotInferMeta(const Tensor& x, Tensor* out) {
  return set_meta(out, DataType::kBool, x.shape(), "LogicalNotInferMeta");
}

Status MaskedFillInferMeta(const Tensor& x, const Tensor& mask, const Tensor& value, Tensor* out) {
  static constexpr const char* kOp = "MaskedFillInferMeta";
  if (mask.dtype != DataType::kBool) return Status::Error(kOp, ": mask must be bool, got ", mask.dtype);
  KFORGE_RETURN_IF_ERROR(u::require_same_dtype(x, value, kOp, "x", "value"));
  if (value.numel() != 1) {
    return Status::Error(kOp, ": value must have one element, got ", value.dims_string());
  }
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(u::broadcast_dims(x, mask, kOp, &dims));
  return set_meta(out, x.dtype, dims, kOp);
}

Status SwiGLUInferMeta(const Tensor& x, const Tensor* y, Tensor* out) {
  static constexpr const char* kOp = "SwiGLUInferMeta";
  if (x.ndim == 0) return Status::Error(kOp, ": x must have rank >= 1");
  if (y != nullptr) {
    KFORGE_RETURN_IF_ERROR(u::require_same_dtype(x, *y, kOp, "x", "y"));
    if (!x.same_dims(*y)) {
      return Status::Error(kOp, ": x ", x.dims_string(), " and y ", y->dims_string(), " must have the same dims");
    }
    return set_meta(out, x.dtype, x.shape(), kOp);
  }
  std::vector<int64_t> dims = x.shape();
  if (dims.back() >= 0 && dims.back() % 2 != 0) {
    return Status::Error(kOp, ": without y, the last dim of x ", x.dims_string(), " must be even");
  }
  if (dims.back() > 0) dims.back() /= 2;
  return set_meta(out, x.dtype, dims, kOp);
}

Status FullWithTensorInferMeta(const IntArray& shape, DataType dtype, Tensor* out) {
  return shape_meta::FullWithTensorInferMeta(shape, dtype, out);  // kforge_shape_meta.h, shared with --target cuda
}

Status UniformRandomInferMeta(const IntArray& shape, DataType dtype, Tensor* out) {
  for (int64_t d : shape) {
    if (d < 0) return Status::Error("UniformRandomInferMeta: shape ", u::dims_string(shape.values()), " has a negative dim");
  }
  return set_meta(out, dtype, shape.values(), "UniformRandomInferMeta");
}

// Paddle's RandintInferMeta: low < high, no negative dim; int32 or int64 (kforge's kernel).
Status RandintInferMeta(int low, int high, const IntArray& shape, DataType dtype, Tensor* out) {
  static constexpr const char* kOp = "RandintInferMeta";
  if (low >= high) return Status::Error(kOp, ": low (", low, ") must be less than high (", high, ")");
  if (dtype != DataType::kInt32 && dtype != DataType::kInt64) {
    return Status::Error(kOp, ": dtype must be int32 or int64, got ", dtype);
  }
  for (int64_t d : shape) {
    if (d < 0) return Status::Error(kOp, ": shape ", u::dims_string(shape.values()), " has a negative dim");
  }
  return set_meta(out, dtype, shape.values(), kOp);
}

Status ArangeInferMeta(const Scalar& start, const Scalar& end, const Scalar& step, DataType dtype, Tensor* out) {
  return shape_meta::ArangeInferMeta(start, end, step, dtype, out);
}

Status OneHotInferMeta(const Tensor& x, const Scalar& num_classes, Tensor* out) {
  static constexpr const char* kOp = "OneHotInferMeta";
  if (x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64) {
    return Status::Error(kOp, ": x must be int32 or int64, got ", x.dtype);
  }
  int64_t depth = 0;
  KFORGE_RETURN_IF_ERROR(u::scalar_to_int(num_classes, kOp, "num_classes", &depth));
  if (depth < 0) return Status::Error(kOp, ": num_classes must not be negative, got ", depth);
  std::vector<int64_t> dims = x.shape();
  dims.push_back(depth);
  return set_meta(out, DataType::kFloat32, dims, kOp);
}

Status CumScalarAxisInferMeta(const Tensor& x, const Scalar& axis, bool flatten, bool exclusive, bool reverse,
                              Tensor* out) {
  (void)exclusive;
  (void)reverse;
  static constexpr const char* kOp = "CumScalarAxisInferMeta";
  if (flatten) return set_meta(out, x.dtype, {x.numel()}, kOp);
  int64_t a = 0, normalized = 0;
  KFORGE_RETURN_IF_ERROR(u::scalar_to_int(axis, kOp, "axis", &a));
  if (!u::normalize_axis_or_scalar(a, x.ndim, &normalized)) return axis_error(kOp, a, x);
  return set_meta(out, x.dtype, x.shape(), kOp);
}

Status ReduceIntArrayAxisInferMetaBase(const Tensor& x, const IntArray& axis, bool keepdim, bool reduce_all,
                                       Tensor* out) {
  bool reduced[kMaxRank];
  std::vector<int64_t> dims;
  // reduce_all, like an empty axis list, reduces every dim (Paddle's recompute_reduce_all).
  KFORGE_RETURN_IF_ERROR(u::reduce_dims(x, reduce_all ? IntArray() : axis, keepdim, "ReduceIntArrayAxisInferMetaBase",
                                        reduced, &dims));
  return set_meta(out, x.dtype, dims, "ReduceIntArrayAxisInferMetaBase");
}

Status ArgMinMaxInferMeta(const Tensor& x, const Scalar& axis, bool keepdims, bool flatten, DataType dtype,
                          Tensor* out) {
  static constexpr const char* kOp = "ArgMinMaxInferMeta";
  if (dtype != DataType::kInt32 && dtype != DataType::kInt64) {
    return Status::Error(kOp, ": dtype must be int32 or int64, got ", dtype);
  }
  std::vector<int64_t> dims;
  if (flatten) {
    if (keepdims) dims.assign(static_cast<size_t>(x.ndim), 1);
    return set_meta(out, dtype, dims, kOp);
  }
  int64_t a = 0, normalized = 0;
  KFORGE_RETURN_IF_ERROR(u::scalar_to_int(axis, kOp, "axis", &a));
  if (!u::normalize_axis_or_scalar(a, x.ndim, &normalized)) return axis_error(kOp, a, x);
  for (int32_t i = 0; i < x.ndim; ++i) {
    if (i != normalized) {
      dims.push_back(x.dims[i]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return set_meta(out, dtype, dims, kOp);
}

Status TopKInferMeta(const Tensor& x, const Scalar& k, int axis, bool largest, bool sorted, Tensor* out,
                     Tensor* indices) {
  (void)largest;
  (void)sorted;
  static constexpr const char* kOp = "TopKInferMeta";
  int64_t a = 0, count = 0;
  if (!u::normalize_axis_or_scalar(axis, x.ndim, &a)) return axis_error(kOp, axis, x);
  KFORGE_RETURN_IF_ERROR(u::scalar_to_int(k, kOp, "k", &count));
  const int64_t n = x.ndim == 0 ? 1 : x.dims[a];
  if (count < 1 || (n >= 0 && count > n)) {
    return Status::Error(kOp, ": k ", count, " must be in [1, ", n, "] (x ", x.dims_string(), ", axis ", axis, ")");
  }
  std::vector<int64_t> dims = x.shape();
  if (x.ndim > 0) dims[static_cast<size_t>(a)] = count;
  KFORGE_RETURN_IF_ERROR(set_meta(out, x.dtype, dims, kOp));
  if (indices != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(indices, DataType::kInt64, dims, kOp));
  return Status::OK();
}

Status ArgsortInferMeta(const Tensor& x, int axis, bool descending, bool stable, Tensor* out, Tensor* indices) {
  (void)descending;
  (void)stable;
  static constexpr const char* kOp = "ArgsortInferMeta";
  int64_t a = 0;
  if (!u::normalize_axis_or_scalar(axis, x.ndim, &a)) return axis_error(kOp, axis, x);
  if (out != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(out, x.dtype, x.shape(), kOp));
  if (indices != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(indices, DataType::kInt64, x.shape(), kOp));
  return Status::OK();
}

Status UnchangedInferMetaCheckAxis(const Tensor& x, int axis, Tensor* out) {
  static constexpr const char* kOp = "UnchangedInferMetaCheckAxis";
  int64_t a = 0;
  if (!u::normalize_axis_or_scalar(axis, x.ndim, &a)) return axis_error(kOp, axis, x);
  return set_meta(out, x.dtype, x.shape(), kOp);
}

}  // namespace kforge::meta
