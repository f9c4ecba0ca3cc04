// The GEMM groups of `kforge compile --target cuda` (passes/fusion.h, GroupKind::kGemm): the typed contexts from
// which templates/program/cuda/gemm.j2 writes the host code NAME.cu needs for them. A group's element type is
// float32, float16 or bfloat16 (GemmForm::dtype); every piece below is written once over the element type
// (GemmElement in cuda_gemm.cpp names its spellings; float32 keeps the ones its output always had).
//   - Without --multi-kernel-hints every GEMM group is one cuBLASLt call (fp32 compute and accumulation, no
//     TF32) through kforge::cuda_gemm::cublaslt_gemm (templates/cuda/kforge_cublaslt.cuh) with the erf
//     epilogue;
//   - with hints, each group is a site of passes::plan_cuda_gemm_variants: a GemmMultiKernel<T>
//     (templates/cuda/kforge_gemm_f32.cuh) over cuBLASLt and the SIMT (float32) or tensor-core (16-bit,
//     kforge_gemm_tc.cuh) tiles the hints chose, keyed by {M, N, K}, its variant-set hash a constant computed
//     at generation time; a new shape is benchmarked on a scratch output (never the real one) with CUDA events
//     on the object's stream, and the pick cached in memory and on disk (kforge_multikernel.h). A tensor-core
//     tile cannot serve every 16-bit call (K or N no multiple of 8, pointers not 16-byte aligned: known at run
//     time): benchmarked on such a call it refuses without launching and times +inf, so it never wins; and
//     when a pick that did not come from such a benchmark (forced, nearest hint, cached for other pointers)
//     names a tile for such a call, the call runs cuBLASLt, the site's variant 0, instead. A tile is never
//     called for real with arguments it cannot serve.
// Per generated object, one `GemmState` (defined in NAME.cu, created by the first run()): a cuBLASLt handle
// and its preallocated workspace per element type, and with hints the dispatchers, their shared event timer
// and the scratch.
// --cuda-graph: run() calls prepare_gemms() before a capture, which makes every choice (benchmarking new
// shapes) and builds every cuBLASLt plan, so that nothing inside the capture synchronises or allocates.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/cuda_class_context.h"
#include "codegen/size_table.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "passes/variants.h"
#include "template/value.h"
#include "support/diagnostics.h"

namespace kforge::codegen {

class CudaGemmCode {
 public:
  /// `multi_kernel`: the plan of passes::plan_cuda_gemm_variants, or null without hints.
  /// `buffer(value, element type, is_const)`: the host expression of a value's device pointer, typed, inside
  /// enqueue() and prepare_gemms() (both have the Bindings `b` and the symbols `s<id>`). `describe(group)`:
  /// the group for comments. `size(e)`: a size in run(), enqueue() and prepare_gemms() (each has the table `sizes`).
  CudaGemmCode(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
               const passes::MultiKernelPlan* multi_kernel, bool cuda_graph,
               std::function<std::string(uint32_t, const std::string&, bool)> buffer,
               std::function<std::string(const passes::FusedGroup&)> describe, SizeExpr size);

  /// Whether the program has GEMM groups at all (every other method gives "" / nothing when not).
  bool any() const { return !groups_.empty(); }
  /// The templates the output needs beside it ("cuda/kforge_gemm.cuh", ...), in a fixed order.
  std::vector<const char*> header_templates() const;
  /// What NAME.h says of the GEMMs and whether it declares their state (templates/program/cuda/gemm.j2).
  CudaGemmSummary summary() const;

