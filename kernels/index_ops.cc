// set_value, set_value_with_tensor, gather, index_select and scatter: copies of x with elements picked or replaced by
// index. Indices are checked before anything is written, so a bad index is an error status, never an out-of-bounds
// access.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "movement_util.h"

namespace kforge::kernels {

namespace {

Status check_out(const char* op, const Tensor* out, DataType dtype, const Tensor& expected) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (out->dtype != dtype) return Status::Error(op, ": out is ", out->dtype, ", expected ", dtype);
  return util::require_dims(*out, expected, op);
}

// Paddle's CheckAndUpdateSliceAttrs + GetSliceDims (funcs/slice_utils.h), which differ from strided_slice's: with a
// negative step an end below -1 wraps once and then clamps to -1 ("through element 0"), so x[::-1], which Paddle
// writes as start INT_MAX and end INT_MIN, covers the whole axis.
Status set_value_ranges(const char* op, const Tensor& x, const std::vector<int64_t>& axes, const IntArray& starts,
                        const IntArray& ends, const IntArray& steps, util::SliceRanges* r) {
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size()) {
    return Status::Error(op, ": axes, starts, ends and steps have ", axes.size(), ", ", starts.size(), ", ",
                         ends.size(), " and ", steps.size(), " values; they must match");
  }
  for (int32_t i = 0; i < x.ndim; ++i) {
    r->start[i] = 0;
    r->step[i] = 1;
    r->count[i] = x.dims[i];
  }
  bool seen[kMaxRank] = {};
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = 0;
    if (!util::normalize_axis(axes[i], x.ndim, &a)) return util::bad_axis(op, axes[i], x.ndim);
    if (seen[a]) return Status::Error(op, ": axis ", axes[i], " is sliced twice");
    seen[a] = true;
    const int64_t n = x.dims[a], step = steps[i];
    if (step == 0) return Status::Error(op, ": step on axis ", a, " is 0");
    r->step[a] = step;
    if (n == 0) {
      r->count[a] = 0;
      continue;
    }
    int64_t start = std::max<int64_t>(starts[i] < 0 ? starts[i] + n : starts[i], 0);
    int64_t end = std::min(step > 0 && ends[i] < 0 ? ends[i] + n : ends[i], n);
    if (step > 0) {
      start = std::min(start, n);
      end = std::max<int64_t>(end, 0);
      if (end < start) return Status::Error(op, ": on axis ", a, " end ", ends[i], " comes before start ", starts[i]);
      r->count[a] = (end - start + step - 1) / step;
    } else {
      start = std::min(start, n - 1);
      if (end < -1) end += n;
      end = std::max<int64_t>(end, -1);
      if (start < end) return Status::Error(op, ": on axis ", a, " start ", starts[i], " comes before end ", ends[i]);
      r->count[a] = (end - start + step + 1) / step;
    }
    r->start[a] = start;
  }
  return Status::OK();
}

// Where set_value writes: the strided slice of x, and the shape the value is broadcast to (the slice without the
// decrease_axes, with a 1 for each of none_axes; the element order is the slice's either way).
struct SetValueTarget {
  util::SliceRanges ranges;
  std::vector<int64_t> value_dims;
};

Status set_value_target(const char* op, const Tensor& x, const IntArray& starts, const IntArray& ends,
                        const IntArray& steps, const std::vector<int64_t>& axes,
                        const std::vector<int64_t>& decrease_axes, const std::vector<int64_t>& none_axes,
                        SetValueTarget* t) {
  KFORGE_RETURN_IF_ERROR(set_value_ranges(op, x, axes, starts, ends, steps, &t->ranges));
  std::vector<bool> drop(static_cast<size_t>(x.ndim), false);
  for (int64_t d : decrease_axes) {
    int64_t a = 0;
    if (!util::normalize_axis(d, x.ndim, &a)) return util::bad_axis(op, d, x.ndim);
    if (t->ranges.count[a] != 1) {
      return Status::Error(op, ": decrease axis ", d, " has ", t->ranges.count[a], " elements in the slice, not 1");
    }
    drop[static_cast<size_t>(a)] = true;
  }
  t->value_dims.clear();
  for (int32_t i = 0; i < x.ndim; ++i) {
    if (!drop[static_cast<size_t>(i)]) t->value_dims.push_back(t->ranges.count[i]);
  }
  std::vector<int64_t> none = none_axes;
  std::sort(none.begin(), none.end());
  for (int64_t a : none) {
    if (a < 0 || a > static_cast<int64_t>(t->value_dims.size())) {
      return Status::Error(op, ": none axis ", a, " is out of range");
    }
    t->value_dims.insert(t->value_dims.begin() + a, 1);
  }
  return Status::OK();
}

