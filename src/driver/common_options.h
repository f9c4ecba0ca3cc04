// What every kforge command shares: exit codes, the output flags (--template-dir, --depfile,
// --depfile-target, --check, --list-outputs, --no-version-stamp, --color, --werror), the diagnostics
// session, and the common tail that turns an OutputSet into files, a listing or a --check report.
//
// A generating command parses its inputs, renders everything into an OutputSet, then calls
// finish_outputs(); it never writes files itself, so --check, --list-outputs, write-if-changed and
// the depfile behave the same for every command.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "output/output_set.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/source_manager.h"

namespace kforge::driver {

/// Exit codes of every command: 0 success, 1 input errors or stale --check, 2 command-line usage.
enum ExitCode : int { kExitOk = 0, kExitError = 1, kExitUsage = 2 };

/// What main() runs once the command line is parsed; set by the chosen subcommand's callback.
using CommandAction = std::function<int()>;

struct OutputOptions {
  std::vector<std::string> template_dirs;  // searched first, in order, before the built-in templates
  std::string depfile;
  std::string depfile_target;
  bool check = false;
  bool list_outputs = false;
  bool no_version_stamp = false;
  bool werror = false;
  std::string color = "auto";  // auto | always | never
  uint64_t max_input_bytes = kDefaultMaxInputBytes;  // the size limit of every file read (support/input_file.h)
};

/// Adds the shared output flags to `command`, with add_input_options'.
void add_output_options(CLI::App& command, OutputOptions& options);
/// Adds the flags about reading inputs (--max-input-bytes), for a command that writes nothing (lint).
void add_input_options(CLI::App& command, OutputOptions& options);

/// kforge's version ("0.1.0"), as compiled in.
std::string_view kforge_version();

/// The banner a generating command puts at the top of `output_path` (see output/banner.h): kforge and
/// its version (left out with --no-version-stamp), `inputs` relative to the output, DO NOT EDIT,
/// @generated, in the output's comment syntax. `kforge render` does not use it.
std::string generated_banner(const OutputOptions& options, const std::vector<std::string>& inputs,
                             const std::string& output_path);

/// Whether diagnostics on stderr get colour: "always", "never", or "auto" = stderr is a terminal,
/// NO_COLOR is unset and TERM is not "dumb".
bool use_color(std::string_view mode);

/// Diagnostics for one command run: printed to stderr as they happen, coloured per --color,
/// warnings promoted per --werror.
class Session {
 public:
  explicit Session(const OutputOptions& options);
  SourceManager& sources() { return sources_; }
  DiagnosticEngine& diags() { return diags_; }

 private:
  SourceManager sources_;
  DiagnosticEngine diags_;
};

struct OutputRequest {
  /// Every input read and every template loaded, as the user spelled them or as resolved on the
  /// search path: the depfile's dependencies.
  std::vector<std::string> dependencies;
  /// Directories owned entirely by the command, for --check's "unexpected file" report.
  std::vector<std::string> owned_dirs;
};

/// The common tail of a generating command. With errors already reported: prints the summary, writes
/// nothing, returns 1. Otherwise: --list-outputs prints the sorted outputs; --check compares with the
/// disk (exit 1 if stale); else commits the outputs and the depfile together, write-if-changed and all or
/// nothing (committer.h). Returns the exit code.
int finish_outputs(const OutputOptions& options, const OutputSet& outputs, const OutputRequest& request,
                   Session& session);

/// Reports a usage problem found after parsing (a bad combination of flags) and returns 2.
int usage_error(std::string_view command_name, std::string_view message);

/// Reports `message` as an error located in a buffer "<command line>" that holds the flag as typed
/// ("FLAG VALUE"), so that the caret points at `offset` in `value`, the bad part.
void flag_error(Session& session, const std::string& flag, const std::string& value, size_t offset,
                const std::string& message);

/// Remembers the command line, for the "regenerate with:" hint of --check.
void set_command_line(int argc, const char* const* argv);
/// The command line as run, shell-quoted, without --check: what regenerates the outputs.
std::string regenerate_command();
/// Quotes an argument for a POSIX shell when it needs it.
std::string shell_quote(std::string_view arg);

}  // namespace kforge::driver
