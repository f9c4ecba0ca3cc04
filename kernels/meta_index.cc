// Infer-meta of the index and data-movement ops: set_value, gather, index_select, scatter, tile, roll, flip and
// pad3d (Paddle's SetValueInferMeta, GatherInferMeta, IndexSelectInferMeta, ScatterInferMeta, TileInferMeta,
// RollInferMeta, FlipInferMeta, Pad3dInferMeta).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "movement_util.h"

namespace kforge::kernels::util {

Status index_length(const char* op, const Tensor& index, int64_t* length) {
  if (index.dtype != DataType::kInt32 && index.dtype != DataType::kInt64) {
    return Status::Error(op, ": index must be int32 or int64, got ", index.dtype);
  }
  if (index.ndim == 1 || (index.ndim == 2 && index.dims[1] == 1)) {
    *length = index.dims[0];
    return Status::OK();
  }
  return Status::Error(op, ": index must be 1-D (or [N, 1]), got ", index.dims_string());
}

Status pad3d_shape(const char* op, const Tensor& x, const IntArray& paddings, const std::string& mode,
                   const std::string& data_format, Pad3dShape* s) {
  if (x.ndim != 5) return Status::Error(op, ": x must be 5-D, got ", x.dims_string());
  if (data_format == "NCDHW") {
    s->channel_last = false;
  } else if (data_format == "NDHWC") {
    s->channel_last = true;
  } else {
    return Status::Error(op, ": data_format must be NCDHW or NDHWC, got \"", data_format, "\"");
  }
  if (mode == "constant") {
    s->mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    s->mode = PadMode::kReflect;
  } else if (mode == "replicate") {
    s->mode = PadMode::kReplicate;
  } else if (mode == "circular") {
    s->mode = PadMode::kCircular;
  } else {
    return Status::Error(op, ": mode must be constant, reflect, replicate or circular, got \"", mode, "\"");
  }
  if (paddings.size() != 6) return Status::Error(op, ": paddings must have 6 values, got ", paddings.size());
  // paddings run from the last spatial dim: [left, right, top, bottom, front, back] = W, H, D.
  const int spatial0 = s->channel_last ? 1 : 2;
  for (int d = 0; d < 3; ++d) {
    const int64_t before = paddings[static_cast<size_t>(2 * (2 - d))];
    const int64_t after = paddings[static_cast<size_t>(2 * (2 - d) + 1)];
    const int64_t in = x.dims[spatial0 + d];
    if (before < 0 || after < 0) return Status::Error(op, ": paddings must not be negative");
    // Paddle's limits: a reflection needs a neighbour beyond the edge, the other modes need an edge to copy.
    if (s->mode == PadMode::kReflect && in >= 0 && (before >= in || after >= in)) {
      return Status::Error(op, ": reflect padding (", before, ", ", after, ") must be smaller than the dim size ", in,
                           " of x ", x.dims_string());
    }
    if ((s->mode == PadMode::kReplicate || s->mode == PadMode::kCircular) && in == 0 && before + after > 0) {
      return Status::Error(op, ": cannot pad an empty dim of x ", x.dims_string(), " in ", mode, " mode");
    }
    if (s->mode == PadMode::kCircular && in >= 0 && (before > in || after > in)) {
      return Status::Error(op, ": circular padding (", before, ", ", after, ") must not exceed the dim size ", in);
    }
    s->in[d] = in;
    s->before[d] = before;
    s->out[d] = in < 0 ? -1 : in + before + after;
  }
  s->n = x.dims[0];
  s->c = s->channel_last ? x.dims[4] : x.dims[1];
  return Status::OK();
}

Status arange_size(const char* op, const Scalar& start, const Scalar& end, const Scalar& step, DataType dtype,
                   int64_t* size) {
  if (dtype == DataType::kInt32 || dtype == DataType::kInt64) {
    const int64_t a = start.to<int64_t>(), b = end.to<int64_t>(), s = step.to<int64_t>();
    if (s == 0) return Status::Error(op, ": step must not be 0");
    if ((b - a) * (s > 0 ? 1 : -1) < 0) {
      return Status::Error(op, ": step ", s, " points away from end ", b, " (start ", a, ")");
    }
    const int64_t span = b > a ? b - a : a - b, stride = s > 0 ? s : -s;
    *size = (span + stride - 1) / stride;
    return Status::OK();
  }
  if (dtype != DataType::kFloat32 && dtype != DataType::kFloat64) return unsupported_dtype(op, dtype);
  const double a = start.to<double>(), b = end.to<double>(), s = step.to<double>();
  if (s == 0) return Status::Error(op, ": step must not be 0");
  if ((b - a) * s < 0) return Status::Error(op, ": step ", s, " points away from end ", b, " (start ", a, ")");
  const double n = std::ceil(std::abs((b - a) / s));
  if (!(n < 9.0e15)) return Status::Error(op, ": arange(", a, ", ", b, ", ", s, ") is too long");
  *size = static_cast<int64_t>(n);
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

Status SetValueInferMeta(const Tensor& x, Tensor* out) {
  return set_meta(out, x.dtype, x.shape(), "SetValueInferMeta");
}

Status GatherInferMeta(const Tensor& x, const Tensor& index, const Scalar& axis, Tensor* out) {
  static constexpr const char* kOp = "GatherInferMeta";
  int64_t a = 0;
  if (!normalize_axis(axis.to<int64_t>(), x.ndim, &a)) return bad_axis(kOp, axis.to<int64_t>(), x.ndim);
  std::vector<int64_t> dims(x.dims, x.dims + x.ndim);
  if (index.ndim == 0) {
    // A 0-D index picks one slice and drops the axis (Paddle 3).
    if (index.dtype != DataType::kInt32 && index.dtype != DataType::kInt64) {
      return Status::Error(kOp, ": index must be int32 or int64, got ", index.dtype);
    }
    dims.erase(dims.begin() + a);
  } else {
    int64_t n;
    KFORGE_RETURN_IF_ERROR(kernels::util::index_length(kOp, index, &n));
    dims[static_cast<size_t>(a)] = n;
  }
  return set_meta(out, x.dtype, dims, kOp);
}

Status IndexSelectInferMeta(const Tensor& x, const Tensor& index, int axis, Tensor* out) {
  static constexpr const char* kOp = "IndexSelectInferMeta";
  int64_t a = 0;
  if (!normalize_axis(axis, x.ndim, &a)) return bad_axis(kOp, axis, x.ndim);
  int64_t n;
  KFORGE_RETURN_IF_ERROR(kernels::util::index_length(kOp, index, &n));
  std::vector<int64_t> dims(x.dims, x.dims + x.ndim);
  dims[static_cast<size_t>(a)] = n;
  return set_meta(out, x.dtype, dims, kOp);
}

Status ScatterInferMeta(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite, Tensor* out) {
  (void)overwrite;
  static constexpr const char* kOp = "ScatterInferMeta";
  if (x.ndim == 0) return Status::Error(kOp, ": x must have rank >= 1");
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, updates, kOp, "x", "updates"));
  // updates holds one row of x per index (a 0-D index: a single row without the leading dim).
  std::vector<int64_t> want(x.dims + 1, x.dims + x.ndim);
  if (index.ndim == 0) {
    if (index.dtype != DataType::kInt32 && index.dtype != DataType::kInt64) {
      return Status::Error(kOp, ": index must be int32 or int64, got ", index.dtype);
    }
  } else {
    int64_t n;
    KFORGE_RETURN_IF_ERROR(kernels::util::index_length(kOp, index, &n));
    want.insert(want.begin(), n);
  }
  if (updates.shape() != want) {
    return Status::Error(kOp, ": updates ", updates.dims_string(), " must be ", kernels::util::dims_string(want),
                         " for x ", x.dims_string(), " and index ", index.dims_string());
  }
  return set_meta(out, x.dtype, x.shape(), kOp);
}

