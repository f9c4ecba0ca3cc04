// conv2d_fused (kforge_fused.h): a convolution with its bias, batch norm, activation and residual in one call. Float32
// runs on oneDNN when the library has it (the batch norm folded into the filter, the rest as post-ops); otherwise,
// and for float64, conv2d's reference loops and then the epilogue element by element, with the separate kernels'
// formulas in their order, so the result has the bits the unfused calls give.
#include <cmath>
#include <cstring>
#include <vector>

#include "activation.h"
#include "kernel_util.h"
#include "kforge_fused.h"
#include "kforge_kernels.h"
#include "reference.h"
#if KFORGE_KERNELS_ONEDNN
#include "onednn/onednn.h"
#endif

namespace kforge::kernels {

namespace {

constexpr const char* kOp = "conv2d_fused";

struct Epilogue {
  const Tensor* bias;
  const Tensor* mean;
  const Tensor* variance;
  const Tensor* scale;
  const Tensor* shift;
  float epsilon;
  util::Activation activation;
  float alpha, beta;
  bool after_residual;
  const Tensor* residual;
};

Status check(const Tensor& out, DataType dtype, const util::ConvShape& s, const Epilogue& e) {
  if (out.dtype != dtype) return Status::Error(kOp, ": out is ", out.dtype, ", expected ", dtype);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(
      expected.set_dims(util::activation_dims(s.channel_last, s.nchw8c, s.n, s.out_c, s.out_h, s.out_w)));
  KFORGE_RETURN_IF_ERROR(util::require_dims(out, expected, kOp));
  const struct {
    const Tensor* t;
    const char* name;
  } per_channel[] = {{e.bias, "bias"}, {e.mean, "mean"}, {e.variance, "variance"}, {e.scale, "scale"},
                     {e.shift, "shift"}};
  for (const auto& [t, name] : per_channel) {
    if (t == nullptr) continue;
    if (t->dtype != dtype || t->numel() != s.out_c) {
      return Status::Error(kOp, ": ", name, " must be ", dtype, " with ", s.out_c, " elements (one per output channel), "
                           "got ", t->dtype, " ", t->dims_string());
    }
  }
  if ((e.mean == nullptr) != (e.variance == nullptr)) return Status::Error(kOp, ": mean and variance come together");
  if (e.mean == nullptr && (e.scale != nullptr || e.shift != nullptr)) {
    return Status::Error(kOp, ": scale and shift need mean and variance (a batch norm)");
  }
  if (e.residual != nullptr) {
    if (e.residual->dtype != dtype) return Status::Error(kOp, ": residual is ", e.residual->dtype, ", expected ", dtype);
    KFORGE_RETURN_IF_ERROR(util::require_dims(*e.residual, expected, kOp, "residual"));
  }
  return Status::OK();
}

// conv2d_fused on oneDNN (float32, `fast`), when the library has it: *handled says whether it ran. pixel_stride: 0, or
// the NHWC output's pixel stride.
Status on_onednn(bool fast, DataType dtype, const Tensor& input, const Tensor& filter, const util::ConvShape& s,
                 const Epilogue& e, int64_t pixel_stride, Tensor* out, bool* handled) {
  *handled = false;
#if KFORGE_KERNELS_ONEDNN
  if (fast && dtype == DataType::kFloat32) {
    onednn::ConvEpilogue oe;
    oe.bias = e.bias, oe.mean = e.mean, oe.variance = e.variance, oe.scale = e.scale, oe.shift = e.shift;
    oe.epsilon = e.epsilon, oe.activation = e.activation, oe.alpha = e.alpha, oe.beta = e.beta;
    oe.activation_after_residual = e.after_residual, oe.residual = e.residual;
    oe.out_pixel_stride = pixel_stride;
    return onednn::conv2d(kOp, input, filter, s, oe, out, handled);
  }
#else
  (void)fast, (void)dtype, (void)input, (void)filter, (void)s, (void)e, (void)pixel_stride, (void)out;
#endif
  return Status::OK();
}

// The epilogue over `out`, which holds the convolution; `residual` is a copy when it shared out's memory.
template <typename T>
void apply_epilogue(const Epilogue& e, const util::ConvShape& s, const T* residual, Tensor* out) {
  T* o = out->data_as<T>();
  const int64_t n = out->numel(), plane = s.out_h * s.out_w;
  const T alpha = static_cast<T>(e.alpha), beta = static_cast<T>(e.beta);
  std::vector<T> new_scale, new_bias;
  if (e.mean != nullptr) {  // as the batch_norm kernel computes them
    for (int64_t c = 0; c < s.out_c; ++c) {
      const T m = e.mean->data_as<const T>()[c], v = e.variance->data_as<const T>()[c];
      const T inv_std = T(1) / std::sqrt(v + static_cast<T>(e.epsilon));
      new_scale.push_back((e.scale != nullptr ? e.scale->data_as<const T>()[c] : T(1)) * inv_std);
      new_bias.push_back((e.shift != nullptr ? e.shift->data_as<const T>()[c] : T(0)) - m * new_scale.back());
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = util::channel_of(s.channel_last, s.nchw8c, i, s.out_c, plane);
    T v = o[i];
    if (e.bias != nullptr) v = v + e.bias->data_as<const T>()[c];
    if (e.mean != nullptr) v = v * new_scale[static_cast<size_t>(c)] + new_bias[static_cast<size_t>(c)];
    if (!e.after_residual) v = util::activate(e.activation, v, alpha, beta);
    if (residual != nullptr) v = v + residual[i];
    if (e.after_residual) v = util::activate(e.activation, v, alpha, beta);
    o[i] = v;
  }
}

Status conv_fused(bool fast, const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Epilogue& e,
                  const std::vector<int>& strides, const std::vector<int>& paddings,
                  const std::string& padding_algorithm, const std::vector<int>& dilations, int groups,
                  const std::string& data_format, int out_pixel_stride, Tensor* out);

// An NHWC output whose pixels lie `pixel_stride` elements apart: oneDNN writes it itself (each task's dense block
// copied into place, conv_plan.cc); otherwise the dense result goes through a temporary, a pixel at a time.
Status strided(bool fast, const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Epilogue& e,
               const std::vector<int>& strides, const std::vector<int>& paddings, const std::string& padding_algorithm,
               const std::vector<int>& dilations, int groups, const std::string& data_format, int64_t pixel_stride,
               const util::ConvShape& s, Tensor* out) {
  bool handled = false;
  Status status = on_onednn(fast, util::kernel_dtype(ctx, input), input, filter, s, e, pixel_stride, out, &handled);
  if (handled) return status;
  Tensor dense = *out;
  dense.holder.reset();
  KFORGE_RETURN_IF_ERROR(dense.allocate());
  KFORGE_RETURN_IF_ERROR(conv_fused(fast, ctx, input, filter, e, strides, paddings, padding_algorithm, dilations, groups,
                                    data_format, 0, &dense));
  const size_t row = static_cast<size_t>(s.out_c) * size_of(out->dtype);
  const size_t stride = static_cast<size_t>(pixel_stride) * size_of(out->dtype);
  const int64_t pixels = s.n * s.out_h * s.out_w;
  for (int64_t p = 0; p < pixels; ++p) {
    std::memcpy(static_cast<char*>(out->data) + static_cast<size_t>(p) * stride,
                static_cast<const char*>(dense.data) + static_cast<size_t>(p) * row, row);
  }
  return Status::OK();
}

Status conv_fused(bool fast, const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Epilogue& e,
                  const std::vector<int>& strides, const std::vector<int>& paddings,
                  const std::string& padding_algorithm, const std::vector<int>& dilations, int groups,
                  const std::string& data_format, int out_pixel_stride, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, input);
  if (input.dtype != dtype) return Status::Error(kOp, ": input is ", input.dtype, ", kernel dtype ", dtype);
  util::ConvShape s;
  KFORGE_RETURN_IF_ERROR(util::conv_shape(kOp, input, filter, strides, paddings, padding_algorithm, dilations, groups,
                                          data_format, &s));
  KFORGE_RETURN_IF_ERROR(check(*out, dtype, s, e));
  const int64_t pixel_stride = out_pixel_stride == 0 ? s.out_c : out_pixel_stride;
  if (pixel_stride != s.out_c) {
    if (!s.channel_last || pixel_stride < s.out_c || e.residual != nullptr) {
      return Status::Error(kOp, ": out_pixel_stride ", out_pixel_stride, " needs data_format NHWC, at least out_c (",
                           s.out_c, ") and no residual");
    }
    return strided(fast, ctx, input, filter, e, strides, paddings, padding_algorithm, dilations, groups, data_format,
                   pixel_stride, s, out);
  }
  bool handled = false;
  Status status = on_onednn(fast, dtype, input, filter, s, e, 0, out, &handled);
  if (handled) return status;
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // The convolution overwrites out first: a residual in the same memory is copied before.
    std::vector<T> copy;
    const T* residual = e.residual != nullptr ? e.residual->data_as<const T>() : nullptr;
    if (residual != nullptr && e.residual->data == out->data) {
      copy.assign(residual, residual + out->numel());
      residual = copy.data();
    }
    KFORGE_RETURN_IF_ERROR(reference::conv2d(ctx, input, filter, strides, paddings, padding_algorithm, dilations, groups,
                                             data_format, out));
    apply_epilogue<T>(e, s, residual, out);
    return Status::OK();
  });
}

