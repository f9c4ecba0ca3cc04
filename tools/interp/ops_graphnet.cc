// The ops GraphNet's Paddle models use that issue 34 adds: share_data_, gather_nd, index_put, prelu, meshgrid,
// broadcast_tensors, rnn, take_along_axis, diag, expand_as, pad, any, all, p_norm, mean_all, bce_loss,
// sigmoid_cross_entropy_with_logits, cross_entropy_with_softmax and grid_sample (min is beside max in ops_nn.cc,
// linear_interp beside bilinear_interp in ops_index.cc). Operands in PIR order: tensor inputs, then mutable attributes
// (op_compat.yaml).
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::KernelContext;
using kforge::Status;
using kforge::Tensor;
using detail::run_many;
using detail::run_one;

namespace {

namespace k = kforge::kernels;
namespace m = kforge::meta;

/// any / all: (Tensor x, int64_t[] axis, bool keepdim), a bool result.
using LogicReduce = Status (*)(const KernelContext&, const Tensor&, const std::vector<int64_t>&, bool, Tensor*);
OpFn logic_reduce(LogicReduce kernel) {
  return [kernel](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    std::vector<int64_t> axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("axis", &axis, {}));
    bool keepdim;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("keepdim", &keepdim, false));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::ReduceInferMeta(*x, axis, keepdim, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, axis, keepdim, o); });
  };
}

Status meshgrid(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&, std::vector<RtValue>& out) {
  const std::vector<const Tensor*> inputs = input_list(in, 0);
  if (inputs.empty()) return Status::Error("meshgrid: no inputs");
  const kforge::TensorList list{inputs.data(), inputs.size()};
  std::vector<Tensor> outs(inputs.size());
  std::vector<Tensor*> ptrs;
  for (Tensor& t : outs) ptrs.push_back(&t);
  const kforge::MutableTensorList out_list{ptrs.data(), ptrs.size()};
  KFORGE_RETURN_IF_ERROR(m::MeshgridInferMeta(list, out_list));
  for (Tensor& t : outs) KFORGE_RETURN_IF_ERROR(allocate(&t));
  KFORGE_RETURN_IF_ERROR(k::meshgrid(context_for(ctx, inputs[0]->dtype), list, out_list));
  out.clear();
  out.push_back(RtValue::of_list(std::move(outs)));
  return Status::OK();
}

Status broadcast_tensors(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                         std::vector<RtValue>& out) {
  const std::vector<const Tensor*> inputs = input_list(in, 0);
  if (inputs.empty()) return Status::Error("broadcast_tensors: no inputs");
  const kforge::TensorList list{inputs.data(), inputs.size()};
  std::vector<Tensor> outs(inputs.size());
  std::vector<Tensor*> ptrs;
  for (Tensor& t : outs) ptrs.push_back(&t);
  const kforge::MutableTensorList out_list{ptrs.data(), ptrs.size()};
  KFORGE_RETURN_IF_ERROR(m::BroadcastTensorsInferMeta(list, out_list));
  for (Tensor& t : outs) KFORGE_RETURN_IF_ERROR(allocate(&t));
  KFORGE_RETURN_IF_ERROR(k::broadcast_tensors(context_for(ctx, inputs[0]->dtype), list, out_list));
  out.clear();
  out.push_back(RtValue::of_list(std::move(outs)));
  return Status::OK();
}

