#include <catch2/catch.hpp>

#include <sstream>

#include "support/diagnostics.h"
#include "support/source_excerpt.h"

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

TEST_CASE("a copied source manager shares the buffers it had and keeps what is added afterwards apart") {
  SourceManager base;
  const uint32_t ops = base.add_buffer("ops.yaml", "- op : add\n  args : (Tensor x)\n");
  SourceManager copy = base;
  CHECK(copy.file_count() == 1);
  CHECK(copy.contents(ops).data() == base.contents(ops).data());  // the same buffer, not a copy of it
  CHECK(copy.line_text({ops, 14}) == "  args : (Tensor x)");
  const uint32_t input = copy.add_buffer("program.json", "{}");
  CHECK(input == 1);
  CHECK(copy.file_count() == 2);
  CHECK(base.file_count() == 1);
  CHECK(base.add_buffer("other.yaml", "x") == 1);
  CHECK(copy.path(1) == "program.json");
  CHECK(base.path(1) == "other.yaml");
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

namespace {

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// 36 distinct characters, so every window below is recognisable by its text.
constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";

}  // namespace

TEST_CASE("source excerpt keeps a line that fits") {
  SourceExcerpt e = source_excerpt("  args: (Tensor x", 9, 119);
  CHECK(e.text == "  args: (Tensor x");
  CHECK(e.indent == "        ");
  // Exactly the width: still whole; one character more and it is cut.
  CHECK(source_excerpt(kAlphabet.substr(0, 20), 5, 20).text == kAlphabet.substr(0, 20));
  CHECK(source_excerpt(kAlphabet.substr(0, 21), 5, 20).text == "abcdefghijklmnopq...");
  // A caret just past the end of a full-width line needs a column of its own.
  CHECK(source_excerpt(kAlphabet.substr(0, 20), 21, 20).text == "...efghijklmnopqrst");
}

TEST_CASE("source excerpt windows a long line around the column") {
  SECTION("near the start: no mark on the left") {
    SourceExcerpt e = source_excerpt(kAlphabet, 3, 20);
    CHECK(e.text == "abcdefghijklmnopq...");
    CHECK(e.indent == "  ");
    // Centred, the window would start at 'd': a mark hiding three characters saves nothing.
    CHECK(source_excerpt(kAlphabet, 11, 20).text == "abcdefghijklmnopq...");
    CHECK(source_excerpt(kAlphabet, 12, 20).text == "...efghijklmnopqr...");
  }
  SECTION("in the middle: the caret centred between two marks") {
    SourceExcerpt e = source_excerpt(kAlphabet, 19, 20);  // 's'
    CHECK(e.text == "...lmnopqrstuvwxy...");
    CHECK(e.indent == std::string(10, ' '));
    CHECK(e.text[e.indent.size()] == 's');
  }
  SECTION("near the end: no mark on the right") {
    SourceExcerpt e = source_excerpt(kAlphabet, 34, 20);  // '7'
    CHECK(e.text == "...tuvwxyz0123456789");
    CHECK(e.text[e.indent.size()] == '7');
    // Likewise on the right: centred on '0', the window would end three characters short.
    CHECK(source_excerpt(kAlphabet, 27, 20).text == "...tuvwxyz0123456789");
    CHECK(source_excerpt(kAlphabet, 26, 20).text == "...stuvwxyz012345...");
  }
  SECTION("past the end: the caret just after the last character") {
    SourceExcerpt e = source_excerpt(kAlphabet, 37, 20);
    CHECK(e.text == "...uvwxyz0123456789");
    CHECK(e.indent == std::string(19, ' '));
    // Columns further out are clamped to the same place.
    SourceExcerpt far = source_excerpt(kAlphabet, 999, 20);
    CHECK(far.text == e.text);
    CHECK(far.indent == e.indent);
  }
  SECTION("every column of a long line: within the width, caret on its character") {
    std::string line;
    for (size_t i = 0; i < 5000; ++i) line += kAlphabet[(i * 7) % kAlphabet.size()];
    for (uint32_t col = 1; col <= line.size(); ++col) {
      SourceExcerpt e = source_excerpt(line, col, 119);
      INFO("col " << col);
      REQUIRE(e.text.size() <= 119);
      REQUIRE(e.indent.size() < e.text.size());
      REQUIRE(e.text[e.indent.size()] == line[col - 1]);
    }
  }
}

TEST_CASE("source excerpt counts characters, not bytes, and never splits one") {
  SECTION("caret after multi-byte characters on a short line") {
    // "é" is two bytes; the caret at byte column 7 ('x') is the sixth character.
    SourceExcerpt e = source_excerpt("név: x", 7, 119);
    CHECK(e.text == "név: x");
    CHECK(e.indent == "     ");
    // A column on a continuation byte goes under the start of its character.
    CHECK(source_excerpt("név: x", 3, 119).indent == " ");
  }
  SECTION("cuts between multi-byte characters of every length") {
    const std::string line = repeat("é€😀a", 10);  // groups of 2-, 3-, 4- and 1-byte characters: 40, 100 bytes
    // The '€' of the fifth group (4 groups of 10 bytes, then "é"): character 17, byte column 43.
    SourceExcerpt e = source_excerpt(line, 4 * 10 + 2 + 1, 20);
    // Characters 10 to 23: the cuts fall before a '😀' and after an 'a'.
    CHECK(e.text == "...😀a" + repeat("é€😀a", 3) + "...");
    CHECK(e.indent == std::string(10, ' '));
  }
  SECTION("tabs before the caret stay tabs, inside a window too") {
    SourceExcerpt e = source_excerpt("\tfoo\tbar", 7, 119);
    CHECK(e.indent == "\t   \t ");
    const std::string line = repeat("x", 200) + "\ty\tz" + repeat("x", 200);
    SourceExcerpt cut = source_excerpt(line, 204, 20);  // 'z'
    CHECK(cut.text.find("\ty\tz") != std::string::npos);
    CHECK(cut.indent.substr(cut.indent.size() - 3) == "\t \t");
  }
}

TEST_CASE("diagnostics on a long line print a window at most 120 columns wide") {
  SourceManager sm;
  const std::string line = std::string(1000, 'x') + "BAD" + std::string(1000, 'y');
  const uint32_t f = sm.add_buffer("inference.json", line);
  std::ostringstream out;
  DiagnosticEngine diags(sm, out);
  diags.error(sm.loc_at(f, 1, 1001), "unknown data type 'BAD'");
  CHECK(out.str() == "inference.json:1:1001: error: unknown data type 'BAD'\n"
                     " ..." + std::string(56, 'x') + "BAD" + std::string(54, 'y') + "...\n" +
                     std::string(60, ' ') + "^\n");
}

TEST_CASE("a message stays on one line: quoted input with line breaks or controls is escaped") {
  // Found by fuzzing PIR text: an op name running over a line break put "kforge: error:" at the start of a line.
  SourceManager sm;
  const uint32_t f = sm.add_buffer("p.txt", "(%0) = \"builtin.parame\nkforge: error: x\"");
  std::ostringstream out;
  DiagnosticEngine diags(sm, out);
  diags.error({f, 7}, "unknown op 'builtin.parame\nkforge: error: x\x01\r'\tnear here");
  CHECK(out.str() ==
        "p.txt:1:8: error: unknown op 'builtin.parame\\nkforge: error: x\\x01\\r'\tnear here\n"
        " (%0) = \"builtin.parame\n"
        "        ^\n");
}
