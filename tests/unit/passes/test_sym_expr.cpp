// Symbolic dims: the polynomial normal form, exact division, printing and evaluation.
#include <catch2/catch.hpp>

#include "passes/sym_expr.h"

using kforge::passes::SymExpr;
using kforge::passes::SymShape;

TEST_CASE("sym_expr: constants fold exactly") {
  CHECK((SymExpr(3) + SymExpr(4)).constant() == 7);
  CHECK((SymExpr(3) * SymExpr(-4)).constant() == -12);
  CHECK(SymExpr::floor_div(-7, 2).constant() == -4);
  CHECK(SymExpr::ceil_div(7, 2).constant() == 4);
  CHECK(SymExpr::max(3, 9).constant() == 9);
  CHECK(SymExpr::min(3, 9).constant() == 3);
  CHECK(SymExpr().constant() == 0);
  CHECK(SymExpr::align_up(100, 64).constant() == 128);
  CHECK(SymExpr::align_up(128, 64).constant() == 128);
}

TEST_CASE("sym_expr: polynomials have one normal form") {
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  CHECK(s0 + s1 == s1 + s0);
  CHECK(s0 * s1 * 3 == SymExpr(3) * s1 * s0);
  CHECK((s0 + 1) * (s0 - 1) == s0 * s0 - 1);
  CHECK((s0 - s0).constant() == 0);
  CHECK(s0 + 0 == s0);
  CHECK(s0 != s1);
  CHECK_FALSE(s0.is_constant());
  uint32_t id = 99;
  CHECK(s1.is_symbol(&id));
  CHECK(id == 1);
  CHECK_FALSE((s1 * 2).is_symbol());
  CHECK((s1 * s0 + s0).symbols() == std::vector<uint32_t>{0, 1});
}

TEST_CASE("sym_expr: exact division simplifies, the rest stays an atom") {
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  CHECK(SymExpr::floor_div(s0 * 30, 30) == s0);             // reshape [s0, 3, 10] -> [-1, 30]
  CHECK(SymExpr::floor_div(s0 * s1 * 12, s1 * 4) == s0 * 3);  // a monomial dividing every term
  CHECK(SymExpr::floor_div(s0 * 6 + 12, 6) == s0 + 2);
  CHECK(SymExpr::floor_div(s0 + s1, s0 + s1).constant() == 1);
  const SymExpr atom = SymExpr::floor_div(s0 + 2, 3);
  CHECK_FALSE(atom.is_constant());
  CHECK(atom.to_string() == "floor_div(s0 + 2, 3)");
  CHECK(SymExpr::ceil_div(s0, 4).to_string() == "ceil_div(s0, 4)");
  CHECK(SymExpr::max(s1, s0) == SymExpr::max(s0, s1));  // commutative: one spelling
  CHECK(SymExpr::max(s0, s0) == s0);
  CHECK(SymExpr::max(s0 * 4, s0 * 16) == s0 * 16);  // symbols are dims: never negative
  CHECK(SymExpr::min(s0 * 4 + 1, s0 * 4) == s0 * 4);
  CHECK_FALSE(SymExpr::max(s0, SymExpr(4)).is_constant());  // s0 may be smaller or larger than 4
  CHECK(SymExpr::align_up(s0 * 128, 64) == s0 * 128);  // already a multiple
}

TEST_CASE("sym_expr: printing is C++ and deterministic") {
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  CHECK(SymExpr(0).to_string() == "0");
  CHECK((s0 * 30 + 2).to_string() == "30 * s0 + 2");
  CHECK((s0 - 1).to_string() == "s0 - 1");
  CHECK((SymExpr(-1) * s0 + 4).to_string() == "-s0 + 4");
  CHECK((s0 * s1).to_string() == "s0 * s1");
  CHECK(SymExpr::max(s0, 4).to_string() == "max(4, s0)");
  SymExpr::PrintOptions named;
  named.symbol_name = [](uint32_t id) { return "in_dim_" + std::to_string(id); };
  named.floor_div_name = "fdiv";
  CHECK(SymExpr::floor_div(s1 + 1, 2).to_string(named) == "fdiv(in_dim_1 + 1, 2)");
}

