#include <catch2/catch.hpp>

#include <sstream>

#include "output/output_set.h"

using namespace kforge;

TEST_CASE("output set keeps insertion order and rejects duplicate paths") {
  OutputSet set;
  CHECK(set.add("b/z.h", "1"));
  CHECK(set.add("a.h", "2"));
  CHECK_FALSE(set.add("b/./z.h", "3"));  // same file, other spelling
  CHECK_FALSE(set.add("b//z.h", "3"));
  REQUIRE(set.size() == 2);
  CHECK(set.files()[0].path == "b/z.h");
  CHECK(set.files()[1].path == "a.h");
  REQUIRE(set.find("./a.h") != nullptr);
  CHECK(set.find("./a.h")->bytes == "2");
  CHECK(set.find("c.h") == nullptr);
}

TEST_CASE("list outputs prints sorted paths as spelled and skips stdout") {
  OutputSet set;
  set.add("out/b.cc", "");
  set.add("-", "");
  set.add("out/a.h", "");
  set.add("Z.txt", "");
  std::ostringstream out;
  print_output_list(set, out);
  CHECK(out.str() == "Z.txt\nout/a.h\nout/b.cc\n");
}

TEST_CASE("normalised output paths") {
  CHECK(normalise_output_path("a/../b/c.h") == "b/c.h");
  CHECK(normalise_output_path("dir/") == "dir");
  CHECK(normalise_output_path("-") == "-");
}
