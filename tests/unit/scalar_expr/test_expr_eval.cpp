#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>

#include "harness.h"
#include "kforge_math.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace {

using ST = ScalarType;

ExprContext evaluated_context() {
  return ExprContext("mixed")
      .input("x", ST::kFloat32)
      .input("h", ST::kFloat16)
      .input("d", ST::kFloat64)
      .input("i", ST::kInt32)
      .input("k", ST::kInt64)
      .input("c", ST::kBool)
      .attribute("alpha", ST::kFloat32)
      .attribute("beta", ST::kFloat64)
      .attribute("count", ST::kInt32)
      .attribute("flag", ST::kBool);
}

EvalBindings values() {
  return EvalBindings::from_maps(
      {{"x", Value::of_float(1.5, ST::kFloat32)},
       {"h", Value::of_float(-2.0, ST::kFloat32)},
       {"d", Value::of_float(0.1)},
       {"i", Value::of_int(7, ST::kInt32)},
       {"k", Value::of_int(-9)},
       {"c", Value::of_bool(true)}},
      {{"alpha", Value::of_float(0.1)},  // given as float64: used as float32 0.1f
       {"beta", Value::of_float(0.25)},
       {"count", Value::of_int(3, ST::kInt32)},
       {"flag", Value::of_bool(false)}});
}

// Evaluates `text` against evaluated_context() and values(); "error: ..." on failure.
std::string eval(std::string_view text, const EvalBindings& bindings = values()) {
  Harness h;
  std::optional<Expression> e = h.typed(text, evaluated_context());
  if (!e) return "check: " + h.take();
  std::string error;
  std::optional<Value> v = evaluate(*e->root, bindings, &error);
  return v ? to_string(*v) : "error: " + error;
}

}  // namespace

TEST_CASE("eval: arithmetic in the node's type") {
  CHECK(eval("x + 1") == "float32 2.5");
  CHECK(eval("i / 2") == "int32 3");
  CHECK(eval("-i / 2") == "int32 -3");  // truncates toward zero, as C++
  CHECK(eval("i % 4") == "int32 3");
  CHECK(eval("-i % 4") == "int32 -3");
  CHECK(eval("x % 1") == "float32 0.5");
  CHECK(eval("k * 2 - i") == "int64 -25");
  CHECK(eval("i / 2.0") == "float32 3.5");
  CHECK(eval("d + x") == "float64 1.6");
  CHECK(eval("x * alpha") == fmt::format("float32 {}", 1.5f * 0.1f));
  CHECK(eval("d * alpha") == fmt::format("float64 {}", 0.1 * static_cast<double>(0.1f)));
  CHECK(eval("x * beta") == "float32 0.375");
  CHECK(eval("count * 2") == "int32 6");
  CHECK(eval("1 + 2") == "int32 3");
  CHECK(eval("h * h") == "float32 4");
}

TEST_CASE("eval: float32 nodes round like the emitted float code") {
  // 0.1f + 0.2f in float is not 0.1 + 0.2 in double rounded once.
  Harness h;
  std::optional<Expression> e = h.typed("x + 0.2", ExprContext().input("x", ST::kFloat32));
  REQUIRE(e);
  const std::optional<Value> v =
      evaluate(*e->root, EvalBindings::from_maps({{"x", Value::of_float(0.1, ST::kFloat32)}}, {}));
  REQUIRE(v);
  CHECK(v->f == static_cast<double>(0.1f + 0.2f));
  CHECK(eval("exp(x)") == fmt::format("float32 {}", kforge::math::exp(1.5f)));  // the emitted code's exp
  CHECK(eval("rsqrt(x)") == fmt::format("float32 {}", 1.0f / std::sqrt(1.5f)));
  CHECK(eval("sigmoid(x)") == fmt::format("float32 {}", 1.0f / (1.0f + kforge::math::exp(-1.5f))));
  CHECK(eval("erf(d)") == fmt::format("float64 {}", std::erf(0.1)));
  CHECK(eval("tanh(i)") == fmt::format("float32 {}", std::tanh(7.0f)));
  CHECK(eval("pow(x, 2)") == "float32 2.25");
}