TEST_CASE("sym_expr: evaluate agrees with the arithmetic") {
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  const SymExpr e = SymExpr::floor_div(s0 * 3 + s1 - 1, 2) * 4 + SymExpr::max(s0, s1) - SymExpr::ceil_div(s1, 3);
  for (int64_t a = 0; a < 6; ++a) {
    for (int64_t b = 0; b < 6; ++b) {
      const int64_t fd = (a * 3 + b - 1) >= 0 ? (a * 3 + b - 1) / 2 : -((-(a * 3 + b - 1) + 1) / 2);
      const int64_t expected = fd * 4 + std::max(a, b) - (b + 2) / 3;
      CHECK(e.evaluate({a, b}) == expected);
    }
  }
  CHECK(kforge::passes::sym_numel(SymShape{s0, 4, 2}).evaluate({5}) == 40);
  CHECK(kforge::passes::static_dims(SymShape{2, 3}) == std::vector<int64_t>{2, 3});
  CHECK_FALSE(kforge::passes::static_dims(SymShape{s0, 3}).has_value());
  CHECK(kforge::passes::to_string(SymShape{s0, 3}) == "[s0, 3]");
}

TEST_CASE("sym_expr: provably non-negative expressions") {
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  CHECK(SymExpr(0).provably_non_negative());
  CHECK(s0.provably_non_negative());
  CHECK((s0 * s1 + 3).provably_non_negative());
  CHECK_FALSE((s0 - 1).provably_non_negative());  // false says nothing: s0 may be 0
  CHECK_FALSE(SymExpr(-1).provably_non_negative());
  CHECK(SymExpr::floor_div(s0 + 2, 3).provably_non_negative());
  CHECK_FALSE(SymExpr::floor_div(s0 - 2, 3).provably_non_negative());
  CHECK(SymExpr::max(s0 - 4, s1).provably_non_negative());
  CHECK_FALSE(SymExpr::min(s0 - 4, s1).provably_non_negative());
  // So max and min simplify across divisions: s1 - floor_div(s1, 2) >= 0 is not provable, but
  // floor_div(s1, 2) + s0 - floor_div(s1, 2) = s0 is.
  CHECK(SymExpr::max(SymExpr::floor_div(s1, 2) + s0, SymExpr::floor_div(s1, 2)) == SymExpr::floor_div(s1, 2) + s0);
}

TEST_CASE("sym_expr: multiples of a constant divisor come out of a division") {
  const SymExpr h = SymExpr::symbol(0), w = SymExpr::symbol(1);
  // floor_div(a + c * q, c) = floor_div(a, c) + q, for any integers.
  CHECK(SymExpr::floor_div(h + 4 * w + 8, 4) == SymExpr::floor_div(h, 4) + w + 2);
  CHECK(SymExpr::ceil_div(h + 4 * w, 4) == SymExpr::ceil_div(h, 4) + w);
  // A constant that is not a multiple stays inside: conv formulas keep their spelling.
  CHECK(SymExpr::floor_div(h - 1, 2).to_string() == "floor_div(s0 - 1, 2)");
  // An all-negative numerator has one spelling: floor_div(-h, 4) is -ceil_div(h, 4).
  CHECK(SymExpr::floor_div(-h, 4) == -SymExpr::ceil_div(h, 4));
  CHECK(SymExpr::ceil_div(-h - 1, 4) == -SymExpr::floor_div(h + 1, 4));
  // Padding h up to a multiple of 4, as a program computes it: h + (4 - h % 4) % 4 is 4 * ceil_div(h, 4).
  const auto rem = [](const SymExpr& a, int64_t c) { return a - SymExpr::floor_div(a, c) * c; };
  CHECK(h + rem(4 - rem(h, 4), 4) == 4 * SymExpr::ceil_div(h, 4));
  // The rewrites are exact: check them against evaluation on negative values too.
  for (int64_t v = -9; v <= 9; ++v) {
    const std::vector<int64_t> at = {v, 3};
    CHECK(SymExpr::floor_div(h + 4 * w + 8, 4).evaluate(at) == SymExpr::floor_div(SymExpr(v + 20), 4).evaluate(at));
    CHECK(SymExpr::floor_div(-h, 4).evaluate(at) == SymExpr::floor_div(SymExpr(-v), 4).evaluate(at));
    CHECK(SymExpr::ceil_div(-h - 1, 4).evaluate(at) == SymExpr::ceil_div(SymExpr(-v - 1), 4).evaluate(at));
  }
}
