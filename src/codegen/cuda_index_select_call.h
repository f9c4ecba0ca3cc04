// The SelectCall of select_kernels (cuda_index_text.h), shared by the files that define its members:
// cuda_index_select.cpp (topk, gather_nd, index_sample, scatter, roll, pad, assign, add_n) and cuda_index_set_value.cpp
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

class SelectCall : public IndexBuilder {
 public:
  using IndexBuilder::IndexBuilder;

  std::optional<std::vector<CudaIndexKernel>> build();
  // The pointer expression of the call's scratch buffer ("" if the plan gave it none).
  void set_scratch(std::string scratch) { scratch_ = std::move(scratch); }

 private:
  // The C++ type of an arithmetic dtype (bool excluded): integers, float32, float64; "" after fail().
  std::string number_type(uint32_t v);

  uint32_t output(size_t i) const;

  // topk along `axis`: thread e selects the first k of line e as the CPU kernel does (kforge_index.cuh's topk_line),
  // in the call's scratch (len int32 entries per line).
  bool topk();

  // gather_nd: index [..., k] picks, per row, the slice x[i0, ..., ik-1, :].
  bool gather_nd();
  // x, index and out of gather_nd and index_sample: x's element type (out's too) and index's (int32 / int64).
  bool gathered_operands(uint32_t* x, uint32_t* index, uint32_t* out, std::string* type, std::string* itype);
  // index_sample: out[r, j] = x[r, index[r, j]] (2-D x and index).
  bool index_sample();

  // scatter of 1-D index rows into x's rows (in place or not: each thread reads and writes its own element).
  bool scatter();

  // roll: out[c] = x[(c - shift) mod n] along each rolled axis, or along the flattened tensor without axes.
  bool roll();

  // pad (constant) of any rank: paddings [before_0, after_0, before_1, ...].
  bool pad();

  // One sliced axis of set_value: the first element, the step and the count (expressions of the dims where the
  // bounds are; those need a forward step).
  struct Range {
    SymExpr start, count;
    int64_t step = 1;
  };
  bool slice_range(const SymExpr& n, const SymExpr& start_given, const SymExpr& end_given, int64_t step, Range* r);

  // The values of an IntArray attribute: constants, or expressions of the dims.
  std::optional<std::vector<SymExpr>> int_array(std::string_view name);

  // set_value (constant values) and set_value_with_tensor (a values tensor) into a strided slice of x.
  bool set_value(bool with_tensor);

  // assign: a copy of x's elements.
  bool assign();

  // add_n: out = inputs[0] + inputs[1] + ... in input order, in the inputs' type.
  bool add_n();

  std::string scratch_;
};

}  // namespace kforge::codegen::index_text::select_internal
