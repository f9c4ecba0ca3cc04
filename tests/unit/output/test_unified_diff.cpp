#include <catch2/catch.hpp>

#include <string>

#include "output/unified_diff.h"

using namespace kforge;

namespace {

std::string numbered_lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

}  // namespace

TEST_CASE("equal texts have no diff") { CHECK(unified_diff("a\nb\n", "a\nb\n", "x", "y").empty()); }

TEST_CASE("one changed line shows three lines of context") {
  std::string old_text = numbered_lines(1, 10);
  std::string new_text = old_text;
  new_text.replace(new_text.find("line 5\n"), 7, "LINE 5\n");
  CHECK(unified_diff(old_text, new_text, "a", "b") ==
        "--- a\n+++ b\n"
        "@@ -2,7 +2,7 @@\n"
        " line 2\n line 3\n line 4\n"
        "-line 5\n+LINE 5\n"
        " line 6\n line 7\n line 8\n");
}

TEST_CASE("distant changes make separate hunks, close ones share a hunk") {
  const std::string old_text = numbered_lines(1, 20);
  std::string far = old_text;
  far.replace(far.find("line 2\n"), 7, "X\n");
  far.replace(far.find("line 18\n"), 8, "Y\n");
  const std::string d = unified_diff(old_text, far, "a", "b");
  CHECK(d ==
        "--- a\n+++ b\n"
        "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+X\n line 3\n line 4\n line 5\n"
        "@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+Y\n line 19\n line 20\n");
  std::string near = old_text;
  near.replace(near.find("line 5\n"), 7, "X\n");
  near.replace(near.find("line 11\n"), 8, "Y\n");  // 5 equal lines between: one hunk
  const std::string d2 = unified_diff(old_text, near, "a", "b");
  CHECK(d2.find("@@ -2,13 +2,13 @@\n") != std::string::npos);
  CHECK(d2.find("@@ -", d2.find("@@ -2,13") + 1) == std::string::npos);  // only one hunk
}

TEST_CASE("insertions into and deletions from empty files") {
  CHECK(unified_diff("", "a\nb\n", "a", "b") == "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  CHECK(unified_diff("a\n", "", "a", "b") == "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n");
}

TEST_CASE("a missing final newline is shown explicitly") {
  CHECK(unified_diff("a\nb\n", "a\nb", "old", "new") ==
        "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
}

TEST_CASE("the diff is capped with a count of the lines left out") {
  const std::string d = unified_diff(numbered_lines(1, 50), numbered_lines(101, 150), "a", "b",
                                     DiffOptions{3, 10, 1000});
  CHECK(d.find("... 91 more diff lines not shown\n") != std::string::npos);
}

TEST_CASE("a large rewrite beyond the edit limit is a whole replacement") {
  const std::string d = unified_diff(numbered_lines(1, 30), numbered_lines(31, 60), "a", "b",
                                     DiffOptions{3, SIZE_MAX, 5});
  CHECK(d.find("@@ -1,30 +1,30 @@\n-line 1\n") != std::string::npos);
  CHECK(d.find("+line 60\n") != std::string::npos);
}
