// bce_loss, sigmoid_cross_entropy_with_logits, cross_entropy_with_softmax and grid_sample, as Paddle's CPU kernels compute them (each step in
// the element type T, in Paddle's order, so that float32 results match Paddle's closely).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "transcendental.h"

namespace kforge::kernels {

namespace {

Status check_float_out(const char* op, const Tensor* out, const Tensor& expected, const KernelContext& ctx,
                       const Tensor& x) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(op, ": x is ", x.dtype, ", kernel dtype ", dtype);
  if (out->dtype != expected.dtype) return Status::Error(op, ": out is ", out->dtype, ", expected ", expected.dtype);
  return util::require_dims(*out, expected, op);
}

}  // namespace

Status bce_loss(const KernelContext& ctx, const Tensor& input, const Tensor& label, Tensor* out) {
  static constexpr const char* kOp = "bce_loss";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::BCELossInferMeta(input, label, &expected));
  KFORGE_RETURN_IF_ERROR(check_float_out(kOp, out, expected, ctx, input));
  return util::visit_float(input.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* x = input.data_as<const T>();
    const T* y = label.data_as<const T>();
    T* o = out->data_as<T>();
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) {
      // Paddle's kernel refuses an input outside [0, 1] (a probability), NaN included.
      if (!(x[i] >= T(0) && x[i] <= T(1))) {
        return Status::Error(kOp, ": input[", i, "] is ", x[i], "; it must be in [0, 1]");
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      // Each log clamped at -100 so that an input of exactly 0 or 1 gives a finite loss.
      o[i] = (y[i] - T(1)) * std::max(std::log(T(1) - x[i]), T(-100)) - y[i] * std::max(std::log(x[i]), T(-100));
    }
    return Status::OK();
  });
}

Status sigmoid_cross_entropy_with_logits(const KernelContext& ctx, const Tensor& x, const Tensor& label,
                                         const Tensor* pos_weight, bool normalize, int ignore_index, Tensor* out) {
  static constexpr const char* kOp = "sigmoid_cross_entropy_with_logits";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(
      meta::SigmoidCrossEntropyWithLogitsInferMeta(x, label, pos_weight, normalize, ignore_index, &expected));
  KFORGE_RETURN_IF_ERROR(check_float_out(kOp, out, expected, ctx, x));
  return util::visit_float(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    const T* yd = label.data_as<const T>();
    const T* wd = pos_weight ? pos_weight->data_as<const T>() : nullptr;
    T* o = out->data_as<T>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = xd[i], y = yd[i];
      // Paddle compares the label truncated to int with ignore_index (a label outside int's range is never it).
      const bool ignored = std::isfinite(static_cast<double>(y)) && std::fabs(static_cast<double>(y)) < 2147483647.0 &&
                           static_cast<int>(y) == ignore_index;
      if (ignored) {
        o[i] = T(0);
        continue;
      }
      // Paddle 3.3's form: (1 - label) * x + weight * (log(1 + exp(-|x|)) + max(-x, 0)), which is
      // max(x, 0) - x * label + log(1 + exp(-|x|)) for weight 1 and stays finite for large |x|.
      const T weight = wd ? wd[i] : T(1);
      o[i] = (T(1) - y) * v + weight * (std::log(T(1) + std::exp(-std::fabs(v))) + (v < T(0) ? -v : T(0)));
    }
    if (normalize) {
      // Divided by the count of labels that differ from ignore_index by more than 1e-6 (at least 1e-5: never 0).
      int64_t count = 0;
      const T eps = static_cast<T>(1e-6);
      for (int64_t i = 0; i < n; ++i) {
        const T diff = yd[i] - static_cast<T>(ignore_index);
        if (diff < -eps || diff > eps) ++count;
      }
      // Paddle keeps the count in an int, so its floor of 1e-5 truncates to 0: a division by zero.
      const T norm = static_cast<T>(count);
      for (int64_t i = 0; i < n; ++i) o[i] = o[i] / norm;
    }
    return Status::OK();
  });
}

