// Internal to passes/: the checks of a computing call (cuda_plan_compute.h: plan_cuda_compute), shared by the files
// that define its members: cuda_plan_compute.cpp (the per-element ops, the binary family) and cuda_plan_reduce.cpp
// (reductions, softmax, cumsum, the norms, einsum). Each reads the call as its kernel in codegen/ will, and fails
// for the first problem.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "passes/cuda_plan_compute.h"
#include "passes/cuda_plan_index.h"

namespace kforge::passes::cuda_plan_internal {

// The checks of one call. fail() keeps the first reason; a missing constant attribute replaces it (as the kernels'
// builders read them).
class ComputeChecks {
 public:
  ComputeChecks(const LoweredProgram& p, const KernelCall& call, std::string* why) : p_(p), call_(call), why_(why) {}

  /// The form, or nullopt with the reason in `why`.
  std::optional<CudaComputeForm> build();

 private:
  bool fail(std::string reason) {
    if (why_->empty()) *why_ = std::move(reason);
    return false;
  }
  const LoweredValue& value(uint32_t v) const { return p_.values[v]; }
  uint32_t output(size_t i) const {
    return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
  }
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
  bool same_type(uint32_t x, uint32_t out, bool arithmetic);
  // An index tensor: int32 or int64; it becomes the form's index_dtype.
  bool index_type(uint32_t index);
  // A kernel that reads its input more than once cannot write the buffer it reads.
  bool own_buffer(uint32_t in, uint32_t out) {
    if (value(in).buffer == value(out).buffer) {
      return fail("its output shares its input's buffer (in place), which an index-mapped kernel cannot write");
    }
    return true;
  }
  // Whether anything reads value v (a call's argument or a program output).
  bool is_read(uint32_t v) const;
  // bool, integers, float32, float64: the types these kernels compute on (not the 16-bit floats).
  static bool computable(ir::DataType d) {
    return d != ir::DataType::kFloat16 && d != ir::DataType::kBFloat16 && d != ir::DataType::kUInt16 &&
           d != ir::DataType::kUInt32 && d != ir::DataType::kUInt64 && movable(d);
  }
  static bool movable(ir::DataType d);

  // cuda_plan_compute.cpp
  bool dropout();
  bool interpolate(bool bilinear);
  bool grid_sample();
  bool triangle();
  bool arange();
  bool fill();
  bool one_hot();
  bool pow();
  bool uniform();
  bool prelu();
  bool floor_divide();
  // cuda_plan_reduce.cpp
  bool reduce();
  bool lines(uint32_t x, int64_t given);
  bool softmax();
  bool cumsum();
  bool group_norm();
  bool p_norm();
  bool einsum();

  const LoweredProgram& p_;
  const KernelCall& call_;
  std::string* why_;
  CudaComputeForm form_;
};

}  // namespace kforge::passes::cuda_plan_internal