  /// --cuda-graph: whether run() calls prepare_gemms() (choices made, cuBLASLt plans built) when the graph cache is
  /// about to capture.
  bool prepares_before_capture() const;
  std::vector<std::string> host_std_includes() const;  // NAME.cu: standard headers ("limits", ...)
  std::vector<std::string> host_includes() const;  // NAME.cu: the GEMM headers it includes
  /// NAME.cu, after the anonymous namespace, with --multi-kernel-hints: the sites' variants, the GemmState with its
  /// dispatchers, for gemm.j2's multi_kernel_state() (see there); false without hints (state() then).
  tmpl::Value multi_kernel_state() const;
  /// The GemmState of a class without --multi-kernel-hints, {lts: [{name, type}], f32_only}, or false
  /// (templates/program/cuda/gemm.j2, state()).
  tmpl::Value state() const;
  /// run(), once the stream exists: {lts, multi_kernel, float32} for gemm.j2's run_setup(), or false.
  tmpl::Value setup() const;
  /// run(), after the sizes: [{index, cond, m, n, k, batch}], the symbolic M, N, K (and batch) that must fit the
  /// kernels' int (gemm.j2's run_checks()); those of the groups `include` accepts (default every one: a dim known
  /// only from data is checked where its bind_s<id>() knows it, cuda_data_dependent.cpp).
  tmpl::Value checks(const std::function<bool(const passes::GemmGroup&)>& include = {}) const;
  /// The call of GEMM group `g` (launch index `g.index`) for gemm.j2's enqueue() and prepare_function(): {kind
  /// "gemm", index, description, lt, fn, prepare_fn, args_type, x, y, out, bias, dims, epilogue, transposes,
  /// batched, batch, site}.
  tmpl::Value call(const passes::FusedGroup& g) const;
  /// Every group's call, in order (prepare_gemms()).
  tmpl::Value calls() const;
  /// The parameter packs of packed sibling GEMMs (passes/gemm_siblings.h), for gemm.j2's pack parts: {bytes (the
  /// memory `packed_` holds), copies: [{to, from, bytes}] (device pointers inside pack_parameters(), which has the
  /// Bindings `b`)}; false when there are none.
  tmpl::Value packs() const;

 private:
  /// The element types of the GEMM groups, float32 first, then bfloat16, then float16 (each once).
  std::vector<ir::DataType> dtypes() const;
  /// Whether any site of that element type has tensor-core variants (then run() checks that a pick applies).
  bool has_tensor_core(ir::DataType dtype) const;
  /// Pack `pack`'s first element as a `const type*` (inside packed_); pack_offsets_ places each 256-byte aligned.
  std::string pack_pointer(uint32_t pack, const std::string& type) const;
  /// "true, false": the group's transpose_x and transpose_y as the C++ arguments that follow the operands.
  static std::string transposes(const passes::FusedGroup& g);
  /// The function a tile variant `v` of group `g`'s site calls (gemm.j2 spells a cuBLASLt variant's lambda).
  std::string variant_function(const passes::FusedGroup& g, const passes::KernelVariant& v) const;

  const passes::LoweredProgram& p_;
  const passes::FusionPlan& plan_;
  const passes::MultiKernelPlan* mk_;
  bool cuda_graph_;
  std::function<std::string(uint32_t, const std::string&, bool)> buffer_;
  std::function<std::string(const passes::FusedGroup&)> describe_;
  SizeExpr size_;
  std::vector<const passes::FusedGroup*> groups_;
  std::vector<int64_t> pack_offsets_;  // bytes into packed_, per LoweredProgram::parameter_packs entry
  int64_t pack_bytes_ = 0;
};

inline constexpr const char* kCudaGemmHeaderTemplate = "cuda/kforge_gemm.cuh";
inline constexpr const char* kCudaCublasLtHeaderTemplate = "cuda/kforge_cublaslt.cuh";
inline constexpr const char* kCudaTimerHeaderTemplate = "cuda/kforge_cuda_timer.cuh";
inline constexpr const char* kCudaGemmF32HeaderTemplate = "cuda/kforge_gemm_f32.cuh";
inline constexpr const char* kCudaGemmTensorCoreHeaderTemplate = "cuda/kforge_gemm_tc.cuh";
inline constexpr const char* kCudaHalfHeaderTemplate = "cuda/kforge_half.cuh";

}  // namespace kforge::codegen
