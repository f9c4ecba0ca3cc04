// Infer-meta of the shape-manipulation ops (reshape, expand and slice are the runtime's kforge_shape_meta.h, which
// the CUDA target runs on the host too; Paddle's rules: reshape with 0 and -1, squeeze/unsqueeze axes,
// expand with -1, concat/split/stack along an axis, slice and strided_slice clamping).
#include <algorithm>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::kernels::util {

Status normalize_perm(const std::vector<int>& perm, int32_t rank, const char* op, int32_t* out) {
  if (perm.size() != static_cast<size_t>(rank)) {
    return Status::Error(op, ": perm has ", perm.size(), " entries for a tensor of rank ", rank);
  }
  bool seen[kMaxRank] = {};
  for (int32_t i = 0; i < rank; ++i) {
    int64_t a;
    if (!normalize_axis(perm[i], rank, &a) || seen[a]) {
      std::vector<int64_t> p(perm.begin(), perm.end());
      return Status::Error(op, ": perm ", dims_string(p), " is not a permutation of ", rank, " axes");
    }
    seen[a] = true;
    out[i] = static_cast<int32_t>(a);
  }
  return Status::OK();
}

namespace {

void full_ranges(const Tensor& x, SliceRanges* r) {
  for (int32_t i = 0; i < x.ndim; ++i) {
    r->start[i] = 0;
    r->step[i] = 1;
    r->count[i] = x.dims[i];
  }
}

}  // namespace

Status slice_ranges(const Tensor& x, const std::vector<int64_t>& axes, const IntArray& starts, const IntArray& ends,
                    const char* op, SliceRanges* r) {
  if (starts.size() != axes.size() || ends.size() != axes.size()) {
    return Status::Error(op, ": axes, starts and ends have ", axes.size(), ", ", starts.size(), " and ", ends.size(),
                         " values; they must match");
  }
  full_ranges(x, r);
  bool seen[kMaxRank] = {};
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    if (!normalize_axis(axes[i], x.ndim, &axis)) return bad_axis(op, axes[i], x.ndim);
    if (seen[axis]) return Status::Error(op, ": axis ", axes[i], " is sliced twice");
    seen[axis] = true;
    KFORGE_RETURN_IF_ERROR(shape_meta::slice_axis(x.dims[axis], starts[i], ends[i], axis, op, &r->start[axis],
                                                  &r->count[axis]));
  }
  return Status::OK();
}

Status strided_slice_ranges(const Tensor& x, const std::vector<int>& axes, const IntArray& starts,
                            const IntArray& ends, const IntArray& strides, const char* op, SliceRanges* r) {
  if (starts.size() != axes.size() || ends.size() != axes.size() || strides.size() != axes.size()) {
    return Status::Error(op, ": axes, starts, ends and strides have ", axes.size(), ", ", starts.size(), ", ",
                         ends.size(), " and ", strides.size(), " values; they must match");
  }
  full_ranges(x, r);
  bool seen[kMaxRank] = {};
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    if (!normalize_axis(axes[i], x.ndim, &axis)) return bad_axis(op, axes[i], x.ndim);
    if (seen[axis]) return Status::Error(op, ": axis ", axes[i], " is sliced twice");
    seen[axis] = true;
    int64_t n = x.dims[axis], step = strides[i], start = starts[i], end = ends[i];
    if (step == 0) return Status::Error(op, ": stride on axis ", axis, " is 0");
    if (start < 0) start = std::max<int64_t>(start + n, 0);
    // With a negative step Paddle spells "run to the front" as end = -1.
    if (end < 0 && !(end == -1 && step < 0)) end = std::max<int64_t>(end + n, 0);
    if (step > 0) {
      if (start > end) {
        return Status::Error(op, ": on axis ", axis, " start ", starts[i], " is after end ", ends[i],
                             " with a positive stride");
      }
      start = std::min(start, n);
      end = std::min(end, n);
      r->start[axis] = start;
      r->step[axis] = step;
      r->count[axis] = (end - start + step - 1) / step;
    } else {
      if (start < end) {
        return Status::Error(op, ": on axis ", axis, " start ", starts[i], " is before end ", ends[i],
                             " with a negative stride");
      }
      int64_t left = std::max<int64_t>(end + 1, 0), right = std::min(start + 1, n);
      r->start[axis] = right - 1;
      r->step[axis] = step;
      r->count[axis] = right > left ? (right - left + (-step) - 1) / (-step) : 0;
    }
  }
  return Status::OK();
}

}  // namespace kforge::kernels::util

