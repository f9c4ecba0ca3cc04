// Infer-meta of conv2d, depthwise_conv2d, conv2d_transpose, batch_norm, pool2d and nearest_interp (Paddle's
// ConvInferMeta, Conv2dTransposeInferMeta, BatchNormInferMeta, Pool2DInferMeta, InterpolateInferMeta).
#include <algorithm>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::kernels::util {

namespace {

// N, C, H, W of a 4-D tensor in either layout (kforge_shape_meta_interp.h).
using shape_meta::nchw;

// N, C, H, W of an activation in any of activation_layout's layouts (NCHW8c: 5-D, C = 8 * dims[1]).
Status nchw(const char* op, const char* name, const Tensor& t, bool last, bool nchw8c, int64_t* n, int64_t* c,
            int64_t* h, int64_t* w) {
  if (!nchw8c) return nchw(op, name, t, last, n, c, h, w);
  KFORGE_RETURN_IF_ERROR(check_nchw8c(op, name, t));
  *n = t.dims[0];
  *c = t.dims[1] * kChannelBlock;
  *h = t.dims[2];
  *w = t.dims[3];
  return Status::OK();
}

}  // namespace

Status conv_shape(const char* op, const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
                  const std::vector<int>& paddings, const std::string& padding_algorithm,
                  const std::vector<int>& dilations, int groups, const std::string& data_format, ConvShape* s) {
  KFORGE_RETURN_IF_ERROR(activation_layout(op, data_format, &s->channel_last, &s->nchw8c));
  s->plain_input = s->nchw8c && input.ndim == 4;  // a stem: NCHW in, NCHW8c out (kernel_util.h)
  KFORGE_RETURN_IF_ERROR(nchw(op, "input", input, s->channel_last, s->nchw8c && !s->plain_input, &s->n, &s->in_c,
                              &s->in_h, &s->in_w));
  if (filter.ndim != 4) return Status::Error(op, ": filter must be 4-D [out_c, in_c / groups, kh, kw], got ",
                                             filter.dims_string());
  if (groups <= 0) return Status::Error(op, ": groups must be positive, got ", groups);
  KFORGE_RETURN_IF_ERROR(require_same_dtype(input, filter, op, "input", "filter"));
  s->groups = groups;
  s->out_c = filter.dims[0];
  s->k_h = filter.dims[2];
  s->k_w = filter.dims[3];
  if (s->in_c != filter.dims[1] * groups) {
    return Status::Error(op, ": input ", input.dims_string(), " has ", s->in_c, " channels but filter ",
                         filter.dims_string(), " with groups ", groups, " expects ", filter.dims[1] * groups);
  }
  if (s->out_c % groups != 0) {
    return Status::Error(op, ": filter ", filter.dims_string(), " has ", s->out_c,
                         " output channels, not divisible by groups ", groups);
  }
  if (s->nchw8c && s->out_c % kChannelBlock != 0) {
    return Status::Error(op, ": filter ", filter.dims_string(), " has ", s->out_c,
                         " output channels, not a multiple of 8 as data_format \"NCHW8c\" needs");
  }
  KFORGE_RETURN_IF_ERROR(
      conv_geometry(op, strides, paddings, dilations, padding_algorithm, s->in_h, s->in_w, s->k_h, s->k_w, &s->g));
  s->out_h = conv_out_size(s->in_h, s->k_h, s->g.dilation_h, s->g.pad_top, s->g.pad_bottom, s->g.stride_h);
  s->out_w = conv_out_size(s->in_w, s->k_w, s->g.dilation_w, s->g.pad_left, s->g.pad_right, s->g.stride_w);
  if (s->out_h <= 0 || s->out_w <= 0) {
    return Status::Error(op, ": input ", input.dims_string(), " with filter ", filter.dims_string(),
                         " gives an empty output (", s->out_h, " x ", s->out_w, ")");
  }
  return Status::OK();
}

