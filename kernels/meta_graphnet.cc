// Infer-meta of the ops GraphNet's Paddle models use (issue 34): Paddle's GatherNdInferMeta, IndexPutInferMeta,
// PReluInferMeta, MeshgridInferMeta, BroadcastTensorsInferMeta, TakeAlongAxisInferMeta, DiagInferMeta,
// ExpandAsInferMeta, PadInferMeta, BCELossInferMeta, SigmoidCrossEntropyWithLogitsInferMeta,
// CrossEntropyWithSoftmaxInferMeta and GridSampleBaseInferMeta (the reductions' are in meta_basic.cc, beside the other
// reductions', so that linalg.cc links without this file).
#include <algorithm>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::meta {

using kernels::util::bad_axis;
using kernels::util::normalize_axis;

namespace {

Status set_out(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

Status require_index_dtype(const char* op, const char* name, const Tensor& t) {
  if (t.dtype == DataType::kInt32 || t.dtype == DataType::kInt64) return Status::OK();
  return Status::Error(op, ": ", name, " must be int32 or int64, got ", t.dtype);
}

}  // namespace

Status IndexPutInferMeta(const Tensor& x, TensorList indices, const Tensor& value, bool accumulate, Tensor* out) {
  static constexpr const char* kOp = "IndexPutInferMeta";
  (void)accumulate;
  if (value.dtype != x.dtype) return Status::Error(kOp, ": value is ", value.dtype, ", x is ", x.dtype);
  if (indices.size > static_cast<size_t>(x.ndim)) {
    return Status::Error(kOp, ": ", indices.size, " index tensors for x of rank ", x.ndim);
  }
  for (size_t i = 0; i < indices.size; ++i) {
    if (indices[i].dtype == DataType::kBool) {
      return Status::Error(kOp, ": index ", i, " is a bool mask, which kforge does not take yet (int32 / int64 only)");
    }
    KFORGE_RETURN_IF_ERROR(require_index_dtype(kOp, "an index", indices[i]));
  }
  return set_out(out, x.dtype, std::vector<int64_t>(x.dims, x.dims + x.ndim), kOp);
}

Status PReluInferMeta(const Tensor& x, const Tensor& alpha, const std::string& data_format, const std::string& mode,
                      Tensor* out) {
  static constexpr const char* kOp = "PReluInferMeta";
  int64_t want = 1;
  if (mode == "channel") {
    if (x.ndim < 2) return Status::Error(kOp, ": mode \"channel\" needs x of rank >= 2, got rank ", x.ndim);
    const bool channel_first = data_format == "NCHW" || data_format == "NCDHW" || data_format == "NCL";
    if (!channel_first && data_format != "NHWC" && data_format != "NDHWC" && data_format != "NLC") {
      return Status::Error(kOp, ": data_format \"", data_format, "\" is none of NCHW, NHWC, NCL, NLC, NCDHW, NDHWC");
    }
    want = channel_first ? x.dims[1] : x.dims[x.ndim - 1];
  } else if (mode == "element") {
    for (int32_t d = 1; d < x.ndim; ++d) want *= x.dims[d];
  } else if (mode != "all") {
    return Status::Error(kOp, ": mode must be \"all\", \"channel\" or \"element\", got \"", mode, "\"");
  }
  if (alpha.numel() != want) {
    return Status::Error(kOp, ": mode \"", mode, "\" needs alpha of ", want, " elements, got ", alpha.numel());
  }
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": x must be float32 or float64, got ", x.dtype);
  }
  return set_out(out, x.dtype, std::vector<int64_t>(x.dims, x.dims + x.ndim), kOp);
}

Status GatherNdInferMeta(const Tensor& x, const Tensor& index, Tensor* out) {
  static constexpr const char* kOp = "GatherNdInferMeta";
  KFORGE_RETURN_IF_ERROR(require_index_dtype(kOp, "index", index));
  if (index.ndim == 0) return Status::Error(kOp, ": index must have rank >= 1, got a 0-D tensor");
  const int64_t k = index.dims[index.ndim - 1];
  if (k > x.ndim) {
    return Status::Error(kOp, ": index ", index.dims_string(), " has rows of ", k, " but x ", x.dims_string(),
                         " has rank ", x.ndim);
  }
  std::vector<int64_t> dims(index.dims, index.dims + index.ndim - 1);
  dims.insert(dims.end(), x.dims + k, x.dims + x.ndim);
  return set_out(out, x.dtype, dims, kOp);
}

