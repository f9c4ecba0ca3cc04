// Rendering of one-line templates: expressions, every built-in filter and test, loops, statements.
// The tables were produced by rendering each template with Python's jinja2 3.1 configured as kforge's
// dialect (see the comment above each table); the deliberate deviations are tested at the end.
#include <catch2/catch.hpp>

#include "template_test_util.h"

namespace kforge::tmpl {
namespace {

using testing::RenderCase;

const char* const kData = "{\"xs\": [3, 1, 2], \"s\": \"Hello World\", \"d\": {\"b\": 2, \"a\": 1, \"c\": 3}, \"n\": null, \"f\": 2.5, \"i\": 7, \"people\": [{\"name\": \"bob\", \"age\": 30, \"tags\": [\"x\"]}, {\"name\": \"Alice\", \"age\": 25, \"tags\": []}, {\"name\": \"carl\", \"age\": 30, \"tags\": [\"y\", \"z\"]}], \"words\": [\"b\", \"A\", \"a\", \"B\", \"c\"], \"nested\": {\"a\": {\"b\": {\"c\": 5}}}, \"e\": [], \"em\": {}, \"t\": true, \"fl\": [1.5, 2, 3.25]}";

// Expected outputs: Python jinja2 3.1 with trim_blocks, lstrip_blocks, keep_trailing_newline,
// StrictUndefined (and booleans printed as true/false, kforge's deliberate deviation).
const RenderCase kExpressionCases[] = {
    {"{{ 1 + 2 * 3 }}", "7"},
    {"{{ (1 + 2) * 3 }}", "9"},
    {"{{ 2 ** 3 ** 2 }}", "64"},
    {"{{ -2 ** 2 }}", "4"},
    {"{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }}", "3 -4 1 2 -2"},
    {"{{ 7 / 2 }} {{ 6 / 2 }} {{ 1 / 3 }} {{ 2 ** -1 }} {{ 2.0 ** 2 }}", "3.5 3.0 0.3333333333333333 0.5 4.0"},
    {"{{ 7.5 // 2 }} {{ -7.5 // 2 }} {{ 7.5 % 2 }} {{ -7.5 % 2 }} {{ 7.5 % -2 }}", "3.0 -4.0 1.5 0.5 -0.5"},
    {"{{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 123456789.123 }} {{ 0.1 + 0.2 }} {{ 1/0.0001 }}", "1e+20 1e+16 1000000000000000.0 1.5e-05 0.0001 123456789.123 0.30000000000000004 10000.0"},
    {"{{ 3.0 }} {{ 3.10 }} {{ 1e100 }} {{ -0.0 }} {{ 2.5e-10 }} {{ 123456789012345678.0 }} {{ 0.000123 }}", "3.0 3.1 1e+100 -0.0 2.5e-10 1.2345678901234568e+17 0.000123"},
    {"{{ 9007199254740993 }} {{ -9223372036854775807 }}", "9007199254740993 -9223372036854775807"},
    {"{{ 10 / 4 }} {{ 10 // 4 }} {{ 10 % 4 }} {{ 2 ** 10 }} {{ 2 ** 0.5 }} {{ 4 ** 0.5 }}", "2.5 2 2 1024 1.4142135623730951 2.0"},
    {"{{ 5 // 2 * 2 }} {{ 2 * 3 ** 2 }} {{ 10 - 2 - 3 }} {{ 2 ** 2 ** 3 }} {{ 100 / 10 / 5 }}", "4 18 5 64 2.0"},
    {"{{ -1 | abs }} {{ - 1 }} {{ +1 }} {{ -(1) }} {{ --1 }}", "1 -1 1 -1 1"},
    {"{{ 'a' ~ 1 ~ 2.0 }}", "a12.0"},
    {"{{ 'ab' * 3 }} {{ 3 * 'x' }}", "ababab xxx"},
    {"{{ 'a' + 'b' }}", "ab"},
    {"{{ (xs + [4]) | join(',') }}", "3,1,2,4"},
    {"{{ true + 1 }} {{ true * 3 }}", "2 3"},
    {"{{ 1 if xs else 2 }} {{ 'y' if e else 'n' }}", "1 n"},
    {"{{ 1 if 0 else 2 if 0 else 3 }}", "3"},
    {"{{ 'abc' if false }}|{{ ('x' if false) | upper }}|{{ 'x' ~ ('y' if false) }}", "||x"},
    {"{{ not xs }} {{ not e }}", "false true"},
    {"{{ xs and 'yes' }} {{ e or 'empty' }}", "yes empty"},
    {"{% if not xs is none %}x{% endif %} {{ not 1 == 2 }}", "x true"},
    {"{{ 1 < 2 }} {{ 2 <= 2 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ 1 != 2 }} {{ [1,2] == [1,2] }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 5 }}", "true true true true true true true false"},
    {"{{ 1 == true }} {{ 0 == false }} {{ none == none }} {{ 'a' == 'a' }} {{ [1] != [1] }}", "true true true true false"},
    {"{{ 'abc' < 'abd' }} {{ [1, 2] < [1, 3] }} {{ 'b' in d }}", "true true true"},
    {"{{ 1 in xs }} {{ 9 not in xs }} {{ 'ell' in s }} {{ 'a' in d }} {{ 'z' in d }}", "true true true true false"},
    {"{{ s[0] }} {{ s[-1] }} {{ xs[1] }} {{ xs[-1] }} {{ s[1:3] }} {{ s[::-1] }} {{ xs[1:] | join }} {{ xs[::2] | join }} {{ s[:-2] }}", "H d 1 2 el dlroW olleH 12 32 Hello Wor"},
    {"{{ [1,2,3][1:] | join }} {{ 'hello'[1:-1] }} {{ 'hello'[10:] }} {{ [1,2,3][::-1] | join }} {{ [1,2,3,4,5][-2:] | join }}", "23 ell  321 45"},
    {"{{ d.a }} {{ d['b'] }} {{ nested.a.b.c }} {{ nested['a']['b'].c }} {{ xs.0 }}", "1 2 5 5 3"},
    {"{{ {'a': 1, 'b': [1, 2]}['b'][1] }} {{ [1, [2, 3]][1][0] }} {{ {'a': {'b': 1}}.a.b }}", "2 2 1"},
    {"{{ 'a\\tb\\\\n' }} {{ \"q'\" }} {{ 'x' 'y' }} {{ '\\x41\\u00e9' }} {{ '\\101' }} {{ '\\q' }}", "a\tb\\n q' xy Aé A \\q"},
    {"{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1.5e3 }} {{ 12.5 }}", "31 15 5 1000 1500.0 12.5"},
    {"{{ true }} {{ false }} {{ True }} {{ False }}", "true false true false"},
    {"{{ (1, 2) | join('-') }} {{ (1,) | length }} {{ () | length }}", "1-2 1 0"},
    {"{{ 'x' * 0 }}|{{ ([1] * 3) | length }}", "|3"},
    {"{{ 'é'|length }} {{ 'héllo'[1] }} {{ 'héllo'|reverse }}", "1 é olléh"},
    {"{% print 'printed' %}", "printed"},
};

// Expected outputs: Python jinja2 3.1 with trim_blocks, lstrip_blocks, keep_trailing_newline,
// StrictUndefined (and booleans printed as true/false, kforge's deliberate deviation).
const RenderCase kFilterCases[] = {
    {"{{ [1, 2, 3] | length }} {{ {'a': 1} | length }} {{ s | length }} {{ s | count }}", "3 1 11 11"},
    {"{{ s | upper }} {{ s | lower }} {{ 'hello WORLD' | capitalize }} {{ 'hello-world foo(bar) x_y' | title }} {{ '  pad  ' | trim }}|{{ 'xxaxx' | trim('x') }}", "HELLO WORLD hello world Hello world Hello-World Foo(Bar) X_y pad|a"},
    {"{{ 'hello world' | title }} {{ 'HELLO' | capitalize }} {{ 'o\\'neil' | title }} {{ '  x  ' | trim | length }}", "Hello World Hello O'neil 1"},
    {"{{ s | replace('l', 'L') }} {{ s | replace('l', 'L', 2) }} {{ 'abc' | replace('', '-') }} {{ 'abc' | replace('', '-', 2) }} {{ 'Hello' | replace('l', '') }} {{ 'aaa' | replace('a', 'b', 0) }}", "HeLLo WorLd HeLLo World -a-b-c- -a-bc Heo aaa"},
    {"{{ xs | join(', ') }} {{ xs | join }} {{ people | join(',', attribute='name') }} {{ d | join('|') }} {{ 'abc' | join('.') }} {{ xs | join(d='+') }}", "3, 1, 2 312 bob,Alice,carl b|a|c a.b.c 3+1+2"},
    {"{{ xs | first }} {{ xs | last }} {{ s | first }} {{ s | last }} {{ d | first }} {{ d | last }} {{ [] | first | default('none') }}", "3 2 H d b c none"},
    {"{{ xs | sort | join }} {{ xs | sort(reverse=true) | join }} {{ words | sort | join }} {{ words | sort(case_sensitive=true) | join }}", "123 321 AabBc ABabc"},
    {"{{ people | sort(attribute='age') | map(attribute='name') | join(',') }} {{ people | sort(attribute='age,name') | map(attribute='name') | join(',') }}", "Alice,bob,carl Alice,bob,carl"},
    {"{{ people | sort(attribute='name') | map(attribute='name') | join(',') }} {{ people | sort(attribute='name', reverse=true) | map(attribute='name') | join(',') }}", "Alice,bob,carl carl,bob,Alice"},
    {"{{ xs | reverse | join }} {{ s | reverse }} {{ d | reverse | join }}", "213 dlroW olleH cab"},
    {"{{ words | unique | join }} {{ words | unique(case_sensitive=true) | join }} {{ people | unique(attribute='age') | map(attribute='name') | join }}", "bAc bAaBc bobAlice"},
    {"{{ xs | map('string') | join('-') }} {{ words | map('upper') | join }} {{ people | map(attribute='name') | map('upper') | join(' ') }} {{ xs | map('replace', '1', 'one') | join }}", "3-1-2 BAABC BOB ALICE CARL 3one2"},
    {"{{ people | map(attribute='missing', default='?') | join }} {{ xs | map('int') | sum }} {{ ['1', '2'] | map('int') | sum }}", "??? 6 3"},
    {"{{ xs | select('odd') | join }} {{ xs | reject('odd') | join }} {{ [0, 1, '', 'a', none] | select | list | length }} {{ xs | select('>', 1) | join }} {{ xs | select('divisibleby', 3) | join }}", "31 2 2 32 3"},
    {"{{ xs | select('in', [1, 2]) | join }} {{ [none, 1] | select('none') | list | length }} {{ xs | reject('equalto', 1) | join }}", "12 1 32"},
    {"{{ people | selectattr('age', 'eq', 30) | map(attribute='name') | join }} {{ people | rejectattr('tags') | map(attribute='name') | join }} {{ people | selectattr('tags') | map(attribute='name') | join }}", "bobcarl Alice bobcarl"},
    {"{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %} {{ d | items | list | length }}", "b=2;a=1;c=3; 3"},
    {"{% for k, v in d | dictsort %}{{ k }}={{ v }};{% endfor %} {% for k, v in d | dictsort(by='value', reverse=true) %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;c=3; c=3;b=2;a=1;"},
    {"{% for k, v in {'B': 1, 'a': 2} | dictsort %}{{ k }}{% endfor %}{% for k, v in {'B': 1, 'a': 2} | dictsort(true) %}{{ k }}{% endfor %}", "aBBa"},
    {"{{ s | list | length }} {{ d | list | join }} {{ 'ab' | list | join('+') }}", "11 bac a+b"},
    {"{{ 42 | string }} {{ 1.5 | string }} {{ [1, 'a'] | string }} {{ {'a': none} | string }} {{ none | string }}", "42 1.5 [1, 'a'] {'a': None} None"},
    {"{{ '42' | int }} {{ '3.7' | int }} {{ 3.9 | int }} {{ 'abc' | int }} {{ 'abc' | int(5) }} {{ '0x1A' | int(base=16) }} {{ 'ff' | int(base=16) }} {{ ' 12 ' | int }} {{ '1e3' | int }} {{ true | int }} {{ none | int }} {{ '-5' | int }}", "42 3 3 0 5 26 255 12 1000 1 0 -5"},
    {"{{ '3.5' | float }} {{ 3 | float }} {{ 'x' | float }} {{ 'x' | float(1.5) }} {{ '1e3' | float }} {{ ' 2 ' | float }}", "3.5 3.0 0.0 1.5 1000.0 2.0"},
    {"{{ -3 | abs }} {{ (-3.5) | abs }} {{ -3.5 | abs }} {{ xs | min }} {{ xs | max }} {{ words | min }} {{ words | max }} {{ words | max(case_sensitive=true) }} {{ (people | min(attribute='age')).name }} {{ [] | max | default('none') }}", "3 3.5 3.5 1 3 A c c Alice none"},
    {"{{ xs | sum }} {{ fl | sum }} {{ people | sum(attribute='age') }} {{ xs | sum(start=10) }}", "6 6.75 85 16"},
    {"{{ d | tojson }} {{ xs | tojson }} {{ 'a<b>&\\'\"' | tojson }} {{ people[0] | tojson }} {{ none | tojson }} {{ 1.0 | tojson }} {{ 'é€😀' | tojson }} {{ [] | tojson }} {{ {} | tojson }}", "{\"a\": 1, \"b\": 2, \"c\": 3} [3, 1, 2] \"a\\u003cb\\u003e\\u0026\\u0027\\\"\" {\"age\": 30, \"name\": \"bob\", \"tags\": [\"x\"]} null 1.0 \"\\u00e9\\u20ac\\ud83d\\ude00\" [] {}"},
    {"{{ d | tojson(indent=2) }}\n{{ people | tojson(2) }}\n{{ [[]] | tojson(indent=1) }}", "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n[\n  {\n    \"age\": 30,\n    \"name\": \"bob\",\n    \"tags\": [\n      \"x\"\n    ]\n  },\n  {\n    \"age\": 25,\n    \"name\": \"Alice\",\n    \"tags\": []\n  },\n  {\n    \"age\": 30,\n    \"name\": \"carl\",\n    \"tags\": [\n      \"y\",\n      \"z\"\n    ]\n  }\n]\n[\n []\n]"},
    {"{{ {'b': 1, 'a': 2} | tojson }} {{ [1, 'a', none, true, 1.5] | tojson }} {{ dict(a=1, b=2) | tojson }}", "{\"a\": 2, \"b\": 1} [1, \"a\", null, true, 1.5] {\"a\": 1, \"b\": 2}"},
    {"{{ n | default('dflt') is none }} {{ missing | default('dflt') }} {{ missing | d('x') }} {{ '' | default('e', true) }} {{ 0 | default('z', boolean=true) }} {{ 'v' | default('z') }} {{ missing | default(default_value='kw') }}", "true dflt x e z v kw"},
    {"{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb\\n\\nc' | indent(2, true) }}|{{ 'a\\nb\\n\\nc\\n' | indent(2, blank=true) }}|{{ 'a\\nb' | indent('> ') }}|{{ '' | indent(first=true) }}|{{ 'one\\ntwo' | indent(first=true) }}", "a\n    b\n\n    c|  a\n  b\n\n  c|a\n  b\n  \n  c\n  |a\n> b|    |    one\n    two"},
    {"{{ [3, 1] | sort | first }} {{ 'abc' | upper | reverse }}", "1 CBA"},
};

// Expected outputs: Python jinja2 3.1 with trim_blocks, lstrip_blocks, keep_trailing_newline,
// StrictUndefined (and booleans printed as true/false, kforge's deliberate deviation).
const RenderCase kTestCases[] = {
    {"{{ xs is defined }} {{ missing is defined }} {{ missing is undefined }} {{ n is none }} {{ t is boolean }} {{ 1 is boolean }} {{ s is string }} {{ 1 is number }} {{ 1.5 is number }} {{ t is number }}", "true false true true true false true true true true"},
    {"{{ 1 is integer }} {{ 1.0 is integer }} {{ 1.0 is float }} {{ t is integer }} {{ d is mapping }} {{ xs is mapping }} {{ xs is sequence }} {{ s is sequence }} {{ d is sequence }} {{ 1 is sequence }} {{ d is iterable }} {{ 1 is iterable }}", "true false true false true false true true true false true false"},
    {"{{ 2 is even }} {{ 3 is odd }} {{ -3 is odd }} {{ 2.0 is even }} {{ 1.5 is odd }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 1 is in(xs) }} {{ 5 is in xs }} {{ 3 is eq 3 }} {{ 3 is eq(4) }} {{ 3 is not eq 4 }}", "true true true true false true false true false true false true"},
    {"{{ 3 is ne 4 }} {{ 3 is lt 4 }} {{ 3 is gt 4 }} {{ 3 is le 3 }} {{ 3 is ge 4 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aB' is lower }} {{ none is sameas none }}", "true true false true false true true false true"},
    {"{{ t is true }} {{ t is false }} {{ 1 is true }} {{ xs | length is even }} {{ (missing.attr is defined) if missing is defined else 'guarded' }}", "true false false false guarded"},
};

// Expected outputs: Python jinja2 3.1 with trim_blocks, lstrip_blocks, keep_trailing_newline,
// StrictUndefined (and booleans printed as true/false, kforge's deliberate deviation).
const RenderCase kLoopCases[] = {
    {"{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.depth }}{{ loop.depth0 }};{% endfor %}", "1032truefalse310;2121falsefalse310;3210falsetrue310;"},
    {"{% for x in xs %}{{ loop.previtem | default('-') }}{{ loop.nextitem | default('-') }}{{ loop.cycle('a', 'b') }};{% endfor %}", "-1a;32b;1-a;"},
    {"{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %} {% for x in [1,1,2] %}{{ loop.changed(x, 1) }}{% endfor %}", "121 truefalsetrue"},
    {"{% for x in xs if x > 1 %}{{ x }}{{ loop.index }}{{ loop.length }}{% else %}none{% endfor %}", "312222"},
    {"{% for x in e %}{{ x }}{% else %}empty{% endfor %} {% for x in xs if x > 10 %}{{ x }}{% else %}filtered-empty{% endfor %}", "empty filtered-empty"},
    {"{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %} {% for (a, b) in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}", "1234 37"},
    {"{% for c in 'abc' %}{{ c }}.{% endfor %} {% for k in d %}{{ k }}{% endfor %}", "a.b.c. bac"},
    {"{% for x in xs %}{% for y in xs %}{{ loop.index }}{% endfor %}{{ loop.index }}|{% endfor %}", "1231|1232|1233|"},
    {"{% for x in xs %}{% set outer = loop %}{% for y in [1] %}{{ outer.index }}{% endfor %}{% endfor %}", "123"},
    {"{% for x in xs %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %} {% for x in xs %}{{ x }}{{ ', ' if not loop.last }}{% endfor %}", "3, 1, 2 3, 1, 2"},
    {"{% for x in xs %}{{ loop.cycle('a','b','c') }}{% endfor %} {% for a, b in d | items %}{{ loop.index }}{{ a }}{{ b }}{% endfor %}", "abc 1b22a13c3"},
    {"{{ range(3) | join }} {{ range(1, 4) | join }} {{ range(10, 0, -3) | join(',') }} {{ range(0) | length }}", "012 123 10,7,4,1 0"},
};

// Expected outputs: Python jinja2 3.1 with trim_blocks, lstrip_blocks, keep_trailing_newline,
// StrictUndefined (and booleans printed as true/false, kforge's deliberate deviation).
const RenderCase kStatementCases[] = {
    {"{% set ns = namespace(total=0, items=[]) %}{% for x in xs %}{% set ns.total = ns.total + x %}{% endfor %}{{ ns.total }}", "6"},
    {"{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }} {{ namespace(a=1).a }}", "12 1"},
    {"{% set x = 1 %}{% for i in xs %}{% set x = i %}{% endfor %}{{ x }}", "1"},
    {"{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set a, b = [3, 4] %}{{ a }}{{ b }}", "12 34"},
    {"{% set x %}inner {{ 1 + 1 }}{% endset %}[{{ x }}]", "[inner 2]"},
    {"{% set x | upper %}shout{% endset %}{{ x }}", "SHOUT"},
    {"{% set x | replace('a', 'b') | upper %}aaa{% endset %}{{ x }}", "BBB"},
    {"{% if false %}a{% elif xs %}b{% else %}c{% endif %}", "b"},
    {"{% if e %}a{% elif n %}b{% else %}c{% endif %}", "c"},
    {"{% if xs | length > 2 and 'a' in d %}yes{% endif %}", "yes"},
    {"{% macro m(a, b=2, c='x') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c='y') }} {{ m(a=5, b=6) }} {{ m(b=2, a=1) }}", "12x 13x 12y 56x 12x"},
    {"{% macro m(a, b=a) %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(1, 2) }}", "1112"},
    {"{% macro outer(x) %}<{{ inner(x) }}>{% endmacro %}{% macro inner(y) %}{{ y * 2 }}{% endmacro %}{{ outer(3) }}", "<6>"},
    {"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}", "321"},
    {"{% macro m(v) %}[{{ v }}]{% endmacro %}{% set g = m %}{{ g(1) }}", "[1]"},
    {"{% macro m(v) %}  [{{ v }}]  {% endmacro %}{{ m(1) | trim }}|{{ m(2) | length }}", "[1]|7"},
    {"{% raw %}{{ not parsed }} {% if %}{% endraw %}", "{{ not parsed }} {% if %}"},
    {"{# a comment {{ x }} #}after", "after"},
};


void check_table(const RenderCase* begin, const RenderCase* end) {
  const Value data = testing::parse_json(kData);
  for (const RenderCase* c = begin; c != end; ++c) {
    testing::Fixture f;
    INFO("template: " << c->source);
    CHECK(f.render(c->source, data) == c->expected);
  }
}

TEST_CASE("expressions render as in Jinja2", "[template][render]") {
  check_table(std::begin(kExpressionCases), std::end(kExpressionCases));
}

TEST_CASE("built-in filters render as in Jinja2", "[template][render][filters]") {
  check_table(std::begin(kFilterCases), std::end(kFilterCases));
}

TEST_CASE("built-in tests render as in Jinja2", "[template][render][tests]") {
  check_table(std::begin(kTestCases), std::end(kTestCases));
}

TEST_CASE("for loops and the loop variable behave as in Jinja2", "[template][render][loops]") {
  check_table(std::begin(kLoopCases), std::end(kLoopCases));
}

TEST_CASE("statements behave as in Jinja2", "[template][render][statements]") {
  check_table(std::begin(kStatementCases), std::end(kStatementCases));
}

TEST_CASE("case filters convert non-ASCII letters like Python", "[template][render][filters]") {
  testing::Fixture f;
  // Expected values from Python's str.upper() / lower() / capitalize().
  CHECK(f.render("{{ '\u00e9t\u00c9 \u00e0 la' | upper }}|{{ '\u00e9t\u00c9' | lower }}|{{ '\u00e9t\u00c9' | capitalize }}") ==
        "\xC3\x89T\xC3\x89 \xC3\x80 LA|\xC3\xA9t\xC3\xA9|\xC3\x89t\xC3\xA9");
  CHECK(f.render("{{ '\u03a3\u03af\u03c3\u03c5\u03c6\u03bf\u03c2' | upper }}") ==
        "\xCE\xA3\xCE\x8A\xCE\xA3\xCE\xA5\xCE\xA6\xCE\x9F\xCE\xA3");  // ΣΊΣΥΦΟΣ
  CHECK(f.render("{{ '\u043f\u0440\u0438 \u041c\u0438\u0440' | title }}") ==
        "\xD0\x9F\xD1\x80\xD0\xB8 \xD0\x9C\xD0\xB8\xD1\x80");  // При Мир
  CHECK(f.render("{{ 'stra\u00dfe' | upper }} {{ '\u00e9' is lower }} {{ '\u00c9' is upper }}") == "STRASSE true true");
}

// ---- deliberate deviations (templates-and-build.md §1.4) ----

TEST_CASE("booleans print as true/false, also through ~, join and string", "[template][render][deviation]") {
  testing::Fixture f;
  CHECK(f.render_json("{{ t }} {{ not t }}", R"({"t": true})") == "true false");
  CHECK(f.render_json("{{ 'x' ~ t }} {{ [t, false] | join(',') }} {{ t | string }}", R"({"t": true})") ==
        "xtrue true,false true");
}

TEST_CASE("printing none, a list, a map or a macro is an error", "[template][render][deviation]") {
  testing::Fixture f;
  CHECK(f.render_json("{{ n }}", R"({"n": null})") ==
        "error:\nt.j2:1:4: error: cannot print none; use `join`, `tojson` or `default`\n {{ n }}\n    ^\n");
  CHECK(f.render_json("{{ xs }}", R"({"xs": [1]})") ==
        "error:\nt.j2:1:4: error: cannot print a list; use `join`, `tojson` or `default`\n {{ xs }}\n    ^\n");
  CHECK(f.render_json("{{ m }}", R"({"m": {"a": 1}})") ==
        "error:\nt.j2:1:4: error: cannot print a map; use `join`, `tojson` or `default`\n {{ m }}\n    ^\n");
  CHECK(f.render("{% macro m() %}{% endmacro %}{{ m }}") ==
        "error:\nt.j2:1:33: error: cannot print macro 'm'; call it\n {% macro m() %}{% endmacro %}{{ m }}\n"
        "                                 ^\n");
  // A converted value prints fine.
  CHECK(f.render_json("{{ n | default('x', true) }} {{ xs | join }} {{ m | tojson }}", R"({"n": null, "xs": [1], "m": {"a": 1}})") ==
        "x 1 {\"a\": 1}");
}

TEST_CASE("for k, v in a map iterates key/value pairs in document order", "[template][render][deviation]") {
  testing::Fixture f;
  CHECK(f.render_json("{% for k, v in m %}{{ k }}={{ v }};{% endfor %}", R"({"m": {"z": 1, "a": 2, "m": 3}})") ==
        "z=1;a=2;m=3;");
  // One target iterates the keys, as in Jinja.
  CHECK(f.render_json("{% for k in m %}{{ k }}{% endfor %}", R"({"m": {"z": 1, "a": 2}})") == "za");
}

TEST_CASE("string values render verbatim, including delimiters", "[template][render]") {
  testing::Fixture f;
  CHECK(f.render_json("{{ s }}", R"({"s": "{{ x }} {% if %}"})") == "{{ x }} {% if %}");
  CHECK(f.render("{{ '{{' }}1, 2{{ '}}' }}") == "{{1, 2}}");
}

TEST_CASE("a template is parsed once and rendered many times with different contexts", "[template][render]") {
  testing::Fixture f;
  const Template* t = f.env.load_string("t.j2", "{% for x in xs %}{{ x | upper }}{% endfor %}");
  REQUIRE(t != nullptr);
  for (int i = 0; i < 3; ++i) {
    Value ctx = Value::map();
    Value xs = Value::list();
    for (int j = 0; j <= i; ++j) xs.push_back(Value(std::string(1, static_cast<char>('a' + j))));
    ctx.set("xs", xs);
    std::string out;
    REQUIRE(f.env.render(*t, ctx, out));
    CHECK(out == std::string("ABC").substr(0, static_cast<size_t>(i + 1)));
  }
}

TEST_CASE("render appends to the output and leaves it untouched on error", "[template][render]") {
  testing::Fixture f;
  const Template* ok = f.env.load_string("ok.j2", "b");
  const Template* bad = f.env.load_string("bad.j2", "c{{ missing }}");
  REQUIRE(ok);
  REQUIRE(bad);
  std::string out = "a";
  CHECK(f.env.render(*ok, Value::map(), out));
  CHECK(out == "ab");
  CHECK_FALSE(f.env.render(*bad, Value::map(), out));
  CHECK(out == "ab");
  CHECK(f.diags.error_count() == 1);
}

TEST_CASE("the render context may be none but not a scalar", "[template][render]") {
  testing::Fixture f;
  const Template* t = f.env.load_string("t.j2", "x");
  REQUIRE(t);
  std::string out;
  CHECK(f.env.render(*t, Value(), out));
  CHECK(out == "x");
  CHECK_FALSE(f.env.render(*t, Value(1), out));
  CHECK(f.diag_text.str() == "kforge: error: the render context must be a map, not an integer\n");
}

TEST_CASE("globals are visible to every template, below the context", "[template][render]") {
  testing::Fixture f;
  f.env.set_global("version", Value("1.2"));
  f.env.set_global("shadowed", Value("global"));
  CHECK(f.render_json("{{ version }} {{ shadowed }}", R"({"shadowed": "context"})") == "1.2 context");
}

}  // namespace
}  // namespace kforge::tmpl
