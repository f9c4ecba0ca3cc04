// Index-mapped kernels of `kforge compile --target cuda` (CINN's injective pattern): data movement and the ops
// that are a function of an element's coordinate, each one generated kernel with one thread per output element
// (grid-stride) that computes the element's coordinate in the output, the source element's offset from it, and
// loads, selects or interpolates. The ops:
//   - data movement (cuda_index.cpp): transpose, concat, stack, split, split_with_num, slice, strided_slice, pad3d
//     (constant, reflect, replicate, circular), expand, tile, gather, index_select, embedding, meshgrid, and a
//     matmul that no GEMM group computes (batched x and y: attention's scores and context; a vector x or y), a dot
//     product per output element;
//   - computing (cuda_index_compute.cpp): dropout (inference only: a copy, or x * (1 - p) for downgrade_in_infer),
//     nearest_interp, bilinear_interp (4-D, NCHW or NHWC, sizes from the output dims, Paddle's source
//     coordinates), linear_interp (3-D NCW or NWC: bilinear of height 1), triu, tril, arange (constant start and step), full_with_tensor, and the ops no fused group
//     takes: sum, mean, max, min, prod, any, all over any axes (one thread per output element), softmax over an
//     axis that is not the last, log_softmax over any axis and cumsum (one thread per line), one_hot, pow with a constant exponent;
//   - by an index or a rank (cuda_index_select.cpp): topk and argsort (one thread per line, the CPU kernel's
//     selection or sort in the call's scratch), gather_nd, index_sample, scatter, roll, pad, add_n, set_value, set_value_with_tensor, assign;
//   - norms (cuda_index_norm.cpp): group_norm, p_norm; losses (cuda_index_loss.cpp):
//     sigmoid_cross_entropy_with_logits, cross_entropy_with_softmax; einsum (cuda_index_linalg.cpp); grid_sample
//     and mean_all (cuda_index_compute.cpp); floor_divide with broadcast operands and uniform
//     (cuda_index_binary.cpp); roi_align and yolo_box (cuda_index_detection.cpp).
// Dims may be dynamic: a dim the program knows only at run time prints as its symbol expression (`s0`), and the
// symbols a kernel uses are its parameters (the host passes enqueue()'s locals of the same names). Offsets are
// int64. Data movement copies bits (float16 / bfloat16 move as uint16_t); arithmetic (dropout's scale, bilinear
// weights, reductions, scans) is on bool, integers, float32 and float64 only (max and min reductions also compare
// float16 / bfloat16 elements, as float). An index outside its axis (gather,
// index_select, embedding, one_hot) gives 0, not a read out of bounds. A kernel never runs in place: an output
// sharing its input's buffer is refused (the elementwise ones, dropout, triu, tril and pow, excepted).
//
// A transpose next to an elementwise or row group does not get here: the fusion pass absorbs it into the group's
// input or store map (docs/fusion.md, "Absorbed transposes"). The other ops' elementwise producers and consumers
// are kernels of their own; folding them into the index map (load through the map, apply the expression, store)
// would save one read and one write per element of each fused value.
//
// A kernel's parameters and coordinates are built here as text (KernelText); its statements are a typed form
// (`form`: names, types, sizes and offsets as expressions) that templates/program/cuda/index_forms.j2 spells (the
// data movement, select, set_value, loss and known-result kernels), or, for the computing families, a typed context
// (`statements`) of templates/program/cuda/index_compute.j2's skeletons. Its shape (signature, grid-stride loop,
// launcher) is templates/program/cuda/index.j2.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cuda_conv.h"
#include "codegen/size_table.h"
#include "passes/cuda_plan_compute.h"
#include "passes/cuda_plan_index.h"
#include "passes/lowered_program.h"
#include "template/value.h"

