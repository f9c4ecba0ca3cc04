#include <catch2/catch.hpp>

#include "harness.h"
#include "scalar_expr/expr_builtins.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace {

std::string parsed(std::string_view text) {
  Harness h;
  std::optional<Expression> e = h.parse(text);
  return e ? dump(*e->root) : "error: " + h.take();
}

// Parses `text` placed in a YAML line and returns the diagnostics printed.
std::string parse_error(const std::string& yaml, std::string_view value) {
  Harness h;
  const SourceLoc loc = h.place(yaml, value);
  std::optional<Expression> e = parse_expression(value, loc, &h.sources, h.diags);
  CHECK(!e);
  return h.take();
}

}  // namespace

TEST_CASE("parser: literals, names and calls") {
  CHECK(parsed("x") == "x");
  CHECK(parsed("42") == "42");
  CHECK(parsed("2.5") == "2.5");
  CHECK(parsed(".5") == "0.5");
  CHECK(parsed("1.") == "1.0");
  CHECK(parsed("1e-5") == "1e-05");
  CHECK(parsed("2E3") == "2000.0");
  CHECK(parsed("inf") == "inf");
  CHECK(parsed("true") == "true");
  CHECK(parsed("false") == "false");
  CHECK(parsed("max(x, 0)") == "(max x 0)");
  CHECK(parsed("select(c, a, b)") == "(select c a b)");
  CHECK(parsed("float32(x)") == "(float32 x)");
  CHECK(parsed("bfloat16(x)") == "(bfloat16 x)");
  CHECK(parsed("sigmoid(rsqrt(x))") == "(sigmoid (rsqrt x))");
  CHECK(parsed("  exp( x )  ") == "(exp x)");
}

TEST_CASE("parser: precedence and associativity follow C") {
  CHECK(parsed("a + b * c") == "(+ a (* b c))");
  CHECK(parsed("(a + b) * c") == "(* (+ a b) c)");
  CHECK(parsed("a - b - c") == "(- (- a b) c)");
  CHECK(parsed("a / b % c") == "(% (/ a b) c)");
  CHECK(parsed("-a * b") == "(* (neg a) b)");
  CHECK(parsed("- -a") == "(neg (neg a))");
  CHECK(parsed("a * -b") == "(* a (neg b))");
  CHECK(parsed("!a && b || c") == "(|| (&& (! a) b) c)");
  CHECK(parsed("a || b && c") == "(|| a (&& b c))");
  CHECK(parsed("a + 1 < b * 2") == "(< (+ a 1) (* b 2))");
  CHECK(parsed("a < b == c > d") == "(== (< a b) (> c d))");
  CHECK(parsed("a < b && c >= d") == "(&& (< a b) (>= c d))");
  CHECK(parsed("c ? a : b") == "(select c a b)");
  CHECK(parsed("c ? a : d ? e : f") == "(select c a (select d e f))");
  CHECK(parsed("c ? d ? e : f : b") == "(select c (select d e f) b)");
  CHECK(parsed("a || b ? x + 1 : y * 2") == "(select (|| a b) (+ x 1) (* y 2))");
  CHECK(parsed("bias_after_scale ? x * scale + bias : (x + bias) * scale") ==
        "(select bias_after_scale (+ (* x scale) bias) (* (+ x bias) scale))");
}

TEST_CASE("parser: every callable is known with its arity") {
  for (const std::string& name : callable_names()) {
    INFO(name);
    if (name == "select") continue;
    const bool binary = name == "min" || name == "max" || name == "pow";
    const std::string call = binary ? name + "(a, b)" : name + "(a)";
    CHECK(parsed(call) == "(" + name + (binary ? " a b)" : " a)"));
  }
  // function_info covers every enumerator (it falls back to the first entry otherwise).
  CHECK(function_info(Function::kIsfinite).name == "isfinite");
  CHECK(function_info(Function::kTanh).name == "tanh");
}