Status TileInferMeta(const Tensor& x, const IntArray& repeat_times, Tensor* out) {
  return shape_meta::TileInferMeta(x, repeat_times, out);  // kforge_shape_meta.h, shared with --target cuda
}

// Paddle's RepeatInterleaveInferMeta: axis in [-rank, rank), repeats > 0, out's axis dim x's times repeats.
Status RepeatInterleaveInferMeta(const Tensor& x, int repeats, int axis, int64_t output_size, Tensor* out) {
  static constexpr const char* kOp = "RepeatInterleaveInferMeta";
  int64_t a = 0;
  if (!normalize_axis(axis, x.ndim, &a)) return bad_axis(kOp, axis, x.ndim);
  if (repeats <= 0) return Status::Error(kOp, ": repeats must be positive, got ", repeats);
  std::vector<int64_t> dims(x.dims, x.dims + x.ndim);
  dims[static_cast<size_t>(a)] *= repeats;
  if (output_size > 0 && output_size != dims[static_cast<size_t>(a)]) {
    return Status::Error(kOp, ": output_size is ", output_size, " but x's dim ", a, " repeated ", repeats,
                         " times is ", dims[static_cast<size_t>(a)]);
  }
  return set_meta(out, x.dtype, dims, kOp);
}

Status RollInferMeta(const Tensor& x, const IntArray& shifts, const std::vector<int64_t>& axis, Tensor* out) {
  static constexpr const char* kOp = "RollInferMeta";
  if (axis.empty()) {
    if (shifts.size() != 1) {
      return Status::Error(kOp, ": without axis, shifts must have one value (a roll of the flattened x), got ",
                           shifts.size());
    }
  } else if (shifts.size() != axis.size()) {
    return Status::Error(kOp, ": shifts has ", shifts.size(), " values but axis has ", axis.size());
  }
  for (int64_t a : axis) {
    int64_t d = 0;
    if (!normalize_axis(a, x.ndim, &d)) return bad_axis(kOp, a, x.ndim);
  }
  return set_meta(out, x.dtype, x.shape(), kOp);
}

