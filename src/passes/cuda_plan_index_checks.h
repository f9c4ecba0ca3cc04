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
#include "passes/cuda_plan_call_checks.h"
#include "passes/cuda_plan_index.h"

namespace kforge::passes::cuda_plan_internal {

// The checks of one call (CallChecks: the first reason kept, constants, dtypes).
class IndexChecks : public CallChecks<CudaIndexMap> {
 public:
  /// `scratch`: whether the memory plan gave the call a scratch buffer (topk's and argsort's
  /// lines).
  IndexChecks(const LoweredProgram& p, const KernelCall& call, bool scratch, std::string* why)
      : CallChecks(p, call, why), scratch_(scratch) {}

  /// The form, or nullopt with the reason in `why`.
  std::optional<CudaIndexMap> build();

 private:
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

  bool transpose();
  bool join(bool stacked);
  bool split();
  bool slice();
  // slice's starts (set_value's starts, ends or steps: `what`) read from a tensor's values: (value, element) per
  // start, in order.
  bool slice_starts_from_data(const KernelArg& arg, std::vector<std::pair<uint32_t, size_t>>* starts,
                              std::string_view what = "starts");
  bool strided_slice();
  bool flip();
  bool pad3d();
  bool broadcast();
  bool repeat_interleave();
  bool gather();
  bool embedding();
  bool meshgrid();
  bool broadcast_tensors();
  // A tensor list `arg` and the call's first output, a list of as many: each pair (but outputs nothing reads) of the
  // same type in buffers of their own, with `ranks_fit(input rank, output rank)`, else `rank_reason`.
  bool list_to_list(const char* arg, bool (*ranks_fit)(size_t, size_t, size_t), const char* rank_reason);
  bool batched_matmul();
  // cuda_plan_select.cpp
  bool topk();
  bool argsort();
  bool gather_nd();
  bool index_sample();
  bool take_along_axis();
  bool scatter();
  bool index_put();
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
  // An IntArray that may also be read from a tensor's values: per element, the value and element it is read from
  // (`from`, kNone where it is in `given`).
  bool int_array_or_data(std::string_view name, std::vector<SymExpr>* given,
                         std::vector<std::pair<uint32_t, size_t>>* from);
  // cuda_plan_loss.cpp: sigmoid_cross_entropy_with_logits and cross_entropy_with_softmax.
  bool sigmoid_cross_entropy();
  bool softmax_cross_entropy();

  bool scratch_;
};

}  // namespace kforge::passes::cuda_plan_internal
