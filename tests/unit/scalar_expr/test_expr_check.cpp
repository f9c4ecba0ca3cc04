#include <catch2/catch.hpp>

#include "harness.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace {

using ST = ScalarType;

// An op with inputs of several dtypes and attributes of several types.
ExprContext checked_context() {
  return ExprContext("mixed")
      .input("x", ST::kFloat32)
      .input("h", ST::kFloat16)
      .input("b16", ST::kBFloat16)
      .input("d", ST::kFloat64)
      .input("i", ST::kInt32)
      .input("k", ST::kInt64)
      .input("i8", ST::kInt8)
      .input("c", ST::kBool)
      .input("e", ST::kBool)
      .attribute("alpha", ST::kFloat32)
      .attribute("beta", ST::kFloat64)
      .attribute("count", ST::kInt32)
      .attribute("flag", ST::kBool)
      .opaque_attribute("axis", "IntArray");
}

std::string check_error(std::string_view text, const ExprContext& context = checked_context()) {
  Harness h;
  std::optional<Expression> e = h.typed(text, context);
  CHECK(!e);
  return h.take();
}

}  // namespace

TEST_CASE("scalar types: names, compute types and the promotion lattice") {
  CHECK(name_of(ST::kBFloat16) == "bfloat16");
  CHECK(scalar_type_from_name("uint8") == ST::kUInt8);
  CHECK(!scalar_type_from_name("complex64"));
  CHECK(compute_type(ST::kFloat16) == ST::kFloat32);
  CHECK(compute_type(ST::kBFloat16) == ST::kFloat32);
  CHECK(compute_type(ST::kInt8) == ST::kInt32);
  CHECK(compute_type(ST::kUInt8) == ST::kInt32);
  CHECK(compute_type(ST::kInt16) == ST::kInt32);
  CHECK(promote(ST::kBool, ST::kInt32) == ST::kInt32);
  CHECK(promote(ST::kInt32, ST::kInt64) == ST::kInt64);
  CHECK(promote(ST::kInt64, ST::kFloat16) == ST::kFloat32);
  CHECK(promote(ST::kFloat32, ST::kFloat64) == ST::kFloat64);
  CHECK(promote(ST::kFloat64, ST::kInt8) == ST::kFloat64);
  CHECK(cpp_type_name(ST::kInt64) == "int64_t");
  CHECK(cpp_type_name(ST::kFloat16) == "float");
  CHECK(paddle_attribute_scalar_type("float") == ST::kFloat32);
  CHECK(paddle_attribute_scalar_type("int") == ST::kInt32);
  CHECK(paddle_attribute_scalar_type("int64_t") == ST::kInt64);
  CHECK(paddle_attribute_scalar_type("Scalar") == ST::kFloat32);
  CHECK(paddle_attribute_scalar_type("Scalar(double)") == ST::kFloat64);
  CHECK(paddle_attribute_scalar_type("Scalar(int64_t)") == ST::kInt64);
  CHECK(!paddle_attribute_scalar_type("IntArray"));
  CHECK(!paddle_attribute_scalar_type("int[]"));
  CHECK(!paddle_attribute_scalar_type("DataType"));
}

TEST_CASE("checker: promotion of strong operands") {
  const ExprContext ctx = checked_context();
  CHECK(typed_dump("x + x", ctx) == "(+:float32 x:float32 x:float32)");
  CHECK(typed_dump("i + k", ctx) == "(+:int64 (convert:int64 i:int32) k:int64)");
  CHECK(typed_dump("i + h", ctx) == "(+:float32 (convert:float32 i:int32) h:float32)");
  CHECK(typed_dump("h * b16", ctx) == "(*:float32 h:float32 b16:float32)");
  CHECK(typed_dump("x - d", ctx) == "(-:float64 (convert:float64 x:float32) d:float64)");
  CHECK(typed_dump("k / d", ctx) == "(/:float64 (convert:float64 k:int64) d:float64)");
  CHECK(typed_dump("i8 + i", ctx) == "(+:int32 i8:int32 i:int32)");
  CHECK(typed_dump("max(i, x)", ctx) == "(max:float32 (convert:float32 i:int32) x:float32)");
}

