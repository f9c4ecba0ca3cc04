// Parser: AST dumps (precedence and associativity as in Jinja's parser.py) and parse errors with exact
// locations, including unclosed blocks reported at their opening tag and rejected Jinja features.
#include <catch2/catch.hpp>

#include <sstream>

#include "template/lexer.h"
#include "template/parser.h"

namespace kforge::tmpl {
namespace {

/// The AST dump, or the formatted diagnostic.
std::string parse(const std::string& source) {
  SourceManager sources;
  std::ostringstream sink;
  DiagnosticEngine diags(sources, sink);
  const uint32_t file = sources.add_buffer("t.j2", source);
  std::vector<Token> tokens;
  Diagnostic error;
  ast::Body body;
  if (!lex_template(sources, file, tokens, error) || !parse_template(file, tokens, body, error)) {
    return diags.format(error);
  }
  return ast::dump(body);
}

std::string expr(const std::string& e) { return parse("{{ " + e + " }}"); }

TEST_CASE("parser: operator precedence and associativity", "[template][parser]") {
  CHECK(expr("1 + 2 * 3") == "output (+ 1 (* 2 3))\n");
  CHECK(expr("(1 + 2) * 3") == "output (* (+ 1 2) 3)\n");
  CHECK(expr("2 ** 3 ** 2") == "output (** (** 2 3) 2)\n");  // left-associative in Jinja
  CHECK(expr("-2 ** 2") == "output (** (neg 2) 2)\n");
  CHECK(expr("a - b - c") == "output (- (- a b) c)\n");
  CHECK(expr("a ~ b + c") == "output (+ (~ a b) c)\n");  // '~' binds tighter than '+' in Jinja
  CHECK(expr("a // b % c * d") == "output (* (% (// a b) c) d)\n");
  CHECK(expr("a or b and not c") == "output (or a (and b (not c)))\n");
  CHECK(expr("not a == b") == "output (not (cmp a == b))\n");
  CHECK(expr("a < b <= c") == "output (cmp a < b <= c)\n");
  CHECK(expr("a in b and c not in d") == "output (and (cmp a in b) (cmp c not in d))\n");
  CHECK(expr("x if c else y if d else z") == "output (if c x (if d y z))\n");
  CHECK(expr("x if c") == "output (if c x _)\n");
}

TEST_CASE("parser: filters, tests and calls bind tightly", "[template][parser]") {
  CHECK(expr("-x | abs") == "output (filter abs (neg x))\n");
  CHECK(expr("a + b | upper") == "output (+ a (filter upper b))\n");
  CHECK(expr("x | join(', ', attribute='name') | upper") ==
        "output (filter upper (filter join x \", \" attribute=\"name\"))\n");
  CHECK(expr("x is defined and y is not none") == "output (and (is defined x) (is-not none y))\n");
  CHECK(expr("x is divisibleby 3") == "output (is divisibleby x 3)\n");
  CHECK(expr("x is divisibleby(3)") == "output (is divisibleby x 3)\n");
  CHECK(expr("a + b is odd") == "output (+ a (is odd b))\n");
  CHECK(expr("f(1, k=2)(3)") == "output (call (call f 1 k=2) 3)\n");
  CHECK(expr("m.macro(x)") == "output (call (. m macro) x)\n");
}

TEST_CASE("parser: literals and postfix access", "[template][parser]") {
  CHECK(expr("[1, 'a', 2.5, true, none, [],]") == "output (list 1 \"a\" 2.5 True None (list))\n");
  CHECK(expr("{'a': 1, b: [2]}") == "output (dict (\"a\" 1) (b (list 2)))\n");
  CHECK(expr("(1, 2)") == "output (tuple 1 2)\n");
  CHECK(expr("(1,)") == "output (tuple 1)\n");
  CHECK(expr("()") == "output (tuple)\n");
  CHECK(expr("a, b") == "output (tuple a b)\n");
  CHECK(expr("'a' \"b\"") == "output \"ab\"\n");
  CHECK(expr("a.b[0].c['d']") == "output ([] (. ([] (. a b) 0) c) \"d\")\n");
  CHECK(expr("a.0") == "output ([] a 0)\n");
  CHECK(expr("s[1:]") == "output (slice s 1 _ _)\n");
  CHECK(expr("s[::-1]") == "output (slice s _ _ (neg 1))\n");
  CHECK(expr("s[a:b:2]") == "output (slice s a b 2)\n");
}

TEST_CASE("parser: statements", "[template][parser]") {
  CHECK(parse("{% if a %}x{% elif b %}y{% else %}z{% endif %}") ==
        "if a\n  text \"x\"\nelif b\n  text \"y\"\nelse\n  text \"z\"\n");
  CHECK(parse("{% for k, v in m | items if v %}{{ k }}{% else %}none{% endfor %}") ==
        "for k, v in (filter items m) if v\n  output k\nelse\n  text \"none\"\n");
  CHECK(parse("{% for (a, b) in xs %}{% endfor %}{% for a, in xs %}{% endfor %}") ==
        "for a, b in xs\nfor a, in xs\n");
  CHECK(parse("{% set x = 1 %}{% set a, b = 1, 2 %}{% set ns.n = ns.n + 1 %}") ==
        "set x = 1\nset a, b = (tuple 1 2)\nset ns.n = (+ (. ns n) 1)\n");
  CHECK(parse("{% set x | trim | upper %} a {% endset %}") == "set x | trim | upper\n  text \" a \"\n");
  CHECK(parse("{% macro m(a, b=1, c='x') %}{{ a }}{% endmacro %}") == "macro m(a, b=1, c=\"x\")\n  output a\n");
  CHECK(parse("{% include 'a.j2' %}{% include name ignore missing %}") ==
        "include \"a.j2\"\ninclude name ignore missing\n");
  CHECK(parse("{% import 'm.j2' as m %}{% from 'm.j2' import a, b as c %}") ==
        "import \"m.j2\" as m\nfrom \"m.j2\" import a, b as c\n");
  CHECK(parse("{% print x %}{% raw %}{{ y }}{% endraw %}") == "output x\ntext \"{{ y }}\"\n");
}

TEST_CASE("parser: unclosed and mismatched blocks are reported at the opening tag", "[template][parser]") {
  CHECK(parse("a\n{% for x in xs %}\n{% if x %}\n{% endif %}\n") ==
        "t.j2:2:4: error: 'for' block is never closed\n {% for x in xs %}\n    ^\n"
        "kforge: note: expected '{% endfor %}' before the end of the template\n");
  CHECK(parse("{% if a %}\n  {% endfor %}") ==
        "t.j2:2:6: error: unexpected 'endfor' inside 'if' block\n   {% endfor %}\n      ^\n"
        "t.j2:1:4: note: 'if' opened here; close it with '{% endif %}'\n {% if a %}\n    ^\n");
  CHECK(parse("{% endif %}") == "t.j2:1:4: error: unexpected 'endif' outside of any block\n {% endif %}\n    ^\n");
  CHECK(parse("{% set x %}abc") ==
        "t.j2:1:4: error: 'set' block is never closed\n {% set x %}abc\n    ^\n"
        "kforge: note: expected '{% endset %}' before the end of the template\n");
}

TEST_CASE("parser: unsupported Jinja features are rejected with a hint", "[template][parser]") {
  CHECK(parse("{% extends 'base.j2' %}") ==
        "t.j2:1:4: error: 'extends' is not supported (no template inheritance)\n {% extends 'base.j2' %}\n    ^\n"
        "kforge: note: use 'include' or macros instead\n");
  CHECK(parse("{% block b %}{% endblock %}") ==
        "t.j2:1:4: error: 'block' is not supported (no template inheritance)\n {% block b %}{% endblock %}\n    ^\n"
        "kforge: note: use 'include' or macros instead\n");
  CHECK(parse("{% call m() %}x{% endcall %}") ==
        "t.j2:1:4: error: 'call' blocks are not supported\n {% call m() %}x{% endcall %}\n    ^\n"
        "kforge: note: pass the content to the macro as an argument instead of using caller()\n");
  CHECK(parse("{% filter upper %}x{% endfilter %}") ==
        "t.j2:1:4: error: 'filter' blocks are not supported\n {% filter upper %}x{% endfilter %}\n    ^\n"
        "kforge: note: capture the text with '{% set x %}...{% endset %}' and apply the filter to x\n");
  CHECK(parse("{% with a = 1 %}{% endwith %}") ==
        "t.j2:1:4: error: 'with' blocks are not supported\n {% with a = 1 %}{% endwith %}\n    ^\n"
        "kforge: note: use 'set' (inside a for loop or macro to limit its scope)\n");
  CHECK(parse("{% do xs.append(1) %}") ==
        "t.j2:1:4: error: 'do' is not supported\n {% do xs.append(1) %}\n    ^\n"
        "kforge: note: use a namespace and '{% set ns.attr = ... %}'\n");
  CHECK(parse("{% autoescape true %}{% endautoescape %}") ==
        "t.j2:1:4: error: autoescape is not supported\n {% autoescape true %}{% endautoescape %}\n    ^\n"
        "kforge: note: kforge output is never HTML-escaped\n");
  CHECK(parse("{% for x in xs recursive %}{% endfor %}") ==
        "t.j2:1:16: error: recursive loops are not supported\n {% for x in xs recursive %}{% endfor %}\n"
        "                ^\nkforge: note: use a macro that calls itself instead\n");
  CHECK(parse("{% for k, v in m.items() %}{% endfor %}") ==
        "t.j2:1:18: error: method calls are not supported: '.items()'\n {% for k, v in m.items() %}{% endfor %}\n"
        "                  ^\nkforge: note: use the 'items' filter: `value | items`\n");
  CHECK(parse("{{ s.upper() }}") ==
        "t.j2:1:6: error: method calls are not supported: '.upper()'\n {{ s.upper() }}\n      ^\n"
        "kforge: note: use the 'upper' filter: `value | upper`\n");
  CHECK(parse("{% fore x in xs %}") ==
        "t.j2:1:4: error: unknown statement 'fore'\n {% fore x in xs %}\n    ^\nkforge: note: did you mean 'for'?\n");
  CHECK(parse("{% break %}") ==
        "t.j2:1:4: error: 'break' is not supported\n {% break %}\n    ^\n"
        "kforge: note: filter the loop instead: '{% for x in xs if condition %}'\n");
  CHECK(parse("{% include 'x' without context %}") ==
        "t.j2:1:16: error: 'without context' is not supported\n {% include 'x' without context %}\n"
        "                ^\nkforge: note: includes always see the current variables; imports never do\n");
}

TEST_CASE("parser: syntax errors", "[template][parser]") {
  CHECK(parse("{{ }}") ==
        "t.j2:1:4: error: expected an expression, got '}}'\n {{ }}\n    ^\n"
        "kforge: note: to output '{{' literally (e.g. C++ brace initialisation), use {% raw %}...{% endraw %} or "
        "{{ '{{' }}\n");
  CHECK(parse("{% if %}{% endif %}") ==
        "t.j2:1:7: error: expected an expression, got '%}'\n {% if %}{% endif %}\n       ^\n");
  CHECK(parse("{% for x xs %}") == "t.j2:1:10: error: expected 'in', got 'xs'\n {% for x xs %}\n          ^\n");
  CHECK(parse("{% set 1 = 2 %}") == "t.j2:1:8: error: expected a variable name, got '1'\n {% set 1 = 2 %}\n        ^\n");
  CHECK(parse("{% set true = 2 %}") == "t.j2:1:8: error: cannot assign to 'true'\n {% set true = 2 %}\n        ^\n");
  CHECK(parse("{% macro m(a=1, b) %}{% endmacro %}") ==
        "t.j2:1:17: error: parameter 'b' without a default follows a parameter with a default\n"
        " {% macro m(a=1, b) %}{% endmacro %}\n                 ^\n");
  CHECK(parse("{{ f(a=1, 2) }}") ==
        "t.j2:1:11: error: positional argument follows keyword argument\n {{ f(a=1, 2) }}\n           ^\n"
        "kforge: note: to output '{{' literally (e.g. C++ brace initialisation), use {% raw %}...{% endraw %} or "
        "{{ '{{' }}\n");
  CHECK(parse("{% from 'm' import _x %}") ==
        "t.j2:1:20: error: names starting with an underscore cannot be imported\n {% from 'm' import _x %}\n"
        "                    ^\n");
  CHECK(parse("{{ x is defined is defined }}") ==
        "t.j2:1:17: error: tests cannot be chained with 'is'\n {{ x is defined is defined }}\n                 ^\n"
        "kforge: note: to output '{{' literally (e.g. C++ brace initialisation), use {% raw %}...{% endraw %} or "
        "{{ '{{' }}\n");
  CHECK(parse("{{ 99999999999999999999 }}").starts_with(
      "t.j2:1:4: error: integer literal '99999999999999999999' does not fit in 64 bits\n"));
}

}  // namespace
}  // namespace kforge::tmpl
