// Default values and C++ expressions: every spelling of Paddle's args defaults is kept verbatim and
// classified; malformed ones are reported at the offending character.
#include <catch2/catch.hpp>

#include "opdef/cpp_expr.h"
#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;

namespace {

DefaultKind kind_of(const std::string& text) {
  Fixture f;
  const LocatedText v = f.value(text);
  std::optional<DefaultValue> d = parse_default_value(v, 0, v.size(), f.diags, "bad default value for 'a'");
  INFO(text << "\n" << f.messages());
  REQUIRE(d.has_value());
  CHECK(d->text == text);
  return d->kind;
}

std::string error_of(const std::string& text) {
  Fixture f;
  const LocatedText v = f.value(text);
  CHECK_FALSE(parse_default_value(v, 0, v.size(), f.diags, "bad default value for 'a'").has_value());
  CHECK(f.diags.error_count() == 1);
  return f.messages();
}

}  // namespace

TEST_CASE("defaults keep their text and are classified") {
  for (const char* s : {"0", "-1", "127", "-128", "10000L", "0L", "0x1F", "100000"}) {
    CHECK(kind_of(s) == DefaultKind::kInteger);
  }
  for (const char* s : {"0.0", "1.0f", "1e-5", "1.0e-6f", "1.0e-12f", "0.00001f", ".5f", ".0f", "0.", "2.", "-1.0f",
                        "1.0507009873554804934193349852946"}) {
    CHECK(kind_of(s) == DefaultKind::kFloat);
  }
  CHECK(kind_of("true") == DefaultKind::kBool);
  CHECK(kind_of("false") == DefaultKind::kBool);
  for (const char* s : {"\"\"", "\"NCHW\"", "\"AnyLayout\"", "\"upscale_in_train\"", "\"a\\\"b\""}) {
    CHECK(kind_of(s) == DefaultKind::kString);
  }
  for (const char* s : {"DataType::FLOAT32", "DataType::UNDEFINED", "phi::DataType::INT64", "INT64_MAX"}) {
    CHECK(kind_of(s) == DefaultKind::kEnumConstant);
  }
  for (const char* s : {"(2 << 12) - 1", "1.0f/8", "1.0f/3", "CPUPlace()",
                        "phi::backends::gpu::GetDefaultConvWorkspaceSizeLimitMB()", "x.dtype()",
                        "axis<0 ? input.dims()[input.dims().size()+axis]:input.dims()[axis]"}) {
    CHECK(kind_of(s) == DefaultKind::kExpression);
  }
}

TEST_CASE("list defaults classify their elements") {
  for (const char* s : {"{}", "{0}", "{0,0}", "{1, 1}", "{1,1,1}", "{0, 0, 0, 0}", "{16.0, 16.0}", "{1.0f}",
                        "{\"127.0.0.1:6164\"}"}) {
    CHECK(kind_of(s) == DefaultKind::kList);
  }
  Fixture f;
  const LocatedText v = f.value("{1, 2.5f, \"s\", {}, DataType::INT64, -3}");
  std::optional<DefaultValue> d = parse_default_value(v, 0, v.size(), f.diags, "x");
  REQUIRE(d);
  REQUIRE(d->items.size() == 6);
  CHECK(d->items[0].kind == DefaultKind::kInteger);
  CHECK(d->items[1].kind == DefaultKind::kFloat);
  CHECK(d->items[1].text == "2.5f");
  CHECK(d->items[1].loc.offset == 4);
  CHECK(d->items[2].kind == DefaultKind::kString);
  CHECK(d->items[3].kind == DefaultKind::kList);
  CHECK(d->items[4].kind == DefaultKind::kEnumConstant);
  CHECK(d->items[5].kind == DefaultKind::kInteger);
  CHECK(d->items[5].text == "-3");
}

TEST_CASE("malformed defaults are located") {
  CHECK(error_of("(1 + 2") ==
        "v:1:7: error: bad default value for 'a': expected ')' to close '('\n"
        " (1 + 2\n"
        "       ^\n"
        "v:1:1: note: to match this '('\n"
        " (1 + 2\n"
        " ^\n");
  CHECK(error_of("1 +") ==
        "v:1:4: error: bad default value for 'a': expected an expression after '+'\n"
        " 1 +\n"
        "    ^\n");
  CHECK(error_of("1.0e-f") ==
        "v:1:1: error: bad default value for 'a': invalid number '1.0e-f'\n"
        " 1.0e-f\n"
        " ^\n");
  CHECK(error_of("\"NCHW") ==
        "v:1:1: error: bad default value for 'a': unterminated string literal\n"
        " \"NCHW\n"
        " ^\n");
  CHECK(error_of("{1, 2") ==
        "v:1:6: error: bad default value for 'a': expected '}' to close '{'\n"
        " {1, 2\n"
        "      ^\n"
        "v:1:1: note: to match this '{'\n"
        " {1, 2\n"
        " ^\n");
  CHECK(error_of("f(1 2)") ==
        "v:1:5: error: bad default value for 'a': expected ')' to close '(', found '2'\n"
        " f(1 2)\n"
        "     ^\n"
        "v:1:2: note: to match this '('\n"
        " f(1 2)\n"
        "  ^\n");
  CHECK(error_of("a ? b") ==
        "v:1:6: error: bad default value for 'a': expected ':' of the conditional expression\n"
        " a ? b\n"
        "      ^\n");
  CHECK(error_of("x.") ==
        "v:1:3: error: bad default value for 'a': expected a name after '.'\n"
        " x.\n"
        "   ^\n");
  CHECK(error_of("1 = 2") ==
        "v:1:3: error: bad default value for 'a': unexpected '=' after the value\n"
        " 1 = 2\n"
        "   ^\n");
  CHECK(error_of("$x") ==
        "v:1:1: error: bad default value for 'a': unexpected character '$'\n"
        " $x\n"
        " ^\n");
}

TEST_CASE("an expression stops before a top-level comma or closing bracket") {
  Fixture f;
  const LocatedText v = f.value("{1, 2}, rest)");
  TextCursor cur(v);
  REQUIRE(parse_cpp_expression(cur, f.diags, "x"));
  CHECK(cur.pos() == 6);
  const LocatedText w = f.value("f(a, b)) tail");
  TextCursor cur2(w);
  REQUIRE(parse_cpp_expression(cur2, f.diags, "x"));
  CHECK(cur2.pos() == 7);
  CHECK(f.diags.error_count() == 0);
}