Status conv_transpose_shape(const char* op, const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                            const std::vector<int>& paddings, const std::vector<int>& output_padding,
                            const IntArray& output_size, const std::string& padding_algorithm, int groups,
                            const std::vector<int>& dilations, const std::string& data_format, ConvShape* s) {
  KFORGE_RETURN_IF_ERROR(channel_last(op, data_format, &s->channel_last));
  KFORGE_RETURN_IF_ERROR(nchw(op, "x", x, s->channel_last, &s->n, &s->in_c, &s->in_h, &s->in_w));
  if (filter.ndim != 4) return Status::Error(op, ": filter must be 4-D [in_c, out_c / groups, kh, kw], got ",
                                             filter.dims_string());
  if (groups <= 0) return Status::Error(op, ": groups must be positive, got ", groups);
  KFORGE_RETURN_IF_ERROR(require_same_dtype(x, filter, op, "x", "filter"));
  if (s->in_c != filter.dims[0]) {
    return Status::Error(op, ": x ", x.dims_string(), " has ", s->in_c, " channels but filter ",
                         filter.dims_string(), " expects ", filter.dims[0]);
  }
  if (s->in_c % groups != 0) {
    return Status::Error(op, ": ", s->in_c, " input channels are not divisible by groups ", groups);
  }
  s->groups = groups;
  s->out_c = filter.dims[1] * groups;
  s->k_h = filter.dims[2];
  s->k_w = filter.dims[3];
  KFORGE_RETURN_IF_ERROR(
      conv_geometry(op, strides, paddings, dilations, padding_algorithm, s->in_h, s->in_w, s->k_h, s->k_w, &s->g));
  const Geometry2D& g = s->g;
  int64_t infer_h = (s->in_h - 1) * g.stride_h - g.pad_top - g.pad_bottom + g.dilation_h * (s->k_h - 1) + 1;
  int64_t infer_w = (s->in_w - 1) * g.stride_w - g.pad_left - g.pad_right + g.dilation_w * (s->k_w - 1) + 1;
  if (infer_h <= 0 || infer_w <= 0) {
    return Status::Error(op, ": x ", x.dims_string(), " with filter ", filter.dims_string(),
                         " gives an empty output (", infer_h, " x ", infer_w, ")");
  }
  s->out_h = infer_h;
  s->out_w = infer_w;
  if (!output_size.empty()) {
    if (output_size.size() != 2) return Status::Error(op, ": output_size must have 2 values, got ", output_size.size());
    int64_t want[2] = {output_size[0], output_size[1]};
    int64_t infer[2] = {infer_h, infer_w}, stride[2] = {g.stride_h, g.stride_w};
    for (int i = 0; i < 2; ++i) {
      if (want[i] < infer[i] || want[i] >= infer[i] + stride[i]) {
        return Status::Error(op, ": output_size ", want[i], " must be in [", infer[i], ", ", infer[i] + stride[i],
                             ") for x ", x.dims_string());
      }
    }
    s->out_h = want[0];
    s->out_w = want[1];
  } else if (!output_padding.empty()) {
    if (output_padding.size() != 2) {
      return Status::Error(op, ": output_padding must have 2 values, got ", output_padding.size());
    }
    int64_t limit[2] = {std::max(g.stride_h, g.dilation_h), std::max(g.stride_w, g.dilation_w)};
    for (int i = 0; i < 2; ++i) {
      if (output_padding[i] < 0 || output_padding[i] >= limit[i]) {
        return Status::Error(op, ": output_padding ", output_padding[i], " must be in [0, ", limit[i], ")");
      }
    }
    s->out_h += output_padding[0];
    s->out_w += output_padding[1];
  }
  return Status::OK();
}

