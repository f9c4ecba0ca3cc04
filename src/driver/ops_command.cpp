#include "driver/ops_command.h"

#include <memory>

#include "codegen/cpp_text.h"
#include "codegen/ops_codegen.h"
#include "codegen/program_codegen.h"
#include "driver/op_files.h"
#include "driver/template_search_path.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

namespace kforge::driver {

namespace {

struct OpsOptions {
  OpFileOptions op_files;
  std::vector<opdef::OpFile> files;  // op_files in command-line order
  std::string op_compat;
  std::string output_dir;
  std::string name_space = "ops";
  std::string prefix = "ops";
  uint32_t shards = 1;
  std::string python_module;  // --python MODULE
  OutputOptions out;
};

constexpr const char* kOpsFooter = R"(Examples:
  Generate the op library of the reference kernels:
    kforge ops --ops kernels/ops.yaml --op-compat kernels/op_compat.yaml -o gen

  Paddle's whole op set, in 8 shards, in namespace paddle_ops, with a depfile for the build system:
    kforge ops --ops ops.yaml --op-compat op_compat.yaml -o gen --namespace paddle_ops --prefix paddle \
        --shards 8 --depfile gen/paddle.d

Writes DIR/P_api.h (one function per op: `kforge::Status op(inputs, outputs, attributes)`, plus `op_`
for ops with inplace pairs), DIR/P_api.cc, DIR/P_args_info.cc (a static table of every op's arguments
and a lookup function), DIR/P_decls.h (every kernel and infer_meta function the library calls: what
your kernel library implements, see docs/calling-convention.md) and DIR/kforge_runtime.h. With
--shards N the .cc files become P_api_<i>.cc and P_args_info_<i>.cc, i = 0..N-1; an op's shard is a
hash of its name, so the file names depend on the flags alone (--list-outputs reads no input).
With --python MODULE also DIR/P_python.cc and DIR/kforge_python*.h: the sources of a CPython extension
module MODULE with one function per API function, Paddle's argument conventions and tensors in and out
through the buffer protocol and DLPack (docs/python.md).
Ops that cannot be expressed (no dense kernel, SelectedRows outputs, the ops of --sparse-ops files,
...) get no function; P_api.h lists them at its end with the reason. Paddle's 9 op files load together
as its PIR generator reads them: give sparse_ops.yaml and sparse_backward.yaml with --sparse-ops
(docs/op-yaml.md). Templates: templates/ops/*.j2, overridable with --template-dir.
)";

int run_ops(const OpsOptions& opts) {
  std::string why;
  if (!codegen::is_valid_namespace(opts.name_space, &why)) {
    return usage_error("ops", "--namespace '" + opts.name_space + "' is not a C++ namespace: " + why);
  }
  if (opts.prefix.empty() || opts.prefix.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_-.") != std::string::npos) {
    return usage_error("ops", "--prefix must be letters, digits, '_', '-' or '.', got '" + opts.prefix + "'");
  }

  if (!opts.python_module.empty() && codegen::cpp_identifier(opts.python_module) != opts.python_module) {
    return usage_error("ops", "--python '" + opts.python_module +
                                  "' is not a Python module name (letters, digits and '_', not starting with a digit)");
  }

  codegen::OpsCodegenOptions files;
  files.output_dir = opts.output_dir;
  files.prefix = opts.prefix;
  files.name_space = opts.name_space;
  files.shards = opts.shards;
  files.banner_inputs = op_file_paths(opts.files);
  if (!opts.op_compat.empty()) files.banner_inputs.push_back(opts.op_compat);
  files.tool_version = std::string(kforge_version());
  files.version_stamp = !opts.out.no_version_stamp;
  files.python_module = opts.python_module;

  Session session(opts.out);
  DiagnosticEngine& diags = session.diags();
  OutputSet outputs;
  OutputRequest request;
  request.owned_dirs.push_back(opts.output_dir);
  if (opts.out.list_outputs) {
    // The names depend on the flags alone: nothing is read or rendered.
    for (const std::string& path : codegen::op_library_file_names(files)) outputs.add(path, "");
    return finish_outputs(opts.out, outputs, request, session);
  }

  const opdef::OpLibrary library = opdef::load_op_library(opts.files, session.sources(), diags);
  opdef::OpCompat compat;
  if (!opts.op_compat.empty()) compat = opdef::load_op_compat(opts.op_compat, session.sources(), diags);
  request.dependencies = files.banner_inputs;
  if (diags.has_errors()) return finish_outputs(opts.out, outputs, request, session);

  tmpl::Environment env(session.sources(), diags);
  for (const std::string& dir : template_search_path(opts.out.template_dirs, {})) env.add_search_dir(dir);
  tmpl::register_codegen_filters(env);
  codegen::generate_op_library_files(library, opts.op_compat.empty() ? nullptr : &compat, env, files, outputs);

  const std::vector<std::string>& loaded = env.loaded_files();
  request.dependencies.insert(request.dependencies.end(), loaded.begin(), loaded.end());
  return finish_outputs(opts.out, outputs, request, session);
}

}  // namespace

void register_ops_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<OpsOptions>();
  CLI::App* cmd = app.add_subcommand("ops", "Generate a C++ op library (API, dispatch, args info) from op YAML");
  add_op_file_options(*cmd, opts->op_files);
  cmd->add_option("--op-compat", opts->op_compat,
                  "Paddle's op_compat.yaml: marks the mutable Scalar/IntArray attributes in the args info")
      ->type_name("FILE");
  cmd->add_option("-o,--output-dir", opts->output_dir, "Directory the files are written to")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--namespace", opts->name_space, "C++ namespace of the API (a or a::b)")
      ->type_name("NS")
      ->default_str("ops");
  cmd->add_option("--prefix", opts->prefix, "Prefix of the file names: P_api.h, P_api.cc, ...")
      ->type_name("P")
      ->default_str("ops");
  cmd->add_option("--shards", opts->shards, "Split the .cc files into N files each, for very large op sets")
      ->type_name("N")
      ->check(CLI::Range(1, 4096))
      ->default_str("1");
  cmd->add_option("--python", opts->python_module,
                  "Also write P_python.cc and kforge_python*.h: the CPython extension module MODULE exposing every "
                  "op (docs/python.md)")
      ->type_name("MODULE");
  add_output_options(*cmd, opts->out);
  cmd->footer(kOpsFooter);
  cmd->callback([opts, cmd, &action] {
    opts->files = op_files_in_order(*cmd, opts->op_files);
    action = [opts] { return run_ops(*opts); };
  });
}

}  // namespace kforge::driver