Status MeshgridInferMeta(TensorList inputs, MutableTensorList out) {
  static constexpr const char* kOp = "MeshgridInferMeta";
  if (inputs.empty()) return Status::Error(kOp, ": no inputs");
  if (out.size != inputs.size) return Status::Error(kOp, ": ", inputs.size, " inputs but ", out.size, " outputs");
  std::vector<int64_t> dims;
  for (size_t i = 0; i < inputs.size; ++i) {
    if (inputs[i].ndim > 1) return Status::Error(kOp, ": input ", i, " must be 1-D, got ", inputs[i].dims_string());
    KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(inputs[i], inputs[0], kOp, "inputs[i]", "inputs[0]"));
    dims.push_back(inputs[i].ndim == 0 ? 1 : inputs[i].dims[0]);
  }
  for (size_t i = 0; i < out.size; ++i) KFORGE_RETURN_IF_ERROR(set_out(out.items[i], inputs[0].dtype, dims, kOp));
  return Status::OK();
}

// Paddle's BroadcastTensorsInferMeta: every input's dims aligned at the back; each dim 1 or the largest.
Status BroadcastTensorsInferMeta(TensorList input, MutableTensorList out) {
  static constexpr const char* kOp = "BroadcastTensorsInferMeta";
  if (input.empty()) return Status::Error(kOp, ": no inputs");
  if (out.size != input.size) return Status::Error(kOp, ": ", input.size, " inputs but ", out.size, " outputs");
  int32_t rank = 0;
  for (const Tensor* t : input) rank = std::max(rank, t->ndim);
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < input.size; ++i) {
    const Tensor& t = input[i];
    for (int32_t d = 0; d < t.ndim; ++d) {
      int64_t& want = dims[static_cast<size_t>(rank - t.ndim + d)];
      const int64_t have = t.dims[d];
      if (have == want || have == 1) continue;
      if (want != 1) {
        return Status::Error(kOp, ": input ", i, " ", t.dims_string(), " does not broadcast with the others (dim ",
                             d, " is ", have, " where another input has ", want, ")");
      }
      want = have;
    }
  }
  for (size_t i = 0; i < out.size; ++i) KFORGE_RETURN_IF_ERROR(set_out(out.items[i], input[i].dtype, dims, kOp));
  return Status::OK();
}

Status TakeAlongAxisInferMeta(const Tensor& arr, const Tensor& indices, int axis, Tensor* out) {
  static constexpr const char* kOp = "TakeAlongAxisInferMeta";
  KFORGE_RETURN_IF_ERROR(require_index_dtype(kOp, "indices", indices));
  if (indices.ndim != arr.ndim) {
    return Status::Error(kOp, ": indices ", indices.dims_string(), " and arr ", arr.dims_string(),
                         " must have the same rank");
  }
  int64_t a = 0;
  if (!normalize_axis(axis, arr.ndim, &a)) return bad_axis(kOp, axis, arr.ndim);
  for (int32_t d = 0; d < arr.ndim; ++d) {
    if (d != a && indices.dims[d] > arr.dims[d]) {
      return Status::Error(kOp, ": indices ", indices.dims_string(), " is larger than arr ", arr.dims_string(),
                           " on dim ", d);
    }
  }
  return set_out(out, arr.dtype, indices.shape(), kOp);
}

Status DiagInferMeta(const Tensor& x, int offset, float padding_value, Tensor* out) {
  (void)padding_value;
  static constexpr const char* kOp = "DiagInferMeta";
  const int64_t off = offset;
  if (x.ndim <= 1) {
    const int64_t n = (x.ndim == 0 ? 1 : x.dims[0]) + (off < 0 ? -off : off);
    return set_out(out, x.dtype, {n, n}, kOp);
  }
  if (x.ndim == 2) {
    const int64_t len = off >= 0 ? std::min(x.dims[0], x.dims[1] - off) : std::min(x.dims[0] + off, x.dims[1]);
    if (len <= 0) {
      return Status::Error(kOp, ": offset ", offset, " leaves no diagonal in x ", x.dims_string());
    }
    return set_out(out, x.dtype, {len}, kOp);
  }
  return Status::Error(kOp, ": x must be 0-D, 1-D or 2-D, got ", x.dims_string());
}

Status ExpandAsInferMeta(const Tensor& x, const Tensor* y, const std::vector<int>& target_shape, Tensor* out) {
  static constexpr const char* kOp = "ExpandAsInferMeta";
  std::vector<int64_t> target = y ? y->shape() : std::vector<int64_t>(target_shape.begin(), target_shape.end());
  if (target.size() < static_cast<size_t>(x.ndim)) {
    return Status::Error(kOp, ": the target ", kernels::util::dims_string(target), " has fewer dims than x ",
                         x.dims_string());
  }
  const size_t diff = target.size() - static_cast<size_t>(x.ndim);
  for (size_t i = diff; i < target.size(); ++i) {
    const int64_t xd = x.dims[i - diff];
    if (target[i] < 0) return Status::Error(kOp, ": the target ", kernels::util::dims_string(target), " is unknown");
    if (xd != 1 && xd != target[i]) {
      return Status::Error(kOp, ": cannot expand x ", x.dims_string(), " to ", kernels::util::dims_string(target));
    }
  }
  return set_out(out, x.dtype, target, kOp);
}

