#include <catch2/catch.hpp>

#include "support/text.h"

using namespace kforge;

TEST_CASE("edit distance counts insertions, deletions and substitutions") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "abc") == 0);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("alpha", "alpha_") == 1);
  CHECK(edit_distance("abc", "", 1) == 2);  // capped at max + 1
}

TEST_CASE("a capped edit distance agrees with the full one, also where the lengths alone exceed the cap") {
  // The length gap is a lower bound that ends the computation early; the answers are those of the full programme.
  const std::vector<std::string> words = {"", "a", "ab", "relu", "rleu", "relu6", "pd_op.relu", "pd_op.conv2d",
                                          "conv2d_transpose", "builtin.parameter", "builtin.paxrameter{"};
  for (const std::string& a : words) {
    for (const std::string& b : words) {
      const size_t full = edit_distance(a, b);
      for (size_t cap : {size_t{0}, size_t{1}, size_t{2}, size_t{5}}) {
        INFO(a << " / " << b << ", cap " << cap);
        CHECK(edit_distance(a, b, cap) == (full > cap ? cap + 1 : full));
      }
    }
  }
}

TEST_CASE("closest match suggests plausible typos only") {
  const std::vector<std::string> names = {"beta", "gamma", "alpha_"};
  CHECK(closest_match("alpha", names) == std::optional<std::string>("alpha_"));
  CHECK(closest_match("gama", names) == std::optional<std::string>("gamma"));
  CHECK_FALSE(closest_match("zzzzzz", names).has_value());
  CHECK_FALSE(closest_match("beta", names).has_value());  // an exact name is not a suggestion
}

TEST_CASE("join") {
  CHECK(join({}, ", ").empty());
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
}

TEST_CASE("the first byte YAML forbids: C0 controls other than tab, LF and CR, and DEL") {
  using namespace std::string_literals;
  CHECK(kforge::find_non_printable_yaml_byte("a: 1\n\tb: [x, y]\r\n") == std::nullopt);
  CHECK(kforge::find_non_printable_yaml_byte("caf\xc3\xa9: \xe2\x9c\x93\n") == std::nullopt);  // UTF-8 is fine
  CHECK(kforge::find_non_printable_yaml_byte("{\"m\0\": 1}"s) == 3u);
  CHECK(kforge::find_non_printable_yaml_byte("a: \x04") == 3u);  // yaml-cpp's own end-of-stream marker
  CHECK(kforge::find_non_printable_yaml_byte("a: \x7f") == 3u);
}

TEST_CASE("C string literals escape what a compiler would read otherwise") {
  CHECK(c_string_literal("plain") == "\"plain\"");
  CHECK(c_string_literal("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(c_string_literal("l1\nl2\t\r") == "\"l1\\nl2\\t\\r\"");
  // Octal escapes are three digits, so the digit after the NUL stays a digit.
  CHECK(c_string_literal(std::string("\0" "7", 2)) == "\"\\0007\"");
  CHECK(c_string_literal("\x7f\x1b") == "\"\\177\\033\"");
  CHECK(c_string_literal("µ ok") == "\"µ ok\"");
  CHECK(c_string_literal("") == "\"\"");
}

TEST_CASE("C++ and C keywords") {
  CHECK(is_cpp_keyword("class"));
  CHECK(is_cpp_keyword("co_await"));
  CHECK(is_cpp_keyword("restrict"));
  CHECK_FALSE(is_cpp_keyword("Class"));
  CHECK_FALSE(is_cpp_keyword("x"));
  CHECK_FALSE(is_cpp_keyword(""));
}
