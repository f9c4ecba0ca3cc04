#include <catch2/catch.hpp>

#include "output/depfile.h"

using namespace kforge;

TEST_CASE("make paths escape space, dollar and hash") {
  CHECK(escape_make_path("plain/path.h") == "plain/path.h");
  CHECK(escape_make_path("my dir/a b.j2") == "my\\ dir/a\\ b.j2");
  CHECK(escape_make_path("$HOME/x") == "$$HOME/x");
  CHECK(escape_make_path("issue#1.yaml") == "issue\\#1.yaml");
}

TEST_CASE("depfile lists targets first-output-first and each dependency once") {
  const std::string text = format_depfile({"out/first.h", "out/second.cc"},
                                          {"ops.yaml", "t/a.j2", "t/b c.j2", "ops.yaml", "t/a.j2"});
  CHECK(text ==
        "out/first.h out/second.cc: \\\n"
        "  ops.yaml \\\n"
        "  t/a.j2 \\\n"
        "  t/b\\ c.j2\n");
}

TEST_CASE("depfile with no dependencies is still a valid rule") {
  CHECK(format_depfile({"a"}, {}) == "a:\n");
}
