// kforge row-group variants for the multi-kernel dispatcher (templates/runtime/kforge_multikernel.h): what
// `kforge compile --target cuda --multi-kernel-hints` output uses to pick, per {rows, row length}, how a
// fused row kernel (softmax, layer_norm, a row reduction) runs: the launcher's choice by row length, a team
// that holds the row in registers (team size and registers per thread chosen for the hints), or a team that
// loops over the row in memory (src/passes/variants.cpp, plan_cuda_row_variants).
// NAME_kernels.cu defines `NAME_fused_<group>_variant(int variant, <pointers>, outer, inner, stream)` per row
// site; NAME.cu wraps each variant as a RowMultiKernel::Variant over RowArgs (the pointers type-erased, so
// that one dispatcher type serves every group) and dispatches through a RowBench.
#ifndef KFORGE_ROW_VARIANTS_CUH_
#define KFORGE_ROW_VARIANTS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kforge_cuda_runtime.h"
#include "kforge_cuda_timer.cuh"
#include "kforge_multikernel.h"

namespace kforge {
namespace cuda_rows {

// One launch of a row group: its inputs and stores in the group's order (FusedGroup::inputs / stores).
struct RowArgs {
  const void* const* inputs;
  void* const* stores;
  int64_t outer;  // rows
  int64_t inner;  // row length
  cudaStream_t stream;
};
using RowMultiKernel = mk::MultiKernel<cudaError_t(const RowArgs&)>;

// What benchmarking needs of a store to give it a scratch copy: one element per row (a per-row statistic such
// as layer_norm's mean) or one per element, and the element size.
struct RowStore {
  size_t element_bytes;
  bool per_row;
};

// Variant::applies of a register variant: rows up to `capacity` elements.
inline std::function<bool(const mk::ShapeKey&)> rows_up_to(int64_t capacity) {
  return [capacity](const mk::ShapeKey& key) { return key.size >= 2 && key.dims[1] <= capacity; };
}

// Per generated object: the event timer every row site benchmarks with (on the object's stream) and the
// scratch memory the stores of a benchmark run go to, so that benchmarking never writes a real output, nor
// an input that shares a store's buffer (the memory plan may run a row group in place).
class RowBench {
 public:
  explicit RowBench(cudaStream_t stream) : timer_(std::make_shared<cuda_timing::CudaEventTimer>(stream)) {}

  const std::shared_ptr<cuda_timing::CudaEventTimer>& timer() const { return timer_; }
  void set_stream(cudaStream_t stream) { timer_->set_stream(stream); }

  // Runs the pick of `site` for {outer, inner}; a new shape is first benchmarked on scratch stores.
  cudaError_t run(RowMultiKernel& site, const std::vector<RowStore>& stores, const RowArgs& a) {
    if (a.outer <= 0) return cudaSuccess;  // nothing to compute, no shape worth benchmarking
    return site.dispatch({a.outer, a.inner},
                         [&](const RowMultiKernel::Variant& v) { run_on_scratch(v, stores, a); }, a);
  }
  // The choice alone (--cuda-graph: made before a capture, so that no benchmark runs inside one).
  void select(RowMultiKernel& site, const std::vector<RowStore>& stores, const RowArgs& a) {
    if (a.outer <= 0) return;
    static_cast<void>(site.select({a.outer, a.inner},
                                  [&](const RowMultiKernel::Variant& v) { run_on_scratch(v, stores, a); }));
  }

 private:
  // One benchmark run of a variant with every store redirected into the scratch memory, each placed at its
  // real pointer's offset modulo 256 bytes (the launchers pick vector widths by alignment). A variant that
  // fails never wins (the timer reports +inf).
  void run_on_scratch(const RowMultiKernel::Variant& v, const std::vector<RowStore>& stores, RowArgs a) {
    std::vector<size_t> offsets(stores.size());
    size_t bytes = 0;
    for (size_t i = 0; i < stores.size(); ++i) {
      const size_t count = static_cast<size_t>(a.outer) * (stores[i].per_row ? 1u : static_cast<size_t>(a.inner));
      offsets[i] = (bytes + 255u) / 256u * 256u + (reinterpret_cast<uintptr_t>(a.stores[i]) & 255u);
      bytes = offsets[i] + count * stores[i].element_bytes;
    }
    if (!scratch_.reserve(bytes).ok()) {
      timer_->mark_failed();
      return;
    }
    std::vector<void*> redirected(stores.size());
    for (size_t i = 0; i < stores.size(); ++i) redirected[i] = scratch_.data() + offsets[i];
    a.stores = redirected.data();
    if (v.fn(a) != cudaSuccess) timer_->mark_failed();
  }

  std::shared_ptr<cuda_timing::CudaEventTimer> timer_;
  DeviceMemory scratch_;
};

}  // namespace cuda_rows
}  // namespace kforge

#endif  // KFORGE_ROW_VARIANTS_CUH_
