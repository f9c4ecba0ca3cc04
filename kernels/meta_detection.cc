// Infer-meta of the ops issue 34 adds last (GraphNet's detection models and a few more): Paddle's
// IsfiniteInferMeta (isnan), LinspaceInferMeta, IndexSampleInferMeta, RoiAlignInferMeta and
// DeformableConvInferMeta; NonZeroInferMeta, MaskedSelectInferMeta and UniqueRawInferMeta (capacities: their outputs' sizes depend on
// data). src/passes/shape_rules_detection.cpp mirrors them over symbolic dims.
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::meta {

namespace {

Status set_det_out(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

bool meta_det_is_float(DataType d) { return d == DataType::kFloat32 || d == DataType::kFloat64; }
bool meta_det_is_index(DataType d) { return d == DataType::kInt32 || d == DataType::kInt64; }

}  // namespace

Status IsfiniteInferMeta(const Tensor& x, Tensor* out) {
  return set_det_out(out, DataType::kBool, x.shape(), "IsfiniteInferMeta");
}

Status LinspaceInferMeta(const Tensor& start, const Tensor& stop, const Tensor& number, DataType dtype,
                         Tensor* out) {
  static constexpr const char* kOp = "LinspaceInferMeta";
  for (const Tensor* t : {&start, &stop, &number}) {
    if (t->numel() != 1) {
      return Status::Error(kOp, ": start, stop and number must have one element each, got ", t->dims_string());
    }
  }
  for (const Tensor* t : {&start, &stop}) {
    if (!meta_det_is_float(t->dtype) && !meta_det_is_index(t->dtype)) {
      return Status::Error(kOp, ": start and stop must be float32, float64, int32 or int64, got ", t->dtype);
    }
  }
  if (!meta_det_is_index(number.dtype)) return Status::Error(kOp, ": number must be int32 or int64, got ", number.dtype);
  if (dtype != DataType::kFloat32 && dtype != DataType::kFloat64 && !meta_det_is_index(dtype)) {
    return Status::Error(kOp, ": dtype must be float32, float64, int32 or int64, got ", dtype);
  }
  const int64_t num = number.dtype == DataType::kInt64 ? number.data_as<const int64_t>()[0]
                                                       : number.data_as<const int32_t>()[0];
  if (num < 0) return Status::Error(kOp, ": number must not be negative, got ", num);
  return set_det_out(out, dtype, {num}, kOp);
}

Status IndexSampleInferMeta(const Tensor& x, const Tensor& index, Tensor* out) {
  static constexpr const char* kOp = "IndexSampleInferMeta";
  if (x.ndim != 2) return Status::Error(kOp, ": x must be 2-D, got ", x.dims_string());
  if (index.ndim != 2) return Status::Error(kOp, ": index must be 2-D, got ", index.dims_string());
  if (!meta_det_is_index(index.dtype)) return Status::Error(kOp, ": index must be int32 or int64, got ", index.dtype);
  if (index.dims[0] != x.dims[0]) {
    return Status::Error(kOp, ": index ", index.dims_string(), " and x ", x.dims_string(),
                         " must have the same first dim");
  }
  return set_det_out(out, x.dtype, index.shape(), kOp);
}

// nonzero and masked_select: their real output size depends on the data; these give the most it can be (every
// element nonzero or selected), the capacity the caller lays the output out for. The kernels write the real dims.
Status NonZeroInferMeta(const Tensor& condition, Tensor* out) {
  return set_det_out(out, DataType::kInt64, {condition.numel(), static_cast<int64_t>(condition.ndim)}, "NonZeroInferMeta");
}

Status MaskedSelectInferMeta(const Tensor& x, const Tensor& mask, Tensor* out) {
  static constexpr const char* kOp = "MaskedSelectInferMeta";
  if (mask.dtype != DataType::kBool) return Status::Error(kOp, ": mask must be bool, got ", mask.dtype);
  std::vector<int64_t> both;
  KFORGE_RETURN_IF_ERROR(kernels::util::broadcast_dims(x, mask, kOp, &both));
  int64_t n = 1;
  for (int64_t d : both) n *= d;
  return set_det_out(out, x.dtype, {n}, kOp);
}

Status UniqueRawInferMeta(const Tensor& x, bool return_index, bool return_inverse, bool return_counts,
                          const std::vector<int>& axis, DataType dtype, bool is_sorted, Tensor* out, Tensor* indices,
                          Tensor* inverse, Tensor* counts) {
  static constexpr const char* kOp = "UniqueRawInferMeta";
  (void)return_index;
  (void)return_inverse;
  (void)return_counts;
  if (axis.size() > 1) return Status::Error(kOp, ": unique along more than one axis is not supported, got ", axis.size());
  if (!is_sorted) return Status::Error(kOp, ": is_sorted false (the legacy unique) is not supported");
  if (!meta_det_is_index(dtype)) return Status::Error(kOp, ": dtype must be int32 or int64, got ", dtype);
  int64_t n = x.numel();
  if (axis.size() == 1) {
    // Along an axis: the slices of x along it; out is x's shape (the most it can be: every slice distinct).
    const int32_t a = axis[0] < 0 ? axis[0] + x.ndim : axis[0];
    if (a < 0 || a >= x.ndim) return Status::Error(kOp, ": axis ", axis[0], " is out of range for ", x.dims_string());
    n = x.dims[a];
    KFORGE_RETURN_IF_ERROR(set_det_out(out, x.dtype, x.shape(), kOp));
  } else {
    KFORGE_RETURN_IF_ERROR(set_det_out(out, x.dtype, {n}, kOp));
  }
  if (indices != nullptr) KFORGE_RETURN_IF_ERROR(set_det_out(indices, dtype, {n}, kOp));
  KFORGE_RETURN_IF_ERROR(set_det_out(inverse, dtype, {n}, kOp));
  if (counts != nullptr) KFORGE_RETURN_IF_ERROR(set_det_out(counts, dtype, {n}, kOp));
  return Status::OK();
}

Status RoiAlignInferMeta(const Tensor& x, const Tensor& boxes, const Tensor* boxes_num, int pooled_height,
                         int pooled_width, float spatial_scale, int sampling_ratio, bool aligned, Tensor* out) {
  (void)spatial_scale;
  (void)sampling_ratio;
  (void)aligned;
  static constexpr const char* kOp = "RoiAlignInferMeta";
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D NCHW, got ", x.dims_string());
  if (!meta_det_is_float(x.dtype)) return Status::Error(kOp, ": x must be float32 or float64, got ", x.dtype);
  if (boxes.ndim != 2 || boxes.dims[1] != 4) {
    return Status::Error(kOp, ": boxes must be [num_rois, 4], got ", boxes.dims_string());
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, boxes, kOp, "x", "boxes"));
  if (boxes_num != nullptr) {
    if (boxes_num->ndim != 1 || !meta_det_is_index(boxes_num->dtype)) {
      return Status::Error(kOp, ": boxes_num must be a 1-D int32 or int64 tensor, got ", boxes_num->dtype, " ",
                           boxes_num->dims_string());
    }
  }
  if (pooled_height <= 0 || pooled_width <= 0) {
    return Status::Error(kOp, ": pooled_height and pooled_width must be positive, got ", pooled_height, " and ",
                         pooled_width);
  }
  return set_det_out(out, x.dtype, {boxes.dims[0], x.dims[1], pooled_height, pooled_width}, kOp);
}

Status DeformableConvInferMeta(const Tensor& x, const Tensor& offset, const Tensor& filter, const Tensor* mask,
                               const std::vector<int>& strides, const std::vector<int>& paddings,
                               const std::vector<int>& dilations, int deformable_groups, int groups, int im2col_step,
                               Tensor* out) {
  static constexpr const char* kOp = "DeformableConvInferMeta";
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D NCHW, got ", x.dims_string());
  if (!meta_det_is_float(x.dtype)) return Status::Error(kOp, ": x must be float32 or float64, got ", x.dtype);
  if (filter.ndim != 4 || offset.ndim != 4) {
    return Status::Error(kOp, ": filter ", filter.dims_string(), " and offset ", offset.dims_string(),
                         " must be 4-D");
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, filter, kOp, "x", "filter"));
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, offset, kOp, "x", "offset"));
  if (strides.size() != 2 || paddings.size() != 2 || dilations.size() != 2) {
    return Status::Error(kOp, ": strides, paddings and dilations must have 2 values each");
  }
  if (strides[0] <= 0 || strides[1] <= 0 || dilations[0] <= 0 || dilations[1] <= 0 || paddings[0] < 0 ||
      paddings[1] < 0) {
    return Status::Error(kOp, ": strides and dilations must be positive, paddings not negative");
  }
  if (groups <= 0 || deformable_groups <= 0 || im2col_step <= 0) {
    return Status::Error(kOp, ": groups, deformable_groups and im2col_step must be positive");
  }
  const int64_t c = x.dims[1], kh = filter.dims[2], kw = filter.dims[3];
  if (c != filter.dims[1] * groups || filter.dims[0] % groups != 0) {
    return Status::Error(kOp, ": filter ", filter.dims_string(), " does not fit x ", x.dims_string(), " in ",
                         groups, " groups");
  }
  if (filter.dims[0] % deformable_groups != 0) {
    return Status::Error(kOp, ": filter's ", filter.dims[0], " output channels do not split into ", deformable_groups,
                         " deformable groups");
  }
  if (c % deformable_groups != 0) {
    return Status::Error(kOp, ": x's ", c, " channels do not split into ", deformable_groups,
                         " deformable groups");
  }
  const int64_t oh = kernels::util::conv_out_size(x.dims[2], kh, dilations[0], paddings[0], paddings[0], strides[0]);
  const int64_t ow = kernels::util::conv_out_size(x.dims[3], kw, dilations[1], paddings[1], paddings[1], strides[1]);
  if (oh <= 0 || ow <= 0) return Status::Error(kOp, ": the filter ", filter.dims_string(), " is larger than x");
  const std::vector<int64_t> want_offset = {x.dims[0], 2 * deformable_groups * kh * kw, oh, ow};
  if (offset.shape() != want_offset) {
    return Status::Error(kOp, ": offset must be ", kernels::util::dims_string(want_offset), ", got ",
                         offset.dims_string());
  }
  if (mask != nullptr) {
    KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, *mask, kOp, "x", "mask"));
    const std::vector<int64_t> want_mask = {x.dims[0], deformable_groups * kh * kw, oh, ow};
    if (mask->shape() != want_mask) {
      return Status::Error(kOp, ": mask must be ", kernels::util::dims_string(want_mask), ", got ",
                           mask->dims_string());
    }
  }
  return set_det_out(out, x.dtype, {x.dims[0], filter.dims[0], oh, ow}, kOp);
}

}  // namespace kforge::meta
