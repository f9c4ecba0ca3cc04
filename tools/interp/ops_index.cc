// The index, data-movement and normalisation ops of issue 11: bilinear_interp (and issue 34's linear_interp), set_value(_with_tensor), gather,
// index_select, scatter, tile, roll, flip, pad3d, bmm, einsum, group_norm, instance_norm, rms_norm (and its Paddle
// 3.3 name fused_rms_norm_quant), tril, triu, arange.
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

namespace k = kforge::kernels;
namespace m = kforge::meta;

/// The slice attributes set_value and set_value_with_tensor share; starts/ends/steps are mutable operands from
/// position `first`.
struct SliceArgs {
  IntArray starts, ends, steps;
  std::vector<int64_t> axes, decrease_axes, none_axes;
};

Status read_slice_args(const std::vector<RtValue>& in, size_t first, const AttrMap& attrs, SliceArgs* a) {
  KFORGE_RETURN_IF_ERROR(int_array_arg(in, first, attrs, "starts", &a->starts));
  KFORGE_RETURN_IF_ERROR(int_array_arg(in, first + 1, attrs, "ends", &a->ends));
  KFORGE_RETURN_IF_ERROR(int_array_arg(in, first + 2, attrs, "steps", &a->steps));
  KFORGE_RETURN_IF_ERROR(attrs.get_ints("axes", &a->axes));
  KFORGE_RETURN_IF_ERROR(attrs.get_ints("decrease_axes", &a->decrease_axes, {}));
  return attrs.get_ints("none_axes", &a->none_axes, {});
}

Status rms_norm(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                std::vector<RtValue>& out) {
  const Tensor *x, *weight;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  const Tensor* bias = optional_tensor(in, 1);
  const Tensor* residual = optional_tensor(in, 2);
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 3, "norm_weight", &weight));
  const Tensor* norm_bias = optional_tensor(in, 4);
  double epsilon, quant_scale, quant_max, quant_min;
  int begin, round_type;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("epsilon", &epsilon));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("begin_norm_axis", &begin));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("quant_scale", &quant_scale, -1.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("quant_round_type", &round_type, 0));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("quant_max_bound", &quant_max, 0.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("quant_min_bound", &quant_min, 0.0));
  const float eps = static_cast<float>(epsilon), qs = static_cast<float>(quant_scale);
  const float qmax = static_cast<float>(quant_max), qmin = static_cast<float>(quant_min);
  return run_many(
      ctx, x->dtype, 3, out,
      [&](Tensor** o) {
        return m::RmsNormInferMeta(*x, bias, residual, *weight, norm_bias, eps, begin, qs, round_type, qmax, qmin,
                                   o[0], o[1], o[2]);
      },
      [&](const KernelContext& c, Tensor** o) {
        return k::rms_norm(c, *x, bias, residual, *weight, norm_bias, eps, begin, qs, round_type, qmax, qmin, o[0],
                           o[1], o[2]);
      });
}

/// pd_op.bilinear_interp and pd_op.linear_interp: operands (x, out_size, size_tensor: vector, scale_tensor), all but
/// x optional; the same attributes.
using InterpolateKernel = Status (*)(const KernelContext&, const Tensor&, const Tensor*, kforge::TensorList,
                                     const Tensor*, const std::string&, int, int, int, const std::vector<float>&,
                                     const std::string&, bool, int, Tensor*);
OpFn interpolate(InterpolateKernel kernel) {
  return [kernel](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
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
          return kernel(c, *x, out_size, size_list, scale_tensor, data_format, out_d, out_h, out_w, scale,
                        interp_method, align_corners, align_mode, o);
        });
  };
}

}  // namespace