// Writes value (broadcast, numpy rules, to target.value_dims) into the slice of out. `value` holds T elements.
template <typename T>
Status assign_slice(const char* op, const SetValueTarget& target, const T* value, const std::vector<int64_t>& vdims,
                    const Tensor& x, Tensor* out) {
  const std::vector<int64_t>& tdims = target.value_dims;
  const int32_t trank = static_cast<int32_t>(tdims.size());
  if (vdims.size() > tdims.size()) {
    bool ones = true;
    for (size_t i = 0; i + tdims.size() < vdims.size(); ++i) ones = ones && vdims[i] == 1;
    if (!ones) {
      return Status::Error(op, ": value ", util::dims_string(vdims), " cannot be broadcast to the slice ",
                           util::dims_string(tdims));
    }
  }
  // Value strides over the target shape (0 where broadcast).
  std::vector<int64_t> vstride(tdims.size(), 0);
  int64_t s = 1;
  for (int32_t i = trank - 1, v = static_cast<int32_t>(vdims.size()) - 1; i >= 0; --i, --v) {
    if (v < 0) break;
    if (vdims[static_cast<size_t>(v)] != tdims[static_cast<size_t>(i)] && vdims[static_cast<size_t>(v)] != 1) {
      return Status::Error(op, ": value ", util::dims_string(vdims), " cannot be broadcast to the slice ",
                           util::dims_string(tdims));
    }
    vstride[static_cast<size_t>(i)] = vdims[static_cast<size_t>(v)] == 1 ? 0 : s;
    s *= vdims[static_cast<size_t>(v)];
  }
  int64_t xstride[kMaxRank];
  util::contiguous_strides(x.dims, x.ndim, xstride);
  T* od = out->data_as<T>();
  if (od != x.data) util::copy_bytes(out->data, x.data, x.bytes());
  const util::SliceRanges& r = target.ranges;
  int64_t total = 1;
  for (int32_t i = 0; i < x.ndim; ++i) total *= r.count[i];
  // Two odometers in step: one over the slice of x, one over the value's target shape (same element order).
  int64_t sidx[kMaxRank] = {}, tidx[kMaxRank] = {};
  int64_t xoff = 0, voff = 0;
  for (int32_t i = 0; i < x.ndim; ++i) xoff += r.start[i] * xstride[i];
  for (int64_t k = 0; k < total; ++k) {
    od[xoff] = value[voff];
    for (int32_t d = x.ndim - 1; d >= 0; --d) {
      if (++sidx[d] < r.count[d]) {
        xoff += r.step[d] * xstride[d];
        break;
      }
      xoff -= r.step[d] * xstride[d] * (r.count[d] - 1);
      sidx[d] = 0;
    }
    for (int32_t d = trank - 1; d >= 0; --d) {
      if (++tidx[d] < tdims[static_cast<size_t>(d)]) {
        voff += vstride[static_cast<size_t>(d)];
        break;
      }
      voff -= vstride[static_cast<size_t>(d)] * (tdims[static_cast<size_t>(d)] - 1);
      tidx[d] = 0;
    }
  }
  return Status::OK();
}

}  // namespace

Status set_value(const KernelContext& ctx, const Tensor& x, const IntArray& starts, const IntArray& ends,
                 const IntArray& steps, const std::vector<int64_t>& axes, const std::vector<int64_t>& decrease_axes,
                 const std::vector<int64_t>& none_axes, const std::vector<int64_t>& shape,
                 const std::vector<Scalar>& values, Tensor* out) {
  static constexpr const char* kOp = "set_value";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, x));
  SetValueTarget target;
  KFORGE_RETURN_IF_ERROR(set_value_target(kOp, x, starts, ends, steps, axes, decrease_axes, none_axes, &target));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return Status::Error(kOp, ": shape ", util::dims_string(shape), " has a negative dim");
    n *= d;
  }
  if (n != static_cast<int64_t>(values.size())) {
    return Status::Error(kOp, ": shape ", util::dims_string(shape), " holds ", n, " values, got ", values.size());
  }
  return util::visit_plain(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    std::unique_ptr<T[]> v(new T[values.size() + 1]);  // not std::vector: vector<bool> has no data()
    for (size_t i = 0; i < values.size(); ++i) v[i] = values[i].to<T>();
    return assign_slice<T>(kOp, target, v.get(), shape, x, out);
  });
}

