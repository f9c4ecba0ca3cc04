// kforge's entry point: CLI11 wiring only. Everything a command does lives in src/driver/.
#include <CLI/CLI.hpp>

#include "driver/cli_app.h"
#include "driver/common_options.h"
#include "driver/compile_command.h"
#include "driver/lint_command.h"
#include "driver/ops_command.h"
#include "driver/render_command.h"

int main(int argc, char** argv) {
  CLI::App app;
  kforge::driver::configure_app(app);
  kforge::driver::CommandAction action;

  // One registration function per subcommand, each in src/driver/<name>_command.{h,cpp}: it adds the
  // subcommand with its options (plus add_output_options() for the shared output flags) and sets
  // `action` when chosen. To add `ops`, `compile` or `lint`, write register_<name>_command and call
  // it here; nothing else changes.
  kforge::driver::register_render_command(app, action);
  kforge::driver::register_lint_command(app, action);
  kforge::driver::register_compile_command(app, action);
  kforge::driver::register_ops_command(app, action);

  kforge::driver::set_command_line(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return kforge::driver::handle_parse_error(app, error);
  }
  return kforge::driver::run_action(action);
}
