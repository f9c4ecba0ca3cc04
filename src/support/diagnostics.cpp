#include "support/diagnostics.h"

#include <fmt/format.h>

#include <ostream>

#include "support/source_excerpt.h"

namespace kforge {

namespace {

const char* severity_name(Severity sev) {
  switch (sev) {
    case Severity::kNote: return "note";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

const char* severity_color(Severity sev) {
  switch (sev) {
    case Severity::kNote: return "\033[1;36m";
    case Severity::kWarning: return "\033[1;35m";
    case Severity::kError: return "\033[1;31m";
  }
  return "";
}

// A message is one line: text it quotes from the input (a name, a token) may hold line breaks or other control
// characters, which would otherwise start what looks like a diagnostic of its own (found by fuzzing PIR text: an
// op name running over a line that began "kforge: error:"). They are written as escapes.
void append_message(std::string& out, std::string_view message) {
  for (const char c : message) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if ((u < 0x20 && c != '\t') || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
}

}  // namespace

void DiagnosticEngine::print_one(std::string& out, Severity sev, SourceLoc loc, std::string_view message,
                                 std::string_view file_path) const {
  const bool color = color_;
  if (color) out += "\033[1m";
  if (loc.valid()) {
    const LineCol lc = sources_.line_col(loc);
    out += fmt::format("{}:{}:{}: ", sources_.path(loc.file), lc.line, lc.col);
  } else if (!file_path.empty()) {
    append_message(out, file_path);  // a path may hold a line break too
    out += ": ";
  } else {
    out += "kforge: ";
  }
  if (color) out += severity_color(sev);
  out += severity_name(sev);
  out += ": ";
  if (color) out += "\033[0m\033[1m";
  append_message(out, message);
  if (color) out += "\033[0m";
  out += '\n';
  if (!loc.valid()) return;
  // Source line (or a window of a long one) and caret, both behind one space.
  const uint32_t col = sources_.line_col(loc).col;
  const SourceExcerpt excerpt = source_excerpt(sources_.line_text(loc), col, kSourceExcerptWidth - 1);
  out += ' ';
  out += excerpt.text;
  out += "\n ";
  out += excerpt.indent;
  if (color) out += "\033[1;32m";
  out += '^';
  if (color) out += "\033[0m";
  out += '\n';
}

std::string DiagnosticEngine::format(const Diagnostic& diag) const {
  std::string out;
  print_one(out, diag.severity, diag.loc, diag.message);
  for (const DiagNote& n : diag.notes) print_one(out, Severity::kNote, n.loc, n.message);
  return out;
}

void DiagnosticEngine::report(Diagnostic diag) {
  if (diag.severity == Severity::kWarning && werror_) diag.severity = Severity::kError;
  if (diag.severity == Severity::kError) ++errors_;
  if (diag.severity == Severity::kWarning) ++warnings_;
  std::string text;
  print_one(text, diag.severity, diag.loc, diag.message);
  for (const DiagNote& n : diag.notes) print_one(text, Severity::kNote, n.loc, n.message);
  out_ << text;
  out_.flush();
  last_ = std::move(diag);
}

void DiagnosticEngine::file_error(std::string_view path, std::string message) {
  ++errors_;
  std::string text;
  print_one(text, Severity::kError, {}, message, path);
  out_ << text;
  out_.flush();
  last_ = {Severity::kError, {}, std::string(path) + ": " + message, {}};
}

void DiagnosticEngine::print_summary() {
  auto plural = [](size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  if (errors_ == 0 && warnings_ == 0) return;
  if (errors_ == 0) {
    out_ << plural(warnings_, "warning") << " generated.\n";
  } else if (warnings_ == 0) {
    out_ << plural(errors_, "error") << " generated.\n";
  } else {
    out_ << plural(warnings_, "warning") << " and " << plural(errors_, "error") << " generated.\n";
  }
  out_.flush();
}

}  // namespace kforge
