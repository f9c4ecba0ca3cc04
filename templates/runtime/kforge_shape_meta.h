// kforge shape rules of the ops whose output dims can be read from a tensor's values (docs/compile.md, "Sizes that
// depend on data"): reshape, expand, tile, slice, full_with_tensor and arange, as Paddle's infer-meta computes them.
// Header-only on the runtime header alone, so that one copy serves both targets: the reference CPU kernel
// library's kforge::meta functions of the same names call these (kernels/meta_*.cc), and a --target cuda class
// that reads such a shape runs them on the host after copying the small integer tensor back from the device. They
// read only the dtype and dims of their tensor arguments, and the values of their IntArray / Scalar ones.
#ifndef KFORGE_SHAPE_META_H_
#define KFORGE_SHAPE_META_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::shape_meta {

// Normalises an axis into [0, rank); false when out of range.
inline bool normalize_axis(int64_t axis, int64_t rank, int64_t* out) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return false;
  *out = a;
  return true;
}

inline Status bad_axis(const char* op, int64_t axis, int64_t rank) {
  return Status::Error(op, ": axis ", axis, " is out of range for rank ", rank);
}

inline std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

inline Status set_meta(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

// Paddle's arange size (funcs::GetSize): computed in double when any of start, end, step is floating, else in int64;
// step must be non-zero and point from start towards end.
inline Status arange_size(const Scalar& start, const Scalar& end, const Scalar& step, const char* op, int64_t* size) {
  if (start.is_floating() || end.is_floating() || step.is_floating()) {
    const double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
    if (!std::isfinite(s) || !std::isfinite(e) || !std::isfinite(st)) {
      return Status::Error(op, ": start, end and step must be finite, got ", s, ", ", e, " and ", st);
    }
    if (st == 0) return Status::Error(op, ": step must not be 0");
    if ((s < e && st < 0) || (s > e && st > 0)) {
      return Status::Error(op, ": step ", st, " points away from end ", e, " (start ", s, ")");
    }
    const double n = std::ceil(std::fabs((e - s) / st));
    if (!(n < 9.0e15)) return Status::Error(op, ": ", n, " elements are too many");
    *size = static_cast<int64_t>(n);
    return Status::OK();
  }
  const int64_t s = start.to<int64_t>(), e = end.to<int64_t>(), st = step.to<int64_t>();
  if (st == 0) return Status::Error(op, ": step must not be 0");
  if ((s < e && st < 0) || (s > e && st > 0)) {
    return Status::Error(op, ": step ", st, " points away from end ", e, " (start ", s, ")");
  }
  // |e - s| and |st| in unsigned arithmetic: no overflow for any int64 pair.
  const uint64_t span = s < e ? static_cast<uint64_t>(e) - static_cast<uint64_t>(s)
                              : static_cast<uint64_t>(s) - static_cast<uint64_t>(e);
  const uint64_t magnitude = st < 0 ? 0 - static_cast<uint64_t>(st) : static_cast<uint64_t>(st);
  *size = static_cast<int64_t>(span / magnitude + (span % magnitude != 0 ? 1 : 0));
  return Status::OK();
}

// One axis of a slice (step 1) of an axis of size n: negative start / end count from the back, both are clamped to
// [0, n]; an end before the start is an error.
inline Status slice_axis(int64_t n, int64_t start_value, int64_t end_value, int64_t axis, const char* op,
                         int64_t* start, int64_t* count) {
  int64_t s = start_value < 0 ? start_value + n : start_value;
  int64_t e = end_value < 0 ? end_value + n : end_value;
  s = std::min(std::max<int64_t>(s, 0), n);
  e = std::min(std::max<int64_t>(e, 0), n);
  if (e < s) {
    return Status::Error(op, ": on axis ", axis, " (size ", n, ") end ", end_value, " comes before start ", start_value);
  }
  *start = s;
  *count = e - s;
  return Status::OK();
}

inline Status ReshapeInferMeta(const Tensor& x, const IntArray& shape, Tensor* out) {
  static constexpr const char* kOp = "ReshapeInferMeta";
  std::vector<int64_t> dims(shape.size());
  int64_t unknown = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[i];
    if (s == -1) {
      if (unknown >= 0) return Status::Error(kOp, ": shape ", dims_string(shape.values()), " has more than one -1");
      unknown = static_cast<int64_t>(i);
      continue;
    }
    if (s == 0) {
      if (static_cast<int32_t>(i) >= x.ndim) {
        return Status::Error(kOp, ": shape ", dims_string(shape.values()), " copies dim ", i, " (0) but x ",
                             x.dims_string(), " has rank ", x.ndim);
      }
      s = x.dims[i];
    } else if (s < 0) {
      return Status::Error(kOp, ": shape ", dims_string(shape.values()), " has a negative dim ", s);
    }
    dims[i] = s;
    known *= s;
  }
  int64_t numel = x.numel();
  if (unknown >= 0) {
    if (known == 0 || numel % known != 0) {
      return Status::Error(kOp, ": cannot reshape x ", x.dims_string(), " (", numel, " elements) to ",
                           dims_string(shape.values()));
    }
    dims[static_cast<size_t>(unknown)] = numel / known;
  } else if (known != numel) {
    return Status::Error(kOp, ": cannot reshape x ", x.dims_string(), " (", numel, " elements) to ",
                         dims_string(dims), " (", known, " elements)");
  }
  return set_meta(out, x.dtype, dims, kOp);
}

