#include <catch2/catch.hpp>

#include "harness.h"
#include "scalar_expr/expr_rewrite.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace {

using ST = ScalarType;

ExprContext ctx() {
  return ExprContext("op")
      .input("x", ST::kFloat32)
      .input("y", ST::kFloat64)
      .input("i", ST::kInt32)
      .input("c", ST::kBool)
      .attribute("approximate", ST::kBool)
      .attribute("alpha", ST::kFloat32)
      .attribute("count", ST::kInt32);
}

Expression typed(std::string_view text) {
  Harness h;
  std::optional<Expression> e = h.typed(text, ctx());
  INFO(h.out.str());
  REQUIRE(e);
  return std::move(*e);
}

std::string folded(std::string_view text) { return emit_cpp(Expression({}, {}, fold_constants(*typed(text).root))); }

}  // namespace

TEST_CASE("rewrite: folding constants with the evaluator's semantics") {
  CHECK(folded("x * (2 * 3)") == "x * 6.0f");
  CHECK(folded("x + 1 / 3") == "x + 0.0f");  // weak int division first: 1 / 3 is int 0, then 0.0f
  CHECK(folded("x + 1.0 / 3") == "x + 0.33333334f");
  CHECK(folded("max(2, 5) * i") == "5 * i");
  CHECK(folded("exp(0) + x") == "1.0f + x");
  CHECK(folded("true ? x : 1") == "x");
  CHECK(folded("1 < 2 ? x : i") == "x");
  CHECK(folded("c && false") == "false");
  CHECK(folded("c && true") == "c");
  CHECK(folded("true || c") == "true");
  CHECK(folded("false || c") == "c");
  CHECK(folded("i + 1 / 0") == "i + 1 / 0");  // kept: the error belongs to the running code
  CHECK(folded("int32(3.7) + i") == "3 + i");
  CHECK(folded("float64(x) * (1 - 1)") == "static_cast<double>(x) * 0.0");
}

TEST_CASE("rewrite: binding attributes, then folding, removes the dead branch of gelu") {
  const ExprContext gelu = ExprContext("gelu").input("x", ST::kFloat32).attribute("approximate", ST::kBool);
  Harness h;
  std::optional<Expression> e = h.typed(
      "approximate ? 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) : 0.5 * x * (1 + "
      "erf(x * 0.7071067811865476))",
      gelu);
  REQUIRE(e);
  auto bound_to = [&](bool approximate) {
    NodePtr bound = bind_attributes(*e->root, [&](std::string_view name) -> std::optional<Value> {
      if (name == "approximate") return Value::of_bool(approximate);
      return std::nullopt;
    });
    return emit_cuda(Expression({}, {}, fold_constants(*bound)));
  };
  CHECK(bound_to(false) == "0.5f * x * (1.0f + erff(x * 0.70710677f))");
  CHECK(bound_to(true) == "0.5f * x * (1.0f + tanhf(0.7978846f * (x + 0.044715f * x * x * x)))");
  // The original is untouched.
  CHECK(emit_cuda(*e).rfind("approximate ? ", 0) == 0);
}

TEST_CASE("rewrite: bound attributes take the type the expression uses them in") {
  const Expression e = typed("y * alpha + count");  // alpha and count are used as float64 here
  NodePtr bound = bind_attributes(*e.root, [](std::string_view name) -> std::optional<Value> {
    if (name == "alpha") return Value::of_float(0.1);  // float attribute: rounds to 0.1f first
    if (name == "count") return Value::of_int(3, ST::kInt32);
    return std::nullopt;
  });
  CHECK(emit_cpp(Expression({}, {}, clone(*bound))) == "y * static_cast<double>(0.1f) + static_cast<double>(3)");
  CHECK(emit_cpp(Expression({}, {}, fold_constants(*bound))) == "y * 0.10000000149011612 + 3.0");
  CHECK(emit_cpp(Expression({}, {}, fold_constants(*bind_attributes(*e.root, [](std::string_view) {
          return std::optional<Value>(Value::of_float(0.5));
        })))) == "y * 0.5 + 0.0");
}

TEST_CASE("rewrite: substituting an input inlines a producer, converting where types differ") {
  // consumer: max(x, 0) over a float32 x; producer: i * 2 (int32) inlined for x.
  const Expression consumer = typed("max(x, 0)");
  const Expression producer = typed("i * 2");
  NodePtr inlined = substitute(*consumer.root, [&](const Node& name) -> NodePtr {
    return name.name == "x" ? clone(*producer.root) : nullptr;
  });
  CHECK(dump(*inlined, true) == "(max:float32 (convert:float32 (*:int32 i:int32 2:int32~)) 0.0:float32~)");
  CHECK(emit_cpp(Expression({}, {}, std::move(inlined))) == "std::max(static_cast<float>(i * 2), 0.0f)");
  // The evaluator agrees with the inlined tree.
  NodePtr again = substitute(*consumer.root, [&](const Node& name) -> NodePtr {
    return name.name == "x" ? clone(*producer.root) : nullptr;
  });
  const std::optional<Value> v = evaluate(*again, EvalBindings::from_maps({{"i", Value::of_int(-4, ST::kInt32)}}, {}));
  REQUIRE(v);
  CHECK(to_string(*v) == "float32 0");
}

TEST_CASE("rewrite: substituting at the use converts a widened attribute once, not through its own type") {
  // alpha (float32, weak) is widened for the float64 y; a float64 input put in its place stays float64.
  const Expression e = typed("y < alpha ? alpha : y");
  auto by_y = [&](const Node& name) -> NodePtr {
    if (name.name != "alpha") return nullptr;
    NodePtr in = clone(name);
    in->name = "y";
    in->name_kind = NameKind::kInput;
    in->type = ST::kFloat64;
    in->weak = false;
    return in;
  };
  CHECK(emit_cpp(Expression({}, {}, substitute_at_use(*e.root, by_y))) == "y < y ? y : y");
  CHECK(emit_cpp(Expression({}, {}, substitute(*e.root, by_y))) ==
        "y < static_cast<double>(static_cast<float>(y)) ? static_cast<double>(static_cast<float>(y)) : y");
  // A use at the name's own type (no conversion): the substitute converted to it, as substitute() does.
  const Expression f = typed("x * alpha");
  CHECK(emit_cpp(Expression({}, {}, substitute_at_use(*f.root, by_y))) == "x * static_cast<float>(y)");
}

TEST_CASE("rewrite: literals from values") {
  CHECK(dump(*make_literal(Value::of_float(2.5), ST::kFloat32), true) == "2.5:float32");
  CHECK(dump(*make_literal(Value::of_float(2.5), ST::kInt64), true) == "2:int64");
  CHECK(dump(*make_literal(Value::of_int(0), ST::kBool), true) == "false:bool");
  CHECK(make_literal(Value::of_float(1e30), ST::kInt32) == nullptr);
}