namespace kforge::meta {

using kernels::util::bad_axis;
using kernels::util::normalize_axis;

namespace {

Status set_meta(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

}  // namespace

Status ReshapeInferMeta(const Tensor& x, const IntArray& shape, Tensor* out) {
  return shape_meta::ReshapeInferMeta(x, shape, out);
}

Status FlattenInferMeta(const Tensor& x, int start_axis, int stop_axis, Tensor* out) {
  static constexpr const char* kOp = "FlattenInferMeta";
  if (x.ndim == 0) {
    if ((start_axis != 0 && start_axis != -1) || (stop_axis != 0 && stop_axis != -1)) {
      return Status::Error(kOp, ": a 0-D tensor flattens with axes 0 or -1 only");
    }
    return set_meta(out, x.dtype, {1}, kOp);
  }
  int64_t start, stop;
  if (!normalize_axis(start_axis, x.ndim, &start)) return bad_axis(kOp, start_axis, x.ndim);
  if (!normalize_axis(stop_axis, x.ndim, &stop)) return bad_axis(kOp, stop_axis, x.ndim);
  if (stop < start) {
    return Status::Error(kOp, ": stop_axis ", stop_axis, " comes before start_axis ", start_axis);
  }
  std::vector<int64_t> dims(x.dims, x.dims + start);
  dims.push_back(kernels::util::product(x.dims, start, stop + 1));
  dims.insert(dims.end(), x.dims + stop + 1, x.dims + x.ndim);
  return set_meta(out, x.dtype, dims, kOp);
}

Status SqueezeInferMeta(const Tensor& x, const IntArray& axis, Tensor* out) {
  static constexpr const char* kOp = "SqueezeInferMeta";
  bool drop[kMaxRank] = {};
  if (axis.empty()) {
    for (int32_t i = 0; i < x.ndim; ++i) drop[i] = x.dims[i] == 1;
  }
  for (int64_t a : axis) {
    int64_t d;
    if (x.ndim == 0 && (a == 0 || a == -1)) continue;  // squeezing a 0-D tensor is a no-op
    if (!normalize_axis(a, x.ndim, &d)) return bad_axis(kOp, a, x.ndim);
    if (x.dims[d] == 1) drop[d] = true;  // a named axis whose size is not 1 is kept, as Paddle does
  }
  std::vector<int64_t> dims;
  for (int32_t i = 0; i < x.ndim; ++i) {
    if (!drop[i]) dims.push_back(x.dims[i]);
  }
  return set_meta(out, x.dtype, dims, kOp);
}

Status UnsqueezeInferMeta(const Tensor& x, const IntArray& axis, Tensor* out) {
  static constexpr const char* kOp = "UnsqueezeInferMeta";
  int64_t out_rank = x.ndim + static_cast<int64_t>(axis.size());
  if (out_rank > kMaxRank) {
    return Status::Error(kOp, ": unsqueezing x ", x.dims_string(), " by ", axis.size(), " axes exceeds rank ",
                         kMaxRank);
  }
  // Paddle's GetUnsqueezeShape: each axis is relative to the rank reached so far; inserting shifts later 1s.
  std::vector<int64_t> marks(static_cast<size_t>(out_rank) + 1, 0);
  int64_t cur_rank = x.ndim;
  for (int64_t a : axis) {
    int64_t cur = a < 0 ? a + cur_rank + 1 : a;
    if (cur < 0 || cur > cur_rank) return bad_axis(kOp, a, cur_rank + 1);
    for (int64_t i = cur_rank; i >= cur; --i) {
      if (marks[static_cast<size_t>(i)] == 1) {
        marks[static_cast<size_t>(i) + 1] = 1;
        marks[static_cast<size_t>(i)] = 0;
      }
    }
    marks[static_cast<size_t>(cur)] = 1;
    ++cur_rank;
  }
  std::vector<int64_t> dims(static_cast<size_t>(out_rank));
  for (int64_t in = 0, o = 0; o < out_rank; ++o) {
    dims[static_cast<size_t>(o)] = marks[static_cast<size_t>(o)] == 1 ? 1 : x.dims[in++];
  }
  return set_meta(out, x.dtype, dims, kOp);
}

Status TransposeInferMeta(const Tensor& x, const std::vector<int>& perm, Tensor* out) {
  int32_t p[kMaxRank];
  KFORGE_RETURN_IF_ERROR(kernels::util::normalize_perm(perm, x.ndim, "TransposeInferMeta", p));
  std::vector<int64_t> dims(static_cast<size_t>(x.ndim));
  for (int32_t i = 0; i < x.ndim; ++i) dims[static_cast<size_t>(i)] = x.dims[p[i]];
  return set_meta(out, x.dtype, dims, "TransposeInferMeta");
}

Status ExpandInferMeta(const Tensor& x, const IntArray& shape, Tensor* out) {
  return shape_meta::ExpandInferMeta(x, shape, out);
}

Status ConcatInferMeta(TensorList x, const Scalar& axis, Tensor* out) {
  static constexpr const char* kOp = "ConcatInferMeta";
  if (x.empty()) return Status::Error(kOp, ": no inputs");
  const Tensor& first = x[0];
  int64_t a = 0;
  if (!normalize_axis(axis.to<int64_t>(), first.ndim, &a)) return bad_axis(kOp, axis.to<int64_t>(), first.ndim);
  std::vector<int64_t> dims = first.shape();
  dims[static_cast<size_t>(a)] = 0;
  for (size_t i = 0; i < x.size; ++i) {
    const Tensor& t = x[i];
    bool match = t.ndim == first.ndim;
    for (int32_t d = 0; match && d < t.ndim; ++d) match = d == a || t.dims[d] == first.dims[d];
    if (!match) {
      return Status::Error(kOp, ": input ", i, " ", t.dims_string(), " does not match input 0 ", first.dims_string(),
                           " outside axis ", a);
    }
    if (t.dtype != first.dtype) return Status::Error(kOp, ": input ", i, " is ", t.dtype, ", input 0 ", first.dtype);
    dims[static_cast<size_t>(a)] += t.dims[a];
  }
  return set_meta(out, first.dtype, dims, kOp);
}

namespace {

Status set_split_outputs(const Tensor& x, int64_t axis, const std::vector<int64_t>& sizes, MutableTensorList out,
                         const char* op) {
  if (out.size != sizes.size()) {
    return Status::Error(op, ": ", sizes.size(), " pieces but ", out.size, " outputs");
  }
  std::vector<int64_t> dims = x.shape();
  for (size_t i = 0; i < sizes.size(); ++i) {
    dims[static_cast<size_t>(axis)] = sizes[i];
    KFORGE_RETURN_IF_ERROR(set_meta(out.items[i], x.dtype, dims, op));
  }
  return Status::OK();
}

}  // namespace

Status SplitInferMeta(const Tensor& x, const IntArray& sections, const Scalar& axis, MutableTensorList out) {
  static constexpr const char* kOp = "SplitInferMeta";
  int64_t a = 0;
  if (!normalize_axis(axis.to<int64_t>(), x.ndim, &a)) return bad_axis(kOp, axis.to<int64_t>(), x.ndim);
  int64_t n = x.dims[a], total = 0, unknown = -1;
  std::vector<int64_t> sizes = sections.values();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && unknown < 0) {
      unknown = static_cast<int64_t>(i);
    } else if (sizes[i] < 0) {
      return Status::Error(kOp, ": sections ", kernels::util::dims_string(sizes), " may hold one -1 and no other "
                           "negative value");
    } else {
      total += sizes[i];
    }
  }
  if (unknown >= 0 && total <= n) {
    sizes[static_cast<size_t>(unknown)] = n - total;
  } else if (unknown >= 0 || total != n) {
    return Status::Error(kOp, ": sections ", kernels::util::dims_string(sections.values()), " do not add up to ", n,
                         ", the size of axis ", a, " of x ", x.dims_string());
  }
  return set_split_outputs(x, a, sizes, out, kOp);
}

