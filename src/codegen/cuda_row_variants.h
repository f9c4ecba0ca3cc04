// The row groups that are multi-kernel sites under `kforge compile --target cuda --multi-kernel-hints`
// (passes::plan_cuda_row_variants): the contexts from which templates/program/cuda/row_variants.j2 writes the host
// code NAME.cu needs for them.
//   - per site, a RowMultiKernel (templates/cuda/kforge_row_variants.cuh) whose variants call the group's
//     `_variant` launcher (codegen/cuda_kernels.h) with their index, keyed by {rows, row length}, its
//     variant-set hash a constant computed at generation time; register variants apply to rows up to their
//     capacity only;
//   - per generated object, one `RowState` (made by the first run()): the dispatchers and a RowBench (the
//     event timer on the object's stream and the scratch stores a new shape is benchmarked into);
//   - --cuda-graph: run() calls prepare_rows() before a capture, which makes every choice first, so that no
//     benchmark (which synchronises) runs inside a capture.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/cuda_kernels.h"
#include "codegen/size_table.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "passes/variants.h"
#include "template/value.h"

namespace kforge::codegen {

class CudaRowVariantCode {
 public:
  /// `plan`: passes::plan_cuda_row_variants' plan, or null without hints. `launchers`: the emitted groups by
  /// index. `buffer(value)`: the host expression of a value's device pointer (void*) inside enqueue() and
  /// prepare_rows() (both have the Bindings `b` and the symbols `s<id>`). `describe(group)`: for comments. `size(e)`:
  /// a size there (both have the table `sizes`).
  CudaRowVariantCode(const passes::FusionPlan& fusion, const passes::MultiKernelPlan* plan,
                     const std::map<uint32_t, CudaGroupCode>& launchers, bool cuda_graph,
                     std::function<std::string(uint32_t)> buffer,
                     std::function<std::string(const passes::FusedGroup&)> describe, SizeExpr size);

  bool any() const { return plan_ != nullptr; }
  /// The site of group `g`, or null (the group launches its kernel directly).
  const passes::MultiKernelSite* site(const passes::FusedGroup& g) const;
  /// The templates the output needs beside it, in a fixed order (may repeat the GEMM code's).
  std::vector<const char*> header_templates() const;

  /// --cuda-graph: whether run() calls prepare_rows() (the row groups' choices) before a capture.
  bool prepares_before_capture() const;
  std::vector<std::string> host_includes() const;  // NAME.cu: the row-variants header
  /// Every site's context for templates/program/cuda/row_variants.j2 (definitions(): variant lists, RowState,
  /// prepare_rows()).
  tmpl::Value sites() const;
  /// enqueue(): the dispatch step of row site group `g` (launch index `g.index`): its site context, kind "rows".
  tmpl::Value step(const passes::FusedGroup& g) const;

 private:
  tmpl::Value site_context(const passes::MultiKernelSite& site) const;

  const passes::FusionPlan& fusion_;
  const passes::MultiKernelPlan* plan_;
  const std::map<uint32_t, CudaGroupCode>& launchers_;
  bool cuda_graph_;
  std::function<std::string(uint32_t)> buffer_;
  std::function<std::string(const passes::FusedGroup&)> describe_;
  SizeExpr size_;
};

inline constexpr const char* kCudaRowVariantsHeaderTemplate = "cuda/kforge_row_variants.cuh";

}  // namespace kforge::codegen