TEST_CASE("checker: literals and attributes adapt to the other operand") {
  const ExprContext ctx = checked_context();
  CHECK(typed_dump("max(x, 0)", ctx) == "(max:float32 x:float32 0.0:float32~)");
  CHECK(typed_dump("max(d, 0)", ctx) == "(max:float64 d:float64 0.0:float64~)");
  CHECK(typed_dump("max(i, 0)", ctx) == "(max:int32 i:int32 0:int32~)");
  CHECK(typed_dump("k + 1", ctx) == "(+:int64 k:int64 1:int64~)");
  CHECK(typed_dump("i + 1.5", ctx) == "(+:float32 (convert:float32 i:int32) 1.5:float32~)");
  CHECK(typed_dump("h * alpha", ctx) == "(*:float32 h:float32 alpha:float32~)");
  CHECK(typed_dump("x * beta", ctx) == "(*:float32 x:float32 (convert:float32~ beta:float64~))");
  CHECK(typed_dump("d * alpha", ctx) == "(*:float64 d:float64 (convert:float64~ alpha:float32~))");
  CHECK(typed_dump("x * count", ctx) == "(*:float32 x:float32 (convert:float32~ count:int32~))");
  CHECK(typed_dump("i * alpha", ctx) == "(*:float32 (convert:float32 i:int32) alpha:float32~)");
  CHECK(typed_dump("alpha * 2", ctx) == "(*:float32~ alpha:float32~ 2.0:float32~)");
  CHECK(typed_dump("beta + alpha", ctx) == "(+:float64~ beta:float64~ (convert:float64~ alpha:float32~))");
  CHECK(typed_dump("1 + 2", ctx) == "(+:int32~ 1:int32~ 2:int32~)");
  CHECK(typed_dump("3000000000", ctx) == "3000000000:int64~");
  CHECK(typed_dump("k + 3000000000", ctx) == "(+:int64 k:int64 3000000000:int64~)");
  CHECK(typed_dump("x * -2", ctx) == "(*:float32 x:float32 -2.0:float32~)");
  CHECK(typed_dump("max(i, -inf)", ctx) == "(max:float32 (convert:float32 i:int32) -inf:float32~)");
  CHECK(typed_dump("-x", ctx) == "(neg:float32 x:float32)");
}

TEST_CASE("checker: comparisons, logic, select and functions") {
  const ExprContext ctx = checked_context();
  CHECK(typed_dump("x > 0", ctx) == "(>:bool x:float32 0.0:float32~)");
  CHECK(typed_dump("i <= k", ctx) == "(<=:bool (convert:int64 i:int32) k:int64)");
  CHECK(typed_dump("c == e", ctx) == "(==:bool c:bool e:bool)");
  CHECK(typed_dump("c && !e || flag", ctx) == "(||:bool (&&:bool c:bool (!:bool e:bool)) flag:bool~)");
  CHECK(typed_dump("c ? x : 0", ctx) == "(select:float32 c:bool x:float32 0.0:float32~)");
  CHECK(typed_dump("select(c, i, d)", ctx) == "(select:float64 c:bool (convert:float64 i:int32) d:float64)");
  CHECK(typed_dump("flag ? 1 : 2", ctx) == "(select:int32~ flag:bool~ 1:int32~ 2:int32~)");
  CHECK(typed_dump("c ? true : e", ctx) == "(select:bool c:bool true:bool e:bool)");
  CHECK(typed_dump("exp(x)", ctx) == "(exp:float32 x:float32)");
  CHECK(typed_dump("exp(k)", ctx) == "(exp:float32 (convert:float32 k:int64))");
  CHECK(typed_dump("tanh(d)", ctx) == "(tanh:float64 d:float64)");
  CHECK(typed_dump("abs(k)", ctx) == "(abs:int64 k:int64)");
  CHECK(typed_dump("floor(i)", ctx) == "(floor:int32 i:int32)");
  CHECK(typed_dump("pow(i, 2)", ctx) == "(pow:float32 (convert:float32 i:int32) 2.0:float32~)");
  CHECK(typed_dump("pow(d, alpha)", ctx) == "(pow:float64 d:float64 (convert:float64~ alpha:float32~))");
  CHECK(typed_dump("isnan(h)", ctx) == "(isnan:bool h:float32)");
  CHECK(typed_dump("isinf(i)", ctx) == "(isinf:bool (convert:float32 i:int32))");
  CHECK(typed_dump("x % 2", ctx) == "(%:float32 x:float32 2.0:float32~)");
  CHECK(typed_dump("i % 2", ctx) == "(%:int32 i:int32 2:int32~)");
}

