// The CUDA target plan's part for the calls outside every group that are not convolutions, pools or batch norms
// (cuda_plan.h): which ops have an index-mapped kernel (codegen/cuda_index*.cpp, one family per file), how each
// call outside every group runs (CudaRun: a library call, an index map, its known elements written, a compaction,
// a copy, nothing), and the forms of the data-movement and select ops and the batched matmul: their attributes
// resolved (axes normalised, starts clamped, the element and index dtypes checked) or the reason the CUDA kernels
// cannot run them. A call that runs on no
// kernel is refused here, at its op; codegen renders what the plan chose.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::passes {

/// The families of index-mapped ops, each one file of codegen/ that builds its kernels: data movement
/// (cuda_index.cpp, cuda_index_slice.cpp), per-element computing (cuda_index_compute.cpp), by an index or a rank
/// (cuda_index_select.cpp, cuda_index_set_value.cpp), norms, losses, einsum, binary (floor_divide, uniform).
enum class CudaIndexFamily { kMovement, kCompute, kSelect, kNorm, kLoss, kEinsum, kBinary };

/// The family of an index-mapped op; nullopt for any other op.
std::optional<CudaIndexFamily> cuda_index_family(std::string_view op);
/// Whether `op` has an index-mapped kernel (a family).
inline bool is_cuda_index_op(std::string_view op) { return cuda_index_family(op).has_value(); }
/// matmul and bmm: a call no GEMM group computes gets the index-mapped batched kernel (one thread per output
/// element accumulating its dot product in float, double for float64).
bool is_cuda_batched_matmul(std::string_view op);
/// The index-mapped ops whose CUDA kernels compute on the values (dropout's downgrade_in_infer scaling, bilinear
/// interpolation, cumsum, prod, pow, ...) in float32 and float64 only: `kforge compile --precision` keeps them
/// float32 between casts (passes/precision.h; CompileTarget::float32_ops).
const std::set<std::string>& cuda_float32_index_ops();
/// nonzero, masked_select, unique, generate_proposals, distribute_fpn_proposals: compactions whose counts come back to
/// the host (codegen/cuda_data_dependent.cpp).
bool is_cuda_compaction_op(std::string_view op);
/// The (input, output) values of call `c` when it is a view op (a reshape) of one tensor into one of the same dtype
/// whose dims, or its input's, are built from a dim counted by an earlier call (a reshape to `[rois, 28, 28]` after
/// distribute_fpn_proposals, or of gather_nd's [nonzero count] elements to a constant shape), so that the element
/// counts are equal only when it runs, as the CPU's infer-meta
/// checks: the CUDA target copies it after the same check (`checked_bytes` of its copy step). nullopt otherwise
/// (LoweredProgram::view_values' views among them).
std::optional<std::pair<uint32_t, uint32_t>> cuda_checked_view(const LoweredProgram& program, uint32_t c);
/// The infer-meta functions --target cuda runs on the host for dims read from a tensor's values
/// (runtime/kforge_shape_meta.h): those of reshape, expand, tile, slice, full_with_tensor and arange, and the
/// interpolations' (is_cuda_host_values_rule).
bool is_cuda_host_shape_rule(std::string_view infer_meta);
/// Those of them that read the values of some Tensor and Tensor[] arguments themselves (the interpolations' size
/// tensors: runtime/kforge_shape_meta_interp.h), where the others read only a tensor's dtype and dims.
bool is_cuda_host_values_rule(std::string_view infer_meta);
/// Whether such a rule reads the values of argument `a`: the interpolations' optional tensors (out_size,
/// scale_tensor) and their size_tensor list, not x.
bool cuda_host_rule_reads_values(std::string_view infer_meta, const KernelArg& a);

/// The integer value of an int or Scalar attribute (a floating Scalar truncated) and the value of a float or Scalar
/// one, as the index-mapped kernels read their attributes.
int64_t cuda_attr_int(const AttrConstant& c);
double cuda_attr_float(const AttrConstant& c);

/// How a call outside every group runs on the GPU.
enum class CudaRun {
  kLibrary,        // a convolution, pool, batch norm or rnn (their forms in CudaPlan), cuDNN or a header's kernel
  kIndex,          // index-mapped kernels (with a CudaIndexMap where has_cuda_index_map)
  kBatchedMatmul,  // a matmul no GEMM group computes: the index-mapped batched kernel (a CudaIndexMap)
  kKnown,          // every result known at generation time: the known elements written
  kCompaction,     // nonzero / masked_select / unique / the proposals' ops (is_cuda_compaction_op)
  kCopy,           // a view whose output has a buffer of its own: a copy of the same bytes
  kNothing,        // a view of its input's buffer, or an op whose outputs all share its input's buffer
  kDataDependent,  // it sizes a dim from data in a way the CUDA target cannot: plan_cuda_data_dependent refuses it
};

/// One dim of x in set_value's slice: the first element, the step and the count (expressions of the dims where
/// the bounds are); a dim not sliced runs 0, 1, its size.
struct CudaSliceRange {
  SymExpr start, count;
  int64_t step = 1;
  bool sliced = false;
  /// A slice with a bound read from a tensor's values (issue 34: `x[:, a:b] = v`, a and b computed): the kernel
  /// reads those on the device and normalises the slice as kernels/index_ops.cc's set_value_ranges, so a CUDA graph
  /// stays valid. Per bound (start, end, step): the value and its element, or kNone where the bound is given here
  /// (`start`, `end`, `step`: a constant or an expression of the dims); `count` is unused.
  bool at_run_time = false;
  SymExpr end;
  std::pair<uint32_t, size_t> start_from{kNone, 0}, end_from{kNone, 0}, step_from{kNone, 0};
};

