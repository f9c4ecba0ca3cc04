// Linear algebra, normalisation, reductions, convolution, pooling and resizing ops.
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::IntArray;
using kforge::KernelContext;
using kforge::Status;
using kforge::Tensor;
using detail::run_many;
using detail::run_one;

namespace {

/// mean, max and min: (Tensor x, IntArray axis (mutable), bool keepdim).
using ReduceKernel = Status (*)(const KernelContext&, const Tensor&, const IntArray&, bool, Tensor*);
OpFn reduce(ReduceKernel kernel) {
  return [kernel](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray axis;
    const std::vector<int64_t> all;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "axis", &axis, &all));
    bool keepdim;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("keepdim", &keepdim, false));
    return run_one(
        ctx, DataType::kUndefined, out,
        [&](Tensor* o) { return kforge::meta::ReduceIntArrayAxisInferMeta(*x, axis, keepdim, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, axis, keepdim, o); });
  };
}

/// The attributes conv2d and depthwise_conv2d share.
struct ConvAttrs {
  std::vector<int> strides, paddings, dilations;
  std::string padding_algorithm, data_format;
  int groups = 1;
};

Status read_conv_attrs(const AttrMap& attrs, ConvAttrs* a) {
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("strides", &a->strides, {1, 1}));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("paddings", &a->paddings, {0, 0}));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("dilations", &a->dilations, {1, 1}));
  KFORGE_RETURN_IF_ERROR(attrs.get_string("padding_algorithm", &a->padding_algorithm, "EXPLICIT"));
  KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &a->data_format, "NCHW"));
  return attrs.get_int32("groups", &a->groups, 1);
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;

  r.add("matmul", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    const Tensor *x, *y;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "y", &y));
    bool tx, ty;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("transpose_x", &tx, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("transpose_y", &ty, false));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::MatmulInferMeta(*x, *y, tx, ty, o); },
        [&](const KernelContext& c, Tensor* o) { return k::matmul(c, *x, *y, tx, ty, o); });
  });

  r.add("embedding", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
    const Tensor *x, *weight;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "weight", &weight));
    int64_t padding_idx;
    KFORGE_RETURN_IF_ERROR(attrs.get_int("padding_idx", &padding_idx, -1));
    return run_one(
        ctx, weight->dtype, out, [&](Tensor* o) { return m::EmbeddingInferMeta(*x, *weight, padding_idx, o); },
        [&](const KernelContext& c, Tensor* o) { return k::embedding(c, *x, *weight, padding_idx, o); });
  });

  r.add("softmax", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::SoftmaxInferMeta(*x, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::softmax(c, *x, axis, o); });
  });

  // pd_op.layer_norm: operands (x, scale, bias), scale and bias optional; outputs out, mean, variance.
  r.add("layer_norm", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                         std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* scale = optional_tensor(in, 1);
    const Tensor* bias = optional_tensor(in, 2);
    double epsilon;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("epsilon", &epsilon, 1e-5));
    int begin_norm_axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("begin_norm_axis", &begin_norm_axis, 1));
    const float eps = static_cast<float>(epsilon);
    return run_many(
        ctx, x->dtype, 3, out,
        [&](Tensor** o) { return m::LayerNormInferMeta(*x, scale, bias, eps, begin_norm_axis, o[0], o[1], o[2]); },
        [&](const KernelContext& c, Tensor** o) {
          return k::layer_norm(c, *x, scale, bias, eps, begin_norm_axis, o[0], o[1], o[2]);
        });
  });

  // pd_op.sum: operands (x, axis); axis is mutable.
  r.add("sum", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray axis;
    const std::vector<int64_t> all;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "axis", &axis, &all));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kUndefined));
    bool keepdim;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("keepdim", &keepdim, false));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::SumInferMeta(*x, axis, dtype, keepdim, o); },
        [&](const KernelContext& c, Tensor* o) { return k::sum(c, *x, axis, dtype, keepdim, o); });
  });
  r.add("mean", reduce(k::mean));
  r.add("max", reduce(k::max));
  r.add("min", reduce(k::min));

  r.add("conv2d", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    const Tensor *x, *filter;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "filter", &filter));
    ConvAttrs a;
    KFORGE_RETURN_IF_ERROR(read_conv_attrs(attrs, &a));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) {
          return m::ConvInferMeta(*x, *filter, a.strides, a.paddings, a.padding_algorithm, a.dilations, a.groups,
                                  a.data_format, o);
        },
        [&](const KernelContext& c, Tensor* o) {
          return k::conv2d(c, *x, *filter, a.strides, a.paddings, a.padding_algorithm, a.dilations, a.groups,
                           a.data_format, o);
        });
  });

  r.add("depthwise_conv2d", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                               std::vector<RtValue>& out) -> Status {
    const Tensor *x, *filter;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "filter", &filter));
    ConvAttrs a;
    KFORGE_RETURN_IF_ERROR(read_conv_attrs(attrs, &a));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) {
          return m::DepthwiseConvInferMeta(*x, *filter, a.strides, a.paddings, a.padding_algorithm, a.groups,
                                           a.dilations, a.data_format, o);
        },
        [&](const KernelContext& c, Tensor* o) {
          return k::depthwise_conv2d(c, *x, *filter, a.strides, a.paddings, a.padding_algorithm, a.groups,
                                     a.dilations, a.data_format, o);
        });
  });

  // pd_op.conv2d_transpose: operands (x, filter, output_size); output_size is mutable.
  // pd_op.depthwise_conv2d_transpose (groups equal to the input channels) has the same signature and, in Paddle's
  // CPU kernel, the same computation.
  const auto conv2d_transpose = [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                                   std::vector<RtValue>& out) -> Status {
    const Tensor *x, *filter;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "filter", &filter));
    IntArray output_size;
    const std::vector<int64_t> none;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 2, attrs, "output_size", &output_size, &none));
    ConvAttrs a;
    KFORGE_RETURN_IF_ERROR(read_conv_attrs(attrs, &a));
    std::vector<int> output_padding;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("output_padding", &output_padding, {}));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) {
          return m::Conv2dTransposeInferMeta(*x, *filter, a.strides, a.paddings, output_padding, output_size,
                                             a.padding_algorithm, a.groups, a.dilations, a.data_format, o);
        },
        [&](const KernelContext& c, Tensor* o) {
          return k::conv2d_transpose(c, *x, *filter, a.strides, a.paddings, output_padding, output_size,
                                     a.padding_algorithm, a.groups, a.dilations, a.data_format, o);
        });
  };
  r.add("conv2d_transpose", conv2d_transpose);
  r.add("depthwise_conv2d_transpose", conv2d_transpose);

  // pd_op.batch_norm / batch_norm_: operands (x, mean, variance, scale, bias); six outputs.
  r.add("batch_norm", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                         std::vector<RtValue>& out) -> Status {
    const Tensor *x, *mean, *variance;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "mean", &mean));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "variance", &variance));
    const Tensor* scale = optional_tensor(in, 3);
    const Tensor* bias = optional_tensor(in, 4);
    bool is_test, use_global_stats, trainable_statistics;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("is_test", &is_test, true));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("use_global_stats", &use_global_stats, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("trainable_statistics", &trainable_statistics, false));
    double momentum, epsilon;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("momentum", &momentum, 0.9));
    KFORGE_RETURN_IF_ERROR(attrs.get_float("epsilon", &epsilon, 1e-5));
    std::string data_format;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &data_format, "NCHW"));
    const float mom = static_cast<float>(momentum), eps = static_cast<float>(epsilon);
    return run_many(
        ctx, x->dtype, 6, out,
        [&](Tensor** o) {
          return m::BatchNormInferMeta(*x, *mean, *variance, scale, bias, is_test, mom, eps, data_format,
                                       use_global_stats, trainable_statistics, o[0], o[1], o[2], o[3], o[4], o[5]);
        },
        [&](const KernelContext& c, Tensor** o) {
          return k::batch_norm(c, *x, *mean, *variance, scale, bias, is_test, mom, eps, data_format,
                               use_global_stats, trainable_statistics, o[0], o[1], o[2], o[3], o[4], o[5]);
        });
  });

  // pd_op.pool2d: operands (x, kernel_size); kernel_size is mutable.
  r.add("pool2d", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray kernel_size;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "kernel_size", &kernel_size));
    std::vector<int> strides, paddings;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("strides", &strides, {1, 1}));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("paddings", &paddings, {0, 0}));
    bool ceil_mode, exclusive, global_pooling, adaptive;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("ceil_mode", &ceil_mode, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("exclusive", &exclusive, true));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("global_pooling", &global_pooling, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("adaptive", &adaptive, false));
    std::string data_format, pooling_type, padding_algorithm;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &data_format, "NCHW"));
    KFORGE_RETURN_IF_ERROR(attrs.get_string("pooling_type", &pooling_type, "max"));
    KFORGE_RETURN_IF_ERROR(attrs.get_string("padding_algorithm", &padding_algorithm, "EXPLICIT"));
    return run_one(
        ctx, DataType::kUndefined, out,
        [&](Tensor* o) {
          return m::Pool2DInferMeta(*x, kernel_size, strides, paddings, ceil_mode, exclusive, data_format,
                                    pooling_type, global_pooling, adaptive, padding_algorithm, o);
        },
        [&](const KernelContext& c, Tensor* o) {
          return k::pool2d(c, *x, kernel_size, strides, paddings, ceil_mode, exclusive, data_format, pooling_type,
                           global_pooling, adaptive, padding_algorithm, o);
        });
  });

  // pd_op.nearest_interp: operands (x, out_size, size_tensor: vector, scale_tensor), all but x optional.
  r.add("nearest_interp", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                             std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* out_size = optional_tensor(in, 1);
    std::vector<const Tensor*> sizes = input_list(in, 2);
    const Tensor* scale_tensor = optional_tensor(in, 3);
    const kforge::TensorList size_list{sizes.data(), sizes.size()};
    std::string data_format, interp_method;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &data_format, "NCHW"));
    KFORGE_RETURN_IF_ERROR(attrs.get_string("interp_method", &interp_method, "bilinear"));
    int out_d, out_h, out_w, align_mode;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("out_d", &out_d, 0));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("out_h", &out_h, 0));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("out_w", &out_w, 0));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("align_mode", &align_mode, 1));
    std::vector<float> scale;
    KFORGE_RETURN_IF_ERROR(attrs.get_floats("scale", &scale, {}));
    bool align_corners;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("align_corners", &align_corners, true));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) {
          return m::InterpolateInferMeta(*x, out_size, size_list, scale_tensor, data_format, out_d, out_h, out_w,
                                         scale, interp_method, align_corners, align_mode, o);
        },
        [&](const KernelContext& c, Tensor* o) {
          return k::nearest_interp(c, *x, out_size, size_list, scale_tensor, data_format, out_d, out_h, out_w, scale,
                                   interp_method, align_corners, align_mode, o);
        });
  });
}

}  // namespace kforge::interp
