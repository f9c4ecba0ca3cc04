// Internal to passes/: what the checks of an index-mapped call (IndexChecks, cuda_plan_index_checks.h) and of a
// computing call (ComputeChecks, cuda_plan_compute_checks.h) share: the first reason kept, the call's constant
// attributes read, its dtypes checked into the form (`Form::dtype`, `Form::index_dtype`), a buffer not written
// while read.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "passes/cuda_plan_index.h"

namespace kforge::passes::cuda_plan_internal {

/// Whether the index-mapped kernels move elements of `dtype`: a C++ scalar type, or the unsigned type of the same
/// width (float16 and bfloat16 move as their bits).
bool movable(ir::DataType dtype);

// fail() keeps the first reason; a missing constant attribute replaces it (as the kernels' builders read them).
template <typename Form>
class CallChecks {
 protected:
  CallChecks(const LoweredProgram& p, const KernelCall& call, std::string* why) : p_(p), call_(call), why_(why) {}

  bool fail(std::string reason) {
    if (why_->empty()) *why_ = std::move(reason);
    return false;
  }
  const LoweredValue& value(uint32_t v) const { return p_.values[v]; }
  uint32_t output(size_t i) const {
    return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
  }
  /// The first output's single value.
  uint32_t out_value() const { return output(0); }
  const AttrConstant* constant(std::string_view name) {
    const KernelArg* a = call_.arg(name);
    if (a != nullptr && a->kind == ArgKind::kConstant) return &a->constant;
    *why_ = fmt::format("its {} is not a constant known at generation time", name);
    return nullptr;
  }
  std::optional<int64_t> constant_int(std::string_view name) {
    const AttrConstant* c = constant(name);
    return c != nullptr ? std::optional<int64_t>(cuda_attr_int(*c)) : std::nullopt;
  }
  std::optional<double> constant_float(std::string_view name) {
    const AttrConstant* c = constant(name);
    return c != nullptr ? std::optional<double>(cuda_attr_float(*c)) : std::nullopt;
  }
  // x and out have one dtype (float32 / float64 only when `arithmetic`) that the kernels move; it becomes the
  // form's.
  bool same_type(uint32_t x, uint32_t out, bool arithmetic) {
    if (x == kNone || out == kNone) return fail("it needs an input and an output");
    if (value(x).dtype != value(out).dtype) {
      return fail(fmt::format("its input is {} and its output {}", ir::dtype_name(value(x).dtype),
                              ir::dtype_name(value(out).dtype)));
    }
    const ir::DataType d = value(x).dtype;
    if (arithmetic && d != ir::DataType::kFloat32 && d != ir::DataType::kFloat64) {
      return fail(fmt::format("it computes on {} values; the CUDA kernel computes float32 and float64 only",
                              ir::dtype_name(d)));
    }
    if (!movable(d)) return fail(fmt::format("dtype {} has no CUDA kernel", ir::dtype_name(d)));
    form_.dtype = d;
    return true;
  }
  // An index tensor: int32 or int64; it becomes the form's index_dtype.
  bool index_type(uint32_t index) {
    const ir::DataType d = value(index).dtype;
    if (d != ir::DataType::kInt32 && d != ir::DataType::kInt64) {
      return fail(fmt::format("its index is {} (int32 or int64 expected)", ir::dtype_name(d)));
    }
    form_.index_dtype = d;
    return true;
  }
  // A kernel that reads its input more than once (or moves data) cannot write the buffer it reads.
  bool own_buffer(uint32_t in, uint32_t out) {
    if (value(in).buffer == value(out).buffer) {
      return fail("its output shares its input's buffer (in place), which an index-mapped kernel cannot write");
    }
    return true;
  }

  const LoweredProgram& p_;
  const KernelCall& call_;
  std::string* why_;
  Form form_;
};

}  // namespace kforge::passes::cuda_plan_internal
