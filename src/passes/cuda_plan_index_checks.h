// Internal to passes/: the checks of an index-mapped call (cuda_plan_index.h: plan_cuda_index_map), shared by the
// files that define its members: cuda_plan_move.cpp (the data-movement ops, a batched matmul),
// cuda_plan_select.cpp (the ops that pick, place or combine elements by an index or a rank), cuda_plan_set_value.cpp
// and cuda_plan_loss.cpp (the losses). Each reads the call as its kernel in codegen/ will, and fails for the first
// problem.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "passes/axis.h"
#include "passes/cuda_plan_index.h"

namespace kforge::passes::cuda_plan_internal {

/// Whether the index-mapped kernels move elements of `dtype`: a C++ scalar type, or the unsigned type of the same
/// width (float16 and bfloat16 move as their bits).
bool movable(ir::DataType dtype);

// The checks of one call. fail() keeps the first reason; a missing constant attribute replaces it (as the
// kernels' builders read them).
class IndexChecks {
 public:
  /// `scratch`: whether the memory plan gave the call a scratch buffer (topk's lines).
  IndexChecks(const LoweredProgram& p, const KernelCall& call, bool scratch, std::string* why)
      : p_(p), call_(call), scratch_(scratch), why_(why) {}

  /// The form, or nullopt with the reason in `why`.
  std::optional<CudaIndexMap> build();

 private:
  bool fail(std::string reason) {
    if (why_->empty()) *why_ = std::move(reason);
    return false;
  }
  const LoweredValue& value(uint32_t v) const { return p_.values[v]; }
  uint32_t out_value() const {
    return call_.outputs.empty() || call_.outputs[0].values.size() != 1 ? kNone : call_.outputs[0].values[0];
  }
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
  bool index_type(uint32_t index) {
    const ir::DataType d = value(index).dtype;
    if (d != ir::DataType::kInt32 && d != ir::DataType::kInt64) {
      return fail(fmt::format("its index is {} (int32 or int64 expected)", ir::dtype_name(d)));
    }
    form_.index_dtype = d;
    return true;
  }
  // A data-movement kernel cannot write the buffer it reads.
  bool own_buffer(uint32_t in, uint32_t out) {
    if (value(in).buffer == value(out).buffer) {
      return fail("its output shares its input's buffer (in place), which an index-mapped kernel cannot write");
    }
    return true;
  }
  bool axis_of(int64_t given, size_t rank, size_t* axis, const char* reason);
  // The dtype of v takes arithmetic in the select kernels: integers, float32, float64 (no bool, no 16-bit float).
  bool number_type(uint32_t v) {
    const ir::DataType d = value(v).dtype;
    if (d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16 || d == ir::DataType::kBool || !movable(d)) {
      return fail(fmt::format("it computes on {} values; the CUDA kernel takes integers, float32 and float64",
                              ir::dtype_name(d)));
    }
    return true;
  }
  // Moved as uint16_t: float16, bfloat16 and uint16.
  static bool moved_as_16_bits(ir::DataType d) {
    return d == ir::DataType::kUInt16 || d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16;
  }
  uint32_t output(size_t i) const {
    return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
  }

  bool transpose();
  bool join(bool stacked);
  bool split();
  bool slice();
  // slice's starts read from a tensor's values: (value, element) per start, in order.
  bool slice_starts_from_data(const KernelArg& arg, std::vector<std::pair<uint32_t, size_t>>* starts);
  bool strided_slice();
  bool pad3d();
  bool broadcast();
  bool gather();
  bool embedding();
  bool meshgrid();
  bool batched_matmul();
  // cuda_plan_select.cpp
  bool topk();
  bool gather_nd();
  bool index_sample();
  bool scatter();
  bool roll();
  bool pad();
  bool assign();
  bool add_n();
  // cuda_plan_set_value.cpp: set_value (constant values) and set_value_with_tensor (a values tensor) into a strided
  // slice of x; one axis's slice as Paddle normalises it; an IntArray attribute's values (constants, or
  // expressions of the dims).
  bool set_value(bool with_tensor);
  bool slice_range(const SymExpr& n, const SymExpr& start_given, const SymExpr& end_given, int64_t step,
                   CudaSliceRange* r);
  std::optional<std::vector<SymExpr>> int_array(std::string_view name);
  // cuda_plan_loss.cpp: sigmoid_cross_entropy_with_logits and cross_entropy_with_softmax.
  bool sigmoid_cross_entropy();
  bool softmax_cross_entropy();

  const LoweredProgram& p_;
  const KernelCall& call_;
  bool scratch_;
  std::string* why_;
  CudaIndexMap form_;
};

}  // namespace kforge::passes::cuda_plan_internal