Status cross_entropy_with_softmax(const KernelContext& ctx, const Tensor& input, const Tensor& label, bool soft_label,
                                  bool use_softmax, bool numeric_stable_mode, int ignore_index, int axis,
                                  Tensor* softmax, Tensor* loss) {
  static constexpr const char* kOp = "cross_entropy_with_softmax";
  Tensor expected_softmax, expected_loss;
  KFORGE_RETURN_IF_ERROR(meta::CrossEntropyWithSoftmaxInferMeta(input, label, soft_label, use_softmax,
                                                                numeric_stable_mode, ignore_index, axis,
                                                                &expected_softmax, &expected_loss));
  KFORGE_RETURN_IF_ERROR(check_float_out(kOp, softmax, expected_softmax, ctx, input));
  KFORGE_RETURN_IF_ERROR(check_float_out(kOp, loss, expected_loss, ctx, input));
  int64_t a = 0;
  util::normalize_axis(axis, input.ndim, &a);
  // input as [outer, classes, inner] around the axis.
  const int64_t outer = util::product(input.dims, 0, a), classes = input.dims[a];
  const int64_t inner = util::product(input.dims, a + 1, input.ndim);
  return util::visit_float(input.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* x = input.data_as<const T>();
    T* p = softmax->data_as<T>();
    T* l = loss->data_as<T>();
    // The hard labels first, so that nothing is written when one is out of range.
    if (!soft_label) {
      for (int64_t i = 0, n = label.numel(); i < n; ++i) {
        const int64_t c = label.dtype == DataType::kInt32 ? label.data_as<const int32_t>()[i]
                                                           : label.data_as<const int64_t>()[i];
        if (c != ignore_index && (c < 0 || c >= classes)) {
          return Status::Error(kOp, ": label[", i, "] is ", c, ", outside [0, ", classes, ")");
        }
      }
    }
    for (int64_t o = 0; o < outer; ++o) {
      const T* row = x + o * classes * inner;
      T* prob = p + o * classes * inner;
      if (!use_softmax) {
        for (int64_t k = 0; k < classes * inner; ++k) prob[k] = row[k];
        continue;
      }
      // Paddle's CPU softmax of a [classes * inner] row: the max over the whole row, exp of the shifted values
      // clipped at -64 (so that a loss is at most about 64), each line's sum, then a multiply by its inverse.
      T top = row[0];
      for (int64_t k = 1; k < classes * inner; ++k) top = row[k] > top ? row[k] : top;
      for (int64_t k = 0; k < classes * inner; ++k) {
        T shifted = row[k] - top;
        if (shifted < T(-64)) shifted = T(-64);
        prob[k] = math::exp(shifted);
      }
      for (int64_t i = 0; i < inner; ++i) {
        T sum = T(0);
        for (int64_t c = 0; c < classes; ++c) sum += prob[c * inner + i];
        const T scale = T(1) / sum;
        for (int64_t c = 0; c < classes; ++c) prob[c * inner + i] *= scale;
      }
    }
    // -log(p), with log(0) = -inf taken as -1e20 (Paddle's TolerableValue).
    auto neg_log = [](T v) {
      const T lg = std::log(v);
      return -(std::isinf(lg) ? (lg < 0 ? T(-1e20) : T(1e20)) : lg);
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* prob = p + o * classes * inner + i;
        T* out = l + o * inner + i;
        if (soft_label) {
          const T* y = label.data_as<const T>() + o * classes * inner + i;
          T total = T(0);
          for (int64_t c = 0; c < classes; ++c) total += y[c * inner] * -neg_log(prob[c * inner]);
          *out = -total;
          continue;
        }
        const int64_t at = o * inner + i;
        const int64_t c = label.dtype == DataType::kInt32 ? label.data_as<const int32_t>()[at]
                                                           : label.data_as<const int64_t>()[at];
        *out = c == ignore_index ? T(0) : neg_log(prob[c * inner]);
      }
    }
    return Status::OK();
  });
}