void register_index_nn_ops(OpRegistry& r) {
  r.add("bilinear_interp", interpolate(k::bilinear_interp));
  r.add("bicubic_interp", interpolate(k::bicubic_interp));
  r.add("linear_interp", interpolate(k::linear_interp));  // issue 34

  // pd_op.set_value_: operands (x, starts, ends, steps).
  r.add("set_value", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    SliceArgs a;
    KFORGE_RETURN_IF_ERROR(read_slice_args(in, 1, attrs, &a));
    std::vector<int64_t> shape;
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("shape", &shape));
    std::vector<kforge::Scalar> values;
    KFORGE_RETURN_IF_ERROR(attrs.get_scalars("values", &values));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::SetValueInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) {
          return k::set_value(c, *x, a.starts, a.ends, a.steps, a.axes, a.decrease_axes, a.none_axes, shape, values,
                              o);
        });
  });

  // pd_op.set_value_with_tensor_: operands (x, values, starts, ends, steps).
  r.add("set_value_with_tensor", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                                    std::vector<RtValue>& out) -> Status {
    const Tensor *x, *values;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "values", &values));
    SliceArgs a;
    KFORGE_RETURN_IF_ERROR(read_slice_args(in, 2, attrs, &a));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::SetValueInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) {
          return k::set_value_with_tensor(c, *x, *values, a.starts, a.ends, a.steps, a.axes, a.decrease_axes,
                                          a.none_axes, o);
        });
  });

  // pd_op.gather: operands (x, index, axis); axis is mutable.
  r.add("gather", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    const Tensor *x, *index;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "index", &index));
    kforge::Scalar axis;
    const kforge::Scalar zero(int64_t{0});
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 2, attrs, "axis", &axis, &zero));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::GatherInferMeta(*x, *index, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::gather(c, *x, *index, axis, o); });
  });

  r.add("index_select", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                           std::vector<RtValue>& out) -> Status {
    const Tensor *x, *index;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "index", &index));
    int axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, 0));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::IndexSelectInferMeta(*x, *index, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::index_select(c, *x, *index, axis, o); });
  });

  // pd_op.scatter / scatter_: operands (x, index, updates).
  r.add("scatter", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor *x, *index, *updates;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "index", &index));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "updates", &updates));
    bool overwrite;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("overwrite", &overwrite, true));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::ScatterInferMeta(*x, *index, *updates, overwrite, o); },
        [&](const KernelContext& c, Tensor* o) { return k::scatter(c, *x, *index, *updates, overwrite, o); });
  });

  // pd_op.tile: operands (x, repeat_times); repeat_times is mutable.
  r.add("tile", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray repeat_times;
    const std::vector<int64_t> none;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "repeat_times", &repeat_times, &none));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::TileInferMeta(*x, repeat_times, o); },
        [&](const KernelContext& c, Tensor* o) { return k::tile(c, *x, repeat_times, o); });
  });

  r.add("repeat_interleave", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                                std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int repeats, axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("repeats", &repeats));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, 0));
    int64_t output_size;
    KFORGE_RETURN_IF_ERROR(attrs.get_int("output_size", &output_size, -1));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::RepeatInterleaveInferMeta(*x, repeats, axis, output_size, o); },
        [&](const KernelContext& c, Tensor* o) { return k::repeat_interleave(c, *x, repeats, axis, output_size, o); });
  });

  // pd_op.roll: operands (x, shifts); shifts is mutable.
  r.add("roll", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray shifts;
    const std::vector<int64_t> none;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "shifts", &shifts, &none));
    std::vector<int64_t> axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("axis", &axis, {}));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::RollInferMeta(*x, shifts, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::roll(c, *x, shifts, axis, o); });
  });

  r.add("flip", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    std::vector<int> axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("axis", &axis));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::FlipInferMeta(*x, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::flip(c, *x, axis, o); });
  });

  // pd_op.pad3d: operands (x, paddings); paddings is mutable.
  r.add("pad3d", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                    std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray paddings;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "paddings", &paddings));
    std::string mode, data_format;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("mode", &mode, "constant"));
    KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &data_format, "NCDHW"));
    double value;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("pad_value", &value, 0.0));
    const float pad_value = static_cast<float>(value);
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::Pad3dInferMeta(*x, paddings, mode, pad_value, data_format, o); },
        [&](const KernelContext& c, Tensor* o) { return k::pad3d(c, *x, paddings, mode, pad_value, data_format, o); });
  });

  r.add("bmm", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                  std::vector<RtValue>& out) -> Status {
    const Tensor *x, *y;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "y", &y));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::BmmInferMeta(*x, *y, o); },
        [&](const KernelContext& c, Tensor* o) { return k::bmm(c, *x, *y, o); });
  });

  // pd_op.einsum: operand x is a vector; outputs out, inner_cache (vector), xshape (vector).
  r.add("einsum", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    std::vector<const Tensor*> xs = input_list(in, 0);
    if (xs.empty()) return Status::Error("einsum: no operands");
    const kforge::TensorList x{xs.data(), xs.size()};
    std::string equation;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("equation", &equation));
    Tensor result;
    std::vector<Tensor> cache(xs.size()), shapes(xs.size());
    std::vector<Tensor*> cache_ptrs, shape_ptrs;
    for (size_t i = 0; i < xs.size(); ++i) {
      cache_ptrs.push_back(&cache[i]);
      shape_ptrs.push_back(&shapes[i]);
    }
    const kforge::MutableTensorList cache_list{cache_ptrs.data(), cache_ptrs.size()};
    const kforge::MutableTensorList shape_list{shape_ptrs.data(), shape_ptrs.size()};
    KFORGE_RETURN_IF_ERROR(m::EinsumRawInferMeta(x, equation, &result, cache_list, shape_list));
    KFORGE_RETURN_IF_ERROR(allocate(&result));
    for (size_t i = 0; i < xs.size(); ++i) {
      KFORGE_RETURN_IF_ERROR(allocate(&cache[i]));
      KFORGE_RETURN_IF_ERROR(allocate(&shapes[i]));
    }
    KFORGE_RETURN_IF_ERROR(k::einsum(context_for(ctx, xs[0]->dtype), x, equation, &result, cache_list, shape_list));
    out.clear();
    out.push_back(RtValue::of(std::move(result)));
    out.push_back(RtValue::of_list(std::move(cache)));
    out.push_back(RtValue::of_list(std::move(shapes)));
    return Status::OK();
  });

  // pd_op.group_norm: operands (x, scale, bias), scale and bias optional; outputs y, mean, variance.
  r.add("group_norm", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                         std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* scale = optional_tensor(in, 1);
    const Tensor* bias = optional_tensor(in, 2);
    double epsilon;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("epsilon", &epsilon, 1e-5));
    int groups;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("groups", &groups, -1));
    std::string data_format;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &data_format, "NCHW"));
    const float eps = static_cast<float>(epsilon);
    return run_many(
        ctx, x->dtype, 3, out,
        [&](Tensor** o) {
          return m::GroupNormInferMeta(*x, scale, bias, eps, groups, data_format, o[0], o[1], o[2]);
        },
        [&](const KernelContext& c, Tensor** o) {
          return k::group_norm(c, *x, scale, bias, eps, groups, data_format, o[0], o[1], o[2]);
        });
  });

  // pd_op.instance_norm: operands (x, scale, bias), scale and bias optional; outputs y, saved_mean, saved_variance.
  r.add("instance_norm", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                            std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* scale = optional_tensor(in, 1);
    const Tensor* bias = optional_tensor(in, 2);
    double epsilon;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("epsilon", &epsilon, 1e-5));
    const float eps = static_cast<float>(epsilon);
    return run_many(
        ctx, x->dtype, 3, out, [&](Tensor** o) { return m::InstanceNormInferMeta(*x, scale, bias, eps, o[0], o[1], o[2]); },
        [&](const KernelContext& c, Tensor** o) {
          return k::instance_norm(c, *x, scale, bias, eps, o[0], o[1], o[2]);
        });
  });

  // pd_op.rms_norm (Paddle 3.0) and pd_op.fused_rms_norm_quant (its Paddle 3.3 name): operands (x, bias, residual,
  // norm_weight, norm_bias); outputs out, residual_out, inv_var.
  r.add("rms_norm", rms_norm);
  r.add("fused_rms_norm_quant", rms_norm);

  for (const char* name : {"tril", "triu"}) {
    const bool lower = std::string(name) == "tril";
    r.add(name, [lower](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
      const Tensor* x;
      KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
      int diagonal;
      KFORGE_RETURN_IF_ERROR(attrs.get_int32("diagonal", &diagonal, 0));
      return run_one(
          ctx, x->dtype, out,
          [&](Tensor* o) { return lower ? m::TrilInferMeta(*x, diagonal, o) : m::TriuInferMeta(*x, diagonal, o); },
          [&](const KernelContext& c, Tensor* o) {
            return lower ? k::tril(c, *x, diagonal, o) : k::triu(c, *x, diagonal, o);
          });
    });
  }
}

}  // namespace kforge::interp
