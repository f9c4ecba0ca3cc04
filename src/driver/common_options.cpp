#include "driver/common_options.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "output/banner.h"
#include "output/check.h"
#include "output/committer.h"
#include "output/depfile.h"

#ifndef KFORGE_VERSION
#error "KFORGE_VERSION must be defined by the build (see src/meson.build)"
#endif

namespace kforge::driver {

namespace {

std::vector<std::string>& command_line() {
  static std::vector<std::string> args;
  return args;
}

}  // namespace

std::string_view kforge_version() { return KFORGE_VERSION; }

void add_output_options(CLI::App& command, OutputOptions& options) {
  const std::string group = "Output options";
  command.add_option("--template-dir", options.template_dirs,
                     "Directory searched for templates before the built-in ones (repeatable; first wins)")
      ->type_name("DIR")
      ->allow_extra_args(false)  // one value per flag: `--template-dir d TEMPLATE` must leave TEMPLATE alone
      ->group(group);
  command.add_option("--depfile", options.depfile,
                     "Write a Make-syntax depfile listing every input and template read")
      ->type_name("FILE")
      ->group(group);
  command.add_option("--depfile-target", options.depfile_target,
                     "Target named in the depfile (default: the outputs, first one first)")
      ->type_name("PATH")
      ->group(group);
  CLI::Option* check = command.add_flag("--check", options.check,
                                        "Write nothing; compare with the files on disk, print a diff and exit 1 "
                                        "if any is stale")
                           ->group(group);
  command.add_flag("--list-outputs", options.list_outputs, "Print the files that would be written, one per line")
      ->excludes(check)
      ->group(group);
  command.add_flag("--no-version-stamp", options.no_version_stamp,
                   "Leave kforge's version out of generated banners (stable goldens)")
      ->group(group);
  command.add_flag("--werror", options.werror, "Treat warnings as errors")->group(group);
  command.add_option("--color", options.color, "Colour diagnostics: auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN")
      ->default_str("auto")
      ->group(group);
  add_input_options(command, options);
}

void add_input_options(CLI::App& command, OutputOptions& options) {
  command
      .add_option("--max-input-bytes", options.max_input_bytes,
                  "Refuse any input file (program, op file, data, template) larger than this many bytes "
                  "(at most 4294967295)")
      ->check(CLI::Range(uint64_t{1}, kMaxInputBytesCeiling))
      ->type_name("N")
      ->default_str(std::to_string(kDefaultMaxInputBytes));
}

std::string generated_banner(const OutputOptions& options, const std::vector<std::string>& inputs,
                             const std::string& output_path) {
  return make_banner(BannerInfo{std::string(kforge_version()), !options.no_version_stamp, inputs, output_path});
}

bool use_color(std::string_view mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (std::getenv("NO_COLOR") != nullptr) return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return ::isatty(STDERR_FILENO) == 1;
}

Session::Session(const OutputOptions& options) : diags_(sources_, std::cerr) {
  diags_.set_color(use_color(options.color));
  diags_.set_warnings_as_errors(options.werror);
  sources_.set_max_file_bytes(options.max_input_bytes);
}

int finish_outputs(const OutputOptions& options, const OutputSet& outputs, const OutputRequest& request,
                   Session& session) {
  DiagnosticEngine& diags = session.diags();
  if (diags.has_errors()) {
    diags.print_summary();
    return kExitError;
  }
  if (options.list_outputs) {
    print_output_list(outputs, std::cout);
    diags.print_summary();
    return kExitOk;
  }
  if (options.check) {
    CheckOptions check_options;
    check_options.regenerate_command = regenerate_command();
    check_options.owned_dirs = request.owned_dirs;
    const CheckResult result = check_outputs(outputs, check_options, std::cout);
    diags.print_summary();
    return result.up_to_date() ? kExitOk : kExitError;
  }
  // The depfile is committed with the outputs, all or nothing: a depfile that cannot be written (a directory)
  // stops the commit before any output is touched, and an error anywhere leaves no depfile naming stale outputs.
  OutputSet with_depfile;
  const OutputSet* committed = &outputs;
  if (!options.depfile.empty()) {
    std::vector<std::string> targets;
    if (!options.depfile_target.empty()) {
      targets.push_back(options.depfile_target);
    } else {
      for (const OutputFile& file : outputs.files()) {
        if (file.path != kStdoutPath) targets.push_back(file.path);
      }
    }
    with_depfile = outputs;
    if (!with_depfile.add(options.depfile, format_depfile(targets, request.dependencies), "depfile")) {
      diags.file_error(options.depfile, "the depfile is also an output of this command");
      diags.print_summary();
      return kExitError;
    }
    committed = &with_depfile;
  }
  if (!commit_outputs(*committed, diags, std::cout)) {
    diags.print_summary();
    return kExitError;
  }
  diags.print_summary();
  return diags.has_errors() ? kExitError : kExitOk;
}

int usage_error(std::string_view command_name, std::string_view message) {
  std::cerr << "kforge: error: " << message << "\n"
            << "Run 'kforge " << command_name << " --help' for more information.\n";
  return kExitUsage;
}

void flag_error(Session& session, const std::string& flag, const std::string& value, size_t offset,
                const std::string& message) {
  const std::string typed = flag + " " + value;
  const uint32_t file = session.sources().add_buffer("<command line>", typed);
  session.diags().error(session.sources().loc_of_offset(file, flag.size() + 1 + offset), message);
}

void set_command_line(int argc, const char* const* argv) {
  command_line().assign(argv, argv + argc);
}

std::string shell_quote(std::string_view arg) {
  if (arg.empty()) return "''";
  const bool safe = arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                          "_-+=/.,:@%") == std::string_view::npos;
  if (safe) return std::string(arg);
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string regenerate_command() {
  std::string out;
  for (const std::string& arg : command_line()) {
    if (arg == "--check") continue;
    if (!out.empty()) out += ' ';
    out += shell_quote(arg);
  }
  return out;
}

}  // namespace kforge::driver
