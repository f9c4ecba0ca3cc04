// Shared by the ops_*.cc registration files: run an op with one output or several, the way an executor does
// (infer_meta, allocate, kernel).
#pragma once

#include "kforge_kernels.h"
#include "registry.h"

namespace kforge::interp::detail {

/// infer_meta into a fresh tensor, allocate it, run the kernel on it, store it as the op's only output.
template <typename Meta, typename Kernel>
kforge::Status run_one(const kforge::KernelContext& ctx, kforge::DataType kernel_dtype, std::vector<RtValue>& outputs,
                       Meta&& meta, Kernel&& kernel) {
  kforge::Tensor out;
  KFORGE_RETURN_IF_ERROR(meta(&out));
  KFORGE_RETURN_IF_ERROR(allocate(&out));
  KFORGE_RETURN_IF_ERROR(kernel(context_for(ctx, kernel_dtype), &out));
  outputs.clear();
  outputs.push_back(RtValue::of(std::move(out)));
  return kforge::Status::OK();
}

/// The same for ops with `n` outputs (all computed, intermediate ones included).
template <typename Meta, typename Kernel>
kforge::Status run_many(const kforge::KernelContext& ctx, kforge::DataType kernel_dtype, size_t n,
                        std::vector<RtValue>& outputs, Meta&& meta, Kernel&& kernel) {
  std::vector<kforge::Tensor> outs(n);
  std::vector<kforge::Tensor*> ptrs;
  for (kforge::Tensor& t : outs) ptrs.push_back(&t);
  KFORGE_RETURN_IF_ERROR(meta(ptrs.data()));
  for (kforge::Tensor& t : outs) KFORGE_RETURN_IF_ERROR(allocate(&t));
  KFORGE_RETURN_IF_ERROR(kernel(context_for(ctx, kernel_dtype), ptrs.data()));
  outputs.clear();
  for (kforge::Tensor& t : outs) outputs.push_back(RtValue::of(std::move(t)));
  return kforge::Status::OK();
}

}  // namespace kforge::interp::detail