TEST_CASE("parser: diagnostics point at the exact column of the YAML line") {
  CHECK(parse_error("- op: relu\n  compute: maxx(x, 0)\n", "maxx(x, 0)") ==
        "ops.yaml:2:12: error: unknown function 'maxx'\n"
        "   compute: maxx(x, 0)\n"
        "            ^\n"
        "kforge: note: did you mean 'max'?\n");
  CHECK(parse_error("- op: a\n  compute: frobnicate(x)\n", "frobnicate(x)") ==
        "ops.yaml:2:12: error: unknown function 'frobnicate'\n"
        "   compute: frobnicate(x)\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: max(x)\n", "max(x)") ==
        "ops.yaml:2:12: error: 'max' takes 2 arguments, got 1\n"
        "   compute: max(x)\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: exp(x, y)\n", "exp(x, y)") ==
        "ops.yaml:2:12: error: 'exp' takes 1 argument, got 2\n"
        "   compute: exp(x, y)\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: select(c, x)\n", "select(c, x)") ==
        "ops.yaml:2:12: error: 'select' takes 3 arguments, got 2\n"
        "   compute: select(c, x)\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: x +\n", "x +") ==
        "ops.yaml:2:15: error: expected an expression, got end of input\n"
        "   compute: x +\n"
        "               ^\n");
  CHECK(parse_error("- op: a\n  compute: (x + 1\n", "(x + 1") ==
        "ops.yaml:2:18: error: expected ')' to close '(', got end of input\n"
        "   compute: (x + 1\n"
        "                  ^\n"
        "ops.yaml:2:12: note: '(' opened here\n"
        "   compute: (x + 1\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: max(x 1)\n", "max(x 1)") ==
        "ops.yaml:2:18: error: expected ',' or ')' in call to 'max', got '1'\n"
        "   compute: max(x 1)\n"
        "                  ^\n"
        "ops.yaml:2:15: note: '(' opened here\n"
        "   compute: max(x 1)\n"
        "               ^\n");
  CHECK(parse_error("- op: a\n  compute: c ? x\n", "c ? x") ==
        "ops.yaml:2:17: error: expected ':' in conditional expression, got end of input\n"
        "   compute: c ? x\n"
        "                 ^\n"
        "ops.yaml:2:14: note: '?' is here\n"
        "   compute: c ? x\n"
        "              ^\n");
  CHECK(parse_error("- op: a\n  compute: x y\n", "x y") ==
        "ops.yaml:2:14: error: unexpected 'y' after the expression\n"
        "   compute: x y\n"
        "              ^\n");
  CHECK(parse_error("- op: a\n  compute: x = 1\n", "x = 1") ==
        "ops.yaml:2:14: error: unexpected '=' in expression\n"
        "   compute: x = 1\n"
        "              ^\n"
        "kforge: note: did you mean '=='?\n");
  CHECK(parse_error("- op: a\n  compute: a & b\n", "a & b") ==
        "ops.yaml:2:14: error: unexpected '&' in expression\n"
        "   compute: a & b\n"
        "              ^\n"
        "kforge: note: did you mean '&&'?\n");
  CHECK(parse_error("- op: a\n  compute: x # y\n", "x # y") ==
        "ops.yaml:2:14: error: unexpected character '#' in expression\n"
        "   compute: x # y\n"
        "              ^\n");
  CHECK(parsed("a == b != c") == "error: kforge: error: comparison operators cannot be chained; combine comparisons with '&&'\n");
  CHECK(parse_error("- op: a\n  compute: 0 < x < 1\n", "0 < x < 1") ==
        "ops.yaml:2:18: error: comparison operators cannot be chained; combine comparisons with '&&'\n"
        "   compute: 0 < x < 1\n"
        "                  ^\n");
  CHECK(parse_error("- op: a\n  compute: x * 1.5f\n", "x * 1.5f") ==
        "ops.yaml:2:16: error: invalid number '1.5f'\n"
        "   compute: x * 1.5f\n"
        "                ^\n"
        "kforge: note: literals take no suffix: their type follows the other operand\n");
  CHECK(parse_error("- op: a\n  compute: x * 1e\n", "x * 1e") ==
        "ops.yaml:2:16: error: invalid number '1e'\n"
        "   compute: x * 1e\n"
        "                ^\n");
  CHECK(parse_error("- op: a\n  compute: 3x\n", "3x") ==
        "ops.yaml:2:12: error: invalid number '3x'\n"
        "   compute: 3x\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: 99999999999999999999\n", "99999999999999999999") ==
        "ops.yaml:2:12: error: integer literal '99999999999999999999' is too large\n"
        "   compute: 99999999999999999999\n"
        "            ^\n");
  CHECK(parse_error("- op: a\n  compute: 1e999\n", "1e999") ==
        "ops.yaml:2:12: error: float literal '1e999' is out of range\n"
        "   compute: 1e999\n"
        "            ^\n");
}

