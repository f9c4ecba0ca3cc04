// The data-dependent symbols of a lowered program (passes::Symbol bound by a call: nonzero's count, a dim read from
// an infer-meta at run time), as both classes bind them: the CPU's run() (program_context_data_dependent.cpp) and
// the CUDA class's enqueue() (cuda_data_dependent.cpp) call bind_s<id>() once the symbol is known, in the same
// order, and it computes the sizes and lays out the buffers that late_symbol() assigns to it.
#pragma once

#include <cstdint>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::codegen {

class DataSymbols {
 public:
  explicit DataSymbols(const passes::LoweredProgram& program) : p_(program) {}

  /// The data-dependent symbol among `e`'s that is known last (bound by the latest call), or kNone: the bind_s<id>()
  /// function that computes `e` (or lays out a value sized by it).
  uint32_t late_symbol(const passes::SymExpr& e) const;
  /// The same over a shape, dim by dim (not sym_numel(dims): a dim of 0 would make the product forget the others).
  uint32_t late_symbol(const passes::SymShape& dims) const;
  /// The order run() binds data-dependent symbols in: by call; a call's dims read before it (from its infer-meta)
  /// before those its kernel finds; then by id.
  bool bound_later(uint32_t a, uint32_t b) const;
  /// The data-dependent symbols that a call binds, in bind order.
  std::vector<uint32_t> bind_order() const;
  /// A value laid out only once a data-dependent dim is known (its dims mention one; not the op's own result, which
  /// has a capacity).
  bool is_late(const passes::LoweredValue& v) const {
    return v.capacity.empty() && late_symbol(v.dims) != passes::kNone;
  }

 private:
  const passes::LoweredProgram& p_;
};

}  // namespace kforge::codegen
