// The IndexCall of cuda_index_kernels (cuda_index.h): the kernels of the data-movement ops and of a matmul no GEMM
// group computes, shared by the files that define its members: cuda_index.cpp (transpose, concat / stack, split,
// expand / tile, gather, embedding, meshgrid, batched matmul) and cuda_index_slice.cpp (slice, strided_slice,
// pad3d). Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index.h"
#include "codegen/cuda_index_text.h"
#include "passes/axis.h"

namespace kforge::codegen::cuda_index_internal {

using passes::ArgKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;
using passes::SymShape;
using index_text::IndexBuilder;
using index_text::KernelText;

// Renders the plan's form of one call (passes::CudaIndexMap): every check was the plan's, so none fails here.
class IndexCall : public IndexBuilder {
 public:
  IndexCall(const passes::CudaIndexMap& form, const passes::LoweredProgram& p, const passes::KernelCall& call,
            const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
            SizeTable& sizes, const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), form_(form) {}

  std::vector<CudaIndexKernel> build();

 private:
  // The element type value v is moved as (the plan checked it has one).
  std::string type_of(uint32_t v) const { return *index_text::move_type(value(v).dtype); }

  void transpose();

  // concat / stack: output coordinate c<axis> selects the input. concat: input j holds output coordinates
  // [start_j, start_j + dims_j[axis]) along the axis; stack: input j is c<axis> == j, its coordinates the output's
  // others.
  void join(bool stacked);

  // split / split_with_num: output k is the slice of x along the axis after the earlier outputs.
  void split();

  // slice: x[starts:ends] along `axes`, with the decrease_axis dims dropped from the output.
  void slice();

  // strided_slice: x[start::step] along `axes` (negative steps too), with the CPU kernel's normalisation
  // (kernels/meta_manip.cc), as the plan resolved it.
  void strided_slice();

  // pad3d of a 5-D x (NCDHW or NDHWC): constant, reflect, replicate or circular, as kernels/movement.cc.
  void pad3d();

  // expand / tile: x's dims align with the output's last dims; each x coordinate is the output's modulo x's dim.
  void broadcast();
  // broadcast_tensors: broadcast_to for each input and its output.
  void broadcast_tensors();
  // out[c...] = x[c... of x's trailing dims, 0 where x's dim is 1]: expand's kernel, one input and output.
  void broadcast_to(uint32_t x, uint32_t out);

  // repeat_interleave: the output's coordinate along the axis divided by the repeats, the others as they are.
  void repeat_interleave();

  // gather / index_select: x viewed as [outer, n, inner] around the axis; output [outer, k, inner] picks index's
  // k entries along it.
  void gather();

  // embedding: row ids[e / D] of weight [V, D]; padding_idx rows are zeros (kernels/linalg.cc).
  void embedding();

  // meshgrid: output i repeats 1-D input i along its own axis (out_i[c0, c1, ...] = in_i[c_i]).
  void meshgrid();

  // A matmul that no GEMM group computes (batched x and y, as attention's scores and context, or a vector operand, as
  // PicoDet's distribution focal integral): one thread per output element accumulates its dot product over K in the
  // compute type (float, or double for float64), in k order. The batch dims broadcast (a dim of 1 is read at 0). A
  // vector x [K] is a row [1, K] and a vector y [K] a column [K, 1] whose dim the output drops; the transposes
  // apply to matrices only (kernels/linalg.cc). Slow for large K; correct for every size.
  void batched_matmul();

  const passes::CudaIndexMap& form_;
};

}  // namespace kforge::codegen::cuda_index_internal