TEST_CASE("checker: casts") {
  const ExprContext ctx = checked_context();
  CHECK(typed_dump("int32(x) / 2", ctx) == "(/:int32 (int32:int32 x:float32) 2:int32~)");
  CHECK(typed_dump("float16(i)", ctx) == "(float16:float32 i:int32)");
  CHECK(typed_dump("bfloat16(x)", ctx) == "x:float32");
  CHECK(typed_dump("float32(x)", ctx) == "x:float32");
  CHECK(typed_dump("bool(x)", ctx) == "(bool:bool x:float32)");
  CHECK(typed_dump("int64(c)", ctx) == "(int64:int64 c:bool)");
  CHECK(typed_dump("float64(0.5)", ctx) == "0.5:float64");
  CHECK(typed_dump("int32(2.7)", ctx) == "2:int32");
  CHECK(typed_dump("bool(2)", ctx) == "true:bool");
  // A cast makes an attribute strong: float64(alpha) promotes a float32 input.
  CHECK(typed_dump("x * float64(alpha)", ctx) == "(*:float64 (convert:float64 x:float32) (float64:float64 alpha:float32~))");
  CHECK(typed_dump("x * float32(alpha)", ctx) == "(*:float32 x:float32 alpha:float32)");
}

TEST_CASE("checker: name errors with suggestions and the op's names") {
  const ExprContext leaky = ExprContext("leaky_relu").input("x", ST::kFloat32).attribute("negative_slope", ST::kFloat32);
  Harness h;
  const std::string yaml = "- op: leaky_relu\n  compute: \"x > 0 ? x : negative_slop * x\"\n";
  const SourceLoc loc = h.place(yaml, "\"x > 0");
  std::optional<Expression> parsed = parse_expression("x > 0 ? x : negative_slop * x", loc, &h.sources, h.diags);
  REQUIRE(parsed);
  CHECK(!check_expression(*parsed, leaky, h.diags));
  CHECK(h.take() ==
        "ops.yaml:2:25: error: unknown identifier 'negative_slop'\n"
        "   compute: \"x > 0 ? x : negative_slop * x\"\n"
        "                         ^\n"
        "kforge: note: did you mean 'negative_slope'?\n"
        "kforge: note: op 'leaky_relu' has input 'x' and attribute 'negative_slope'\n");

  CHECK(check_error("max(y, 0)", ExprContext("relu").input("x", ST::kFloat32)) ==
        "kforge: error: unknown identifier 'y'\n"
        "kforge: note: did you mean 'x'?\n"
        "kforge: note: op 'relu' has input 'x' and no attributes\n");
  CHECK(check_error("cond ? x : y", ExprContext("where").input("condition", ST::kBool).input("x", ST::kFloat32).input("y", ST::kFloat32)) ==
        "kforge: error: unknown identifier 'cond'\n"
        "kforge: note: op 'where' has inputs 'condition', 'x', 'y' and no attributes\n");
  CHECK(check_error("acc + x", ExprContext().input("x", ST::kFloat32).attribute("a", ST::kFloat32).attribute("b", ST::kInt32)) ==
        "kforge: error: unknown identifier 'acc'\n"
        "kforge: note: available: input 'x' and attributes 'a', 'b'\n");
  // Every independent error is reported.
  CHECK(check_error("foo + max(x, bar)", ExprContext("relu").input("x", ST::kFloat32)) ==
        "kforge: error: unknown identifier 'foo'\n"
        "kforge: note: op 'relu' has input 'x' and no attributes\n"
        "kforge: error: unknown identifier 'bar'\n"
        "kforge: note: op 'relu' has input 'x' and no attributes\n");
  CHECK(check_error("x * axis") == "kforge: error: attribute 'axis' has type IntArray, which is not a scalar\n");
}

