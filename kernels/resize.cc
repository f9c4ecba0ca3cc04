// bilinear_interp over NCHW or NHWC tensors and linear_interp over NCW or NWC ones: Paddle's BilinearInterpolation
// and LinearInterpolation (interpolate_kernel.cc), with their float32 source coordinates and weights and their
// evaluation order, so that float32 results match Paddle's bits.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "kforge_sampling.h"  // bicubic's coordinates and cubic convolution, shared with --target cuda

namespace kforge::kernels {

namespace {

// For each output position along one axis: the two source indices and their weights.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<float> w_lo, w_hi;
};

// Paddle's coordinates: align_flag (align_mode 0 without align_corners) uses half-pixel centres, else o * ratio.
Taps taps(int64_t in, int64_t out, float ratio, bool align_flag) {
  Taps t;
  for (int64_t o = 0; o < out; ++o) {
    // Paddle writes ratio * (o + 0.5) - 0.5 with a double literal: the product is computed in double.
    const double centre = static_cast<double>(ratio) * (static_cast<double>(o) + 0.5) - 0.5;
    int64_t lo = align_flag ? static_cast<int64_t>(static_cast<int>(centre))
                            : static_cast<int64_t>(static_cast<int>(ratio * static_cast<float>(o)));
    lo = lo > 0 ? lo : 0;
    const int64_t hi = lo + 1 < in - 1 ? lo + 1 : in - 1;
    float src = static_cast<float>(centre);
    src = src > 0 ? src : 0;
    const float d = align_flag ? src - static_cast<float>(lo) : ratio * static_cast<float>(o) - static_cast<float>(lo);
    t.lo.push_back(lo);
    t.hi.push_back(hi);
    t.w_lo.push_back(1.f - d);  // the weight of lo is the distance to hi
    t.w_hi.push_back(d);
  }
  return t;
}

// What bilinear, linear and bicubic interpolation share before their loops: the dtype and output checks, Paddle's
// copy when the sizes are equal, the source ratio of each axis and the element strides of N, C, H, W in the layout.
struct ResizeSetup {
  DataType dtype = DataType::kFloat32;
  bool copied = false;  // the sizes are equal and the output holds x: nothing left to compute
  float ratio_h = 0.f, ratio_w = 0.f;
  int64_t in_sn = 0, out_sn = 0, in_sc = 0, out_sc = 0, in_sh = 0, out_sh = 0, in_sw = 0, out_sw = 0;
};

Status resize_setup(const char* op, const KernelContext& ctx, const Tensor& x, const util::InterpShape& s,
                    bool align_corners, Tensor* output, ResizeSetup* r) {
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, op));
  KFORGE_RETURN_IF_ERROR(util::require_output(output, op, "output"));
  r->dtype = util::kernel_dtype(ctx, x);
  const DataType dtype = r->dtype;
  if (x.dtype != dtype) return Status::Error(op, ": x is ", x.dtype, ", kernel dtype ", dtype);
  if (s.out_h < 0) return Status::Error(op, ": the output size tensors have no data");
  if (output->dtype != dtype) return Status::Error(op, ": output is ", output->dtype, ", expected ", dtype);
  Tensor expected;
  if (x.ndim == 3) {
    KFORGE_RETURN_IF_ERROR(s.channel_last ? expected.set_dims({s.n, s.out_w, s.c})
                                          : expected.set_dims({s.n, s.c, s.out_w}));
  } else {
    KFORGE_RETURN_IF_ERROR(s.channel_last ? expected.set_dims({s.n, s.out_h, s.out_w, s.c})
                                          : expected.set_dims({s.n, s.c, s.out_h, s.out_w}));
  }
  KFORGE_RETURN_IF_ERROR(util::require_dims(*output, expected, op, "output"));
  if (s.in_h == s.out_h && s.in_w == s.out_w) {  // Paddle copies
    util::copy_bytes(output->data, x.data, x.bytes());
    r->copied = true;
    return Status::OK();
  }
  auto ratio = [align_corners](int64_t in, int64_t out, float scale_value) {
    if (out <= 1) return 0.f;
    if (align_corners) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
    return scale_value > 0.f ? static_cast<float>(1. / scale_value) : static_cast<float>(in) / static_cast<float>(out);
  };
  r->ratio_h = ratio(s.in_h, s.out_h, s.scale_h);
  r->ratio_w = ratio(s.in_w, s.out_w, s.scale_w);
  r->in_sn = s.c * s.in_h * s.in_w;
  r->out_sn = s.c * s.out_h * s.out_w;
  r->in_sc = s.channel_last ? 1 : s.in_h * s.in_w;
  r->out_sc = s.channel_last ? 1 : s.out_h * s.out_w;
  r->in_sh = s.channel_last ? s.in_w * s.c : s.in_w;
  r->out_sh = s.channel_last ? s.out_w * s.c : s.out_w;
  r->in_sw = s.channel_last ? s.c : 1;
  r->out_sw = s.channel_last ? s.c : 1;
  return Status::OK();
}

