// Diagnostics: exact text (location, source line, caret, notes) for the error classes a template
// author meets: strict undefined with did-you-mean, unknown filters/tests/functions, arity, runtime
// type errors, and the include / import / macro-call chain.
#include <catch2/catch.hpp>

#include "template_test_util.h"

namespace kforge::tmpl {
namespace {

const char* const kOp = R"({"op": {"name": "conv", "attrs": {"beta": 1, "gamma": 2, "alpha_": 3}}, "items": [1, 2]})";

TEST_CASE("an undefined attribute names its path, the keys there and the closest one", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render_json("line 1\n  {{ op.attrs.alpha }}", kOp) ==
        "error:\nt.j2:2:15: error: 'op.attrs.alpha' is undefined\n   {{ op.attrs.alpha }}\n               ^\n"
        "kforge: note: 'op.attrs' has keys: beta, gamma, alpha_\nkforge: note: did you mean 'alpha_'?\n");
  CHECK(f.render_json("{{ op['attrs']['delta'] }}", kOp) ==
        "error:\nt.j2:1:15: error: 'op['attrs']['delta']' is undefined\n {{ op['attrs']['delta'] }}\n"
        "               ^\nkforge: note: 'op['attrs']' has keys: beta, gamma, alpha_\n");
}

TEST_CASE("an undefined variable suggests a close name", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render_json("{% for item in items %}{{ itm }}{% endfor %}", kOp) ==
        "error:\nt.j2:1:27: error: 'itm' is undefined\n {% for item in items %}{{ itm }}{% endfor %}\n"
        "                           ^\nkforge: note: did you mean 'item'?\n");
}

TEST_CASE("an undefined value is only an error where it is consumed", "[template][errors]") {
  testing::Fixture f;
  // Binding and passing it on is fine; defined/default/untaken branches consume it.
  CHECK(f.render_json("{% set y = op.nope %}{{ y is defined }} {{ y | default('d') }} {{ 1 if true else y }}", kOp) ==
        "false d 1");
  // Used on another line: both places are shown.
  CHECK(f.render_json("{% set y = op.nope %}\n{{ y }}", kOp) ==
        "error:\nt.j2:1:15: error: 'op.nope' is undefined\n {% set y = op.nope %}\n               ^\n"
        "kforge: note: 'op' has keys: name, attrs\nt.j2:2:4: note: the undefined value is used here\n {{ y }}\n    ^\n");
  // Every other use is an error: truthiness, iteration, comparison, arithmetic, filters, attributes.
  for (const char* use : {"{% if op.nope %}{% endif %}", "{% for x in op.nope %}{% endfor %}", "{{ op.nope == 1 }}",
                          "{{ op.nope + 1 }}", "{{ op.nope | upper }}", "{{ op.nope.deeper }}", "{{ op.nope ~ 'x' }}",
                          "{{ op.nope is none }}", "{{ [op.nope] | join }}"}) {
    INFO(use);
    CHECK(f.render_json(use, kOp).starts_with("error:\nt.j2:1:"));
    CHECK(f.diag_text.str().find("error: 'op.nope' is undefined\n") != std::string::npos);
  }
}

TEST_CASE("list indexes out of range and attributes of scalars are undefined", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render_json("{{ items[2] }}", kOp) ==
        "error:\nt.j2:1:9: error: 'items[2]' is undefined\n {{ items[2] }}\n         ^\nkforge: note: 'items' has 2 items\n");
  CHECK(f.render_json("{{ op.name.size }}", kOp) ==
        "error:\nt.j2:1:12: error: 'op.name.size' is undefined\n {{ op.name.size }}\n            ^\n"
        "kforge: note: 'op.name' is a string, which has no attributes\n");
  CHECK(f.render_json("{{ items[-1] }} {{ items[5] | default('none') }}", kOp) == "2 none");
}

