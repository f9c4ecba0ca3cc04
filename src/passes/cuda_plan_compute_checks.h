// Internal to passes/: the checks of a computing call (cuda_plan_compute.h: plan_cuda_compute), shared by the files
// that define its members: cuda_plan_compute.cpp (the per-element ops, the binary family) and cuda_plan_reduce.cpp
// (reductions, softmax, cumsum, the norms, einsum). Each reads the call as its kernel in codegen/ will, and fails
// for the first problem.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

#include "passes/cuda_plan_call_checks.h"
#include "passes/cuda_plan_compute.h"
#include "passes/cuda_plan_index.h"

namespace kforge::passes::cuda_plan_internal {

// The checks of one call (CallChecks: the first reason kept, constants, dtypes).
class ComputeChecks : public CallChecks<CudaComputeForm> {
 public:
  ComputeChecks(const LoweredProgram& p, const KernelCall& call, std::string* why) : CallChecks(p, call, why) {}

  /// The form, or nullopt with the reason in `why`.
  std::optional<CudaComputeForm> build();

 private:
  // Whether anything reads value v (a call's argument or a program output).
  bool is_read(uint32_t v) const;
  // bool, integers, float32, float64: the types these kernels compute on (not the 16-bit floats).
  static bool computable(ir::DataType d) {
    return d != ir::DataType::kFloat16 && d != ir::DataType::kBFloat16 && d != ir::DataType::kUInt16 &&
           d != ir::DataType::kUInt32 && d != ir::DataType::kUInt64 && movable(d);
  }

  // cuda_plan_compute.cpp
  bool dropout();
  // nearest_interp, bilinear_interp (4-D), linear_interp (3-D: an image of height 1).
  bool interpolate(const std::string& op);
  bool grid_sample();
  bool deformable_conv();
  bool prior_box();
  bool roi_align();
  bool yolo_box();
  bool triangle();
  bool diag();
  bool arange();
  bool linspace();
  bool fill();
  bool cast();
  bool one_hot();
  bool pow();
  bool uniform();
  bool randint();
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

};

}  // namespace kforge::passes::cuda_plan_internal
