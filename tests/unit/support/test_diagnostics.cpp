#include <catch2/catch.hpp>

#include <sstream>

#include "support/diagnostics.h"

using namespace kforge;

TEST_CASE("source manager maps offsets to lines and columns") {
  SourceManager sm;
  const uint32_t f = sm.add_buffer("a.txt", "\xEF\xBB\xBFone\r\ntwo\nthree");
  CHECK(sm.contents(f) == "one\ntwo\nthree");
  CHECK(sm.line_col({f, 0}).line == 1);
  CHECK(sm.line_col({f, 4}).line == 2);
  CHECK(sm.line_col({f, 5}).col == 2);
  CHECK(sm.line_text({f, 9}) == "three");
  const SourceLoc loc = sm.loc_at(f, 3, 2);
  CHECK(loc.offset == 9);
  CHECK(sm.loc_at(f, 1, 99).offset == 3);  // clamped to the end of the line
}

TEST_CASE("diagnostics print path, line, column, source line and caret") {
  SourceManager sm;
  const uint32_t f = sm.add_buffer("ops.yaml", "- op: add\n  args: (Tensor x\n");
  std::ostringstream out;
  DiagnosticEngine diags(sm, out);
  Diagnostic d{Severity::kError, sm.loc_at(f, 2, 9), "expected ')' to close '('", {}};
  d.note("'(' opened here", sm.loc_at(f, 2, 9));
  diags.report(d);
  diags.warning({}, "no location");
  diags.print_summary();
  CHECK(out.str() ==
        "ops.yaml:2:9: error: expected ')' to close '('\n"
        "   args: (Tensor x\n"
        "         ^\n"
        "ops.yaml:2:9: note: '(' opened here\n"
        "   args: (Tensor x\n"
        "         ^\n"
        "kforge: warning: no location\n"
        "1 warning and 1 error generated.\n");
  CHECK(diags.error_count() == 1);
}

TEST_CASE("warnings become errors under --werror") {
  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diags(sm, out);
  diags.set_warnings_as_errors(true);
  diags.warning({}, "unknown key");
  CHECK(diags.error_count() == 1);
  CHECK(out.str() == "kforge: error: unknown key\n");
}