Status conv_fused_entry(bool fast, const KernelContext& ctx, const Tensor& input, const Tensor& filter,
                        const Tensor* bias, const Tensor* mean, const Tensor* variance, const Tensor* scale,
                        const Tensor* shift, const Tensor* residual, const std::vector<int>& strides,
                        const std::vector<int>& paddings, const std::string& padding_algorithm,
                        const std::vector<int>& dilations, int groups, const std::string& data_format, float epsilon,
                        const std::string& activation, float activation_alpha, float activation_beta,
                        bool activation_after_residual, int out_pixel_stride, Tensor* out) {
  Epilogue e{bias, mean, variance, scale, shift, epsilon, util::Activation::kNone, activation_alpha, activation_beta,
             activation_after_residual, residual};
  if (!util::parse_activation(activation, &e.activation)) {
    return Status::Error(kOp, ": unknown activation \"", activation, "\"");
  }
  return conv_fused(fast, ctx, input, filter, e, strides, paddings, padding_algorithm, dilations, groups, data_format,
                    out_pixel_stride, out);
}

}  // namespace

Status conv2d_fused(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Tensor* bias,
                    const Tensor* mean, const Tensor* variance, const Tensor* scale, const Tensor* shift,
                    const Tensor* residual, const std::vector<int>& strides, const std::vector<int>& paddings,
                    const std::string& padding_algorithm, const std::vector<int>& dilations, int groups,
                    const std::string& data_format, float epsilon, const std::string& activation,
                    float activation_alpha, float activation_beta, bool activation_after_residual,
                    int out_pixel_stride, Tensor* out) {
  return conv_fused_entry(true, ctx, input, filter, bias, mean, variance, scale, shift, residual, strides, paddings,
                          padding_algorithm, dilations, groups, data_format, epsilon, activation, activation_alpha,
                          activation_beta, activation_after_residual, out_pixel_stride, out);
}

Status reference::conv2d_fused(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Tensor* bias,
                               const Tensor* mean, const Tensor* variance, const Tensor* scale, const Tensor* shift,
                               const Tensor* residual, const std::vector<int>& strides,
                               const std::vector<int>& paddings, const std::string& padding_algorithm,
                               const std::vector<int>& dilations, int groups, const std::string& data_format,
                               float epsilon, const std::string& activation, float activation_alpha,
                               float activation_beta, bool activation_after_residual, int out_pixel_stride,
                               Tensor* out) {
  return conv_fused_entry(false, ctx, input, filter, bias, mean, variance, scale, shift, residual, strides, paddings,
                          padding_algorithm, dilations, groups, data_format, epsilon, activation, activation_alpha,
                          activation_beta, activation_after_residual, out_pixel_stride, out);
}

}  // namespace kforge::kernels
