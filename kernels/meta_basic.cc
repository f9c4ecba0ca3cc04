// Infer-meta of elementwise, creation, linear-algebra, normalisation and reduction ops (Paddle's shape rules).
#include <algorithm>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::meta {

using kernels::util::bad_axis;
using kernels::util::normalize_axis;

namespace {

Status set_meta(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

Status set_like(Tensor* out, const Tensor& x, DataType dtype, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(x.dims, static_cast<size_t>(x.ndim));
}

}  // namespace

Status UnchangedInferMeta(const Tensor& x, Tensor* out) { return set_like(out, x, x.dtype, "UnchangedInferMeta"); }

Status AddNInferMeta(TensorList inputs, Tensor* out) {
  static constexpr const char* kOp = "AddNInferMeta";
  if (inputs.empty()) return Status::Error(kOp, ": no inputs");
  for (size_t i = 1; i < inputs.size; ++i) {
    if (!inputs[i].same_dims(inputs[0])) {
      return Status::Error(kOp, ": input ", i, " dims ", inputs[i].dims_string(), " differ from input 0 dims ",
                           inputs[0].dims_string());
    }
    KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(inputs[0], inputs[i], kOp, "inputs[0]", "inputs[i]"));
  }
  return set_like(out, inputs[0], inputs[0].dtype, kOp);
}

Status ElementwiseInferMeta(const Tensor& x, const Tensor& y, Tensor* out) {
  static constexpr const char* kOp = "ElementwiseInferMeta";
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, y, kOp, "x", "y"));
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(kernels::util::broadcast_dims(x, y, kOp, &dims));
  return set_meta(out, x.dtype, dims, kOp);
}

Status CastInferMeta(const Tensor& x, DataType dtype, Tensor* out) {
  if (dtype == DataType::kUndefined) return Status::Error("CastInferMeta: cast to an undefined dtype");
  return set_like(out, x, dtype, "CastInferMeta");
}

Status WhereInferMeta(const Tensor& condition, const Tensor& x, const Tensor& y, Tensor* out) {
  static constexpr const char* kOp = "WhereInferMeta";
  if (!condition.same_dims(x)) {
    return Status::Error(kOp, ": condition dims ", condition.dims_string(), " differ from x dims ", x.dims_string());
  }
  if (!x.same_dims(y)) {
    return Status::Error(kOp, ": x dims ", x.dims_string(), " differ from y dims ", y.dims_string());
  }
  if (condition.dtype != DataType::kBool) return Status::Error(kOp, ": condition must be bool, got ", condition.dtype);
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, y, kOp, "x", "y"));
  return set_like(out, x, x.dtype, kOp);
}

// ---- creation -------------------------------------------------------------------------------------------------

Status CreateInferMeta(const IntArray& shape, DataType dtype, Tensor* out) {
  for (int64_t d : shape) {
    if (d < 0) return Status::Error("CreateInferMeta: shape ", kernels::util::dims_string(shape.values()),
                                    " has a negative dim");
  }
  return set_meta(out, dtype, shape.values(), "CreateInferMeta");
}

Status CreateLikeInferMeta(const Tensor& x, DataType dtype, Tensor* out) {
  return set_like(out, x, dtype == DataType::kUndefined ? x.dtype : dtype, "CreateLikeInferMeta");
}

Status CreateVecShapeInferMeta(const std::vector<int64_t>& value, DataType dtype, Tensor* out) {
  return set_meta(out, dtype, {static_cast<int64_t>(value.size())}, "CreateVecShapeInferMeta");
}

Status AssignValueInferMeta(const std::vector<int>& shape, DataType dtype, Tensor* out) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  for (int64_t d : dims) {
    if (d < 0) return Status::Error("AssignValueInferMeta: shape ", kernels::util::dims_string(dims),
                                    " has a negative dim");
  }
  return set_meta(out, dtype, dims, "AssignValueInferMeta");
}

Status ShapeInferMeta(const Tensor& input, Tensor* out) {
  return set_meta(out, DataType::kInt32, {input.ndim}, "ShapeInferMeta");
}

Status Shape64InferMeta(const Tensor& input, Tensor* out) {
  return set_meta(out, DataType::kInt64, {input.ndim}, "Shape64InferMeta");
}

Status NumelInferMeta(const Tensor& x, Tensor* size) {
  (void)x;
  return set_meta(size, DataType::kInt64, {}, "NumelInferMeta");
}

