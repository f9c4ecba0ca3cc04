// Shape manipulation ops: reshape, flatten, squeeze, unsqueeze, transpose, expand, concat, split,
// split_with_num, stack, slice, strided_slice.
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::IntArray;
using kforge::KernelContext;
using kforge::Status;
using kforge::Tensor;
using detail::run_one;

namespace {

/// Runs an op with one `Tensor[]` output of `n` tensors, stored as one vector value.
template <typename Meta, typename Kernel>
Status run_list(const KernelContext& ctx, DataType kernel_dtype, size_t n, std::vector<RtValue>& outputs, Meta&& meta,
                Kernel&& kernel) {
  std::vector<Tensor> outs(n);
  std::vector<Tensor*> ptrs;
  for (Tensor& t : outs) ptrs.push_back(&t);
  const kforge::MutableTensorList list{ptrs.data(), ptrs.size()};
  KFORGE_RETURN_IF_ERROR(meta(list));
  for (Tensor& t : outs) KFORGE_RETURN_IF_ERROR(allocate(&t));
  KFORGE_RETURN_IF_ERROR(kernel(context_for(ctx, kernel_dtype), list));
  outputs.clear();
  outputs.push_back(RtValue::of_list(std::move(outs)));
  return Status::OK();
}

/// Ops of the form (Tensor x, IntArray <name>) with the IntArray mutable at operand 1.
using IntArrayMeta = Status (*)(const Tensor&, const IntArray&, Tensor*);
using IntArrayKernel = Status (*)(const KernelContext&, const Tensor&, const IntArray&, Tensor*);
OpFn with_int_array(const char* attr, IntArrayMeta meta, IntArrayKernel kernel, bool data_type_x,
                    bool has_default) {
  return [=](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
             std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray values;
    const std::vector<int64_t> empty;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, attr, &values, has_default ? &empty : nullptr));
    return run_one(
        ctx, data_type_x ? x->dtype : DataType::kUndefined, out, [&](Tensor* o) { return meta(*x, values, o); },
        [&](const KernelContext& c, Tensor* o) { return kernel(c, *x, values, o); });
  };
}

}  // namespace

void register_manipulation_ops(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;

  r.add("reshape", with_int_array("shape", m::ReshapeInferMeta, k::reshape, false, false));
  r.add("squeeze", with_int_array("axis", m::SqueezeInferMeta, k::squeeze, true, true));
  r.add("unsqueeze", with_int_array("axis", m::UnsqueezeInferMeta, k::unsqueeze, true, true));
  r.add("expand", with_int_array("shape", m::ExpandInferMeta, k::expand, true, true));

  r.add("flatten", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int start_axis, stop_axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("start_axis", &start_axis, 1));
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("stop_axis", &stop_axis, 1));
    return run_one(
        ctx, x->dtype, out, [&](Tensor* o) { return m::FlattenInferMeta(*x, start_axis, stop_axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::flatten(c, *x, start_axis, stop_axis, o); });
  });

  r.add("transpose", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    std::vector<int> perm;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("perm", &perm));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::TransposeInferMeta(*x, perm, o); },
        [&](const KernelContext& c, Tensor* o) { return k::transpose(c, *x, perm, o); });
  });

  // pd_op.concat: operands (x: vector, axis); axis is mutable.
  r.add("concat", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                     std::vector<RtValue>& out) -> Status {
    std::vector<const Tensor*> xs = input_list(in, 0);
    if (xs.empty()) return Status::Error("concat: input 'x' is empty");
    kforge::Scalar axis;
    const kforge::Scalar zero(int64_t{0});
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "axis", &axis, &zero));
    const kforge::TensorList list{xs.data(), xs.size()};
    return run_one(
        ctx, xs[0]->dtype, out, [&](Tensor* o) { return m::ConcatInferMeta(list, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::concat(c, list, axis, o); });
  });

  // pd_op.split: operands (x, sections, axis), both mutable.
  r.add("split", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                    std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray sections;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "sections", &sections));
    kforge::Scalar axis;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 2, attrs, "axis", &axis));
    return run_list(
        ctx, DataType::kUndefined, sections.size(), out,
        [&](kforge::MutableTensorList o) { return m::SplitInferMeta(*x, sections, axis, o); },
        [&](const KernelContext& c, kforge::MutableTensorList o) { return k::split(c, *x, sections, axis, o); });
  });

  // pd_op.split_with_num: operands (x, axis); axis is mutable.
  r.add("split_with_num", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                             std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    int num;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("num", &num));
    if (num <= 0) return Status::Error("split_with_num: num must be positive, got ", num);
    kforge::Scalar axis;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "axis", &axis));
    return run_list(
        ctx, DataType::kUndefined, static_cast<size_t>(num), out,
        [&](kforge::MutableTensorList o) { return m::SplitWithNumInferMeta(*x, num, axis, o); },
        [&](const KernelContext& c, kforge::MutableTensorList o) { return k::split_with_num(c, *x, num, axis, o); });
  });

  r.add("stack", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                    std::vector<RtValue>& out) -> Status {
    std::vector<const Tensor*> xs = input_list(in, 0);
    if (xs.empty()) return Status::Error("stack: input 'x' is empty");
    int axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("axis", &axis, 0));
    const kforge::TensorList list{xs.data(), xs.size()};
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::StackInferMeta(list, axis, o); },
        [&](const KernelContext& c, Tensor* o) { return k::stack(c, list, axis, o); });
  });

  // pd_op.slice: operands (input, starts, ends), both mutable.
  r.add("slice", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                    std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &x));
    IntArray starts, ends;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "starts", &starts));
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 2, attrs, "ends", &ends));
    std::vector<int64_t> axes, infer_flags, decrease_axis;
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("axes", &axes));
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("infer_flags", &infer_flags, {}));
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("decrease_axis", &decrease_axis, {}));
    return run_one(
        ctx, DataType::kUndefined, out,
        [&](Tensor* o) { return m::SliceRawInferMeta(*x, axes, starts, ends, infer_flags, decrease_axis, o); },
        [&](const KernelContext& c, Tensor* o) {
          return k::slice(c, *x, axes, starts, ends, infer_flags, decrease_axis, o);
        });
  });

  // pd_op.strided_slice: operands (x, starts, ends, strides), all mutable.
  r.add("strided_slice", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                            std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    IntArray starts, ends, strides;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 1, attrs, "starts", &starts));
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 2, attrs, "ends", &ends));
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 3, attrs, "strides", &strides));
    std::vector<int> axes;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("axes", &axes));
    return run_one(
        ctx, DataType::kUndefined, out,
        [&](Tensor* o) { return m::StridedSliceInferMeta(*x, axes, starts, ends, strides, o); },
        [&](const KernelContext& c, Tensor* o) { return k::strided_slice(c, *x, axes, starts, ends, strides, o); });
  });
}

}  // namespace kforge::interp