// Paddle's BilinearInterpolation over the sizes in s (a 1-D linear interpolation is the case in_h = out_h = 1: its
// height weights are 1 and 0, which leave Paddle's LinearInterpolation's two products exact).
Status interpolate_linear(const char* op, const KernelContext& ctx, const Tensor& x, const util::InterpShape& s,
                          bool align_corners, int align_mode, Tensor* output) {
  ResizeSetup r;
  KFORGE_RETURN_IF_ERROR(resize_setup(op, ctx, x, s, align_corners, output, &r));
  if (r.copied) return Status::OK();
  const DataType dtype = r.dtype;
  const bool align_flag = align_mode == 0 && !align_corners;
  const Taps th = taps(s.in_h, s.out_h, r.ratio_h, align_flag);
  const Taps tw = taps(s.in_w, s.out_w, r.ratio_w, align_flag);
  const int64_t in_sn = r.in_sn, out_sn = r.out_sn, in_sc = r.in_sc, out_sc = r.out_sc;
  const int64_t in_sh = r.in_sh, out_sh = r.out_sh, in_sw = r.in_sw, out_sw = r.out_sw;
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // T * float: float for float32 and uint8 (truncated back to uint8 as Paddle's T out_t does), double for float64.
    const T* xd = x.data_as<const T>();
    T* od = output->data_as<T>();
    for (int64_t b = 0; b < s.n; ++b) {
      for (int64_t ch = 0; ch < s.c; ++ch) {
        const T* plane = xd + b * in_sn + ch * in_sc;
        T* dst = od + b * out_sn + ch * out_sc;
        for (int64_t k = 0; k < s.out_h; ++k) {
          const T* row_n = plane + th.lo[k] * in_sh;
          const T* row_s = plane + th.hi[k] * in_sh;
          const float ds = th.w_lo[k], dn = th.w_hi[k];
          for (int64_t l = 0; l < s.out_w; ++l) {
            const int64_t xw = tw.lo[l] * in_sw, xe = tw.hi[l] * in_sw;
            const float de = tw.w_lo[l], dw = tw.w_hi[l];
            dst[k * out_sh + l * out_sw] = static_cast<T>(row_n[xw] * ds * de + row_s[xw] * dn * de +
                                                          row_n[xe] * ds * dw + row_s[xe] * dn * dw);
          }
        }
      }
    }
    return Status::OK();
  };
  switch (dtype) {
    case DataType::kFloat32: return run(util::Tag<float>{});
    case DataType::kFloat64: return run(util::Tag<double>{});
    case DataType::kUInt8: return run(util::Tag<uint8_t>{});
    default: return util::unsupported_dtype(op, dtype);
  }
}

