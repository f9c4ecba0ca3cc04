// CUDA kernels of fused groups (src/passes/fusion.h) for `kforge compile --target cuda`: the context of one
// kernel template and its host launcher per group, which templates/program/cuda/group_kernels.j2 spells in
// NAME_kernels.cu. The kernels instantiate the device helpers of templates/cuda/kforge_fused.cuh; the scalar
// expressions come from group_stmt_text / group_reduction_text (codegen/group_text.h, kforge::expr::emit_cuda).
// float16 / bfloat16 values (__half, __nv_bfloat16) are stored as such, converted to float when loaded and
// rounded back when stored (kforge_half.cuh); vectors are 16 bytes for them too (V = 8). docs/compile.md ("--target cuda") describes the shapes:
//   - elementwise groups: grid-stride over outer x inner elements, V elements per step with 16-byte vector
//     loads/stores when every vector-accessed pointer is aligned (else V = 1), a scalar tail, int32 indexing
//     unless the group needs int64;
//   - row groups: a team of TEAM threads per row (a warp for rows up to 128 x V elements, else a block of up
//     to 1024 threads), team reductions by warp shuffles and shared memory; rows up to TEAM x V x 4 elements
//     are held in registers (one read of every contiguous input), longer rows loop over memory per pass.
#pragma once

#include <string>
#include <vector>

#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "passes/variants.h"
#include "template/value.h"

namespace kforge::codegen {

struct CudaGroupCode {
  /// The context from which templates/program/cuda/group_kernels.j2's `group` macro writes the group's kernel and
  /// launcher definitions (NAME_kernels.cu), and its `declaration` / `variant_declaration` macros the launchers'
  /// declarations (NAME.cu): names, types and expressions (cuda_group_emitter.h).
  tmpl::Value kernels;
  std::string launcher;  // the launcher's name
  int vector_width = 1;  // elements per vector access on the aligned path (16 bytes of the widest type)
  /// Row groups that are multi-kernel sites: `<launcher>_variant(int variant, <the launcher's parameters>)`,
  /// which launches variant `variant` of the site (its index in MultiKernelSite::variants); else empty.
  std::string variant_launcher;
};

/// A dim or stride an elementwise group's strided inputs (a general broadcast, a transpose read through) or strided
/// stores (a transpose stored through) need that is known only at run time:
/// the launcher's parameter `name` (int64_t), which the caller passes as `value` over the symbols.
struct CudaShapeParam {
  std::string name;
  passes::SymExpr value;
};
/// Those of `group`, in the launcher's order: the group's dims after the first, then each strided input's strides,
/// then each strided store's (a transpose stored through).
std::vector<CudaShapeParam> cuda_group_shape_params(const passes::FusedGroup& group);

/// The kernel and launcher of `group`, named `<prefix>fused_<index>`. The launcher takes the group's inputs
/// (const pointers, in FusedGroup::inputs order), then its stores (FusedGroup::stores order), then
/// `int64_t outer, int64_t inner`, the shape parameters (cuda_group_shape_params), `cudaStream_t stream`,
/// launches, and returns cudaGetLastError(). `site`: the group's kCudaRow site (passes::plan_cuda_row_variants),
/// or null. What the CUDA backend cannot emit (dtype, rms_norm, dynamic strided broadcast) the CUDA target plan
/// has refused (passes/cuda_plan_groups.cpp): this cannot fail.
CudaGroupCode cuda_group_code(const passes::FusedGroup& group, const std::string& prefix,
                              const passes::MultiKernelSite* site);

/// float16 or bfloat16: a storage type that needs kforge_half.cuh's conversions.
bool is_cuda_half(expr::ScalarType type);
/// Whether a group reads or stores float16 / bfloat16 values.
bool group_uses_half(const passes::FusedGroup& group);

}  // namespace kforge::codegen