TEST_CASE("the origin of a map is noted when one of its keys is missing", "[template][errors]") {
  testing::Fixture f;
  const uint32_t data_file = f.sources.add_buffer("ops.yaml", "op:\n  attrs: {beta: 1}\n");
  Value attrs = Value::map();
  attrs.set("beta", 1);
  attrs.set_origin(f.sources.loc_at(data_file, 2, 3));
  Value op = Value::map();
  op.set("attrs", attrs);
  Value ctx = Value::map();
  ctx.set("op", op);
  CHECK(f.render("{{ op.attrs.alpha }}", ctx) ==
        "error:\nt.j2:1:13: error: 'op.attrs.alpha' is undefined\n {{ op.attrs.alpha }}\n             ^\n"
        "kforge: note: 'op.attrs' has keys: beta\nkforge: note: 'op.attrs' comes from ops.yaml:2:3\n");
}

TEST_CASE("unknown filters, tests and functions are found before rendering", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render("{% if false %}{{ x | lenght }}{% endif %}") ==
        "error:\nt.j2:1:22: error: unknown filter 'lenght'\n {% if false %}{{ x | lenght }}{% endif %}\n"
        "                      ^\nkforge: note: did you mean 'length'?\n");
  CHECK(f.render("{{ x is defiend }}") ==
        "error:\nt.j2:1:9: error: unknown test 'defiend'\n {{ x is defiend }}\n         ^\n"
        "kforge: note: did you mean 'defined'?\n");
  CHECK(f.render("{% if false %}{{ rang(3) }}{% endif %}") ==
        "error:\nt.j2:1:18: error: unknown function or macro 'rang'\n {% if false %}{{ rang(3) }}{% endif %}\n"
        "                  ^\nkforge: note: did you mean 'range'?\n");
  // A name nothing resembles may be a macro of an including template: found when called.
  CHECK(f.render("{{ helper(1) }}") ==
        "error:\nt.j2:1:4: error: unknown function or macro 'helper'\n {{ helper(1) }}\n    ^\n");
}

TEST_CASE("argument mismatches name the parameter and show the signature", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render("{{ 'a' | replace('b') }}") ==
        "error:\nt.j2:1:10: error: missing argument 'new' in call to filter 'replace'\n {{ 'a' | replace('b') }}\n"
        "          ^\nkforge: note: signature: replace(old, new, count=none)\n");
  CHECK(f.render("{{ [1] | join(',', 'a', 'b') }}") ==
        "error:\nt.j2:1:10: error: too many arguments to filter 'join': expected at most 2, got 3\n"
        " {{ [1] | join(',', 'a', 'b') }}\n          ^\nkforge: note: signature: join(d='', attribute=none)\n");
  CHECK(f.render("{{ [1] | join(sep=',') }}") ==
        "error:\nt.j2:1:15: error: filter 'join' has no parameter named 'sep'\n {{ [1] | join(sep=',') }}\n"
        "               ^\nkforge: note: signature: join(d='', attribute=none)\n");
  CHECK(f.render("{{ 'a' | upper(1) }}") ==
        "error:\nt.j2:1:10: error: filter 'upper' takes no arguments, got 1\n {{ 'a' | upper(1) }}\n          ^\n"
        "kforge: note: signature: upper()\n");
  CHECK(f.render("{% macro m(a, b=1) %}{% endmacro %}{{ m(1, a=2) }}") ==
        "error:\nt.j2:1:44: error: macro 'm' got multiple values for argument 'a'\n"
        " {% macro m(a, b=1) %}{% endmacro %}{{ m(1, a=2) }}\n                                            ^\n"
        "kforge: note: signature: m(a, b=...)\n");
  // Macros called through a variable are checked when called.
  CHECK(f.render("{% macro m(a) %}{% endmacro %}{% set g = m %}{{ g() }}") ==
        "error:\nt.j2:1:49: error: missing argument 'a' in call to macro 'm'\n"
        " {% macro m(a) %}{% endmacro %}{% set g = m %}{{ g() }}\n                                                 ^\n"
        "kforge: note: signature: m(a)\n");
}

