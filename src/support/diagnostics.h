// The one diagnostic type of kforge, used by every front end and by the template engine.
//
// Format (GCC/clang style, lowercase messages, no trailing period):
//   path:line:col: error: message
//    source line
//        ^
//   path:line:col: note: ...
// followed at the end of a run by "N errors generated." (print_summary).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "support/source_manager.h"

namespace kforge {

enum class Severity { kNote, kWarning, kError };

struct DiagNote {
  SourceLoc loc;  // may be invalid: the note then prints as "note: message"
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLoc loc;  // may be invalid for errors without a source (e.g. a missing file)
  std::string message;
  std::vector<DiagNote> notes;

  Diagnostic& note(std::string msg, SourceLoc at = {}) {
    notes.push_back({at, std::move(msg)});
    return *this;
  }
};

/// Collects and prints diagnostics. Printing happens as they are reported, so a long run shows
/// errors as soon as they are found; counts drive the exit code and the summary line.
class DiagnosticEngine {
 public:
  DiagnosticEngine(const SourceManager& sources, std::ostream& out) : sources_(sources), out_(out) {}

  void set_color(bool on) { color_ = on; }
  void set_warnings_as_errors(bool on) { werror_ = on; }

  void report(Diagnostic diag);
  Diagnostic& last() { return last_; }

  // Shorthands for the common cases.
  void error(SourceLoc loc, std::string message) { report({Severity::kError, loc, std::move(message), {}}); }
  void warning(SourceLoc loc, std::string message) { report({Severity::kWarning, loc, std::move(message), {}}); }
  /// An error about a whole file rather than a place in it (it cannot be read or written), located by its path:
  /// "path: error: message", one line.
  void file_error(std::string_view path, std::string message);

  size_t error_count() const { return errors_; }
  size_t warning_count() const { return warnings_; }
  bool has_errors() const { return errors_ > 0; }

  /// "1 error generated." / "2 warnings and 3 errors generated."; prints nothing when all is clean.
  void print_summary();

  /// Formats one diagnostic exactly as report() prints it (without colour).
  std::string format(const Diagnostic& diag) const;

 private:
  /// `file_path` locates a diagnostic without a `loc` (file_error); without either it is kforge's own.
  void print_one(std::string& out, Severity sev, SourceLoc loc, std::string_view message,
                 std::string_view file_path = {}) const;

  const SourceManager& sources_;
  std::ostream& out_;
  bool color_ = false;
  bool werror_ = false;
  size_t errors_ = 0;
  size_t warnings_ = 0;
  Diagnostic last_;
};

/// Thrown by front ends that stop at their first fatal error after reporting it to the engine.
/// Never escapes a command: the driver catches it and exits 1.
struct FatalError {};

}  // namespace kforge
