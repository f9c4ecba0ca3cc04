// yaml_precheck (support/yaml_progress.h): stops yaml-cpp where it would loop forever and aliases that would
// expand without bound, and leaves every other input, well-formed or not, to the real parse.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "support/yaml_progress.h"

namespace {

/// The "billion laughs": each anchor repeats the previous one ten times.
std::string alias_bomb(int levels) {
  std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < levels; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  return text;
}

}  // namespace

TEST_CASE("a parse that makes progress is not stopped, whether or not the YAML is valid") {
  CHECK_FALSE(kforge::yaml_precheck("a: 1\nb: [x, {c: d}, ~]\n---\n- e\n"));
  CHECK_FALSE(kforge::yaml_precheck(""));
  CHECK_FALSE(kforge::yaml_precheck("[{}, {}, {}, [], [], -, ~, ~]"));
  CHECK_FALSE(kforge::yaml_precheck("a: [1, 2\n"));  // a syntax error: the real parse reports it
  CHECK_FALSE(kforge::yaml_precheck("a: *nowhere\n"));  // an unknown anchor: likewise
}

TEST_CASE("yaml-cpp 0.7's endless loop on a malformed flow mapping is stopped where it stalls") {
  // Found by fuzzing the render data reader (tests/golden/error-data-yaml-parser-loop).
  const std::string text =
      "{\n  \"m\xe2" "del\": {\n    \"depth\": 50,\n 0.05, \"momentum\": 0.9},\n    \"tags\": [\"vision\"]\n"
      "  },\n  \"released\": true\n}\n";
  const std::optional<kforge::YamlPrecheckProblem> stuck = kforge::yaml_precheck(text);
  REQUIRE(stuck);
  CHECK(stuck->stalled);
  CHECK(stuck->mark.line == 5);
  CHECK_FALSE(stuck->anchor);
}

TEST_CASE("the stall is described by the token there, or as no progress") {
  YAML::Mark mark;
  mark.pos = 1;
  CHECK(kforge::yaml_stall_message("a,b", mark) == "unexpected ','");
  CHECK(kforge::yaml_stall_message("a b", mark) == "the parser makes no progress here");
  mark.pos = 10;
  CHECK(kforge::yaml_stall_message("a,b", mark) == "the parser makes no progress here");
}

TEST_CASE("aliases are counted by what they repeat: a billion laughs stops at the alias past the limit") {
  // Ten levels would repeat 10^10 scalars; at 35 bytes a "lol", a4 stands for 3.9 MB, and the aliases of a5
  // pass 32 MiB.
  const std::string text = alias_bomb(10);
  const std::optional<kforge::YamlPrecheckProblem> bomb = kforge::yaml_precheck(text);
  REQUIRE(bomb);
  CHECK_FALSE(bomb->stalled);
  CHECK(bomb->message.find("alias '*a4' takes the YAML aliases of this file past 32 MiB") == 0);
  CHECK(bomb->mark.line == 5);    // a5's line, 0-based
  REQUIRE(bomb->anchor);
  CHECK(bomb->anchor->line == 4);  // &a4
  CHECK(bomb->anchor->column == 4);
  // Four levels repeat about 11,000 nodes: far below the limit, and below a limit lowered to 1 MiB.
  CHECK_FALSE(kforge::yaml_precheck(alias_bomb(4)));
  CHECK(kforge::yaml_precheck(alias_bomb(5), size_t{1} << 20));
  // Many uses of a small anchor are fine; the count is of what they add, not of the text.
  std::string many = "x: &x [1, 2]\nl:\n";
  for (int i = 0; i < 10000; ++i) many += "  - *x\n";
  CHECK_FALSE(kforge::yaml_precheck(many));
}

TEST_CASE("an alias inside its own anchor names an endless tree") {
  for (const char* text : {"a: &x [1, *x]\n", "a: &x\n  b: *x\n", "- &x {k: [*x]}\n"}) {
    const std::optional<kforge::YamlPrecheckProblem> loop = kforge::yaml_precheck(text);
    REQUIRE(loop);
    CHECK(loop->message == "alias '*x' is used inside its own anchor: the tree it names is endless");
    CHECK(loop->anchor);
  }
  // An anchor defined again later is a new anchor, used after it ends: no loop.
  CHECK_FALSE(kforge::yaml_precheck("a: &x [1]\nb: &x [2]\nc: *x\n"));
}

TEST_CASE("yaml_precheck_passes reports the alias, with a note at its anchor") {
  kforge::SourceManager sources;
  const uint32_t file = sources.add_buffer("d.yaml", "a: &x [1, *x]\n");
  std::ostringstream out;
  kforge::DiagnosticEngine diags(sources, out);
  const auto loc_of = [&](const YAML::Mark& m) {
    return sources.loc_at(file, static_cast<uint32_t>(m.line + 1), static_cast<uint32_t>(m.column + 1));
  };
  CHECK_FALSE(kforge::yaml_precheck_passes(sources.contents(file), diags, loc_of, "invalid YAML: "));
  CHECK(out.str().find("d.yaml:1:11: error: alias '*x' is used inside its own anchor") == 0);
  CHECK(out.str().find("d.yaml:1:4: note: its anchor is here") != std::string::npos);
}