Status PadInferMeta(const Tensor& x, const std::vector<int>& paddings, const Scalar& pad_value, Tensor* out) {
  (void)pad_value;
  static constexpr const char* kOp = "PadInferMeta";
  if (paddings.size() != 2 * static_cast<size_t>(x.ndim)) {
    return Status::Error(kOp, ": paddings has ", paddings.size(), " values; x ", x.dims_string(), " needs ",
                         2 * x.ndim);
  }
  std::vector<int64_t> dims(x.dims, x.dims + x.ndim);
  for (size_t i = 0; i < paddings.size(); ++i) {
    if (paddings[i] < 0) return Status::Error(kOp, ": paddings[", i, "] is negative (", paddings[i], ")");
    dims[i / 2] += paddings[i];
  }
  return set_out(out, x.dtype, dims, kOp);
}

Status BCELossInferMeta(const Tensor& input, const Tensor& label, Tensor* out) {
  static constexpr const char* kOp = "BCELossInferMeta";
  if (!input.same_dims(label)) {
    return Status::Error(kOp, ": input ", input.dims_string(), " and label ", label.dims_string(),
                         " must have the same dims");
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(input, label, kOp, "input", "label"));
  return set_out(out, input.dtype, input.shape(), kOp);
}

Status CrossEntropyWithSoftmaxInferMeta(const Tensor& input, const Tensor& label, bool soft_label, bool use_softmax,
                                        bool numeric_stable_mode, int ignore_index, int axis, Tensor* softmax,
                                        Tensor* loss) {
  (void)use_softmax;
  (void)numeric_stable_mode;
  (void)ignore_index;
  static constexpr const char* kOp = "CrossEntropyWithSoftmaxInferMeta";
  if (input.dtype != DataType::kFloat32 && input.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": input must be float32 or float64, got ", input.dtype);
  }
  int64_t a = 0;
  if (input.ndim == 0 || !normalize_axis(axis, input.ndim, &a)) return bad_axis(kOp, axis, input.ndim);
  if (label.ndim != input.ndim) {
    return Status::Error(kOp, ": label ", label.dims_string(), " must have the rank of input ", input.dims_string());
  }
  if (soft_label) {
    KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(input, label, kOp, "input", "label"));
    if (!input.same_dims(label)) {
      return Status::Error(kOp, ": a soft label ", label.dims_string(), " must have input's dims ",
                           input.dims_string());
    }
  } else {
    KFORGE_RETURN_IF_ERROR(require_index_dtype(kOp, "a hard label", label));
  }
  std::vector<int64_t> dims = input.shape();
  for (int32_t d = 0; d < input.ndim; ++d) {
    if (!soft_label && label.dims[d] != (d == a ? 1 : input.dims[d])) {
      return Status::Error(kOp, ": a hard label ", label.dims_string(), " must have input's dims ",
                           input.dims_string(), " with 1 along axis ", a);
    }
  }
  KFORGE_RETURN_IF_ERROR(set_out(softmax, input.dtype, dims, kOp));
  dims[a] = 1;
  return set_out(loss, input.dtype, dims, kOp);
}

Status SigmoidCrossEntropyWithLogitsInferMeta(const Tensor& x, const Tensor& label, const Tensor* pos_weight,
                                              bool normalize, int ignore_index, Tensor* out) {
  (void)normalize;
  (void)ignore_index;
  static constexpr const char* kOp = "SigmoidCrossEntropyWithLogitsInferMeta";
  if (!x.same_dims(label)) {
    return Status::Error(kOp, ": x ", x.dims_string(), " and label ", label.dims_string(), " must have the same dims");
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, label, kOp, "x", "label"));
  if (pos_weight != nullptr) {
    if (!x.same_dims(*pos_weight)) {
      return Status::Error(kOp, ": pos_weight ", pos_weight->dims_string(), " must have x's dims ", x.dims_string());
    }
    KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, *pos_weight, kOp, "x", "pos_weight"));
  }
  return set_out(out, x.dtype, x.shape(), kOp);
}

Status GridSampleBaseInferMeta(const Tensor& x, const Tensor& grid, Tensor* out) {
  static constexpr const char* kOp = "GridSampleBaseInferMeta";
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D NCHW, got ", x.dims_string());
  if (grid.ndim != 4 || grid.dims[3] != 2) {
    return Status::Error(kOp, ": grid must be [N, H, W, 2], got ", grid.dims_string());
  }
  if (grid.dims[0] != x.dims[0]) {
    return Status::Error(kOp, ": grid ", grid.dims_string(), " and x ", x.dims_string(), " differ in batch");
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, grid, kOp, "x", "grid"));
  return set_out(out, x.dtype, {x.dims[0], x.dims[1], grid.dims[1], grid.dims[2]}, kOp);
}

}  // namespace kforge::meta
