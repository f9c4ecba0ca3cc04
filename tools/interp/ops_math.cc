// Math, comparison, creation and scan ops of kernels/ops.yaml (issue 11): hardsigmoid, leaky_relu, relu6, sqrt, erf, log, sin,
// cos, abs, square, reciprocal, pow, floor_divide, remainder, masked_fill, swiglu, the comparisons, logical and
// bitwise ops, full_with_tensor, uniform, arange, one_hot, cumsum, prod, argmax, topk, argsort (issue 34),
// log_softmax, fft_r2c and real (issue 34). Operands in PIR order: tensor inputs, then mutable attributes
// (op_compat.yaml).
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::IntArray;
using kforge::KernelContext;
using kforge::Scalar;
using kforge::Status;
using kforge::Tensor;
using detail::run_many;
using detail::run_one;

namespace {

using UnaryKernel = Status (*)(const KernelContext&, const Tensor&, Tensor*);
using BinaryKernel = Status (*)(const KernelContext&, const Tensor&, const Tensor&, Tensor*);
using UnaryMeta = Status (*)(const Tensor&, Tensor*);
using BinaryMeta = Status (*)(const Tensor&, const Tensor&, Tensor*);

/// One tensor in, infer-meta `meta`; the kernel dtype is x's.
OpFn unary(UnaryKernel kernel, UnaryMeta meta) {
  return [kernel, meta](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                        std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return meta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, o); });
  };
}

/// x and y in; the kernel dtype is x's (they share one).
OpFn binary(BinaryKernel kernel, BinaryMeta meta) {
  return [kernel, meta](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                        std::vector<RtValue>& out) -> Status {
    const Tensor *x, *y;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "y", &y));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return meta(*x, *y, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, *y, o); });
  };
}

void register_elementwise(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;
  r.add("relu6", unary(k::relu6, m::UnchangedInferMeta));
  r.add("sqrt", unary(k::sqrt, m::UnchangedInferMeta));
  r.add("erf", unary(k::erf, m::UnchangedInferMeta));
  r.add("log", unary(k::log, m::UnchangedInferMeta));
  r.add("sin", unary(k::sin, m::UnchangedInferMeta));
  r.add("cos", unary(k::cos, m::UnchangedInferMeta));
  r.add("abs", unary(k::abs, m::RealAndImagInferMeta));
  r.add("real", unary(k::real, m::RealAndImagInferMeta));
  r.add("square", unary(k::square, m::UnchangedInferMeta));
  r.add("reciprocal", unary(k::reciprocal, m::UnchangedInferMeta));
  r.add("logical_not", unary(k::logical_not, m::LogicalNotInferMeta));
  r.add("bitwise_not", unary(k::bitwise_not, m::UnchangedInferMeta));
  r.add("floor_divide", binary(k::floor_divide, m::ElementwiseInferMeta));
  r.add("remainder", binary(k::remainder, m::ElementwiseInferMeta));
  r.add("bitwise_and", binary(k::bitwise_and, m::ElementwiseInferMeta));
  r.add("bitwise_or", binary(k::bitwise_or, m::ElementwiseInferMeta));
  r.add("bitwise_xor", binary(k::bitwise_xor, m::ElementwiseInferMeta));
  r.add("equal", binary(k::equal, m::CompareInferMeta));
  r.add("not_equal", binary(k::not_equal, m::CompareInferMeta));
  r.add("greater_than", binary(k::greater_than, m::CompareInferMeta));
  r.add("greater_equal", binary(k::greater_equal, m::CompareInferMeta));
  r.add("less_than", binary(k::less_than, m::CompareInferMeta));
  r.add("less_equal", binary(k::less_equal, m::CompareInferMeta));
  r.add("logical_and", binary(k::logical_and, m::LogicalBinaryInferMeta));
  r.add("logical_or", binary(k::logical_or, m::LogicalBinaryInferMeta));

  r.add("fft_r2c", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    std::vector<int64_t> axes;
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("axes", &axes));
    std::string normalization;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("normalization", &normalization, "backward"));
    bool forward, onesided;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("forward", &forward, true));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("onesided", &onesided, true));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) { return m::FFTR2CInferMeta(*x, axes, normalization, forward, onesided, o); },
        [&](const KernelContext& c, Tensor* o) {
          return k::fft_r2c(c, *x, axes, normalization, forward, onesided, o);
        });
  });

  r.add("hardsigmoid", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                          std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    double slope, offset;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("slope", &slope, 0.2));
    KFORGE_RETURN_IF_ERROR(attrs.get_float("offset", &offset, 0.5));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) {
          return k::hardsigmoid(c, *x, static_cast<float>(slope), static_cast<float>(offset), o);
        });
  });

  r.add("leaky_relu", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                         std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    double slope;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("negative_slope", &slope, 0.02));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::leaky_relu(c, *x, static_cast<float>(slope), o); });
  });

  r.add("elu", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    double alpha;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("alpha", &alpha, 1.0));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::elu(c, *x, static_cast<float>(alpha), o); });
  });

  // pd_op.pow keeps `y` an attribute (Paddle's generator gives pow no mutable attribute).
  r.add("pow", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    Scalar y;
    const Scalar one(1.0);
    KFORGE_RETURN_IF_ERROR(attrs.get_scalar("y", &y, one));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::pow(c, *x, y, o); });
  });

  r.add("masked_fill", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                          std::vector<RtValue>& out) -> Status {
    const Tensor *x, *mask, *value;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "mask", &mask));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "value", &value));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::MaskedFillInferMeta(*x, *mask, *value, o); },
        [&](const KernelContext& c, Tensor* o) { return k::masked_fill(c, *x, *mask, *value, o); });
  });

  // pd_op.swiglu: operands (x, y); y may be a null operand (x then holds both halves).
  r.add("swiglu", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                     std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* y = optional_tensor(in, 1);
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::SwiGLUInferMeta(*x, y, o); },
        [&](const KernelContext& c, Tensor* o) { return k::swiglu(c, *x, y, o); });
  });
}