Status FlipInferMeta(const Tensor& x, const std::vector<int>& axis, Tensor* out) {
  static constexpr const char* kOp = "FlipInferMeta";
  bool seen[kMaxRank] = {};
  for (int a : axis) {
    int64_t d = 0;
    if (!normalize_axis(a, x.ndim, &d)) return bad_axis(kOp, a, x.ndim);
    if (seen[d]) return Status::Error(kOp, ": axis ", a, " is given twice");
    seen[d] = true;
  }
  return set_meta(out, x.dtype, x.shape(), kOp);
}

Status Pad3dInferMeta(const Tensor& x, const IntArray& paddings, const std::string& mode, float pad_value,
                      const std::string& data_format, Tensor* out) {
  (void)pad_value;
  kernels::util::Pad3dShape s;
  KFORGE_RETURN_IF_ERROR(kernels::util::pad3d_shape("Pad3dInferMeta", x, paddings, mode, data_format, &s));
  const std::vector<int64_t> dims = s.channel_last ? std::vector<int64_t>{s.n, s.out[0], s.out[1], s.out[2], s.c}
                                                   : std::vector<int64_t>{s.n, s.c, s.out[0], s.out[1], s.out[2]};
  return set_meta(out, x.dtype, dims, "Pad3dInferMeta");
}

}  // namespace kforge::meta

namespace kforge::meta {

namespace {

Status tri_meta(const char* op, const Tensor& x, Tensor* out) {
  if (x.ndim < 2) return Status::Error(op, ": x must have rank >= 2, got ", x.dims_string());
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = x.dtype;
  return out->set_dims(x.shape());
}

}  // namespace

Status TrilInferMeta(const Tensor& x, int diagonal, Tensor* out) {
  (void)diagonal;
  return tri_meta("TrilInferMeta", x, out);
}

Status TriuInferMeta(const Tensor& x, int diagonal, Tensor* out) {
  (void)diagonal;
  return tri_meta("TriuInferMeta", x, out);
}

}  // namespace kforge::meta
