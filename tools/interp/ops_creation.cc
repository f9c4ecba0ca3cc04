// Creation and copy ops: full, full_like, full_int_array, assign, assign_value_, shape, shape64, numel,
// dropout.
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::KernelContext;
using kforge::Status;
using kforge::Tensor;
using detail::run_many;
using detail::run_one;

void register_creation_ops(OpRegistry& r) {
  namespace k = kforge::kernels;
  namespace m = kforge::meta;

  r.add("full", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                   std::vector<RtValue>& out) -> Status {
    kforge::IntArray shape;
    KFORGE_RETURN_IF_ERROR(int_array_arg(in, 0, attrs, "shape", &shape));
    kforge::Scalar value;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "value", &value));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kFloat32));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::CreateInferMeta(shape, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::full(c, shape, value, dtype, o); });
  });

  // pd_op.full_like: operands (x, value); value is mutable.
  r.add("full_like", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                        std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    kforge::Scalar value;
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 1, attrs, "value", &value));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kUndefined));
    return run_one(
        ctx, dtype == DataType::kUndefined ? x->dtype : dtype, out,
        [&](Tensor* o) { return m::CreateLikeInferMeta(*x, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::full_like(c, *x, value, dtype, o); });
  });

  r.add("full_int_array", [](const KernelContext& ctx, const std::vector<RtValue>&, const AttrMap& attrs,
                             std::vector<RtValue>& out) -> Status {
    std::vector<int64_t> value;
    KFORGE_RETURN_IF_ERROR(attrs.get_ints("value", &value));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kFloat32));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::CreateVecShapeInferMeta(value, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::full_int_array(c, value, dtype, o); });
  });

  r.add("assign", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                     std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::UnchangedInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::assign_raw(c, *x, o); });
  });

  // pd_op.assign_value_: operand `output` (the tensor it overwrites, whose contents do not matter).
  r.add("assign_value_", [](const KernelContext& ctx, const std::vector<RtValue>&, const AttrMap& attrs,
                            std::vector<RtValue>& out) -> Status {
    std::vector<int> shape;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32s("shape", &shape));
    DataType dtype;
    KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype));
    std::vector<kforge::Scalar> values;
    KFORGE_RETURN_IF_ERROR(attrs.get_scalars("values", &values));
    return run_one(
        ctx, dtype, out, [&](Tensor* o) { return m::AssignValueInferMeta(shape, dtype, o); },
        [&](const KernelContext& c, Tensor* o) { return k::assign_value(c, shape, dtype, values, o); });
  });

  r.add("shape", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                    std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &x));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::ShapeInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::shape(c, *x, o); });
  });
  r.add("shape64", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &x));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::Shape64InferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::shape64(c, *x, o); });
  });
  r.add("numel", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                    std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    return run_one(
        ctx, DataType::kUndefined, out, [&](Tensor* o) { return m::NumelInferMeta(*x, o); },
        [&](const KernelContext& c, Tensor* o) { return k::numel(c, *x, o); });
  });

  // pd_op.dropout: operands (x, seed_tensor, p); p is mutable. Outputs out, mask.
  r.add("dropout", [](const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                      std::vector<RtValue>& out) -> Status {
    const Tensor* x;
    KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
    const Tensor* seed_tensor = optional_tensor(in, 1);
    kforge::Scalar p;
    const kforge::Scalar half(0.5);
    KFORGE_RETURN_IF_ERROR(scalar_arg(in, 2, attrs, "p", &p, &half));
    bool is_test, fix_seed;
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("is_test", &is_test, false));
    KFORGE_RETURN_IF_ERROR(attrs.get_bool("fix_seed", &fix_seed, false));
    std::string mode;
    KFORGE_RETURN_IF_ERROR(attrs.get_string("mode", &mode, "upscale_in_train"));
    int seed;
    KFORGE_RETURN_IF_ERROR(attrs.get_int32("seed", &seed, 0));
    return run_many(
        ctx, x->dtype, 2, out,
        [&](Tensor** o) { return m::DropoutInferMeta(*x, seed_tensor, p, is_test, mode, seed, fix_seed, o[0], o[1]); },
        [&](const KernelContext& c, Tensor** o) {
          return k::dropout(c, *x, seed_tensor, p, is_test, mode, seed, fix_seed, o[0], o[1]);
        });
  });
}

}  // namespace kforge::interp
