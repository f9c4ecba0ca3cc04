// Lexer: tokens of each mode, delimiters inside strings and brackets, numbers, string escapes, and
// lexical errors with exact locations.
#include <catch2/catch.hpp>

#include <sstream>

#include "template/lexer.h"

namespace kforge::tmpl {
namespace {

struct LexResult {
  bool ok;
  std::string text;  // token dump, or the formatted diagnostic
};

LexResult lex(const std::string& source) {
  SourceManager sources;
  std::ostringstream sink;
  DiagnosticEngine diags(sources, sink);
  const uint32_t file = sources.add_buffer("t.j2", source);
  std::vector<Token> tokens;
  Diagnostic error;
  if (!lex_template(sources, file, tokens, error)) return {false, diags.format(error)};
  return {true, dump_tokens(tokens)};
}

TEST_CASE("lexer: text, expression and statement tokens", "[template][lexer]") {
  CHECK(lex("a {{ x.y | f(1, 'z') }} b").text ==
        "text \"a \"\n{{\nname x\nop .\nname y\nop |\nname f\nop (\nint 1\nop ,\nstring 'z'\nop )\n}}\n"
        "text \" b\"\neof\n");
  CHECK(lex("{% for k, v in m %}{% endfor %}").text ==
        "{%\nname for\nname k\nop ,\nname v\nname in\nname m\n%}\n{%\nname endfor\n%}\neof\n");
  CHECK(lex("{{ a // b ** c != d <= e >= f == g }}").text ==
        "{{\nname a\nop //\nname b\nop **\nname c\nop !=\nname d\nop <=\nname e\nop >=\nname f\nop ==\nname g\n}}\neof\n");
}

TEST_CASE("lexer: control characters are kept on the delimiter tokens", "[template][lexer]") {
  CHECK(lex("{{- x -}}{%+ y +%}{%- z -%}").text == "{{-\nname x\n-}}\n{%+\nname y\n+%}\n{%-\nname z\n-%}\neof\n");
}

TEST_CASE("lexer: comments vanish and raw blocks become text", "[template][lexer]") {
  CHECK(lex("a{# {{ not }} #}b").text == "text \"a\"\ntext \"b\"\neof\n");
  CHECK(lex("{% raw %}{{ x }}{% if %}{% endraw %}").text == "text \"{{ x }}{% if %}\"\neof\n");
  CHECK(lex("{%- raw -%}  x  {%- endraw -%}").text == "text \"x\"\neof\n");
}

TEST_CASE("lexer: delimiters inside strings and brackets do not end a tag", "[template][lexer]") {
  CHECK(lex("{{ '}}' }}").text == "{{\nstring '}}'\n}}\neof\n");
  CHECK(lex("{{ {'a': {'b': 1}} }}").text ==
        "{{\nop {\nstring 'a'\nop :\nop {\nstring 'b'\nop :\nint 1\nop }\nop }\n}}\neof\n");
  CHECK(lex("{% set x = \"%}\" %}").text == "{%\nname set\nname x\nop =\nstring \"%}\"\n%}\neof\n");
}

TEST_CASE("lexer: numbers follow Jinja's rules", "[template][lexer]") {
  CHECK(lex("{{ 1 1.5 1e3 1.5e-3 1_000 0x1F 0o17 0b101 1. }}").text ==
        "{{\nint 1\nfloat 1.5\nfloat 1e3\nfloat 1.5e-3\nint 1_000\nint 0x1F\nint 0o17\nint 0b101\nint 1\nop .\n}}\neof\n");
}

TEST_CASE("lexer: whitespace post-pass trims text next to tags", "[template][lexer]") {
  // trim_blocks eats the newline after %}, lstrip_blocks the indentation before {%.
  CHECK(lex("a\n  {% x %}\nb").text == "text \"a\\n\"\n{%\nname x\n%}\ntext \"b\"\neof\n");
  // Neither applies to {{ }}.
  CHECK(lex("a\n  {{ x }}\nb").text == "text \"a\\n  \"\n{{\nname x\n}}\ntext \"\\nb\"\neof\n");
}

TEST_CASE("string literals decode Python escapes", "[template][lexer]") {
  std::string out, error;
  CHECK(decode_string_literal(R"('a\nb\t\\\'\"')", out, error));
  CHECK(out == "a\nb\t\\'\"");
  CHECK(decode_string_literal(R"("\x41\u00e9\U0001F600\101\q")", out, error));
  CHECK(out == "A\xC3\xA9\xF0\x9F\x98\x80" "A\\q");
  CHECK_FALSE(decode_string_literal(R"('\x4')", out, error));
  CHECK(error == "truncated \\xXX escape in string literal");
}

TEST_CASE("lexer errors are located", "[template][lexer]") {
  CHECK(lex("ok\n  {{ x").text ==
        "t.j2:2:3: error: unclosed '{{': expected '}}' before the end of the template\n   {{ x\n   ^\n"
        "kforge: note: to output '{{' literally, use {% raw %}...{% endraw %} or {{ '{{' }}\n");
  CHECK(lex("{% if x\n").text ==
        "t.j2:1:1: error: unclosed '{%': expected '%}' before the end of the template\n {% if x\n ^\n");
  CHECK(lex("a {# b").text == "t.j2:1:3: error: unclosed comment: '{#' has no matching '#}'\n a {# b\n   ^\n");
  CHECK(lex("{% raw %}x").text ==
        "t.j2:1:1: error: 'raw' block is never closed (missing '{% endraw %}')\n {% raw %}x\n ^\n");
  CHECK(lex("{{ 'abc }}").text == "t.j2:1:4: error: unterminated string literal\n {{ 'abc }}\n    ^\n");
  CHECK(lex("{% set x = 1 ! 2 %}").text ==
        "t.j2:1:14: error: unexpected character '!' in '{% %}'\n {% set x = 1 ! 2 %}\n              ^\n");
  CHECK(lex("{{ (1] }}").text ==
        "t.j2:1:6: error: unexpected ']', expected ')'\n {{ (1] }}\n      ^\n"
        "kforge: note: to output '{{' literally, use {% raw %}...{% endraw %} or {{ '{{' }}\n");
  CHECK(lex("int a{{1, 2}, {3}};").text ==
        "t.j2:1:12: error: unexpected '}'\n int a{{1, 2}, {3}};\n            ^\n"
        "kforge: note: to output '{{' literally, use {% raw %}...{% endraw %} or {{ '{{' }}\n");
}

}  // namespace
}  // namespace kforge::tmpl
