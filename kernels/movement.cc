// tile, repeat_interleave, roll, flip and pad3d: every output element is one input element (or pad3d's constant), found by index
// arithmetic per output row; rows are copied whole where the mapping allows.
#include <cstring>
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

Status check_dtype(const char* op, const KernelContext& ctx, const Tensor& x, DataType* dtype) {
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, op));
  *dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != *dtype) return Status::Error(op, ": x is ", x.dtype, ", kernel dtype ", *dtype);
  return Status::OK();
}

// out[i] = x[source(i)] where the source index along every axis is a function of the output index along it
// (`map[d][o]`); the last axis is walked in the innermost loop. x and out have the same rank.
template <typename T>
void gather_by_axis(const Tensor& x, Tensor* out, const std::vector<std::vector<int64_t>>& map) {
  const int32_t rank = out->ndim;
  const T* xd = x.data_as<const T>();
  T* od = out->data_as<T>();
  if (rank == 0) {
    od[0] = xd[0];
    return;
  }
  int64_t xs[kMaxRank];
  util::contiguous_strides(x.dims, rank, xs);
  const int64_t last = out->dims[rank - 1];
  const std::vector<int64_t>& inner = map[static_cast<size_t>(rank - 1)];
  int64_t idx[kMaxRank] = {};
  const int64_t rows = last == 0 ? 0 : out->numel() / last;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    for (int32_t d = 0; d + 1 < rank; ++d) base += map[static_cast<size_t>(d)][static_cast<size_t>(idx[d])] * xs[d];
    T* dst = od + r * last;
    for (int64_t j = 0; j < last; ++j) dst[j] = xd[base + inner[static_cast<size_t>(j)] * xs[rank - 1]];
    for (int32_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

Status tile(const KernelContext& ctx, const Tensor& x, const IntArray& repeat_times, Tensor* out) {
  static constexpr const char* kOp = "tile";
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(check_dtype(kOp, ctx, x, &dtype));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::TileInferMeta(x, repeat_times, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, expected));
  // x seen with the output's rank (leading 1s); output index o reads o % size.
  Tensor xr = x;
  std::vector<int64_t> dims(static_cast<size_t>(out->ndim - x.ndim), 1);
  dims.insert(dims.end(), x.dims, x.dims + x.ndim);
  KFORGE_RETURN_IF_ERROR(xr.set_dims(dims));
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(out->ndim));
  for (int32_t d = 0; d < out->ndim; ++d) {
    for (int64_t o = 0; o < out->dims[d]; ++o) map[static_cast<size_t>(d)].push_back(o % xr.dims[d]);
  }
  return util::visit_element_size(dtype, kOp, [&](auto tag) -> Status {
    gather_by_axis<typename decltype(tag)::type>(xr, out, map);
    return Status::OK();
  });
}

Status repeat_interleave(const KernelContext& ctx, const Tensor& x, int repeats, int axis, int64_t output_size,
                         Tensor* out) {
  static constexpr const char* kOp = "repeat_interleave";
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(check_dtype(kOp, ctx, x, &dtype));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::RepeatInterleaveInferMeta(x, repeats, axis, output_size, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, expected));
  const int32_t a = axis < 0 ? axis + x.ndim : axis;
  // Output index o along the axis reads o / repeats; every other axis reads its own index.
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(out->ndim));
  for (int32_t d = 0; d < out->ndim; ++d) {
    for (int64_t o = 0; o < out->dims[d]; ++o) map[static_cast<size_t>(d)].push_back(d == a ? o / repeats : o);
  }
  return util::visit_element_size(dtype, kOp, [&](auto tag) -> Status {
    gather_by_axis<typename decltype(tag)::type>(x, out, map);
    return Status::OK();
  });
}

Status roll(const KernelContext& ctx, const Tensor& x, const IntArray& shifts, const std::vector<int64_t>& axis,
            Tensor* out) {
  static constexpr const char* kOp = "roll";
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(check_dtype(kOp, ctx, x, &dtype));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::RollInferMeta(x, shifts, axis, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, expected));
  if (out->data == x.data && x.numel() > 0) return Status::Error(kOp, ": out must not alias x");
  // Without axis the roll is over the flattened tensor: view both as one row.
  Tensor xv = x, ov = *out;
  std::vector<int64_t> shift(static_cast<size_t>(x.ndim), 0);
  if (axis.empty()) {
    KFORGE_RETURN_IF_ERROR(xv.set_dims({x.numel()}));
    KFORGE_RETURN_IF_ERROR(ov.set_dims({x.numel()}));
    shift.assign(1, shifts[0]);
  } else {
    for (size_t i = 0; i < axis.size(); ++i) {
      int64_t a = 0;
      util::normalize_axis(axis[i], x.ndim, &a);
      shift[static_cast<size_t>(a)] += shifts[i];  // Paddle adds the shifts of an axis named twice
    }
  }
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(xv.ndim));
  for (int32_t d = 0; d < xv.ndim; ++d) {
    const int64_t n = xv.dims[d];
    const int64_t s = n == 0 ? 0 : ((shift[static_cast<size_t>(d)] % n) + n) % n;
    for (int64_t o = 0; o < n; ++o) map[static_cast<size_t>(d)].push_back((o - s + n) % n);
  }
  return util::visit_element_size(dtype, kOp, [&](auto tag) -> Status {
    gather_by_axis<typename decltype(tag)::type>(xv, &ov, map);
    return Status::OK();
  });
}