/// rnn: operands x, pre_state (vector), weight_list (vector), sequence_length (optional), dropout_state_in (the
/// training kernel's); results out, dropout_state_out (empty at inference), state (vector), reserve.
Status rnn(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs, std::vector<RtValue>& out) {
  const Tensor* x;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  const std::vector<const Tensor*> pre = input_list(in, 1), weights = input_list(in, 2);
  const Tensor* sequence_length = optional_tensor(in, 3);
  const Tensor* dropout_state_in;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 4, "dropout_state_in", &dropout_state_in));
  double dropout_prob;
  bool is_bidirec, is_test;
  int input_size, hidden_size, num_layers, seed;
  std::string mode;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("dropout_prob", &dropout_prob, 0.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("is_bidirec", &is_bidirec, false));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("input_size", &input_size, 10));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("hidden_size", &hidden_size, 100));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("num_layers", &num_layers, 1));
  KFORGE_RETURN_IF_ERROR(attrs.get_string("mode", &mode, "RNN_TANH"));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("seed", &seed, 0));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("is_test", &is_test, false));
  const kforge::TensorList pre_list{pre.data(), pre.size()}, weight_list{weights.data(), weights.size()};
  Tensor result, dropout_state, reserve;
  std::vector<Tensor> states(pre.size());
  std::vector<Tensor*> ptrs;
  for (Tensor& t : states) ptrs.push_back(&t);
  const kforge::MutableTensorList state_list{ptrs.data(), ptrs.size()};
  const auto p = static_cast<float>(dropout_prob);
  KFORGE_RETURN_IF_ERROR(m::RnnInferMeta(*x, pre_list, weight_list, sequence_length, *dropout_state_in, p, is_bidirec,
                                         input_size, hidden_size, num_layers, mode, seed, is_test, &result,
                                         &dropout_state, state_list, &reserve));
  for (Tensor* t : {&result, &dropout_state, &reserve}) KFORGE_RETURN_IF_ERROR(allocate(t));
  for (Tensor& t : states) KFORGE_RETURN_IF_ERROR(allocate(&t));
  KFORGE_RETURN_IF_ERROR(k::rnn(context_for(ctx, x->dtype), *x, pre_list, weight_list, sequence_length,
                                *dropout_state_in, p, is_bidirec, input_size, hidden_size, num_layers, mode, seed,
                                is_test, &result, &dropout_state, state_list, &reserve));
  out.clear();
  out.push_back(RtValue::of(std::move(result)));
  out.push_back(RtValue::of(std::move(dropout_state)));
  out.push_back(RtValue::of_list(std::move(states)));
  out.push_back(RtValue::of(std::move(reserve)));
  return Status::OK();
}

Status p_norm(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
              std::vector<RtValue>& out) {
  const Tensor* x;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  double porder, epsilon;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("porder", &porder, 2.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("epsilon", &epsilon, 1e-12));
  int axis;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, -1));
  bool keepdim, asvector;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("keepdim", &keepdim, false));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("asvector", &asvector, false));
  const float p = static_cast<float>(porder), eps = static_cast<float>(epsilon);
  return run_one(
      ctx, x->dtype, out, [&](Tensor* o) { return m::PNormInferMeta(*x, p, axis, eps, keepdim, asvector, o); },
      [&](const KernelContext& c, Tensor* o) { return k::p_norm(c, *x, p, axis, eps, keepdim, asvector, o); });
}

Status grid_sample(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) {
  const Tensor *x, *grid;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "grid", &grid));
  std::string mode, padding_mode;
  KFORGE_RETURN_IF_ERROR(attrs.get_string("mode", &mode, "bilinear"));
  KFORGE_RETURN_IF_ERROR(attrs.get_string("padding_mode", &padding_mode, "zeros"));
  bool align_corners;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("align_corners", &align_corners, true));
  return run_one(
      ctx, x->dtype, out, [&](Tensor* o) { return m::GridSampleBaseInferMeta(*x, *grid, o); },
      [&](const KernelContext& c, Tensor* o) {
        return k::grid_sample(c, *x, *grid, mode, padding_mode, align_corners, o);
      });
}

Status sigmoid_ce(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) {
  const Tensor *x, *label;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "label", &label));
  const Tensor* pos_weight = optional_tensor(in, 2);
  bool normalize;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("normalize", &normalize, false));
  int ignore_index;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("ignore_index", &ignore_index, -100));
  return run_one(
      ctx, x->dtype, out,
      [&](Tensor* o) {
        return m::SigmoidCrossEntropyWithLogitsInferMeta(*x, *label, pos_weight, normalize, ignore_index, o);
      },
      [&](const KernelContext& c, Tensor* o) {
        return k::sigmoid_cross_entropy_with_logits(c, *x, *label, pos_weight, normalize, ignore_index, o);
      });
}

Status cross_entropy(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) {
  const Tensor *input, *label;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &input));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "label", &label));
  bool soft_label, use_softmax, numeric_stable_mode;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("soft_label", &soft_label, false));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("use_softmax", &use_softmax, true));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("numeric_stable_mode", &numeric_stable_mode, true));
  int ignore_index, axis;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("ignore_index", &ignore_index, -100));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, -1));
  return run_many(
      ctx, input->dtype, 2, out,
      [&](Tensor** o) {
        return m::CrossEntropyWithSoftmaxInferMeta(*input, *label, soft_label, use_softmax, numeric_stable_mode,
                                                   ignore_index, axis, o[0], o[1]);
      },
      [&](const KernelContext& c, Tensor** o) {
        return k::cross_entropy_with_softmax(c, *input, *label, soft_label, use_softmax, numeric_stable_mode,
                                             ignore_index, axis, o[0], o[1]);
      });
}

}  // namespace

