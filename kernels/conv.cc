// conv2d, depthwise_conv2d (a grouped conv2d) and conv2d_transpose: direct loops over NCHW or NHWC tensors (and
// NCHW8c, but for the transpose) with OIHW filters, accumulating each output element in a fixed order. With oneDNN,
// float32 runs there instead (onednn/conv.cc) whenever it can; reference.h reaches the loops directly.
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "reference.h"
#if KFORGE_KERNELS_ONEDNN
#include "onednn/onednn.h"
#endif

namespace kforge::kernels {

namespace {

using util::Strides4;

Status check_out(const char* op, const Tensor& out, DataType dtype, const util::ConvShape& s) {
  if (out.dtype != dtype) return Status::Error(op, ": out is ", out.dtype, ", expected ", dtype);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(
      expected.set_dims(util::activation_dims(s.channel_last, s.nchw8c, s.n, s.out_c, s.out_h, s.out_w)));
  return util::require_dims(out, expected, op);
}

// The outputs o in [lo, hi) whose input position o * stride - pad + offset falls in [0, size).
void valid_range(int64_t size, int64_t out_size, int64_t stride, int64_t pad, int64_t offset, int64_t* lo,
                 int64_t* hi) {
  // o * stride >= pad - offset  and  o * stride <= size - 1 + pad - offset
  int64_t first = pad - offset, last = size - 1 + pad - offset;
  *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  *hi = last < 0 ? 0 : last / stride + 1;
  if (*hi > out_size) *hi = out_size;
  if (*lo > *hi) *lo = *hi;
}

template <typename T>
void conv_forward(const Tensor& input, const Tensor& filter, Tensor* out, const util::ConvShape& s) {
  const Strides4 is = util::strides4(s.channel_last, s.nchw8c && !s.plain_input, s.in_c, s.in_h, s.in_w);
  const Strides4 os = util::strides4(s.channel_last, s.nchw8c, s.out_c, s.out_h, s.out_w);
  const util::Geometry2D& g = s.g;
  const int64_t in_per_group = s.in_c / s.groups, out_per_group = s.out_c / s.groups;
  const T* in = input.data_as<const T>();
  const T* w = filter.data_as<const T>();
  T* o = out->data_as<T>();
  for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = T(0);
  for (int64_t b = 0; b < s.n; ++b) {
    for (int64_t oc = 0; oc < s.out_c; ++oc) {
      const int64_t group = oc / out_per_group;
      T* out_plane = o + b * os.n + os.channel(oc);
      for (int64_t icg = 0; icg < in_per_group; ++icg) {
        const T* in_plane = in + b * is.n + is.channel(group * in_per_group + icg);
        for (int64_t kh = 0; kh < s.k_h; ++kh) {
          int64_t oh_lo, oh_hi;
          valid_range(s.in_h, s.out_h, g.stride_h, g.pad_top, kh * g.dilation_h, &oh_lo, &oh_hi);
          for (int64_t kw = 0; kw < s.k_w; ++kw) {
            const T weight = w[((oc * in_per_group + icg) * s.k_h + kh) * s.k_w + kw];
            int64_t ow_lo, ow_hi;
            valid_range(s.in_w, s.out_w, g.stride_w, g.pad_left, kw * g.dilation_w, &ow_lo, &ow_hi);
            for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
              const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
              const T* in_row = in_plane + ih * is.h;
              T* out_row = out_plane + oh * os.h;
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
                const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
                out_row[ow * os.w] += weight * in_row[iw * is.w];
              }
            }
          }
        }
      }
    }
  }
}

// `fast`: float32 may run on oneDNN (the public kernels); false keeps the loops (reference.h).
Status conv(const char* op, bool fast, const KernelContext& ctx, const Tensor& input, const Tensor& filter,
            const std::vector<int>& strides, const std::vector<int>& paddings, const std::string& padding_algorithm,
            const std::vector<int>& dilations, int groups, const std::string& data_format, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, op));
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  const DataType dtype = util::kernel_dtype(ctx, input);
  if (input.dtype != dtype) return Status::Error(op, ": input is ", input.dtype, ", kernel dtype ", dtype);
  util::ConvShape s;
  KFORGE_RETURN_IF_ERROR(util::conv_shape(op, input, filter, strides, paddings, padding_algorithm, dilations, groups,
                                          data_format, &s));
  KFORGE_RETURN_IF_ERROR(check_out(op, *out, dtype, s));
#if KFORGE_KERNELS_ONEDNN
  if (fast && dtype == DataType::kFloat32) {
    bool handled = false;
    Status status = onednn::conv2d(op, input, filter, s, onednn::ConvEpilogue{}, out, &handled);
    if (handled) return status;
  }
#else
  (void)fast;
#endif
  return util::visit_float(dtype, op, [&](auto tag) -> Status {
    conv_forward<typename decltype(tag)::type>(input, filter, out, s);
    return Status::OK();
  });
}

Status conv_transpose(bool fast, const KernelContext& ctx, const Tensor& x, const Tensor& filter,
                      const std::vector<int>& strides, const std::vector<int>& paddings,
                      const std::vector<int>& output_padding, const IntArray& output_size,
                      const std::string& padding_algorithm, int groups, const std::vector<int>& dilations,
                      const std::string& data_format, Tensor* out);

}  // namespace

