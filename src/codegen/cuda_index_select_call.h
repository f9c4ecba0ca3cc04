// The SelectCall of select_kernels (cuda_index_text.h), shared by the files that define its members:
// cuda_index_select.cpp (topk, argsort, gather_nd, index_sample, scatter, index_put, roll, pad, assign, add_n) and
// cuda_index_set_value.cpp
// (set_value and set_value_with_tensor into a strided slice). Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/axis.h"
#include "passes/cuda_index_scratch.h"

namespace kforge::codegen::index_text::select_internal {

// Renders the plan's form of its call (passes::CudaIndexMap: checked there, so none fails here).
class SelectCall : public IndexBuilder {
 public:
  SelectCall(const passes::CudaIndexMap& map, const passes::LoweredProgram& p, const passes::KernelCall& call,
             const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
             SizeTable& sizes, const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), map_(map) {}

  std::vector<CudaIndexKernel> build();
  // The pointer expression of the call's scratch buffer ("" if the plan gave it none).
  void set_scratch(std::string scratch) { scratch_ = std::move(scratch); }

 private:
  // The plan's form of the call.
  const passes::CudaIndexMap& form() const { return map_; }
  // Value v's dims as lines along the form's axis: the product of the dims before it, the axis's own, after it
  // (topk and argsort; 1, 1, 1 for a 0-D value).
  struct Lines {
    SymExpr outer = 1, len = 1, inner = 1;
  };
  Lines lines_along_axis(uint32_t v) const;
  // The element type value v is moved as (the plan checked it has one).
  std::string type_of(uint32_t v) const { return *move_type(value(v).dtype); }

  uint32_t output(size_t i) const;

  // topk along `axis`: thread e selects the first k of line e as the CPU kernel does (kforge_index.cuh's topk_line),
  // in the call's scratch (len int32 entries per line).
  void topk();
  // argsort along `axis`: thread e sorts line e's indices as the CPU kernel does (kforge_index.cuh's argsort_line),
  // in the call's scratch (len int32 entries per line).
  void argsort();

  // gather_nd: index [..., k] picks, per row, the slice x[i0, ..., ik-1, :].
  void gather_nd();
  // index_sample: out[r, j] = x[r, index[r, j]] (2-D x and index), 0 where index[r, j] is out of x's row.
  void index_sample();
  // take_along_axis: out[.., i, ..] = arr[.., indices[.., i, ..], ..] along the axis (out has the indices' dims,
  // each at most arr's), a negative index counting from the axis' end, 0 where it is out of range.
  void take_along_axis();

  // scatter of 1-D index rows into x's rows (in place or not: each thread reads and writes its own element).
  void scatter();

  // index_put: one thread per output element walks the positions the index tensors name, in order, and keeps x's
  // element, the last value put there, or x's plus every value put there (accumulate).
  void index_put();

  // roll: out[c] = x[(c - shift) mod n] along each rolled axis, or along the flattened tensor without axes.
  void roll();

  // pad (constant) of any rank: paddings [before_0, after_0, before_1, ...].
  void pad();

  // set_value (constant values) and set_value_with_tensor (a values tensor) into a strided slice of x.
  void set_value(bool with_tensor);

  // assign: a copy of x's elements.
  void assign();

  // add_n: out = inputs[0] + inputs[1] + ... in input order, in the inputs' type.
  void add_n();

  const passes::CudaIndexMap& map_;
  std::string scratch_;
};

}  // namespace kforge::codegen::index_text::select_internal
