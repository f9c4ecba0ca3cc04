// The loader: ordered search path, name validation, caching (parse once), include/import cycles,
// the list of loaded files for depfiles, resolve() for --print-template-path, and check_all().
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "template_test_util.h"

namespace kforge::tmpl {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("kforge-tmpl-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.generic_string();
  }
  std::string str() const { return path.generic_string(); }
};

TEST_CASE("the first search directory that has a template wins", "[template][loader]") {
  TempDir user, builtin;
  builtin.write("op.j2", "builtin {% include 'common.j2' %}");
  builtin.write("common.j2", "common-builtin");
  const std::string override_path = user.write("common.j2", "common-user");
  testing::Fixture f;
  f.env.add_search_dir(user.str());
  f.env.add_search_dir(builtin.str());
  CHECK(f.render_named("op.j2") == "builtin common-user");
  CHECK(f.env.resolve("common.j2") == override_path);
  CHECK(f.env.resolve("op.j2") == builtin.str() + "/op.j2");
  CHECK_FALSE(f.env.resolve("missing.j2").has_value());
  CHECK(f.env.loaded_files() == std::vector<std::string>{builtin.str() + "/op.j2", override_path});
}

TEST_CASE("templates are parsed once and cached by path", "[template][loader]") {
  TempDir dir;
  dir.write("a.j2", "{% include 'b.j2' %}{% include 'b.j2' %}");
  dir.write("b.j2", "b");
  testing::Fixture f;
  f.env.add_search_dir(dir.str());
  const Template* a1 = f.env.load("a.j2");
  const Template* a2 = f.env.load("a.j2");
  REQUIRE(a1 != nullptr);
  CHECK(a1 == a2);
  CHECK(a1->name() == "a.j2");
  CHECK(a1->path() == dir.str() + "/a.j2");
  CHECK(f.env.loaded_files().size() == 2);
  std::string out;
  CHECK(f.env.render(*a1, Value::map(), out));
  CHECK(out == "bb");
  CHECK(a1->dump() == "include \"b.j2\"\ninclude \"b.j2\"\n");
}

TEST_CASE("template names are relative and may not climb out of the search root", "[template][loader]") {
  testing::Fixture f;
  f.env.add_memory_template("ok.j2", "x");
  CHECK(f.render("{% include '../secret.j2' %}") ==
        "error:\nt.j2:1:4: error: invalid template name '../secret.j2': '..' is not allowed in template names\n"
        " {% include '../secret.j2' %}\n    ^\n");
  CHECK(f.render("{% include '/etc/passwd' %}") ==
        "error:\nt.j2:1:4: error: invalid template name '/etc/passwd': template names are '/'-separated and relative "
        "to the template search path\n {% include '/etc/passwd' %}\n    ^\n");
  CHECK(f.render("{% include 'a//b.j2' %}") ==
        "error:\nt.j2:1:4: error: invalid template name 'a//b.j2': template names must not contain empty or '.' "
        "components\n {% include 'a//b.j2' %}\n    ^\n");
  CHECK_FALSE(f.env.resolve("../ok.j2").has_value());
  CHECK(f.env.resolve("ok.j2") == "ok.j2");
}

TEST_CASE("a missing template is an error at the include, listing the search path", "[template][loader]") {
  TempDir dir;
  testing::Fixture f;
  f.env.add_search_dir(dir.str());
  CHECK(f.render("x\n  {% include 'nope.j2' %}") ==
        "error:\nt.j2:2:6: error: template 'nope.j2' not found\n   {% include 'nope.j2' %}\n      ^\n"
        "kforge: note: searched: " + dir.str() + "\n");
  CHECK(f.render_named("top.j2") == "error:\nkforge: error: template 'top.j2' not found\nkforge: note: searched: " +
                                        dir.str() + "\n");
}

TEST_CASE("include and import cycles are errors, found before rendering", "[template][loader]") {
  testing::Fixture f;
  f.env.add_memory_template("a.j2", "{% include 'b.j2' %}");
  f.env.add_memory_template("b.j2", "{% if false %}{% include 'a.j2' %}{% endif %}");
  f.env.add_memory_template("self.j2", "{% import 'self.j2' as me %}");
  CHECK(f.render_named("a.j2") ==
        "error:\nb.j2:1:18: error: include cycle: a.j2 -> b.j2 -> a.j2\n"
        " {% if false %}{% include 'a.j2' %}{% endif %}\n                  ^\n"
        "kforge: note: in template included from a.j2:1:4\n");
  CHECK(f.render_named("self.j2") ==
        "error:\nself.j2:1:4: error: include cycle: self.j2 -> self.j2\n {% import 'self.j2' as me %}\n    ^\n");
}