Status conv2d(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
              const std::vector<int>& paddings, const std::string& padding_algorithm, const std::vector<int>& dilations,
              int groups, const std::string& data_format, Tensor* out) {
  return conv("conv2d", true, ctx, input, filter, strides, paddings, padding_algorithm, dilations, groups, data_format,
              out);
}

Status depthwise_conv2d(const KernelContext& ctx, const Tensor& input, const Tensor& filter,
                        const std::vector<int>& strides, const std::vector<int>& paddings,
                        const std::string& padding_algorithm, int groups, const std::vector<int>& dilations,
                        const std::string& data_format, Tensor* out) {
  return conv("depthwise_conv2d", true, ctx, input, filter, strides, paddings, padding_algorithm, dilations, groups,
              data_format, out);
}

Status conv2d_transpose(const KernelContext& ctx, const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                        const std::vector<int>& paddings, const std::vector<int>& output_padding,
                        const IntArray& output_size, const std::string& padding_algorithm, int groups,
                        const std::vector<int>& dilations, const std::string& data_format, Tensor* out) {
  return conv_transpose(true, ctx, x, filter, strides, paddings, output_padding, output_size, padding_algorithm, groups,
                        dilations, data_format, out);
}

namespace reference {

Status conv2d(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
              const std::vector<int>& paddings, const std::string& padding_algorithm, const std::vector<int>& dilations,
              int groups, const std::string& data_format, Tensor* out) {
  return conv("conv2d", false, ctx, input, filter, strides, paddings, padding_algorithm, dilations, groups, data_format,
              out);
}

Status depthwise_conv2d(const KernelContext& ctx, const Tensor& input, const Tensor& filter,
                        const std::vector<int>& strides, const std::vector<int>& paddings,
                        const std::string& padding_algorithm, int groups, const std::vector<int>& dilations,
                        const std::string& data_format, Tensor* out) {
  return conv("depthwise_conv2d", false, ctx, input, filter, strides, paddings, padding_algorithm, dilations, groups,
              data_format, out);
}

Status conv2d_transpose(const KernelContext& ctx, const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                        const std::vector<int>& paddings, const std::vector<int>& output_padding,
                        const IntArray& output_size, const std::string& padding_algorithm, int groups,
                        const std::vector<int>& dilations, const std::string& data_format, Tensor* out) {
  return conv_transpose(false, ctx, x, filter, strides, paddings, output_padding, output_size, padding_algorithm,
                        groups, dilations, data_format, out);
}

}  // namespace reference

namespace {

Status conv_transpose(bool fast, const KernelContext& ctx, const Tensor& x, const Tensor& filter,
                      const std::vector<int>& strides, const std::vector<int>& paddings,
                      const std::vector<int>& output_padding, const IntArray& output_size,
                      const std::string& padding_algorithm, int groups, const std::vector<int>& dilations,
                      const std::string& data_format, Tensor* out) {
  static constexpr const char* kOp = "conv2d_transpose";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  util::ConvShape s;
  KFORGE_RETURN_IF_ERROR(util::conv_transpose_shape(kOp, x, filter, strides, paddings, output_padding, output_size,
                                                    padding_algorithm, groups, dilations, data_format, &s));
  KFORGE_RETURN_IF_ERROR(check_out(kOp, *out, dtype, s));
#if KFORGE_KERNELS_ONEDNN
  if (fast && dtype == DataType::kFloat32) {
    bool handled = false;
    Status status = onednn::conv2d_transpose(x, filter, s, out, &handled);
    if (handled) return status;
  }
#else
  (void)fast;
#endif
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const Strides4 is = util::strides4(s.channel_last, s.nchw8c, s.in_c, s.in_h, s.in_w);
    const Strides4 os = util::strides4(s.channel_last, s.nchw8c, s.out_c, s.out_h, s.out_w);
    const util::Geometry2D& g = s.g;
    const int64_t in_per_group = s.in_c / s.groups, out_per_group = s.out_c / s.groups;
    const T* in = x.data_as<const T>();
    const T* w = filter.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = T(0);
    // Each input pixel scatters its kernel-sized patch into the output.
    for (int64_t b = 0; b < s.n; ++b) {
      for (int64_t ic = 0; ic < s.in_c; ++ic) {
        const int64_t group = ic / in_per_group;
        const T* in_plane = in + b * is.n + is.channel(ic);
        for (int64_t ocg = 0; ocg < out_per_group; ++ocg) {
          T* out_plane = o + b * os.n + os.channel(group * out_per_group + ocg);
          for (int64_t kh = 0; kh < s.k_h; ++kh) {
            for (int64_t kw = 0; kw < s.k_w; ++kw) {
              const T weight = w[((ic * out_per_group + ocg) * s.k_h + kh) * s.k_w + kw];
              for (int64_t ih = 0; ih < s.in_h; ++ih) {
                const int64_t oh = ih * g.stride_h - g.pad_top + kh * g.dilation_h;
                if (oh < 0 || oh >= s.out_h) continue;
                const T* in_row = in_plane + ih * is.h;
                T* out_row = out_plane + oh * os.h;
                for (int64_t iw = 0; iw < s.in_w; ++iw) {
                  const int64_t ow = iw * g.stride_w - g.pad_left + kw * g.dilation_w;
                  if (ow >= 0 && ow < s.out_w) out_row[ow * os.w] += weight * in_row[iw * is.w];
                }
              }
            }
          }
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

}  // namespace kforge::kernels
