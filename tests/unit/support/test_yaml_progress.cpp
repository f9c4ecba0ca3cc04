// yaml_parse_runs_away (support/yaml_progress.h): stops yaml-cpp where it would loop forever, and leaves every
// input it can parse, well-formed or not, to the real parse.
#include <catch2/catch.hpp>

#include <string>

#include "support/yaml_progress.h"

TEST_CASE("a parse that makes progress is not stopped, whether or not the YAML is valid") {
  CHECK_FALSE(kforge::yaml_parse_runs_away("a: 1\nb: [x, {c: d}, ~]\n---\n- e\n"));
  CHECK_FALSE(kforge::yaml_parse_runs_away(""));
  CHECK_FALSE(kforge::yaml_parse_runs_away("[{}, {}, {}, [], [], -, ~, ~]"));
  CHECK_FALSE(kforge::yaml_parse_runs_away("a: [1, 2\n"));  // a syntax error: the real parse reports it
}

TEST_CASE("yaml-cpp 0.7's endless loop on a malformed flow mapping is stopped where it stalls") {
  // Found by fuzzing the render data reader (tests/golden/error-data-yaml-parser-loop).
  const std::string text =
      "{\n  \"m\xe2" "del\": {\n    \"depth\": 50,\n 0.05, \"momentum\": 0.9},\n    \"tags\": [\"vision\"]\n"
      "  },\n  \"released\": true\n}\n";
  const std::optional<YAML::Mark> stuck = kforge::yaml_parse_runs_away(text);
  REQUIRE(stuck);
  CHECK(stuck->line == 5);
}

TEST_CASE("the stall is described by the token there, or as no progress") {
  YAML::Mark mark;
  mark.pos = 1;
  CHECK(kforge::yaml_stall_message("a,b", mark) == "unexpected ','");
  CHECK(kforge::yaml_stall_message("a b", mark) == "the parser makes no progress here");
  mark.pos = 10;
  CHECK(kforge::yaml_stall_message("a,b", mark) == "the parser makes no progress here");
}