void register_creation(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;

  // pd_op.full_with_tensor: operands (value, shape); shape is mutable.
  r.add("full_with_tensor", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                               std::vector<RtValue>& out) -> Status {
    const Tensor* value;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "value", &value));
    IntArray shape;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "shape", &shape));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kFloat32));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::FullWithTensorInferMeta(shape, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::full_with_tensor(c, *value, shape, dtype, o); });
  });

  // pd_op.uniform: operands (shape, min, max), all mutable.
  r.add("uniform", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    IntArray shape;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 0, attrs, "shape", &shape));
    Scalar min, max;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "min", &min));
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 2, attrs, "max", &max));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kFloat32));
    int seed;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("seed", &seed, 0));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::UniformRandomInferMeta(shape, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::uniform(c, shape, dtype, min, max, seed, o); });
  });

  // pd_op.randint: operand (shape), mutable.
  r.add("randint", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    IntArray shape;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 0, attrs, "shape", &shape));
    int low, high;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("low", &low));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("high", &high));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kInt64));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::RandintInferMeta(low, high, shape, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::randint(c, low, high, shape, dtype, o); });
  });

  // pd_op.arange: operands (start, end, step), all mutable (Paddle 3 writes them as one-element tensors).
  r.add("arange", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    Scalar start, end, step;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 0, attrs, "start", &start));
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "end", &end));
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 2, attrs, "step", &step));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kFloat64));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::ArangeInferMeta(start, end, step, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::arange(c, start, end, step, o); });
  });

  // pd_op.one_hot: operands (x, num_classes); num_classes is mutable.
  r.add("one_hot", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    Scalar num_classes;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "num_classes", &num_classes));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::OneHotInferMeta(*x, num_classes, o); },
        [&](const KernelContext& c, Tensor* o) { return k::one_hot(c, *x, num_classes, o); });
  });
}

void register_scans(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;

  // pd_op.cumsum: operands (x, axis); axis is mutable.
  r.add("cumsum", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    Scalar axis;
    const Scalar last(-1);
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "axis", &axis, &last));
    bool flatten, exclusive, reverse;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("flatten", &flatten, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("exclusive", &exclusive, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("reverse", &reverse, false));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) { return m::CumScalarAxisInferMeta(*x, axis, flatten, exclusive, reverse, o); },
        [&](const KernelContext& c, Tensor* o) { return k::cumsum(c, *x, axis, flatten, exclusive, reverse, o); });
  });

  // pd_op.prod: operands (x, axis); axis is mutable.
  r.add("prod", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray axis;
    const std::vector<int64_t> all;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "axis", &axis, &all));
    bool keepdim, reduce_all;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("keepdim", &keepdim, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("reduce_all", &reduce_all, false));
    return run_one(
        ctx, x->dtype, out,
        [&](Tensor* o) { return m::ReduceIntArrayAxisInferMetaBase(*x, axis, keepdim, reduce_all, o); },
        [&](const KernelContext& c, Tensor* o) { return k::prod(c, *x, axis, keepdim, reduce_all, o); });
  });

  // pd_op.argmax: operands (x, axis); axis is mutable.
  r.add("argmax", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    Scalar axis;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "axis", &axis));
    bool keepdims, flatten;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("keepdims", &keepdims, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("flatten", &flatten, false));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kInt64));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::ArgMinMaxInferMeta(*x, axis, keepdims, flatten, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::argmax(c, *x, axis, keepdims, flatten, dtype, o); });
  });

  // pd_op.topk: operands (x, k); k is mutable. Outputs out, indices.
  r.add("topk", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    Scalar k;
    const Scalar one(1);
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "k", &k, &one));
    int axis;
    bool largest, sorted;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, -1));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("largest", &largest, true));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("sorted", &sorted, true));
    return run_many(
        ctx, x->dtype, 2, out, [&](Tensor** o) { return m::TopKInferMeta(*x, k, axis, largest, sorted, o[0], o[1]); },
        [&](const KernelContext& c, Tensor** o) { return kernels::topk(c, *x, k, axis, largest, sorted, o[0], o[1]); });
  });

  // pd_op.argsort: operand x; axis, descending and stable are attributes. Outputs out, indices.
  r.add("argsort", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int axis;
    bool descending, stable;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, -1));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("descending", &descending, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("stable", &stable, false));
    return run_many(
        ctx, x->dtype, 2, out,
        [&](Tensor** o) { return m::ArgsortInferMeta(*x, axis, descending, stable, o[0], o[1]); },
        [&](const KernelContext& c, Tensor** o) { return k::argsort(c, *x, axis, descending, stable, o[0], o[1]); });
  });

  r.add("log_softmax", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                          std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, -1));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMetaCheckAxis(*x, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::log_softmax(c, *x, axis, o); });
  });
}

}  // namespace

void register_math_ops(OpRegistry& r) {
  register_elementwise(r);
  register_creation(r);
  register_scans(r);
}

}  // namespace kforge::interp