TEST_CASE("parser: locations inside quoted and folded YAML scalars") {
  SECTION("double-quoted: the loader's location is the opening quote") {
    Harness h;
    const std::string yaml = "- op: a\n  compute: \"c ? x : maxx(y, 0)\"\n";
    const SourceLoc loc = h.place(yaml, "\"c ?");
    CHECK(!parse_expression("c ? x : maxx(y, 0)", loc, &h.sources, h.diags));
    CHECK(h.take() ==
          "ops.yaml:2:21: error: unknown function 'maxx'\n"
          "   compute: \"c ? x : maxx(y, 0)\"\n"
          "                     ^\n"
          "kforge: note: did you mean 'max'?\n");
  }
  SECTION("plain scalar folded over two lines") {
    Harness h;
    const std::string yaml = "- op: a\n  compute: x +\n    maxx(x, 0)\n";
    const SourceLoc loc = h.place(yaml, "x +");
    CHECK(!parse_expression("x + maxx(x, 0)", loc, &h.sources, h.diags));
    CHECK(h.take() ==
          "ops.yaml:3:5: error: unknown function 'maxx'\n"
          "     maxx(x, 0)\n"
          "     ^\n"
          "kforge: note: did you mean 'max'?\n");
  }
  SECTION("flow mapping inside reduce") {
    Harness h;
    const std::string yaml = "- op: s\n  reduce: {init: \"0\", combine: \"acc ++ x\", axis: axis}\n";
    const SourceLoc loc = h.place(yaml, "\"acc ++");
    CHECK(!parse_expression("acc ++ x", loc, &h.sources, h.diags));
    CHECK(h.take() ==
          "ops.yaml:2:38: error: expected an expression, got '+'\n"
          "   reduce: {init: \"0\", combine: \"acc ++ x\", axis: axis}\n"
          "                                      ^\n");
  }
  SECTION("a text that is not in the source falls back to base + offset") {
    Harness h;
    const SourceLoc loc = h.place("- op: a\n  compute: something else entirely\n", "something");
    CHECK(!parse_expression("x $", loc, &h.sources, h.diags));
    CHECK(h.take().rfind("ops.yaml:2:14: error: unexpected character '$' in expression\n", 0) == 0);
  }
  SECTION("no source: the message still prints, without a location") {
    Harness h;
    CHECK(!h.parse("max(x"));
    CHECK(h.take() == "kforge: error: expected ',' or ')' in call to 'max', got end of input\n"
                      "kforge: note: '(' opened here\n");
  }
}

TEST_CASE("parser: hostile input is an error, never a crash") {
  CHECK(parsed("") == "error: kforge: error: empty expression\n");
  CHECK(parsed("   ") == "error: kforge: error: empty expression\n");
  CHECK(parsed(std::string(300, '(') + "x" + std::string(300, ')')) ==
        "error: kforge: error: expression is nested too deeply\n");
  CHECK(parsed(std::string(300, '-') + "x") == "error: kforge: error: expression is nested too deeply\n");
  std::string chain = "x";
  for (int i = 0; i < 300; ++i) chain += "+x";
  CHECK(parsed(chain) == "error: kforge: error: expression is nested too deeply\n");
  CHECK(parsed(std::string(5000, 'x')) == "error: kforge: error: expression is longer than 4096 characters\n");
  CHECK(parsed(std::string("x \x01")) == "error: kforge: error: unexpected byte 0x01 in expression\n");
  CHECK(parsed("max(,)") == "error: kforge: error: expected an expression, got ','\n");
  CHECK(parsed(")") == "error: kforge: error: expected an expression, got ')'\n");
}

TEST_CASE("parser: expressions copy deeply") {
  Harness h;
  std::optional<Expression> e = h.parse("max(x, 1) + y");
  REQUIRE(e);
  Expression copy = *e;
  copy.root->operands[1]->name = "z";
  CHECK(dump(*e->root) == "(+ (max x 1) y)");
  CHECK(dump(*copy.root) == "(+ (max x 1) z)");
}
