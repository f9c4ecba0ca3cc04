#include <catch2/catch.hpp>

#include "scalar_expr/scalar_locator.h"

using namespace kforge;
using namespace kforge::expr;

namespace {

// Column (1-based) of value byte `offset`, with the value starting at the first occurrence of `start`.
uint32_t column_of(const std::string& yaml, std::string_view start, std::string_view value, size_t offset,
                   uint32_t* line = nullptr) {
  SourceManager sm;
  const uint32_t file = sm.add_buffer("ops.yaml", yaml);
  const SourceLoc base{file, static_cast<uint32_t>(sm.contents(file).find(start))};
  const ScalarLocator locator(value, base, &sm);
  const LineCol lc = sm.line_col(locator.at(offset));
  if (line) *line = lc.line;
  return lc.col;
}

}  // namespace

TEST_CASE("locator: plain scalars map one to one") {
  const std::string yaml = "  compute: max(x, 0)\n";
  CHECK(column_of(yaml, "max", "max(x, 0)", 0) == 12);
  CHECK(column_of(yaml, "max", "max(x, 0)", 4) == 16);
  CHECK(column_of(yaml, "max", "max(x, 0)", 9) == 21);  // one past the end
}

TEST_CASE("locator: quoted scalars skip the quote and escapes") {
  // value: x "+" $   source: "x \"+\" $"
  const std::string dq = "  compute: \"x \\\"+\\\" $\"\n";
  CHECK(column_of(dq, "\"x", "x \"+\" $", 0) == 13);
  CHECK(column_of(dq, "\"x", "x \"+\" $", 2) == 15);  // the escaped quote maps to its backslash
  CHECK(column_of(dq, "\"x", "x \"+\" $", 3) == 17);
  CHECK(column_of(dq, "\"x", "x \"+\" $", 6) == 21);
  // value: x ' $   source: 'x '' $'
  const std::string sq = "  compute: 'x '' $'\n";
  CHECK(column_of(sq, "'x", "x ' $", 2) == 15);
  CHECK(column_of(sq, "'x", "x ' $", 4) == 18);
  // an escaped line break joins lines without a space
  uint32_t line = 0;
  const std::string joined = "  compute: \"max(x,\\\n    0)\"\n";
  CHECK(column_of(joined, "\"max", "max(x,0)", 6, &line) == 5);
  CHECK(line == 2);
}

TEST_CASE("locator: folded plain scalars follow the line break") {
  const std::string yaml = "  compute: a +  \n     b * c\n";
  uint32_t line = 0;
  CHECK(column_of(yaml, "a +", "a + b * c", 2, &line) == 14);
  CHECK(line == 1);
  CHECK(column_of(yaml, "a +", "a + b * c", 4, &line) == 6);
  CHECK(line == 2);
  CHECK(column_of(yaml, "a +", "a + b * c", 8, &line) == 10);
}

TEST_CASE("locator: mismatching source and missing sources fall back") {
  const std::string yaml = "  compute: something\n";
  CHECK(column_of(yaml, "something", "xyz", 2) == 14);
  const ScalarLocator no_source("abc", {}, nullptr);
  CHECK(!no_source.at(1).valid());
  const ScalarLocator no_manager("abc", SourceLoc{0, 10}, nullptr);
  CHECK(no_manager.at(2).offset == 12);
}
