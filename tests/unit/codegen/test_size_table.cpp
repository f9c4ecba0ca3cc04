// codegen/size_table.h: every size of a dynamic program once, defined over earlier entries only.
#include <catch2/catch.hpp>

#include <string>

#include "codegen/size_table.h"

using kforge::codegen::SizeTable;
using kforge::passes::SymExpr;

namespace {

std::string z(uint32_t k) { return "z[" + std::to_string(k) + "]"; }
std::string member(uint32_t k) { return "sizes_[" + std::to_string(k) + "]"; }

}  // namespace

TEST_CASE("size table: constants and lone dims need no entry") {
  SizeTable t;
  CHECK(t.ref(SymExpr(64), member) == "64");
  CHECK(t.ref(SymExpr::symbol(1), member) == "s1");
  CHECK(t.size() == 0);
}

TEST_CASE("size table: equal expressions share one entry, and atoms are entries before their users") {
  SizeTable t;
  const SymExpr s1 = SymExpr::symbol(1);
  const SymExpr half = SymExpr::floor_div(s1 - 1, 2);
  const SymExpr dim = half + 1;
  const std::string a = t.ref(dim, member);
  // s1 - 1 (an operand that is a sum), floor_div(z[0], 2), then the dim itself.
  REQUIRE(t.size() == 3);
  CHECK(a == "sizes_[2]");
  CHECK(t.checked_definition(0, z) == "s1 - 1");
  CHECK(t.checked_definition(1, z) == "kforge::checked_floor_div(z[0], 2)");
  CHECK(t.checked_definition(2, z) == "z[1] + 1");
  // The same dim built again is the same entry; a product of it refers to it.
  CHECK(t.ref(SymExpr::floor_div(s1 - 1, 2) + 1, member) == "sizes_[2]");
  t.ref(dim * dim * 4, member);
  CHECK(t.size() == 4);
  CHECK(t.checked_definition(3, z) == "8 * z[1] + 4 * z[1] * z[1] + 4");
}

TEST_CASE("size table: an operand registered later as an entry of its own is spelled out where it is not computed yet") {
  SizeTable t;
  const SymExpr s0 = SymExpr::symbol(0);
  const SymExpr inner = SymExpr::max(s0, SymExpr(4));
  const SymExpr outer = SymExpr::max(s0 + 1, 2 * inner);
  t.ref(outer, member);
  const uint32_t twice = t.entry(2 * inner);  // registered after `outer`, which uses the same expression
  const uint32_t outer_entry = t.entry(outer);
  REQUIRE(twice > outer_entry);
  CHECK(t.checked_definition(outer_entry, z).find(z(twice)) == std::string::npos);
}

TEST_CASE("size table: a chain of n nested operations is n entries of bounded length") {
  // A deep network's spatial dims: floor_div(floor_div(...(s1 - 1)..., 2), 2); spelled out, the n-th is O(n)
  // long and every use repeats it; in the table each step is one short definition.
  SizeTable t;
  SymExpr d = SymExpr::symbol(1);
  for (int i = 0; i < 40; ++i) d = SymExpr::floor_div(d - 1, 2) + 1;
  t.ref(d, member);
  CHECK(t.size() <= 3 * 40);
  for (uint32_t k = 0; k < t.size(); ++k) CHECK(t.checked_definition(k, z).size() < 64);
}
