// kforge's code-generation filters (registered through the extension API) and the extension API
// itself: signatures with defaults, keyword arguments, located failures.
#include <catch2/catch.hpp>

#include "template_test_util.h"

namespace kforge::tmpl {
namespace {

TEST_CASE("c_ident makes valid C identifiers", "[template][codegen]") {
  testing::Fixture f;
  CHECK(f.render("{{ 'conv2d-grad.v2' | c_ident }} {{ '2d' | c_ident }} {{ 'class' | c_ident }} {{ '' | c_ident }} "
                 "{{ 'ok_name' | c_ident }}") == "conv2d_grad_v2 _2d class_ _ ok_name");
}

TEST_CASE("cpp_str makes a C++ string literal", "[template][codegen]") {
  testing::Fixture f;
  CHECK(f.render(R"({{ 'a"b\\c' | cpp_str }} {{ 'x\ny\tz\r' | cpp_str }} {{ ('\x01' ~ '7') | cpp_str }} {{ '' | cpp_str }})") ==
        R"("a\"b\\c" "x\ny\tz\r" "\0017" "")");
  CHECK(f.render("{{ 'h\xC3\xA9' | cpp_str }}") == "\"h\xC3\xA9\"");
}

TEST_CASE("case conversions split words at separators, case changes and acronyms", "[template][codegen]") {
  testing::Fixture f;
  CHECK(f.render("{{ 'Conv2DGrad' | snake_case }} {{ 'HTTPServer' | snake_case }} {{ 'matMul' | snake_case }} "
                 "{{ 'already_snake' | snake_case }} {{ 'kebab-case x' | snake_case }}") ==
        "conv2d_grad http_server mat_mul already_snake kebab_case_x");
  CHECK(f.render("{{ 'conv2d_grad' | camel_case }} {{ 'http_server' | camel_case }} {{ 'MatMul' | camel_case }}") ==
        "Conv2dGrad HttpServer MatMul");
  CHECK(f.render("{{ 'Conv2dGrad' | upper_snake }} {{ 'matmul_v2' | upper_snake }}") == "CONV2D_GRAD MATMUL_V2");
}

TEST_CASE("codegen filters refuse values that do not print", "[template][codegen]") {
  testing::Fixture f;
  CHECK(f.render("{{ [1] | c_ident }}") ==
        "error:\nt.j2:1:10: error: cannot print a list; use `join`, `tojson` or `default`\n {{ [1] | c_ident }}\n"
        "          ^\n");
}

TEST_CASE("fail() reports at its call site", "[template][codegen]") {
  testing::Fixture f;
  CHECK(f.render_json("{% if kind != 'cpu' %}\n  {{ fail('unsupported kind: ' ~ kind) }}\n{% endif %}", R"({"kind": "tpu"})") ==
        "error:\nt.j2:2:6: error: unsupported kind: tpu\n   {{ fail('unsupported kind: ' ~ kind) }}\n      ^\n");
}

TEST_CASE("the extension API binds arguments like Python and reports located errors", "[template][codegen]") {
  testing::Fixture f;
  f.env.register_filter("wrap", {{"left", Value("<")}, {"right", Value(">")}}, [](const CallArgs& a) -> Value {
    if (a.input().is_string() && a.input().as_string().empty()) a.fail("nothing to wrap", {"pass a non-empty string"});
    return Value(a.to_string(a[0]) + a.to_text(a.input()) + a.to_string(a[1]));
  });
  f.env.register_test("short", {{"limit", Value(3)}}, [](const CallArgs& a) {
    return a.input().is_string() && a.input().as_string().size() <= static_cast<size_t>(a[0].as_int());
  });
  f.env.register_function("join_all", Signature({"sep"}, true, true), [](const CallArgs& a) -> Value {
    std::string out;
    for (const Value& v : a.varargs()) out += (out.empty() ? "" : a.to_string(a[0])) + a.to_text(v);
    for (const auto& [k, v] : a.kwargs()) out += ";" + k + "=" + a.to_text(v);
    return Value(out);
  });
  CHECK(f.render("{{ 'x' | wrap }} {{ 'x' | wrap('[', right=']') }} {{ 'x' | wrap(right='}') }}") == "<x> [x] <x}");
  CHECK(f.render("{{ 'ab' is short }} {{ 'abcd' is short }} {{ 'abcd' is short(4) }}") == "true false true");
  CHECK(f.render("{{ join_all(',', 1, 2, 3) }} {{ join_all('-', 1, 2, extra=true) }}") == "1,2,3 1-2;extra=true");
  CHECK(f.render("{{ join_all(1, sep='-') }}") ==
        "error:\nt.j2:1:16: error: function 'join_all' got multiple values for argument 'sep'\n"
        " {{ join_all(1, sep='-') }}\n                ^\nkforge: note: signature: join_all(sep, ...)\n");
  CHECK(f.render("{{ '' | wrap }}") ==
        "error:\nt.j2:1:9: error: nothing to wrap\n {{ '' | wrap }}\n         ^\nkforge: note: pass a non-empty string\n");
  CHECK(f.render("{{ 'x' | wrap(middle=1) }}") ==
        "error:\nt.j2:1:15: error: filter 'wrap' has no parameter named 'middle'\n {{ 'x' | wrap(middle=1) }}\n"
        "               ^\nkforge: note: signature: wrap(left='<', right='>')\n");
  // Re-registering replaces (built-ins included).
  f.env.register_filter("upper", {}, [](const CallArgs&) -> Value { return Value("replaced"); });
  CHECK(f.render("{{ 'a' | upper }}") == "replaced");
}

}  // namespace
}  // namespace kforge::tmpl