Status DropoutInferMeta(const Tensor& x, const Tensor* seed_tensor, const Scalar& p, bool is_test,
                        const std::string& mode, int seed, bool fix_seed, Tensor* out, Tensor* mask) {
  (void)seed_tensor;
  (void)is_test;
  (void)seed;
  (void)fix_seed;
  static constexpr const char* kOp = "DropoutInferMeta";
  double prob = p.to<double>();
  if (!(prob >= 0.0 && prob <= 1.0)) return Status::Error(kOp, ": p must be in [0, 1], got ", prob);
  if (mode != "upscale_in_train" && mode != "downgrade_in_infer") {
    return Status::Error(kOp, ": mode must be upscale_in_train or downgrade_in_infer, got \"", mode, "\"");
  }
  KFORGE_RETURN_IF_ERROR(set_like(out, x, x.dtype, kOp));
  if (mask != nullptr) KFORGE_RETURN_IF_ERROR(set_like(mask, x, DataType::kUInt8, kOp));
  return Status::OK();
}

// ---- linear algebra and normalisation -------------------------------------------------------------------------

Status MatmulInferMeta(const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y, Tensor* out) {
  static constexpr const char* kOp = "MatmulInferMeta";
  if (x.ndim == 0 || y.ndim == 0) {
    return Status::Error(kOp, ": x and y must have rank >= 1, got ", x.dims_string(), " and ", y.dims_string());
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, y, kOp, "x", "y"));
  // A 1-D x is a row [1, K], a 1-D y a column [K, 1]; their unit dims are dropped from the result. The transpose
  // flags apply to matrices only.
  bool x_vec = x.ndim == 1, y_vec = y.ndim == 1;
  int64_t xm = x_vec ? 1 : x.dims[x.ndim - 2], xk = x.dims[x.ndim - 1];
  if (!x_vec && transpose_x) std::swap(xm, xk);
  int64_t yk = y_vec ? y.dims[0] : y.dims[y.ndim - 2], yn = y_vec ? 1 : y.dims[y.ndim - 1];
  if (!y_vec && transpose_y) std::swap(yk, yn);
  if (xk != yk && xk >= 0 && yk >= 0) {
    return Status::Error(kOp, ": x ", x.dims_string(), (transpose_x ? " (transposed)" : ""), " and y ",
                         y.dims_string(), (transpose_y ? " (transposed)" : ""), " have inner dims ", xk, " and ", yk);
  }
  // Batch dims broadcast like elementwise ops.
  int32_t xb = x_vec ? 0 : x.ndim - 2, yb = y_vec ? 0 : y.ndim - 2;
  int32_t batch = std::max(xb, yb);
  std::vector<int64_t> dims(static_cast<size_t>(batch));
  for (int32_t i = 0; i < batch; ++i) {
    int32_t xi = i - (batch - xb), yi = i - (batch - yb);
    int64_t a = xi >= 0 ? x.dims[xi] : 1, b = yi >= 0 ? y.dims[yi] : 1;
    if (a != b && a != 1 && b != 1) {
      return Status::Error(kOp, ": batch dims of x ", x.dims_string(), " and y ", y.dims_string(),
                           " cannot be broadcast");
    }
    dims[static_cast<size_t>(i)] = a == 1 ? b : a;
  }
  if (!x_vec) dims.push_back(xm);
  if (!y_vec) dims.push_back(yn);
  return set_meta(out, x.dtype, dims, kOp);
}

Status EmbeddingInferMeta(const Tensor& x, const Tensor& weight, int64_t padding_idx, Tensor* out) {
  static constexpr const char* kOp = "EmbeddingInferMeta";
  if (weight.ndim != 2) return Status::Error(kOp, ": weight must be 2-D, got ", weight.dims_string());
  if (x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64) {
    return Status::Error(kOp, ": ids x must be int32 or int64, got ", x.dtype);
  }
  int64_t rows = weight.dims[0];
  if (padding_idx != -1 && rows >= 0 && (padding_idx < -rows || padding_idx >= rows)) {
    return Status::Error(kOp, ": padding_idx ", padding_idx, " is out of range for ", weight.dims[0], " rows");
  }
  std::vector<int64_t> dims = x.shape();
  dims.push_back(weight.dims[1]);
  return set_meta(out, weight.dtype, dims, kOp);
}

