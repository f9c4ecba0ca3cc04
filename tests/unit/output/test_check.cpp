#include <catch2/catch.hpp>

#include <sstream>

#include "output/check.h"
#include "temp_dir.h"

using namespace kforge;
using kforge::test::TempDir;
using kforge::test::write_text;

TEST_CASE("check is silent when everything is up to date") {
  TempDir tmp;
  write_text(tmp / "a.h", "a\n");
  OutputSet set;
  set.add(tmp / "a.h", "a\n");
  std::ostringstream out;
  const CheckResult r = check_outputs(set, {"kforge render x", {}, 400}, out);
  CHECK(r.up_to_date());
  CHECK(out.str().empty());
}

TEST_CASE("check reports stale, missing and unexpected files and the command") {
  TempDir tmp;
  write_text(tmp / "gen/a.h", "one\ntwo\n");
  write_text(tmp / "gen/stray.h", "old output\n");
  OutputSet set;
  const std::string a = (tmp.path() / "gen/a.h").generic_string();
  const std::string b = (tmp.path() / "gen/b.h").generic_string();
  set.add(a, "one\nTWO\n");
  set.add(b, "b\n");
  std::ostringstream out;
  const CheckResult r = check_outputs(set, {"kforge ops -o gen", {(tmp.path() / "gen").string()}, 400}, out);
  CHECK(r.stale == 1);
  CHECK(r.missing == 1);
  CHECK(r.unexpected == 1);
  const std::string text = out.str();
  CHECK(text.find("--- " + a + " (on disk)\n+++ " + a + " (regenerated)\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n") !=
        std::string::npos);
  CHECK(text.find("missing file: " + b + "\n") != std::string::npos);
  CHECK(text.find("unexpected file: " + (tmp.path() / "gen/stray.h").generic_string() + "\n") !=
        std::string::npos);
  CHECK(text.find("kforge: outputs are out of date (1 stale, 1 missing, 1 unexpected)\n") != std::string::npos);
  CHECK(text.find("regenerate with:\n  kforge ops -o gen\n") != std::string::npos);
}
