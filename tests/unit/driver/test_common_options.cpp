#include <catch2/catch.hpp>

#include "driver/common_options.h"
#include "driver/template_search_path.h"

using namespace kforge::driver;

TEST_CASE("shell quoting leaves plain words alone and quotes the rest") {
  CHECK(shell_quote("render") == "render");
  CHECK(shell_quote("a/b-c_d.j2") == "a/b-c_d.j2");
  CHECK(shell_quote("my file") == "'my file'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("") == "''");
}

TEST_CASE("the regenerate command is the command line without --check") {
  const char* argv[] = {"kforge", "render", "t.j2", "--check", "-o", "out file.h"};
  set_command_line(6, argv);
  CHECK(regenerate_command() == "kforge render t.j2 -o 'out file.h'");
}

TEST_CASE("colour only when asked or on a terminal") {
  CHECK(use_color("always"));
  CHECK_FALSE(use_color("never"));
}

TEST_CASE("template search path: user dirs, then command dirs, then the built-in templates") {
  const auto path = template_search_path({"u1", "u2"}, {"tpl"});
  REQUIRE(path.size() >= 3);
  CHECK(path[0] == "u1");
  CHECK(path[1] == "u2");
  CHECK(path[2] == "tpl");
  if (const auto builtin = builtin_template_dir()) {
    REQUIRE(path.size() == 4);
    CHECK(path[3] == *builtin);
  }
}