inline Status ExpandInferMeta(const Tensor& x, const IntArray& shape, Tensor* out) {
  static constexpr const char* kOp = "ExpandInferMeta";
  const std::string target = dims_string(shape.values());
  if (shape.size() < static_cast<size_t>(x.ndim)) {
    return Status::Error(kOp, ": shape ", target, " has fewer dims than x ", x.dims_string());
  }
  size_t diff = shape.size() - static_cast<size_t>(x.ndim);
  std::vector<int64_t> dims(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t xd = i < diff ? 1 : x.dims[i - diff], s = shape[i];
    if (s == -1) {
      if (i < diff) return Status::Error(kOp, ": shape ", target, " has -1 at new dim ", i);
      dims[i] = xd;
    } else if (s < 0) {
      return Status::Error(kOp, ": shape ", target, " has a negative dim ", s);
    } else if (xd != 1 && xd != s) {
      return Status::Error(kOp, ": cannot expand x ", x.dims_string(), " to ", target);
    } else {
      dims[i] = s;
    }
  }
  return set_meta(out, x.dtype, dims, kOp);
}

inline Status TileInferMeta(const Tensor& x, const IntArray& repeat_times, Tensor* out) {
  static constexpr const char* kOp = "TileInferMeta";
  const size_t rank = std::max<size_t>(static_cast<size_t>(x.ndim), repeat_times.size());
  if (rank > static_cast<size_t>(kMaxRank)) return Status::Error(kOp, ": tiling to rank ", rank, " exceeds ", kMaxRank);
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Both are right-aligned: the shorter one is padded with 1s in front.
    const size_t xo = rank - static_cast<size_t>(x.ndim), ro = rank - repeat_times.size();
    const int64_t d = i >= xo ? x.dims[i - xo] : 1;
    const int64_t r = i >= ro ? repeat_times[i - ro] : 1;
    if (r <= 0) return Status::Error(kOp, ": repeat_times must be positive, got ", r);
    dims[i] = d < 0 ? -1 : d * r;
  }
  return set_meta(out, x.dtype, dims, kOp);
}

inline Status SliceRawInferMeta(const Tensor& input, const std::vector<int64_t>& axes, const IntArray& starts,
                                const IntArray& ends, const std::vector<int64_t>& infer_flags,
                                const std::vector<int64_t>& decrease_axis, Tensor* out) {
  (void)infer_flags;  // -1 marks a start/end only known at run time; here they always are
  static constexpr const char* kOp = "SliceRawInferMeta";
  if (starts.size() != axes.size() || ends.size() != axes.size()) {
    return Status::Error(kOp, ": axes, starts and ends have ", axes.size(), ", ", starts.size(), " and ", ends.size(),
                         " values; they must match");
  }
  std::vector<int64_t> count = input.shape();
  bool seen[kMaxRank] = {};
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis, start;
    if (!normalize_axis(axes[i], input.ndim, &axis)) return bad_axis(kOp, axes[i], input.ndim);
    if (seen[axis]) return Status::Error(kOp, ": axis ", axes[i], " is sliced twice");
    seen[axis] = true;
    KFORGE_RETURN_IF_ERROR(slice_axis(input.dims[axis], starts[i], ends[i], axis, kOp, &start,
                                      &count[static_cast<size_t>(axis)]));
  }
  bool drop[kMaxRank] = {};
  for (int64_t a : decrease_axis) {
    int64_t d;
    if (!normalize_axis(a, input.ndim, &d)) return bad_axis(kOp, a, input.ndim);
    if (count[static_cast<size_t>(d)] != 1) {
      return Status::Error(kOp, ": decrease_axis ", a, " has size ", count[static_cast<size_t>(d)],
                           " after slicing, expected 1");
    }
    drop[d] = true;
  }
  std::vector<int64_t> dims;
  for (int32_t i = 0; i < input.ndim; ++i) {
    if (!drop[i]) dims.push_back(count[static_cast<size_t>(i)]);
  }
  return set_meta(out, input.dtype, dims, kOp);
}

inline Status FullWithTensorInferMeta(const IntArray& shape, DataType dtype, Tensor* out) {
  for (int64_t d : shape) {
    if (d < 0) return Status::Error("FullWithTensorInferMeta: shape ", dims_string(shape.values()), " has a negative dim");
  }
  return set_meta(out, dtype, shape.values(), "FullWithTensorInferMeta");
}

inline Status ArangeInferMeta(const Scalar& start, const Scalar& end, const Scalar& step, DataType dtype, Tensor* out) {
  int64_t size = 0;
  KFORGE_RETURN_IF_ERROR(arange_size(start, end, step, "ArangeInferMeta", &size));
  return set_meta(out, dtype, {size}, "ArangeInferMeta");
}

}  // namespace kforge::shape_meta

#endif  // KFORGE_SHAPE_META_H_