Status SoftmaxInferMeta(const Tensor& x, int axis, Tensor* out) {
  int64_t rank = x.ndim == 0 ? 1 : x.ndim;
  int64_t a = 0;
  if (!normalize_axis(axis, rank, &a)) return bad_axis("SoftmaxInferMeta", axis, x.ndim);
  return set_like(out, x, x.dtype, "SoftmaxInferMeta");
}

Status LayerNormInferMeta(const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon, int begin_norm_axis,
                          Tensor* out, Tensor* mean, Tensor* variance) {
  (void)epsilon;
  static constexpr const char* kOp = "LayerNormInferMeta";
  int64_t axis = 0;
  if (!normalize_axis(begin_norm_axis, x.ndim, &axis)) {
    return Status::Error(kOp, ": begin_norm_axis ", begin_norm_axis, " is out of range for x ", x.dims_string());
  }
  int64_t right = kernels::util::product(x.dims, axis, x.ndim);
  for (const Tensor* t : {scale, bias}) {
    if (t == nullptr) continue;
    const char* name = t == scale ? "scale" : "bias";
    if (t->numel() != right) {
      return Status::Error(kOp, ": ", name, " ", t->dims_string(), " must have ", right,
                           " elements (the normalised dims of x ", x.dims_string(), ")");
    }
  }
  KFORGE_RETURN_IF_ERROR(set_like(out, x, x.dtype, kOp));
  // Statistics are float32 for half-precision inputs, else x's dtype.
  DataType stat = x.dtype == DataType::kFloat16 || x.dtype == DataType::kBFloat16 ? DataType::kFloat32 : x.dtype;
  // Paddle 3.x keeps the leading dims unflattened: x [N, S, D] normalised over D gives mean [N, S].
  const std::vector<int64_t> stat_dims(x.dims, x.dims + axis);
  if (mean != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(mean, stat, stat_dims, kOp));
  if (variance != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(variance, stat, stat_dims, kOp));
  return Status::OK();
}

// ---- reductions -----------------------------------------------------------------------------------------------

Status SumInferMeta(const Tensor& x, const IntArray& axis, DataType dtype, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(kernels::util::reduce_dims(x, axis, keepdim, "SumInferMeta", reduced, &dims));
  // Paddle sums bool and int32 into int64 unless a dtype is given.
  DataType out_dtype = dtype;
  if (out_dtype == DataType::kUndefined) {
    out_dtype = x.dtype == DataType::kBool || x.dtype == DataType::kInt32 ? DataType::kInt64 : x.dtype;
  }
  return set_meta(out, out_dtype, dims, "SumInferMeta");
}

Status ReduceIntArrayAxisInferMeta(const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(kernels::util::reduce_dims(x, axis, keepdim, "ReduceIntArrayAxisInferMeta", reduced, &dims));
  return set_meta(out, x.dtype, dims, "ReduceIntArrayAxisInferMeta");
}

// --- the reductions of issue 34 (kernels in linalg.cc) ---

Status MeanAllInferMeta(const Tensor& x, Tensor* out) { return set_meta(out, x.dtype, {}, "MeanAllInferMeta"); }

Status ReduceInferMeta(const Tensor& x, const std::vector<int64_t>& axis, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(kernels::util::reduce_dims(x, IntArray(axis), keepdim, "ReduceInferMeta", reduced, &dims));
  // any / all: whatever x's dtype, the kernels write bool (Paddle's PIR declares x's dtype, its kernels bool).
  return set_meta(out, DataType::kBool, dims, "ReduceInferMeta");
}

Status PNormInferMeta(const Tensor& x, float porder, int axis, float epsilon, bool keepdim, bool asvector,
                      Tensor* out) {
  (void)porder;
  (void)epsilon;
  static constexpr const char* kOp = "PNormInferMeta";
  if (asvector) {
    const std::vector<int64_t> ones(static_cast<size_t>(x.ndim), 1);
    return set_meta(out, x.dtype, keepdim ? ones : std::vector<int64_t>{}, kOp);
  }
  if (x.ndim == 0) return set_meta(out, x.dtype, {}, kOp);
  int64_t a = 0;
  if (!normalize_axis(axis, x.ndim, &a)) return bad_axis(kOp, axis, x.ndim);
  std::vector<int64_t> dims;
  for (int32_t d = 0; d < x.ndim; ++d) {
    if (d != a) {
      dims.push_back(x.dims[d]);
    } else if (keepdim) {
      dims.push_back(1);
    }
  }
  return set_meta(out, x.dtype, dims, kOp);
}

}  // namespace kforge::meta
