// codegen/data_symbols.h: the order both classes bind data-dependent dims in, and which bind_s<id>() computes a size.
#include <catch2/catch.hpp>

#include <vector>

#include "codegen/data_symbols.h"

using kforge::codegen::DataSymbols;
using kforge::passes::kNone;
using kforge::passes::LoweredProgram;
using kforge::passes::LoweredValue;
using kforge::passes::Symbol;
using kforge::passes::SymbolKind;
using kforge::passes::SymExpr;

namespace {

Symbol input_dim(uint32_t id) {
  Symbol s;
  s.id = id;
  return s;
}

Symbol data_dim(uint32_t id, uint32_t call, bool before_call) {
  Symbol s;
  s.id = id;
  s.kind = SymbolKind::kDataDependent;
  s.call = call;
  s.before_call = before_call;
  return s;
}

}  // namespace

TEST_CASE("data symbols: bound by call, a call's infer-meta dims before those its kernel finds, then by id") {
  LoweredProgram p;
  // s0 an input dim; s1 found by call 3; s2 and s4 read before call 1; s3 found by call 1; s5 never bound.
  p.symbols = {input_dim(0), data_dim(1, 3, false), data_dim(2, 1, true), data_dim(3, 1, false),
               data_dim(4, 1, true), data_dim(5, kNone, false)};
  const DataSymbols data(p);
  CHECK(data.bind_order() == std::vector<uint32_t>{2, 4, 3, 1});
  CHECK(data.bound_later(1, 3));
  CHECK(data.bound_later(3, 4));
  CHECK_FALSE(data.bound_later(2, 4));
}

TEST_CASE("data symbols: a size is computed by the bind of its latest symbol; input dims alone by compute_sizes") {
  LoweredProgram p;
  p.symbols = {input_dim(0), data_dim(1, 3, false), data_dim(2, 1, false)};
  const DataSymbols data(p);
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1), s2 = SymExpr::symbol(2);
  CHECK(data.late_symbol(4 * s0 + 8) == kNone);
  CHECK(data.late_symbol(s0 * s2) == 2);
  CHECK(data.late_symbol(SymExpr::max(s1, s2) * s0) == 1);
  // Dim by dim: a dim of 0 in the product must not hide the others.
  CHECK(data.late_symbol(kforge::passes::SymShape{SymExpr(0), s2}) == 2);
  LoweredValue result;  // the op's own result: laid out for its capacity before the call
  result.dims = {s2, SymExpr(2)};
  result.capacity = {4 * s0, SymExpr(2)};
  CHECK_FALSE(data.is_late(result));
  LoweredValue after;  // what a later call computes from it
  after.dims = {s2};
  CHECK(data.is_late(after));
}
