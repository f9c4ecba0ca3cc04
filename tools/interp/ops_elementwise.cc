// Elementwise ops: binary arithmetic, unary activations, scale, clip, cast, where.
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::KernelContext;
using kforge::Status;
using kforge::Tensor;
using detail::run_one;

namespace {

using BinaryKernel = Status (*)(const KernelContext&, const Tensor&, const Tensor&, Tensor*);
using UnaryKernel = Status (*)(const KernelContext&, const Tensor&, Tensor*);

OpFn binary(BinaryKernel kernel, bool data_type_x) {
  return [kernel, data_type_x](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                               std::vector<RtValue>& out) -> Status {
    const Tensor *x, *y;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "y", &y));
    return run_one(
        ctx, data_type_x ? x->dtype : DataType::kUndefined, out,
        [&](Tensor* o) { return kforge::meta::ElementwiseInferMeta(*x, *y, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, *y, o); });
  };
}

OpFn unary(UnaryKernel kernel) {
  return [kernel](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return kforge::meta::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, o); });
  };
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;
  r.add("add", binary(k::add, true));
  r.add("subtract", binary(k::subtract, false));
  r.add("multiply", binary(k::multiply, false));
  r.add("divide", binary(k::divide, false));
  r.add("maximum", binary(k::maximum, false));
  r.add("minimum", binary(k::minimum, false));
  r.add("fmax", binary(k::fmax, false));
  r.add("fmin", binary(k::fmin, false));
  r.add("elementwise_pow", binary(k::elementwise_pow, false));

  r.add("relu", unary(k::relu));
  r.add("sigmoid", unary(k::sigmoid));
  r.add("tanh", unary(k::tanh));
  r.add("exp", unary(k::exp));
  r.add("rsqrt", unary(k::rsqrt));
  r.add("floor", unary(k::floor));
  r.add("ceil", unary(k::ceil));
  r.add("silu", unary(k::silu));
  r.add("swish", unary(k::swish));
  r.add("hardswish", unary(k::hardswish));

  r.add("thresholded_relu", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                               std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    double threshold, value;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("threshold", &threshold, 1.0));
    KFORGE_RETURN_IF_ERROR(attrs.get_float("value", &value, 0.0));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) {
          return k::thresholded_relu(c, *x, static_cast<float>(threshold), static_cast<float>(value), o);
        });
  });

  r.add("add_n", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                    std::vector<RtValue>& out) -> Status {
    std::vector<const Tensor*> xs = input_list(in, 0);
    if (xs.empty()) return Status::Error("add_n: input 'inputs' is empty");
    const kforge::TensorList list{xs.data(), xs.size()};
    return run_one(
        ctx, xs[0]->dtype, out, [&](Tensor* o) { return m::AddNInferMeta(list, o); },
        [&](const KernelContext& c, Tensor* o) { return k::add_n(c, list, o); });
  });

  r.add("gelu", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    bool approximate;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("approximate", &approximate, false));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::gelu(c, *x, approximate, o); });
  });

  // pd_op.scale: operands (x, scale); `scale` is mutable (ScaleTensor), `bias` never is.
  r.add("scale", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                    std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    kforge::Scalar scale, bias;
    const kforge::Scalar one(1.0), zero(0.0);
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "scale", &scale, &one));
    KFORGE_RETURN_IF_ERROR(attrs.get_scalar("bias", &bias, zero));
    bool bias_after_scale;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("bias_after_scale", &bias_after_scale, true));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::scale(c, *x, scale, bias, bias_after_scale, o); });
  });

  // pd_op.clip: operands (x, min, max), both mutable.
  r.add("clip", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    kforge::Scalar min, max;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "min", &min));
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 2, attrs, "max", &max));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::clip(c, *x, min, max, o); });
  });

  r.add("cast", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::CastInferMeta(*x, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::cast(c, *x, dtype, o); });
  });

  r.add("where", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                    std::vector<RtValue>& out) -> Status {
    const Tensor *cond, *x, *y;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "condition", &cond));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "y", &y));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::WhereInferMeta(*cond, *x, *y, o); },
        [&](const KernelContext& c, Tensor* o) { return k::where(c, *cond, *x, *y, o); });
  });
}

}  // namespace kforge::interp