TEST_CASE("runtime type errors are located at the operator", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render("{{ 1 + 'a' }}") ==
        "error:\nt.j2:1:6: error: unsupported operand types for +: integer and string\n {{ 1 + 'a' }}\n      ^\n");
  CHECK(f.render("{{ 1 / 0 }}") == "error:\nt.j2:1:6: error: division by zero\n {{ 1 / 0 }}\n      ^\n");
  CHECK(f.render("{{ 1 < 'a' }}") ==
        "error:\nt.j2:1:6: error: '<' is not supported between an integer and a string\n {{ 1 < 'a' }}\n      ^\n");
  CHECK(f.render("{% for x in 3 %}{% endfor %}") ==
        "error:\nt.j2:1:13: error: an integer is not iterable\n {% for x in 3 %}{% endfor %}\n             ^\n");
  CHECK(f.render("{% for a, b in [[1, 2, 3]] %}{% endfor %}") ==
        "error:\nt.j2:1:8: error: cannot unpack 3 values into 2 names\n {% for a, b in [[1, 2, 3]] %}{% endfor %}\n"
        "        ^\n");
  CHECK(f.render("{{ 'a' % 1 }}") ==
        "error:\nt.j2:1:8: error: '%' string formatting is not supported\n {{ 'a' % 1 }}\n        ^\n"
        "kforge: note: concatenate with '~' instead\n");
  CHECK(f.render("{{ 9223372036854775807 + 1 }}") ==
        "error:\nt.j2:1:24: error: integer overflow in '+'\n {{ 9223372036854775807 + 1 }}\n                        ^\n");
  CHECK(f.render("{{ range(200000) | length }}") ==
        "error:\nt.j2:1:4: error: range too big: more than 100000 items\n {{ range(200000) | length }}\n    ^\n");
}

TEST_CASE("errors inside macros and includes show the call chain", "[template][errors]") {
  testing::Fixture f;
  f.env.add_memory_template("lib.j2", "{% macro field(p) %}\n{{ p.type }} {{ p.nam }}\n{% endmacro %}");
  f.env.add_memory_template("body.j2", "{% from 'lib.j2' import field %}\n{{ field(param) }}");
  CHECK(f.render_json("{% for param in params %}\n{% include 'body.j2' %}\n{% endfor %}",
                      R"({"params": [{"type": "int", "name": "x"}]})") ==
        "error:\nlib.j2:2:19: error: 'p.nam' is undefined\n {{ p.type }} {{ p.nam }}\n                   ^\n"
        "kforge: note: 'p' has keys: type, name\nkforge: note: did you mean 'name'?\n"
        "kforge: note: in macro 'field' called from body.j2:2:4\n"
        "kforge: note: in template included from t.j2:2:4\n");
}

TEST_CASE("recursion depth is limited", "[template][errors]") {
  testing::Fixture f;
  const std::string out = f.render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  CHECK(out.starts_with("error:\nt.j2:1:20: error: maximum template recursion depth (100) exceeded\n"));
  CHECK(f.diags.error_count() == 1);
}

TEST_CASE("the loop variable reports its attributes", "[template][errors]") {
  testing::Fixture f;
  CHECK(f.render("{% for x in [1] %}{{ loop.indx }}{% endfor %}") ==
        "error:\nt.j2:1:27: error: 'loop.indx' is undefined\n {% for x in [1] %}{{ loop.indx }}{% endfor %}\n"
        "                           ^\nkforge: note: did you mean 'index'?\nkforge: note: the loop variable has: index, "
        "index0, revindex, revindex0, first, last, length, depth, depth0, previtem, nextitem, cycle, changed\n");
  CHECK(f.render("{% for x in [1] %}{{ loop.previtem }}{% endfor %}") ==
        "error:\nt.j2:1:27: error: there is no previous item ('loop.previtem' on the first iteration)\n"
        " {% for x in [1] %}{{ loop.previtem }}{% endfor %}\n                           ^\n");
}

}  // namespace
}  // namespace kforge::tmpl