Status set_value_with_tensor(const KernelContext& ctx, const Tensor& x, const Tensor& values, const IntArray& starts,
                             const IntArray& ends, const IntArray& steps, const std::vector<int64_t>& axes,
                             const std::vector<int64_t>& decrease_axes, const std::vector<int64_t>& none_axes,
                             Tensor* out) {
  static constexpr const char* kOp = "set_value_with_tensor";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(util::require_same_dtype(x, values, kOp, "x", "values"));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, x));
  SetValueTarget target;
  KFORGE_RETURN_IF_ERROR(set_value_target(kOp, x, starts, ends, steps, axes, decrease_axes, none_axes, &target));
  return util::visit_element_size(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // values may alias x (y[1:] = y[:-1]): assign from a copy.
    std::vector<T> v(values.data_as<const T>(), values.data_as<const T>() + values.numel());
    return assign_slice<T>(kOp, target, v.data(), values.shape(), x, out);
  });
}

namespace {

// x viewed as [outer, n, inner] around `axis`; out as [outer, k, inner] where k slices are picked by index.
Status pick_slices(const char* op, const KernelContext& ctx, const Tensor& x, const Tensor& index, int64_t axis,
                   const Tensor& expected, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, op));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(op, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(check_out(op, out, dtype, expected));
  const int64_t n = x.dims[axis];
  KFORGE_RETURN_IF_ERROR(util::check_indices(op, index, n));
  const int64_t outer = util::product(x.dims, 0, axis), inner = util::product(x.dims, axis + 1, x.ndim);
  const int64_t k = index.numel();
  const size_t row = static_cast<size_t>(inner) * size_of(x.dtype);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out->data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t i = util::index_at(index, j);
      if (row > 0) std::memcpy(dst + (o * k + j) * static_cast<int64_t>(row), src + (o * n + i) * static_cast<int64_t>(row),
                               row);
    }
  }
  return Status::OK();
}

}  // namespace

Status gather(const KernelContext& ctx, const Tensor& x, const Tensor& index, const Scalar& axis, Tensor* out) {
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::GatherInferMeta(x, index, axis, &expected));
  int64_t a = 0;
  util::normalize_axis(axis.to<int64_t>(), x.ndim, &a);
  return pick_slices("gather", ctx, x, index, a, expected, out);
}

Status index_select(const KernelContext& ctx, const Tensor& x, const Tensor& index, int axis, Tensor* out) {
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::IndexSelectInferMeta(x, index, axis, &expected));
  int64_t a = 0;
  util::normalize_axis(axis, x.ndim, &a);
  return pick_slices("index_select", ctx, x, index, a, expected, out);
}

Status scatter(const KernelContext& ctx, const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite,
               Tensor* out) {
  static constexpr const char* kOp = "scatter";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::ScatterInferMeta(x, index, updates, overwrite, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, expected));
  KFORGE_RETURN_IF_ERROR(util::check_indices(kOp, index, x.dims[0]));
  const int64_t row = util::product(x.dims, 1, x.ndim), k = index.numel();
  return util::visit_number(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // Paddle never hands updates in out's memory; a caller that does gets it read from a copy.
    std::vector<T> copy;
    const T* u = updates.data_as<const T>();
    if (updates.data == out->data) {
      copy.assign(u, u + updates.numel());
      u = copy.data();
    }
    T* od = out->data_as<T>();
    util::copy_bytes(out->data, x.data, x.bytes());
    if (overwrite) {
      // Later indices win, as in Paddle's ScatterAssign.
      for (int64_t j = 0; j < k; ++j) std::copy(u + j * row, u + (j + 1) * row, od + util::index_at(index, j) * row);
      return Status::OK();
    }
    // Paddle's ScatterAssignAdd: the indexed rows are cleared, then every update is added.
    for (int64_t j = 0; j < k; ++j) {
      T* dst = od + util::index_at(index, j) * row;
      std::fill(dst, dst + row, T(0));
    }
    for (int64_t j = 0; j < k; ++j) {
      T* dst = od + util::index_at(index, j) * row;
      for (int64_t e = 0; e < row; ++e) dst[e] += u[j * row + e];
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