namespace {

// Paddle's Unnormalize then Clip (grid_sample_kernel.cc) of one coordinate: [-1, 1] to pixels of an axis of
// `size` samples, folded or clamped into range by padding_mode.
template <typename T>
T grid_coordinate(T g, int64_t size, bool align_corners, int padding) {
  const int64_t max_val = size - 1;
  T v = align_corners ? (g + T(1)) * static_cast<T>(max_val * 0.5)
                      : (g + T(1)) * static_cast<T>((max_val + 1) * 0.5) - static_cast<T>(0.5);
  if (padding == 1) {  // border
    v = std::min(std::max(v, T(0)), static_cast<T>(max_val));
  } else if (padding == 2) {  // reflection
    if (align_corners) {
      if (max_val == 0) return T(0);
      const T range = static_cast<T>(max_val * 2);
      const T a = std::fabs(v);
      const T extra = a - std::floor(a / range) * range;
      v = std::min(extra, range - extra);
    } else {
      const T range = static_cast<T>((max_val + 1) * 2);
      const T a = std::fabs(v + static_cast<T>(0.5));
      const T extra = a - std::floor(a / range) * range;
      v = std::min(extra, range - extra) - static_cast<T>(0.5);
      v = std::min(std::max(v, T(0)), static_cast<T>(max_val));
    }
  }
  return v;
}

// Paddle's GetGridPointValue: the pixel at the rounded (x, y), 0 outside [0, w - 1] x [0, h - 1]. Written as the
// negation of "inside" so that a NaN coordinate (a NaN in the grid) reads 0 rather than an undefined index.
template <typename T>
T pixel(const T* plane, int64_t h, int64_t w, T x, T y) {
  if (!(x >= 0 && x <= static_cast<T>(w - 1) && y >= 0 && y <= static_cast<T>(h - 1))) return T(0);
  return plane[static_cast<int64_t>(std::round(y)) * w + static_cast<int64_t>(std::round(x))];
}

}  // namespace

Status grid_sample(const KernelContext& ctx, const Tensor& x, const Tensor& grid, const std::string& mode,
                   const std::string& padding_mode, bool align_corners, Tensor* out) {
  static constexpr const char* kOp = "grid_sample";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::GridSampleBaseInferMeta(x, grid, &expected));
  KFORGE_RETURN_IF_ERROR(check_float_out(kOp, out, expected, ctx, x));
  if (mode != "bilinear" && mode != "nearest") {
    return Status::Error(kOp, ": mode must be \"bilinear\" or \"nearest\", got \"", mode, "\"");
  }
  int padding = 0;
  if (padding_mode == "border") {
    padding = 1;
  } else if (padding_mode == "reflection") {
    padding = 2;
  } else if (padding_mode != "zeros") {
    return Status::Error(kOp, ": padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"", padding_mode,
                         "\"");
  }
  const bool nearest = mode == "nearest";
  return util::visit_float(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
    const int64_t oh = grid.dims[1], ow = grid.dims[2], plane = h * w, out_plane = oh * ow;
    const T* xd = x.data_as<const T>();
    const T* gd = grid.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t p = 0; p < out_plane; ++p) {
        const T* g = gd + (b * out_plane + p) * 2;
        T gx = grid_coordinate<T>(g[0], w, align_corners, padding);
        T gy = grid_coordinate<T>(g[1], h, align_corners, padding);
        if (nearest) {
          gx = std::round(gx);
          gy = std::round(gy);
          for (int64_t ch = 0; ch < c; ++ch) {
            o[(b * c + ch) * out_plane + p] = pixel(xd + (b * c + ch) * plane, h, w, gx, gy);
          }
          continue;
        }
        // Bilinear over the four neighbours, weighted by the distances to the opposite sides, in Paddle's order.
        const T x_w = std::floor(gx), x_e = x_w + T(1), y_n = std::floor(gy), y_s = y_n + T(1);
        const T d_w = gx - x_w, d_e = x_e - gx, d_n = gy - y_n, d_s = y_s - gy;
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* src = xd + (b * c + ch) * plane;
          o[(b * c + ch) * out_plane + p] =
              pixel(src, h, w, x_w, y_n) * d_e * d_s + pixel(src, h, w, x_e, y_n) * d_w * d_s +
              pixel(src, h, w, x_w, y_s) * d_e * d_n + pixel(src, h, w, x_e, y_s) * d_w * d_n;
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