TEST_CASE("dynamic include names are resolved when rendering; their cycles are caught too", "[template][loader]") {
  testing::Fixture f;
  f.env.add_memory_template("loop.j2", "{% include name %}");
  f.env.add_memory_template("leaf.j2", "leaf");
  CHECK(f.render_json("{% include name %}", R"({"name": "leaf.j2"})") == "leaf");
  CHECK(f.render_json("{% include name %}", R"({"name": "loop.j2"})") ==
        "error:\nloop.j2:1:4: error: include cycle: 'loop.j2' includes itself\n {% include name %}\n    ^\n"
        "kforge: note: in template included from t.j2:1:4\n");
  CHECK(f.render_json("{% include name %}", R"({"name": 3})") ==
        "error:\nt.j2:1:12: error: template name must be a string, not an integer\n {% include name %}\n"
        "            ^\n");
}

TEST_CASE("an error in an included template is reported once, with the include chain", "[template][loader]") {
  testing::Fixture f;
  f.env.add_memory_template("bad.j2", "{{ x | nosuchfilter }}");
  f.env.add_memory_template("mid.j2", "{% include 'bad.j2' %}");
  CHECK(f.render("{% include 'mid.j2' %}{% include 'bad.j2' %}") ==
        "error:\nbad.j2:1:8: error: unknown filter 'nosuchfilter'\n {{ x | nosuchfilter }}\n        ^\n"
        "kforge: note: in template included from mid.j2:1:4\n"
        "kforge: note: in template included from t.j2:1:4\n");
  CHECK(f.diags.error_count() == 1);
}

TEST_CASE("check_all checks every template without data", "[template][loader]") {
  TempDir dir;
  dir.write("good.j2", "{% import 'lib/macros.j2' as m %}{{ m.f(x) }}");
  dir.write("lib/macros.j2", "{% macro f(a) %}{{ a | upper }}{% endmacro %}");
  dir.write("bad.j2", "{{ x | uppr }}");
  dir.write("arity.j2", "{% from 'lib/macros.j2' import f %}{{ f(1, 2) }}");
  dir.write("notes.txt", "{{ not a template");
  testing::Fixture f;
  f.env.add_search_dir(dir.str());
  CHECK_FALSE(f.env.check_all(dir.str()));
  CHECK(f.diag_text.str() ==
        dir.str() + "/arity.j2:1:39: error: too many arguments to macro 'f': expected at most 1, got 2\n"
        " {% from 'lib/macros.j2' import f %}{{ f(1, 2) }}\n                                       ^\n"
        "kforge: note: signature: f(a)\n" +
        dir.str() + "/bad.j2:1:8: error: unknown filter 'uppr'\n {{ x | uppr }}\n        ^\n"
        "kforge: note: did you mean 'upper'?\n");
  CHECK(f.diags.error_count() == 2);
  // Each file was read once even though lib/macros.j2 is both imported and listed.
  CHECK(f.env.loaded_files().size() == 4);

  TempDir clean;
  clean.write("a.j2", "{% for x in xs %}{{ x }}{% endfor %}");
  testing::Fixture g;
  CHECK(g.env.check_all(clean.str()));
  CHECK(g.diag_text.str().empty());
  CHECK_FALSE(g.env.check_all(clean.str() + "/nope"));
}

TEST_CASE("imports check what the imported template exports", "[template][loader]") {
  testing::Fixture f;
  f.env.add_memory_template("m.j2", "{% macro greet(who) %}hi {{ who }}{% endmacro %}{% set version = 2 %}");
  CHECK(f.render("{% from 'm.j2' import gret %}") ==
        "error:\nt.j2:1:23: error: template 'm.j2' does not export 'gret'\n {% from 'm.j2' import gret %}\n"
        "                       ^\nkforge: note: did you mean 'greet'?\nkforge: note: 'm.j2' exports: greet, version\n");
  CHECK(f.render("{% import 'm.j2' as m %}{{ m.greet() }}") ==
        "error:\nt.j2:1:30: error: missing argument 'who' in call to macro 'greet'\n"
        " {% import 'm.j2' as m %}{{ m.greet() }}\n                              ^\nkforge: note: signature: greet(who)\n");
  CHECK(f.render("{% import 'm.j2' as m %}{{ m.versoin }}") ==
        "error:\nt.j2:1:30: error: template 'm.j2' does not export 'versoin'\n"
        " {% import 'm.j2' as m %}{{ m.versoin }}\n                              ^\n"
        "kforge: note: did you mean 'version'?\nkforge: note: 'm.j2' exports: greet, version\n");
  CHECK(f.render("{% import 'm.j2' as m %}{{ m.greet('x') }} {{ m.version }}") == "hi x 2");
}

}  // namespace
}  // namespace kforge::tmpl
