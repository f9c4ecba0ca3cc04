#include "driver/cli_app.h"

#include <exception>
#include <iostream>
#include <new>

#include "driver/version_info.h"

namespace kforge::driver {

namespace {

constexpr const char* kAppFooter = R"(Run 'kforge COMMAND --help' for a command's options and examples.

Exit codes: 0 success; 1 errors in the inputs or templates, or stale outputs with --check;
2 command-line usage errors.)";

}  // namespace

void configure_app(CLI::App& app) {
  app.name("kforge");
  app.description("kforge: an ahead-of-time code generator for deep-learning programs");
  // A callback, so that the template directory is looked up only when --version is asked for.
  app.set_version_flag("--version", [] { return version_text(); },
                       "Print kforge's version, its templates' and its runtime headers', and exit");
  app.require_subcommand(1);
  app.footer(kAppFooter);
}

int handle_parse_error(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    // --help, --help-all, --version: CLI11 prints them, to stdout.
    const_cast<CLI::App&>(app).exit(error, std::cout, std::cerr);
    return kExitOk;
  }
  std::string command = "";
  for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
  std::cerr << "kforge: error: " << error.what() << "\n"
            << "Run 'kforge" << command << " --help' for more information.\n";
  return kExitUsage;
}

int run_action(const CommandAction& action) {
  if (!action) return kExitUsage;  // unreachable: require_subcommand(1) guarantees one ran
  try {
    return action();
  } catch (const std::bad_alloc&) {
    // Inputs are bounded (--max-input-bytes, the YAML alias and template limits of docs/fuzzing.md), but what
    // fits those can still be more than this machine holds: an input problem, not a bug in kforge.
    std::cerr << "kforge: error: out of memory (--max-input-bytes lowers the size of input accepted)\n";
  } catch (const std::exception& e) {
    std::cerr << "kforge: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "kforge: internal error: unknown exception\n";
  }
  return kExitError;
}

}  // namespace kforge::driver