// Paddle's BicubicInterpolation (cpu/interpolate_kernel.cc): per output pixel four cubic rows along x over the
// clamped taps input_x - 1 .. input_x + 2, then one along y, in float for float32 and double for float64.
Status interpolate_cubic(const char* op, const KernelContext& ctx, const Tensor& x, const util::InterpShape& s,
                         bool align_corners, Tensor* output) {
  ResizeSetup r;
  KFORGE_RETURN_IF_ERROR(resize_setup(op, ctx, x, s, align_corners, output, &r));
  if (r.copied) return Status::OK();
  const DataType dtype = r.dtype;
  const float ratio_h = r.ratio_h, ratio_w = r.ratio_w;
  const int64_t in_sn = r.in_sn, out_sn = r.out_sn, in_sc = r.in_sc, out_sc = r.out_sc;
  const int64_t in_sh = r.in_sh, out_sh = r.out_sh, in_sw = r.in_sw, out_sw = r.out_sw;
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using M = T;  // float32 and float64: Paddle's MT is T
    const T* xd = x.data_as<const T>();
    T* od = output->data_as<T>();
    for (int64_t k = 0; k < s.out_h; ++k) {
      const sampling::CubicSource<M> y = sampling::cubic_source<M>(ratio_h, k, align_corners);
      for (int64_t l = 0; l < s.out_w; ++l) {
        const sampling::CubicSource<M> x_src = sampling::cubic_source<M>(ratio_w, l, align_corners);
        int64_t xs[4];
        for (int64_t t = 0; t < 4; ++t) xs[t] = sampling::clamp_index(x_src.index - 1 + t, s.in_w) * in_sw;
        for (int64_t b = 0; b < s.n; ++b) {
          for (int64_t ch = 0; ch < s.c; ++ch) {
            const T* plane = xd + b * in_sn + ch * in_sc;
            M coefficients[4];
            for (int64_t ii = 0; ii < 4; ++ii) {
              const T* row = plane + sampling::clamp_index(y.index - 1 + ii, s.in_h) * in_sh;
              coefficients[ii] = sampling::cubic_interp<M>(row[xs[0]], row[xs[1]], row[xs[2]], row[xs[3]], x_src.t);
            }
            od[b * out_sn + ch * out_sc + k * out_sh + l * out_sw] = static_cast<T>(
                sampling::cubic_interp<M>(coefficients[0], coefficients[1], coefficients[2], coefficients[3], y.t));
          }
        }
      }
    }
    return Status::OK();
  };
  switch (dtype) {
    case DataType::kFloat32: return run(util::Tag<float>{});
    case DataType::kFloat64: return run(util::Tag<double>{});
    default: return util::unsupported_dtype(op, dtype);
  }
}

}  // namespace

Status bicubic_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                      const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                      const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                      int align_mode, Tensor* output) {
  (void)out_d;
  (void)interp_method;
  (void)align_mode;  // Paddle's bicubic reads only align_corners
  static constexpr const char* kOp = "bicubic_interp";
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D, got ", x.dims_string());
  util::InterpShape s;
  KFORGE_RETURN_IF_ERROR(
      util::interp_shape(kOp, x, out_size, size_tensor, scale_tensor, data_format, out_h, out_w, scale, &s));
  return interpolate_cubic(kOp, ctx, x, s, align_corners, output);
}

Status bilinear_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                       const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                       const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                       int align_mode, Tensor* output) {
  (void)out_d;
  (void)interp_method;  // the op is bilinear whatever the attribute says, as in Paddle
  static constexpr const char* kOp = "bilinear_interp";
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D, got ", x.dims_string());
  util::InterpShape s;
  KFORGE_RETURN_IF_ERROR(
      util::interp_shape(kOp, x, out_size, size_tensor, scale_tensor, data_format, out_h, out_w, scale, &s));
  return interpolate_linear(kOp, ctx, x, s, align_corners, align_mode, output);
}

Status linear_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                     const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                     const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                     int align_mode, Tensor* output) {
  (void)out_d;
  (void)out_h;
  (void)interp_method;
  static constexpr const char* kOp = "linear_interp";
  if (x.ndim != 3) return Status::Error(kOp, ": x must be 3-D ([N, C, W] or [N, W, C]), got ", x.dims_string());
  util::InterpShape s;
  KFORGE_RETURN_IF_ERROR(
      util::interp_shape(kOp, x, out_size, size_tensor, scale_tensor, data_format, 1, out_w, scale, &s));
  return interpolate_linear(kOp, ctx, x, s, align_corners, align_mode, output);
}

}  // namespace kforge::kernels