Status flip(const KernelContext& ctx, const Tensor& x, const std::vector<int>& axis, Tensor* out) {
  static constexpr const char* kOp = "flip";
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(check_dtype(kOp, ctx, x, &dtype));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::FlipInferMeta(x, axis, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, expected));
  if (out->data == x.data && x.numel() > 0) return Status::Error(kOp, ": out must not alias x");
  bool flipped[kMaxRank] = {};
  for (int a : axis) {
    int64_t d = 0;
    util::normalize_axis(a, x.ndim, &d);
    flipped[d] = true;
  }
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(x.ndim));
  for (int32_t d = 0; d < x.ndim; ++d) {
    for (int64_t o = 0; o < x.dims[d]; ++o) map[static_cast<size_t>(d)].push_back(flipped[d] ? x.dims[d] - 1 - o : o);
  }
  return util::visit_element_size(dtype, kOp, [&](auto tag) -> Status {
    gather_by_axis<typename decltype(tag)::type>(x, out, map);
    return Status::OK();
  });
}

Status pad3d(const KernelContext& ctx, const Tensor& x, const IntArray& paddings, const std::string& mode,
             float pad_value, const std::string& data_format, Tensor* out) {
  static constexpr const char* kOp = "pad3d";
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(check_dtype(kOp, ctx, x, &dtype));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::Pad3dInferMeta(x, paddings, mode, pad_value, data_format, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, out, dtype, expected));
  util::Pad3dShape s;
  KFORGE_RETURN_IF_ERROR(util::pad3d_shape(kOp, x, paddings, mode, data_format, &s));
  // Source index of output position o along a spatial dim, or -1 for the constant.
  auto source = [&s](int d, int64_t o) -> int64_t {
    const int64_t n = s.in[d];
    int64_t i = o - s.before[d];
    if (i >= 0 && i < n) return i;
    switch (s.mode) {
      case util::PadMode::kConstant: return -1;
      case util::PadMode::kReflect: return i < 0 ? -i : 2 * (n - 1) - i;
      case util::PadMode::kReplicate: return i < 0 ? 0 : n - 1;
      case util::PadMode::kCircular: return ((i % n) + n) % n;
    }
    return -1;
  };
  std::vector<int64_t> src[3];
  for (int d = 0; d < 3; ++d) {
    for (int64_t o = 0; o < s.out[d]; ++o) src[d].push_back(source(d, o));
  }
  return util::visit_number(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    const T fill = static_cast<T>(pad_value);
    // Channel-first: planes of [D, H, W] per (n, c); channel-last: c contiguous values per position.
    const int64_t planes = s.channel_last ? s.n : s.n * s.c, vec = s.channel_last ? s.c : 1;
    const int64_t in_plane = s.in[0] * s.in[1] * s.in[2] * vec, out_plane = s.out[0] * s.out[1] * s.out[2] * vec;
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = xd + p * in_plane;
      T* op = od + p * out_plane;
      for (int64_t od_ = 0; od_ < s.out[0]; ++od_) {
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          for (int64_t ow = 0; ow < s.out[2]; ++ow) {
            const int64_t id = src[0][static_cast<size_t>(od_)], ih = src[1][static_cast<size_t>(oh)],
                          iw = src[2][static_cast<size_t>(ow)];
            T* dst = op + ((od_ * s.out[1] + oh) * s.out[2] + ow) * vec;
            if (id < 0 || ih < 0 || iw < 0) {
              for (int64_t c = 0; c < vec; ++c) dst[c] = fill;
            } else {
              const T* from = xp + ((id * s.in[1] + ih) * s.in[2] + iw) * vec;
              for (int64_t c = 0; c < vec; ++c) dst[c] = from[c];
            }
          }
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels

namespace kforge::kernels {

namespace {

// Zeroes the elements of the last two dims on the wrong side of `diagonal`: col - row > diagonal for tril (keep the
// lower triangle), col - row < diagonal for triu.
Status triangle(const char* op, const KernelContext& ctx, const Tensor& x, int diagonal, bool lower, Tensor* out) {
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(check_dtype(op, ctx, x, &dtype));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(lower ? meta::TrilInferMeta(x, diagonal, &expected)
                               : meta::TriuInferMeta(x, diagonal, &expected));
  KFORGE_RETURN_IF_ERROR(check_out(op, out, dtype, expected));
  const int64_t rows = x.dims[x.ndim - 2], cols = x.dims[x.ndim - 1];
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  return util::visit_element_size(dtype, op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t i = (m * rows + r) * cols + c;
          const bool keep = lower ? c - r <= diagonal : c - r >= diagonal;
          od[i] = keep ? xd[i] : T{};  // T{} is all zero bits: 0 of every dtype
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

Status tril(const KernelContext& ctx, const Tensor& x, int diagonal, Tensor* out) {
  return triangle("tril", ctx, x, diagonal, true, out);
}

Status triu(const KernelContext& ctx, const Tensor& x, int diagonal, Tensor* out) {
  return triangle("triu", ctx, x, diagonal, false, out);
}

}  // namespace kforge::kernels
