// Scoping: what each construct can see and what leaks out of it (for, macro, include, import), checked
// against Jinja2 with in-memory templates.
#include <catch2/catch.hpp>

#include "template_test_util.h"

namespace kforge::tmpl {
namespace {

using testing::RenderCase;

const std::pair<const char*, const char*> kTemplates[] = {
    {"macros.j2", "{% macro greet(who, punct='!') %}Hello {{ who }}{{ punct }}{% endmacro %}\n{% macro _hidden() %}h{% endmacro %}\n{% set version = 3 %}\n{% set _private = 1 %}\n{% if true %}{% set in_if = 'yes' %}{% endif %}\n{% for i in [1] %}{% set in_for = 1 %}{% endfor %}\ntop level output is discarded {{ greet('x') }}\n"},
    {"part.j2", "[part x={{ x }}]\n{% set x = 99 %}\n"},
    {"uses_loop.j2", "{{ loop is defined }}/{{ item }}"},
    {"calls_includer_macro.j2", "({{ helper(1) }})"},
    {"sub/deep.j2", "deep {{ x }}:{% include 'part.j2' %}"},
    {"sees_macro_args.j2", "<{{ a }}>"},
    {"ctx.j2", "{{ name is defined }}"},
    {"importer.j2", "{% import 'macros.j2' as mm %}{{ mm.greet('via import') }}"},
};

// Expected outputs: Python jinja2 3.1 (DictLoader over kTemplates), context {"name": "ctx-name"}.
const RenderCase kScopingCases[] = {
    {"{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", "2"},
    {"{% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}", "12121"},
    {"{% for i in range(3) %}{% if loop.first %}{% set y = 1 %}{% endif %}{{ y is defined }}{% endfor %}", "truefalsefalse"},
    {"{% for x in [1] %}{% set y = x %}{% endfor %}{{ y is defined }}", "false"},
    {"{% for i in [1,2] %}{{ i }}{% set i = 5 %}{{ i }}{% endfor %}", "1525"},
    {"{% for x in [1, 2] %}{% endfor %}{{ x is defined }}", "false"},
    {"{% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}{% set x = 2 %}{{ m() }}", "12"},
    {"{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% for x in [7] %}{{ m() }}{% endfor %}", "1"},
    {"{% macro m(a) %}{% set a = a + 1 %}{{ a }}{% endmacro %}{{ m(1) }}", "2"},
    {"{% macro m() %}{% set q = 1 %}{% endmacro %}{{ m() }}{{ q is defined }}", "false"},
    {"{% for i in [1,2] %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}", "12"},
    {"{% set ns = namespace(v=[]) %}{% macro add(x) %}{% set ns.v = ns.v + [x] %}{% endmacro %}{{ add(1) }}{{ add(2) }}{{ ns.v | join }}", "12"},
    {"{% macro m(x) %}{{ name }}{{ x }}{% endmacro %}{{ m(1) }}", "ctx-name1"},
    {"{% set x = 5 %}{% include 'part.j2' %}x={{ x }}", "[part x=5]\nx=5"},
    {"{% for item in ['a', 'b'] %}{% include 'uses_loop.j2' %};{% endfor %}", "false/a;false/b;"},
    {"{% for x in [7] %}{% include 'sub/deep.j2' %}{% endfor %}", "deep 7:[part x=7]\n"},
    {"{% macro helper(n) %}h{{ n }}{% endmacro %}{% include 'calls_includer_macro.j2' %}", "(h1)"},
    {"{% macro m(a) %}{% include 'sees_macro_args.j2' %}{% endmacro %}{{ m('arg') }}", "<arg>"},
    {"{% include 'ctx.j2' %}", "true"},
    {"{% include 'missing.j2' ignore missing %}ok", "ok"},
    {"{% set which = 'part.j2' %}{% set x = 1 %}{% include which %}", "[part x=1]\n"},
    {"{% import 'macros.j2' as m %}{{ m.greet('a') }} {{ m.version }} {{ m.in_if }} {{ m.in_for is defined }} {{ m._private is defined }}", "Hello a! 3 yes false false"},
    {"{% from 'macros.j2' import greet, greet as g2, version %}{{ greet('b') }} {{ g2('c', punct='?') }} {{ version }}", "Hello b! Hello c? 3"},
    {"{% set name = 'outer' %}{% import 'ctx.j2' as c %}[{{ c.name is defined }}]", "[false]"},
    {"{% import 'importer.j2' as i %}{% include 'importer.j2' %}", "Hello via import!"},
    {"{% for n in [1, 2] %}{% import 'macros.j2' as m %}{{ m.greet(n) }}{% endfor %}", "Hello 1!Hello 2!"},
};

TEST_CASE("scoping matches Jinja2: for, macro, include and import", "[template][scoping]") {
  for (const RenderCase& c : kScopingCases) {
    testing::Fixture f;
    for (const auto& [name, source] : kTemplates) f.env.add_memory_template(name, source);
    INFO("template: " << c.source);
    CHECK(f.render_json(c.source, R"({"name": "ctx-name"})") == c.expected);
  }
}

TEST_CASE("namespace attributes can be set from loops and macros; other objects cannot", "[template][scoping]") {
  testing::Fixture f;
  CHECK(f.render("{% set ns = namespace(found=false) %}{% for x in [1, 2, 3] %}{% if x == 2 %}"
                 "{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}") == "true");
  CHECK(f.render("{% set d = {'a': 1} %}{% set d.a = 2 %}") ==
        "error:\nt.j2:1:30: error: cannot assign to an attribute of 'd': it is a map, not a namespace\n"
        " {% set d = {'a': 1} %}{% set d.a = 2 %}\n                              ^\n"
        "kforge: note: create it with `{% set ns = namespace(attr=value) %}`\n");
}

TEST_CASE("a macro that outlives its defining loop iteration cannot be called", "[template][scoping]") {
  testing::Fixture f;
  // Jinja would call the closure; kforge refuses instead of reading a dead scope.
  CHECK(f.render("{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}"
                 "{% set ns.m = m %}{% endfor %}{{ ns.m() }}") ==
        "error:\nt.j2:1:117: error: macro 'm' is called after the scope that defined it has ended\n"
        // 122 characters: the line is cut on the left to fit in 120 columns.
        " ... ns = namespace() %}{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}{% set ns.m = m %}"
        "{% endfor %}{{ ns.m() }}\n"
        " " + std::string(113, ' ') + "^\n");
}

}  // namespace
}  // namespace kforge::tmpl