namespace kforge::codegen {

/// One generated kernel: `name` (also its launcher's, `cudaError_t name(params..., cudaStream_t)`), the
/// statements it runs per output element `e` (int64), the output's element count, and the launch's arguments.
struct CudaIndexKernel {
  std::string name;
  std::string description;          // "transpose (pd_op.transpose at model.json:1:20)", for comments
  std::vector<std::string> params;  // "const float* __restrict__ x", "float* __restrict__ out", "int64_t s0"
  std::vector<std::string> args;    // the host expressions passed for them, in the same order
  std::string numel;                // the output's element count (an int64 expression over the params)
  /// The pointers whose 16-byte alignment a kernel moving units tests first (`aligned`; out's and these inputs'),
  /// a list of their names; none for a kernel that moves no units.
  tmpl::Value aligned;
  /// Element e's coordinates (KernelText::coordinates_context, spelled by index_compute.j2's `coordinates`); none
  /// for a kernel that computes them in its statements.
  tmpl::Value coords;
  /// Then, where a template spells the statements (templates/program/cuda/index_forms.j2), their typed form: a map
  /// whose `kind` names the macro, the rest names, types and expressions.
  tmpl::Value form;
  /// Or, for the computing families: the typed context from which templates/program/cuda/index_compute.j2's
  /// `statements` writes them (its key `shape` names the op's skeleton).
  tmpl::Value statements;
  bool interp = false;              // uses kforge_index.cuh's interpolation helpers
};

/// The form of a body that stores `value` (an expression of the coordinates) as output element e.
tmpl::Value cuda_index_store_form(const std::string& value);

/// A kernel per result of `call` writing its elements where every result is known as expressions of the dims
/// (passes::LoweredValue::known, passes::cuda_results_known; codegen/cuda_index_known.cpp), whatever the op;
/// nullopt otherwise.
std::optional<std::vector<CudaIndexKernel>> cuda_known_kernels(const passes::LoweredProgram& program,
                                                               const passes::KernelCall& call, const std::string& prefix,
                                                               size_t first, const std::string& description,
                                                               const CudaBufferExpr& buffer, SizeTable& sizes,
                                                               const SizeTable::Spelling& size_argument);

/// The kernels of `call` (one per output: split gives several), named `<prefix><k>`, `<prefix><k+1>`, ...
/// for k = first, rendered from the CUDA target plan's form of the call: its CudaIndexMap (passes::has_cuda_index_map:
/// the data-movement, select and loss families, a batched matmul) or its CudaComputeForm (passes::has_cuda_compute_form:
/// the computing families). Which ops are index-mapped, and which calls their kernels cannot run, is the plan's
/// (passes/cuda_plan_index.h, cuda_plan_compute.h): the plan has checked the form, so these cannot fail.
/// The kernels take the sizes they use as parameters: dims as `s0`, other sizes as entries of `sizes` that the launch
/// passes as `size_argument(k)`. `scratch`: the pointer expression of the call's scratch buffer
/// (passes::scratch_buffer), for the ops that plan one (passes/cuda_index_scratch.h: topk, argsort); "" when it has
/// none.
std::vector<CudaIndexKernel> cuda_index_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                                const passes::CudaIndexMap& map, const std::string& prefix,
                                                size_t first, const std::string& description,
                                                const CudaBufferExpr& buffer, SizeTable& sizes,
                                                const SizeTable::Spelling& size_argument,
                                                const std::string& scratch = "");
std::vector<CudaIndexKernel> cuda_index_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                                const passes::CudaComputeForm& form, const std::string& prefix,
                                                size_t first, const std::string& description,
                                                const CudaBufferExpr& buffer, SizeTable& sizes,
                                                const SizeTable::Spelling& size_argument);

/// The template context of one kernel (templates/program/cuda/index.j2): name, description, params, args,
/// numel, body.
tmpl::Value cuda_index_kernel_context(const CudaIndexKernel& kernel);

/// The template context of an index batch's one kernel (passes::CudaPlan::index_batches; index.j2's
/// batched_kernel), named `name`, described (comments) as `description`: the members' kernels (one per call, in the batch's order) with their parameters
/// renamed `m<k>_<name>` in the batch's signature, and their launch arguments in that order.
tmpl::Value cuda_index_batch_context(const std::string& name, const std::string& description,
                                     const std::vector<CudaIndexKernel>& members);

inline constexpr const char* kCudaIndexHeaderTemplate = "cuda/kforge_index.cuh";
/// The runtime header kforge_index.cuh includes: deformable_conv's sampling, shared with the CPU kernel library.
inline constexpr const char* kSamplingHeaderTemplate = "runtime/kforge_sampling.h";

}  // namespace kforge::codegen