void register_graphnet_ops(OpRegistry& r) {
  r.add("share_data", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                         std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::share_data(c, *x, o); });
  });
  r.add("gather_nd", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                        std::vector<RtValue>& out) -> Status {
    const Tensor *x, *index;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "index", &index));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::GatherNdInferMeta(*x, *index, o); },
        [&](const KernelContext& c, Tensor* o) { return k::gather_nd(c, *x, *index, o); });
  });
  // pd_op.index_put / index_put_: operands (x, indices (a list), value).
  r.add("index_put", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
    const Tensor *x, *value;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const std::vector<const Tensor*> indices = input_list(in, 1);
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "value", &value));
    bool accumulate;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("accumulate", &accumulate, false));
    const kforge::TensorList list{indices.data(), indices.size()};
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::IndexPutInferMeta(*x, list, *value, accumulate, o); },
        [&](const KernelContext& c, Tensor* o) { return k::index_put(c, *x, list, *value, accumulate, o); });
  });
  // pd_op.prelu: operands (x, alpha); data_format and mode are attributes.
  r.add("prelu", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                    std::vector<RtValue>& out) -> Status {
    const Tensor *x, *alpha;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "alpha", &alpha));
    std::string data_format, mode;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("data_format", &data_format, "NCHW"));
    KFORGE_RETURN_IF_ERROR(attrs.get_string("mode", &mode, "all"));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::PReluInferMeta(*x, *alpha, data_format, mode, o); },
        [&](const KernelContext& c, Tensor* o) { return k::prelu(c, *x, *alpha, data_format, mode, o); });
  });
  r.add("meshgrid", meshgrid);
  r.add("broadcast_tensors", broadcast_tensors);
  r.add("rnn", rnn);
  r.add("take_along_axis", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                              std::vector<RtValue>& out) -> Status {
    const Tensor *arr, *indices;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "arr", &arr));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "indices", &indices));
    int axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis));
    return run_one(
        ctx, arr->dtype, out, [&](Tensor* o) { return m::TakeAlongAxisInferMeta(*arr, *indices, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::take_along_axis(c, *arr, *indices, axis, o); });
  });
  r.add("diag", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int offset;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("offset", &offset, 0));
    double padding_value;
    KFORGE_RETURN_IF_ERROR(attrs.get_float("padding_value", &padding_value, 0.0));
    const float pv = static_cast<float>(padding_value);
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::DiagInferMeta(*x, offset, pv, o); },
        [&](const KernelContext& c, Tensor* o) { return k::diag(c, *x, offset, pv, o); });
  });
  r.add("expand_as", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* y = optional_tensor(in, 1);
    std::vector<int> target_shape;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("target_shape", &target_shape, {}));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::ExpandAsInferMeta(*x, y, target_shape, o); },
        [&](const KernelContext& c, Tensor* o) { return k::expand_as(c, *x, y, target_shape, o); });
  });
  // pd_op.pad: operands (x, pad_value); pad_value is mutable.
  r.add("pad", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                  std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    std::vector<int> paddings;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("paddings", &paddings));
    kforge::Scalar pad_value;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "pad_value", &pad_value));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::PadInferMeta(*x, paddings, pad_value, o); },
        [&](const KernelContext& c, Tensor* o) { return k::pad(c, *x, paddings, pad_value, o); });
  });
  r.add("any", logic_reduce(k::any));
  r.add("all", logic_reduce(k::all));
  r.add("p_norm", p_norm);
  r.add("mean_all", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                       std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::MeanAllInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::mean_all(c, *x, o); });
  });
  r.add("bce_loss", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                       std::vector<RtValue>& out) -> Status {
    const Tensor *input, *label;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &input));
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "label", &label));
    return run_one(
        ctx, input->dtype, out, [&](Tensor* o) { return m::BCELossInferMeta(*input, *label, o); },
        [&](const KernelContext& c, Tensor* o) { return k::bce_loss(c, *input, *label, o); });
  });
  r.add("sigmoid_cross_entropy_with_logits", sigmoid_ce);
  r.add("cross_entropy_with_softmax", cross_entropy);
  r.add("grid_sample", grid_sample);
}

}  // namespace kforge::interp