TEST_CASE("eval: comparisons, logic, select and functions") {
  CHECK(eval("x > 1") == "bool true");
  CHECK(eval("i == 7 && !flag") == "bool true");
  CHECK(eval("c ? x : 0") == "float32 1.5");
  CHECK(eval("flag ? x : 0") == "float32 0");
  CHECK(eval("max(x, 2)") == "float32 2");
  CHECK(eval("min(k, i)") == "int64 -9");
  CHECK(eval("abs(k)") == "int64 9");
  CHECK(eval("abs(h)") == "float32 2");
  CHECK(eval("floor(-x)") == "float32 -2");
  CHECK(eval("ceil(x)") == "float32 2");
  CHECK(eval("trunc(h / 3)") == "float32 -0");
  CHECK(eval("floor(i)") == "int32 7");
  CHECK(eval("isnan(x)") == "bool false");
  CHECK(eval("isinf(x / 0)") == "bool true");
  CHECK(eval("isfinite(x)") == "bool true");
  CHECK(eval("int32(x * 3)") == "int32 4");
  CHECK(eval("int32(-x)") == "int32 -1");
  CHECK(eval("bool(x)") == "bool true");
  CHECK(eval("float32(c) + 1") == "float32 2");
  CHECK(eval("int64(inf)") == "int64 9223372036854775807");
  CHECK(eval("max(i, -inf)") == "float32 7");
}

TEST_CASE("eval: undefined behaviour of the emitted code is an error here") {
  CHECK(eval("i / 0") == "error: integer division by zero");
  CHECK(eval("i % (i - 7)") == "error: integer remainder by zero");
  CHECK(eval("int32(x * 1e10)") == "error: value 15000000512 is out of range for int32");
  CHECK(eval("int32(x / 0 - x / 0)") == "error: value nan is out of range for int32");
  CHECK(eval("int32(-2147483647 - 1) / -1") == "error: int32 overflow in -2147483648 / -1");
  // Only the chosen branch of a select is evaluated, as in C++.
  CHECK(eval("flag ? i / 0 : 1") == "int32 1");
  CHECK(eval("flag && i / 0 == 1") == "bool false");
  // Signed overflow wraps.
  CHECK(eval("2147483647 + int32(c)") == "int32 -2147483648");
}

TEST_CASE("eval: missing values are errors") {
  const EvalBindings none;
  CHECK(eval("x + 1", none) == "error: no value for input 'x'");
  CHECK(eval("alpha", none) == "error: no value for attribute 'alpha'");
  Harness h;
  ExprScope scope;
  scope.accumulator = ST::kFloat32;
  scope.count = true;
  std::optional<Expression> e = h.typed("acc / n", ExprContext(), scope);
  REQUIRE(e);
  std::string error;
  CHECK(!evaluate(*e->root, none, &error));
  CHECK(error == "no value for 'acc'");
  EvalBindings b;
  b.accumulator = Value::of_float(10, ST::kFloat32);
  CHECK(!evaluate(*e->root, b, &error));
  CHECK(error == "no value for 'n'");
  b.count = 4;
  const std::optional<Value> v = evaluate(*e->root, b, &error);
  REQUIRE(v);
  CHECK(to_string(*v) == "float32 2.5");
}

TEST_CASE("eval: value conversions") {
  CHECK(to_string(*convert_value(Value::of_float(2.9), ST::kInt64)) == "int64 2");
  CHECK(to_string(*convert_value(Value::of_int(-1), ST::kInt32)) == "int32 -1");
  CHECK(to_string(*convert_value(Value::of_int(4294967297), ST::kInt32)) == "int32 1");
  CHECK(to_string(*convert_value(Value::of_int(3), ST::kFloat16)) == "float32 3");
  CHECK(to_string(*convert_value(Value::of_bool(true), ST::kFloat64)) == "float64 1");
  CHECK(to_string(*convert_value(Value::of_float(0.0), ST::kBool)) == "bool false");
  std::string error;
  CHECK(!convert_value(Value::of_float(1e19), ST::kInt64, &error));
  CHECK(error == "value 1e+19 is out of range for int64");
  CHECK(Value::of_int(3).as_double() == 3.0);
  CHECK(Value::of_bool(true).as_double() == 1.0);
}