TEST_CASE("checker: type errors") {
  CHECK(check_error("c + 1") ==
        "kforge: error: operands of '+' must be numeric, got bool and int32\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("x * flag") ==
        "kforge: error: operands of '*' must be numeric, got float32 and bool\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("-c") ==
        "kforge: error: operand of unary '-' must be numeric, got bool\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("!x") ==
        "kforge: error: operand of '!' must be bool, got float32\n"
        "kforge: note: convert with bool(...) to test for a non-zero value\n");
  CHECK(check_error("x && c") ==
        "kforge: error: operands of '&&' must be bool, got float32 and bool\n"
        "kforge: note: convert with bool(...) to test for a non-zero value\n");
  CHECK(check_error("x ? 1 : 2") ==
        "kforge: error: condition of '?:' must be bool, got float32\n"
        "kforge: note: convert with bool(...) to test for a non-zero value\n");
  CHECK(check_error("select(i, 1, 2)") ==
        "kforge: error: condition of 'select' must be bool, got int32\n"
        "kforge: note: convert with bool(...) to test for a non-zero value\n");
  CHECK(check_error("c ? x : e") == "kforge: error: branches of '?:' have incompatible types float32 and bool\n");
  CHECK(check_error("c < e") ==
        "kforge: error: operands of '<' must be numeric, got bool and bool\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("c == x") ==
        "kforge: error: cannot compare bool with float32\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("exp(c)") ==
        "kforge: error: argument of 'exp' must be numeric, got bool\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("max(c, x)") ==
        "kforge: error: arguments of 'max' must be numeric, got bool and float32\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
  CHECK(check_error("i + 3000000000") == "kforge: error: integer literal 3000000000 does not fit in int32\n");
  CHECK(check_error("x * 1e300") == "kforge: error: literal 1e+300 overflows float32\n");
  CHECK(check_error("int32(1e20)") == "kforge: error: literal 1e+20 is out of range for int32\n");
}

TEST_CASE("checker: located type error in a quoted YAML string") {
  Harness h;
  const std::string yaml = "- op: scale\n  compute: \"bias_after_scale ? x * scale + bias : (x + bias) * bias_after_scale\"\n";
  const SourceLoc loc = h.place(yaml, "\"bias_after_scale");
  const std::string text = "bias_after_scale ? x * scale + bias : (x + bias) * bias_after_scale";
  std::optional<Expression> parsed = parse_expression(text, loc, &h.sources, h.diags);
  REQUIRE(parsed);
  const ExprContext scale = ExprContext("scale")
                                .input("x", ST::kFloat32)
                                .attribute("scale", ST::kFloat32)
                                .attribute("bias", ST::kFloat32)
                                .attribute("bias_after_scale", ST::kBool);
  CHECK(!check_expression(*parsed, scale, h.diags));
  // A binary node is located at its operator.
  CHECK(h.take() ==
        "ops.yaml:2:62: error: operands of '*' must be numeric, got float32 and bool\n"
        "   compute: \"bias_after_scale ? x * scale + bias : (x + bias) * bias_after_scale\"\n"
        "                                                              ^\n"
        "kforge: note: convert with int32(...) or float32(...) first\n");
}

TEST_CASE("checker: names a checked expression reads") {
  Harness h;
  const std::optional<Expression> e = h.typed("c ? x * alpha + x : h - alpha * count", checked_context());
  REQUIRE(e);
  CHECK(names_used(*e->root, NameKind::kInput) == std::vector<std::string>{"c", "x", "h"});
  CHECK(names_used(*e->root, NameKind::kAttribute) == std::vector<std::string>{"alpha", "count"});
  const std::optional<Expression> constant = h.typed("alpha * 2", checked_context());
  REQUIRE(constant);
  CHECK(names_used(*constant->root, NameKind::kInput).empty());
}

TEST_CASE("checker: the parsed expression is left untouched and can be checked for other dtypes") {
  Harness h;
  std::optional<Expression> parsed = h.parse("max(x, 0) * alpha");
  REQUIRE(parsed);
  const auto f32 = check_expression(*parsed, ExprContext().input("x", ST::kFloat32).attribute("alpha", ST::kFloat32), h.diags);
  const auto f64 = check_expression(*parsed, ExprContext().input("x", ST::kFloat64).attribute("alpha", ST::kFloat32), h.diags);
  const auto i32 = check_expression(*parsed, ExprContext().input("x", ST::kInt32).attribute("alpha", ST::kInt32), h.diags);
  REQUIRE(f32);
  REQUIRE(f64);
  REQUIRE(i32);
  CHECK(dump(*parsed->root, true) == "(* (max x 0) alpha)");
  CHECK(f32->root->type == ST::kFloat32);
  CHECK(f64->root->type == ST::kFloat64);
  CHECK(i32->root->type == ST::kInt32);
}
