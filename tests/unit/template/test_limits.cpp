// The limits that keep hostile templates from exhausting the stack, memory or time (docs/fuzzing.md, "Limits"):
// each is an error located at the construct that exceeds it, and templates just inside a limit still work.
#include <catch2/catch.hpp>

#include <string>

#include "template_test_util.h"

namespace kforge::tmpl {
namespace {

std::string repeated(std::string_view unit, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += unit;
  return out;
}

// An Environment with small render limits, so that exceeding them is quick.
struct SmallLimits {
  SourceManager sources;
  std::ostringstream diag_text;
  DiagnosticEngine diags{sources, diag_text};
  Environment env{sources, diags, EnvironmentOptions{100, 1000, 4096}};

  SmallLimits() { register_codegen_filters(env); }

  std::string render(const std::string& source) {
    diag_text.str("");
    std::string out;
    if (env.render_string("t.j2", source, Value::map(), out)) return out;
    return "error:\n" + diag_text.str();
  }
};

TEST_CASE("brackets, operators and blocks nest at most 128 deep", "[template][limits]") {
  testing::Fixture f;
  CHECK(f.render("{{ " + repeated("(", 100) + "1" + repeated(")", 100) + " }}") == "1");
  const std::string deep = f.render("{{ " + repeated("(", 200) + "1" + repeated(")", 200) + " }}");
  CHECK(deep.rfind("error:\nt.j2:1:", 0) == 0);
  CHECK(deep.find("error: template nested too deeply: more than 128 levels") != std::string::npos);
  // A long left-associative chain is as deep as it is long.
  CHECK(f.render("{{ 0" + repeated(" + 1", 100) + " }}") == "100");
  CHECK(f.render("{{ 0" + repeated(" + 1", 5000) + " }}").find("nested too deeply") != std::string::npos);
  CHECK(f.render("{{ x" + repeated("|string", 5000) + " }}").find("nested too deeply") != std::string::npos);
  CHECK(f.render("{{ " + repeated("not ", 5000) + "true }}").find("nested too deeply") != std::string::npos);
  CHECK(f.render(repeated("{% if true %}", 200) + "x" + repeated("{% endif %}", 200)).find("nested too deeply") !=
        std::string::npos);
}

TEST_CASE("loop iterations and macro calls of one render are limited", "[template][limits]") {
  SmallLimits f;
  CHECK(f.render("{% for i in range(999) %}{% endfor %}ok") == "ok");
  CHECK(f.render("{% for i in range(40) %}{% for j in range(40) %}{% endfor %}{% endfor %}") ==
        "error:\nt.j2:1:28: error: rendering takes more than 1000 loop iterations and macro calls\n"
        " {% for i in range(40) %}{% for j in range(40) %}{% endfor %}{% endfor %}\n"
        "                            ^\n");
  CHECK(f.render("{% macro m() %}{% endmacro %}{% for i in range(600) %}{{ m() }}{{ m() }}{% endfor %}")
            .find("more than 1000 loop iterations and macro calls") != std::string::npos);
}

TEST_CASE("strings, lists and the output are limited in size", "[template][limits]") {
  SmallLimits f;
  CHECK(f.render("{{ 'ab' * 2048 }}").size() == 4096);
  CHECK(f.render("{{ 'ab' * 2049 }}") ==
        "error:\nt.j2:1:9: error: the repeated sequence would be larger than the limit of 4096 bytes\n"
        " {{ 'ab' * 2049 }}\n         ^\n");
  CHECK(f.render("{{ 'x' * 9223372036854775807 }}").find("the repeated sequence would be larger") != std::string::npos);
  CHECK(f.render("{{ ([1] * 5000) | length }}").find("the repeated sequence would be larger") != std::string::npos);
  CHECK(f.render("{% set s = 'x' * 4000 %}{{ s ~ s }}").find("the concatenated string would be larger") !=
        std::string::npos);
  CHECK(f.render("{% for i in range(500) %}0123456789{% endfor %}").find("the rendered text would be larger") !=
        std::string::npos);
  CHECK(f.render("{{ 'a\\nb' | indent(2000) }}") ==
        "error:\nt.j2:1:13: error: 'width' must be at most 1024\n {{ 'a\\nb' | indent(2000) }}\n             ^\n");
  CHECK(f.render("{{ [1] | tojson(indent=100000) }}").find("'indent' must be at most 1024") != std::string::npos);
}

TEST_CASE("range near the ends of int64 yields its items without overflowing", "[template][limits]") {
  testing::Fixture f;
  CHECK(f.render("{{ range(9223372036854775800, 9223372036854775807, 5) | join(',') }}") ==
        "9223372036854775800,9223372036854775805");
  CHECK(f.render("{{ range(-9223372036854775800, -9223372036854775807, -4) | join(',') }}") ==
        "-9223372036854775800,-9223372036854775804");
}

}  // namespace
}  // namespace kforge::tmpl
