#include "driver/lint_command.h"

#include <iostream>
#include <memory>

#include "driver/compile_target.h"
#include "driver/op_files.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "opdef/pir_signature.h"
#include "passes/op_set.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::driver {

namespace {

struct LintOptions {
  std::vector<std::string> programs;  // programs to verify against the op set (as `kforge compile` would)
  OpFileOptions op_files;
  std::vector<opdef::OpFile> files;  // op_files in command-line order
  std::string op_compat;
  bool print_signatures = false;
  OutputOptions out;  // only --werror and --color apply: lint writes no files
};

constexpr const char* kLintFooter = R"(Examples:
  Check Paddle's op definitions and the kforge overlay that adds compute/pattern keys:
    kforge lint --ops ops.yaml --ops kforge_overlay.yaml

  Print the PIR op signatures Paddle would derive (operands, mutable attributes, twins) as JSON:
    kforge lint --ops ops.yaml --op-compat op_compat.yaml --print-signatures > signatures.json

  Check a program against the op set the way `kforge compile` does (verification, shape inference,
  kernels), without generating code:
    kforge lint --ops ops.yaml --op-compat op_compat.yaml model.json

  Paddle's 9 op files, as its PIR generator reads them (1483 PIR ops; docs/op-yaml.md):
    kforge lint --ops ops.yaml --ops backward.yaml --ops fused_ops.yaml --ops fused_backward.yaml \
        --ops static_ops.yaml --ops static_backward.yaml --ops update_ops.yaml \
        --sparse-ops sparse_ops.yaml --sparse-ops sparse_backward.yaml \
        --op-compat op_compat.yaml --print-signatures

Files are loaded in command-line order; a later file may repeat an op only to add the extension keys
compute, reduce and pattern. Ops of --sparse-ops files have names of their own (Paddle's sparse `abs`
is not the dense `abs`) and become the PIR ops <kernel>_sp. Errors and warnings go to stderr as
file:line:col diagnostics; the exit code is 1 if there is any error (or any warning with --werror), 0
otherwise. schemas/op.schema.json documents every key.
)";

int run_lint(const LintOptions& opts) {
  Session session(opts.out);
  DiagnosticEngine& diags = session.diags();
  const opdef::OpLibrary library = opdef::load_op_library(opts.files, session.sources(), diags);
  opdef::OpCompat compat;
  if (!opts.op_compat.empty()) compat = opdef::load_op_compat(opts.op_compat, session.sources(), diags);

  if (opts.print_signatures && !diags.has_errors()) {
    const std::vector<opdef::PirOpSignature> signatures =
        opdef::derive_pir_signatures(library, opts.op_compat.empty() ? nullptr : &compat, diags);
    if (!diags.has_errors()) std::cout << opdef::signatures_to_json(signatures, session.sources());
  }
  if (!opts.programs.empty() && !diags.has_errors()) {
    const passes::OpSet op_set(library, opts.op_compat.empty() ? nullptr : &compat, diags);
    // The pipeline of `kforge compile --target cpu --layout nchw`: the program's own layouts, float32.
    const passes::CompileTarget& target = *find_compile_target("cpu");
    for (const std::string& path : opts.programs) {
      if (diags.has_errors()) break;
      std::optional<ir::Program> program = ir::read_program_file(session.sources(), path, diags);
      if (program) passes::run_pipeline(*program, op_set, target, passes::CompileChoices{}, diags);
    }
  }
  diags.print_summary();
  return diags.has_errors() ? kExitError : kExitOk;
}

}  // namespace

void register_lint_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<LintOptions>();
  CLI::App* cmd = app.add_subcommand("lint", "Check op YAML files (and print their PIR signatures) and programs");
  cmd->add_option("PROGRAM", opts->programs,
                  "Programs to check against the op set (PIR JSON, PIR text or kforge program YAML)")
      ->type_name("PROGRAM");
  add_op_file_options(*cmd, opts->op_files);
  cmd->add_option("--op-compat", opts->op_compat,
                  "Paddle's op_compat.yaml: legacy names and the metadata that makes attributes mutable")
      ->type_name("FILE");
  cmd->add_flag("--print-signatures", opts->print_signatures,
                "Print the derived PIR op signatures as JSON on stdout (the structure of Paddle's "
                "pir_op_signatures.json)");
  cmd->add_flag("--werror", opts->out.werror, "Treat warnings as errors");
  cmd->add_option("--color", opts->out.color, "Colour diagnostics: auto (on a terminal), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN")
      ->default_str("auto");
  add_input_options(*cmd, opts->out);
  cmd->footer(kLintFooter);
  cmd->callback([opts, cmd, &action] {
    opts->files = op_files_in_order(*cmd, opts->op_files);
    action = [opts] { return run_lint(*opts); };
  });
}

}  // namespace kforge::driver