Status SplitWithNumInferMeta(const Tensor& x, int num, const Scalar& axis, MutableTensorList out) {
  static constexpr const char* kOp = "SplitWithNumInferMeta";
  int64_t a = 0;
  if (!normalize_axis(axis.to<int64_t>(), x.ndim, &a)) return bad_axis(kOp, axis.to<int64_t>(), x.ndim);
  if (num <= 0) return Status::Error(kOp, ": num must be positive, got ", num);
  if (x.dims[a] % num != 0) {
    return Status::Error(kOp, ": axis ", a, " of x ", x.dims_string(), " does not split into ", num, " equal parts");
  }
  return set_split_outputs(x, a, std::vector<int64_t>(static_cast<size_t>(num), x.dims[a] / num), out, kOp);
}

Status StackInferMeta(TensorList x, int axis, Tensor* out) {
  static constexpr const char* kOp = "StackInferMeta";
  if (x.empty()) return Status::Error(kOp, ": no inputs");
  const Tensor& first = x[0];
  for (size_t i = 1; i < x.size; ++i) {
    if (!x[i].same_dims(first)) {
      return Status::Error(kOp, ": input ", i, " ", x[i].dims_string(), " differs from input 0 ", first.dims_string());
    }
    if (x[i].dtype != first.dtype) return Status::Error(kOp, ": input ", i, " is ", x[i].dtype, ", input 0 ", first.dtype);
  }
  int64_t a = 0;
  if (!normalize_axis(axis, first.ndim + 1, &a)) return bad_axis(kOp, axis, first.ndim + 1);
  std::vector<int64_t> dims = first.shape();
  dims.insert(dims.begin() + a, static_cast<int64_t>(x.size));
  return set_meta(out, first.dtype, dims, kOp);
}

Status SliceRawInferMeta(const Tensor& input, const std::vector<int64_t>& axes, const IntArray& starts,
                         const IntArray& ends, const std::vector<int64_t>& infer_flags,
                         const std::vector<int64_t>& decrease_axis, Tensor* out) {
  return shape_meta::SliceRawInferMeta(input, axes, starts, ends, infer_flags, decrease_axis, out);
}

Status StridedSliceInferMeta(const Tensor& x, const std::vector<int>& axes, const IntArray& starts, const IntArray& ends,
                             const IntArray& strides, Tensor* out) {
  kernels::util::SliceRanges r;
  KFORGE_RETURN_IF_ERROR(
      kernels::util::strided_slice_ranges(x, axes, starts, ends, strides, "StridedSliceInferMeta", &r));
  return set_meta(out, x.dtype, std::vector<int64_t>(r.count, r.count + x.ndim), "StridedSliceInferMeta");
}

}  // namespace kforge::meta