Status pool_shape(const char* op, const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
                  const std::vector<int>& paddings, bool ceil_mode, const std::string& data_format,
                  const std::string& pooling_type, bool global_pooling, bool adaptive,
                  const std::string& padding_algorithm, PoolShape* s) {
  KFORGE_RETURN_IF_ERROR(activation_layout(op, data_format, &s->channel_last, &s->nchw8c));
  KFORGE_RETURN_IF_ERROR(nchw(op, "x", x, s->channel_last, s->nchw8c, &s->n, &s->c, &s->in_h, &s->in_w));
  if (pooling_type == "max") {
    s->is_max = true;
  } else if (pooling_type == "avg") {
    s->is_max = false;
  } else {
    return Status::Error(op, ": pooling_type must be max or avg, got \"", pooling_type, "\"");
  }
  if (kernel_size.size() != 1 && kernel_size.size() != 2) {
    return Status::Error(op, ": kernel_size must have 1 or 2 values, got ", kernel_size.size());
  }
  s->k_h = kernel_size[0];
  s->k_w = kernel_size[kernel_size.size() - 1];
  if (global_pooling) {
    s->k_h = s->in_h;
    s->k_w = s->in_w;
  }
  if (s->k_h <= 0 || s->k_w <= 0) return Status::Error(op, ": kernel_size must be positive");
  std::vector<int> stride2 = strides.size() == 1 ? std::vector<int>{strides[0], strides[0]} : strides;
  KFORGE_RETURN_IF_ERROR(
      conv_geometry(op, stride2, paddings, {1, 1}, padding_algorithm, s->in_h, s->in_w, s->k_h, s->k_w, &s->g));
  s->adaptive = adaptive;
  if (global_pooling || adaptive) s->g.pad_top = s->g.pad_bottom = s->g.pad_left = s->g.pad_right = 0;
  if (adaptive) {
    s->out_h = s->k_h;  // the kernel size is the output size
    s->out_w = s->k_w;
    return Status::OK();
  }
  auto out_size = [ceil_mode](int64_t in, int64_t k, int64_t p0, int64_t p1, int64_t stride) {
    return ceil_mode ? (in - k + p0 + p1 + stride - 1) / stride + 1 : (in - k + p0 + p1) / stride + 1;
  };
  s->out_h = out_size(s->in_h, s->k_h, s->g.pad_top, s->g.pad_bottom, s->g.stride_h);
  s->out_w = out_size(s->in_w, s->k_w, s->g.pad_left, s->g.pad_right, s->g.stride_w);
  if (s->out_h <= 0 || s->out_w <= 0) {
    return Status::Error(op, ": x ", x.dims_string(), " with kernel ", s->k_h, " x ", s->k_w,
                         " gives an empty output (", s->out_h, " x ", s->out_w, ")");
  }
  return Status::OK();
}

}  // namespace kforge::kernels::util