/// A pad3d's mode (its `mode` attribute).
enum class CudaPadMode { kConstant, kReflect, kReplicate, kCircular };

/// The form of a data-movement op (transpose, concat, stack, split, split_with_num, slice, strided_slice, pad3d,
/// expand, tile, gather, index_select, embedding, meshgrid), of an op that picks, places or combines elements by an
/// index or a rank (topk, argsort, gather_nd, index_sample, take_along_axis, scatter, index_put, roll, pad, assign, add_n,
/// set_value, set_value_with_tensor),
/// of a loss
/// (sigmoid_cross_entropy_with_logits, cross_entropy_with_softmax) or of a batched matmul: its attributes
/// resolved. Value indices are the call's own (KernelCall::tensor_arg); the fields an op does not use keep their
/// defaults.
struct CudaIndexMap {
  /// The element type moved (x's and the outputs'; a batched matmul's x, y and out; add_n's).
  ir::DataType dtype = ir::DataType::kUndefined;
  /// gather / index_select / gather_nd / take_along_axis / scatter's index, embedding's ids: int32 or int64.
  ir::DataType index_dtype = ir::DataType::kUndefined;
  /// concat, stack, split, split_with_num, gather, index_select, take_along_axis, topk, argsort: the axis, normalised (of the
  /// output for concat and stack, of x for the others; topk or argsort of a 0-D x: 0).
  size_t axis = 0;
  /// transpose: output axis i is x's axis perm[i] (normalised).
  std::vector<size_t> perm;
  /// slice / strided_slice: where each dim of x starts (clamped; an expression of the dims for a symbolic start)
  /// and its step (strided_slice; 1 elsewhere). slice: the dims decrease_axis drops, when the output's rank says
  /// they are dropped.
  std::vector<SymExpr> begin;
  std::vector<int64_t> step;
  std::set<size_t> dropped;
  /// slice: per dim of x, where its start comes from when it is read from a tensor's values (issue 33): the value
  /// (kNone: `begin` holds the start) and the element of it. The kernel reads it on the device and normalises it
  /// as the CPU kernel does (from the end when negative, clamped to the dim).
  std::vector<std::pair<uint32_t, size_t>> begin_from;
  /// pad3d: the six paddings ([left, right, top, bottom, front, back]), the mode, NDHWC or NCDHW, the fill.
  std::vector<SymExpr> pads;
  CudaPadMode mode = CudaPadMode::kConstant;
  bool channel_last = false;
  double fill = 0;
  /// embedding: the vocabulary (weight's rows) and the row of zeros (padding_idx normalised; -1: none).
  int64_t rows = 0, padding_row = -1;
  /// A batched matmul: whether x and y are read transposed (never for a vector operand or bmm).
  bool transpose_x = false, transpose_y = false;
  /// topk: how many, the largest or the smallest, sorted or not. argsort: descending in `largest`, and whether
  /// equal values keep their index order (stable). repeat_interleave: the repeats (along `axis`).
  int64_t k = 0;
  bool largest = true, sorted = true, stable = false;
  /// gather_nd: how many leading dims of x a row of the index names (its last dim).
  size_t depth = 0;
  /// scatter: the last update of a row wins (overwrite), or the updates add to x's row. index_put: likewise
  /// (overwrite is !accumulate).
  bool overwrite = true;
  /// index_put: the dims its index tensors broadcast to (`depth` is their number) and, per index tensor, its
  /// element stride along each of them (0 where it broadcasts); `value_strides` are the value's along those dims
  /// and then x's dims past the indexed ones.
  SymShape positions;
  std::vector<std::vector<SymExpr>> index_strides;
  /// roll: the shift of each dim (the shifts of an axis named twice added), or, `flattened` (no axes), of the
  /// flattened tensor.
  std::vector<int64_t> shift;
  bool flattened = false;
  /// pad: the paddings, two per dim of x ([before_0, after_0, before_1, ...]); the fill is `fill`.
  std::vector<int64_t> widths;
  /// set_value / set_value_with_tensor: x's slice, per dim; per dim of x, the stride of its coordinate in the values
  /// (0: the values broadcast along it, or the dim is dropped); set_value's constant values (row-major).
  std::vector<CudaSliceRange> ranges;
  std::vector<SymExpr> value_strides;
  std::vector<ScalarConstant> constants;
  /// The losses (cuda_plan_loss.cpp): sigmoid_cross_entropy_with_logits' normalize and the label it skips
  /// (ignore_index); cross_entropy_with_softmax's ignore_index, soft_label, use_softmax and class axis (`axis`,
  /// normalised), a hard label's index type in index_dtype.
  int64_t ignore_index = 0;
  bool normalize = false, soft_label = false, use_softmax = true;
};

/// Whether `call` (of an index-mapped op or a batched matmul) has a CudaIndexMap: the data-movement ops, the select
/// ops above, the losses and matmul / bmm. (The computing families have a CudaComputeForm instead,
/// cuda_plan_compute.h.)
bool has_cuda_index_map(const KernelCall& call);
/// The form of such a call, or nullopt with `why` (a sentence: "its axis is out of range") when the CUDA kernels
/// cannot run it. `scratch`: whether the memory plan gave the call a scratch buffer (topk's, cuda_index_scratch.h).
std::optional<CudaIndexMap> plan_cuda_index_map(const LoweredProgram& program, const KernelCall& call, bool scratch,
                                                std::string* why);

}  // namespace kforge::passes