namespace kforge::meta {

namespace {

using kernels::util::activation_dims;

Status set_meta(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

}  // namespace

Status ConvInferMeta(const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
                     const std::vector<int>& paddings, const std::string& padding_algorithm,
                     const std::vector<int>& dilations, int groups, const std::string& data_format, Tensor* out) {
  kernels::util::ConvShape s;
  KFORGE_RETURN_IF_ERROR(kernels::util::conv_shape("ConvInferMeta", input, filter, strides, paddings,
                                                   padding_algorithm, dilations, groups, data_format, &s));
  return set_meta(out, input.dtype, activation_dims(s.channel_last, s.nchw8c, s.n, s.out_c, s.out_h, s.out_w),
                  "ConvInferMeta");
}

Status DepthwiseConvInferMeta(const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
                              const std::vector<int>& paddings, const std::string& padding_algorithm, int groups,
                              const std::vector<int>& dilations, const std::string& data_format, Tensor* out) {
  return ConvInferMeta(input, filter, strides, paddings, padding_algorithm, dilations, groups, data_format, out);
}

Status Conv2dTransposeInferMeta(const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                                const std::vector<int>& paddings, const std::vector<int>& output_padding,
                                const IntArray& output_size, const std::string& padding_algorithm, int groups,
                                const std::vector<int>& dilations, const std::string& data_format, Tensor* out) {
  kernels::util::ConvShape s;
  KFORGE_RETURN_IF_ERROR(kernels::util::conv_transpose_shape("Conv2dTransposeInferMeta", x, filter, strides, paddings,
                                                             output_padding, output_size, padding_algorithm, groups,
                                                             dilations, data_format, &s));
  return set_meta(out, x.dtype, activation_dims(s.channel_last, false, s.n, s.out_c, s.out_h, s.out_w),
                  "Conv2dTransposeInferMeta");
}

Status BatchNormInferMeta(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor* scale,
                          const Tensor* bias, bool is_test, float momentum, float epsilon,
                          const std::string& data_format, bool use_global_stats, bool trainable_statistics,
                          Tensor* out, Tensor* mean_out, Tensor* variance_out, Tensor* saved_mean,
                          Tensor* saved_variance, Tensor* reserve_space) {
  (void)is_test;
  (void)momentum;
  (void)use_global_stats;
  (void)trainable_statistics;
  static constexpr const char* kOp = "BatchNormInferMeta";
  if (x.ndim < 2 || x.ndim > 5) return Status::Error(kOp, ": x must have rank 2 to 5, got ", x.dims_string());
  if (!(epsilon >= 0.f)) return Status::Error(kOp, ": epsilon must not be negative");
  bool last = false, nchw8c = false;
  KFORGE_RETURN_IF_ERROR(kernels::util::activation_layout(kOp, data_format, &last, &nchw8c));
  if (nchw8c) KFORGE_RETURN_IF_ERROR(kernels::util::check_nchw8c(kOp, "x", x));
  const int64_t c = kernels::util::channel_count(x, last, nchw8c);
  struct Named {
    const Tensor* t;
    const char* name;
  };
  for (Named p : {Named{&mean, "mean"}, Named{&variance, "variance"}, Named{scale, "scale"}, Named{bias, "bias"}}) {
    if (p.t != nullptr && (p.t->ndim != 1 || p.t->dims[0] != c)) {
      return Status::Error(kOp, ": ", p.name, " ", p.t->dims_string(), " must be [", c, "], the channels of x ",
                           x.dims_string());
    }
  }
  KFORGE_RETURN_IF_ERROR(set_meta(out, x.dtype, x.shape(), kOp));
  for (Tensor* stat : {mean_out, variance_out, saved_mean, saved_variance}) {
    if (stat != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(stat, mean.dtype, {c}, kOp));
  }
  if (reserve_space != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(reserve_space, DataType::kUInt8, {0}, kOp));
  return Status::OK();
}

Status Pool2DInferMeta(const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
                       const std::vector<int>& paddings, bool ceil_mode, bool exclusive, const std::string& data_format,
                       const std::string& pooling_type, bool global_pooling, bool adaptive,
                       const std::string& padding_algorithm, Tensor* out) {
  (void)exclusive;
  kernels::util::PoolShape s;
  KFORGE_RETURN_IF_ERROR(kernels::util::pool_shape("Pool2DInferMeta", x, kernel_size, strides, paddings, ceil_mode,
                                                   data_format, pooling_type, global_pooling, adaptive,
                                                   padding_algorithm, &s));
  return set_meta(out, x.dtype, activation_dims(s.channel_last, s.nchw8c, s.n, s.c, s.out_h, s.out_w),
                  "Pool2DInferMeta");
}

Status InterpolateInferMeta(const Tensor& x, const Tensor* out_size, TensorList size_tensor, const Tensor* scale_tensor,
                            const std::string& data_format, int out_d, int out_h, int out_w,
                            const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                            int align_mode, Tensor* output) {
  return shape_meta::InterpolateInferMeta(x, out_size, size_tensor, scale_tensor, data_format, out_d, out_h, out_w,
                                          scale, interp_method, align_corners, align_mode, output);
}

}  // namespace kforge::meta
