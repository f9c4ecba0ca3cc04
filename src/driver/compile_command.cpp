// `kforge compile`: what the flags mean for the pipeline (a target, the user's choices), then the pipeline
// (passes/pipeline.h), the target's backend (codegen/backend.h) and the output set, in that order.
#include "driver/compile_command.h"

#include <iostream>
#include <memory>
#include <sstream>

#include "codegen/backend.h"
#include "codegen/cpp_text.h"
#include "driver/compile_options.h"
#include "driver/compile_target.h"
#include "driver/template_search_path.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

namespace kforge::driver {

namespace {

/// A flag given that `target` does not take, as "FLAG needs --target T" naming the targets that take it; "" if none.
std::string target_flag_error(const CompileOptions& opts, const passes::CompileTarget& target) {
  using Has = bool (*)(const passes::CompileTarget&);
  const bool half = opts.precision && *opts.precision != "float32";
  const std::pair<std::string, Has> given[] = {
      {opts.cuda_graph ? "--cuda-graph" : "", [](const passes::CompileTarget& t) { return t.cuda_graph; }},
      {opts.layout == "nchw8c" ? "--layout nchw8c" : "", [](const passes::CompileTarget& t) { return t.blocked_layout; }},
      {opts.cudnn_workspace_mib ? "--cudnn-workspace-mib" : "",
       [](const passes::CompileTarget& t) { return t.cuda_plan; }},
      {half ? "--precision " + *opts.precision : "", [](const passes::CompileTarget& t) { return t.half_precision; }},
  };
  for (const auto& [flag, has] : given) {
    if (!flag.empty() && !has(target)) return flag + " needs --target " + compile_target_names(has);
  }
  return "";
}

int run_compile(const CompileOptions& opts) {
  const passes::CompileTarget* target = find_compile_target(opts.target);
  if (target == nullptr) {
    return usage_error("compile", "--target " + opts.target + " is not supported; use --target " +
                                      compile_target_names());
  }
  if (const std::string error = target_flag_error(opts, *target); !error.empty()) return usage_error("compile", error);
  if (opts.io_precision && opts.precision.value_or("float32") == "float32") {
    return usage_error("compile", "--io-precision needs --precision float16 or bfloat16");
  }
  if (!opts.python_module.empty() && codegen::cpp_identifier(opts.python_module) != opts.python_module) {
    return usage_error("compile", "--python '" + opts.python_module +
                                      "' is not a Python module name (letters, digits and '_', not starting with a digit)");
  }
  Session session(opts.out);
  DiagnosticEngine& diags = session.diags();
  OutputSet outputs;
  OutputRequest request;

  if (opts.cpp_namespace) {
    if (const std::optional<codegen::NamespaceProblem> problem = codegen::namespace_problem(*opts.cpp_namespace)) {
      flag_error(session, "--namespace", *opts.cpp_namespace, problem->offset,
                 "--namespace '" + *opts.cpp_namespace + "' is not a C++ namespace: " + problem->why);
      diags.print_summary();
      return kExitUsage;
    }
  }
  passes::CompileChoices choices;
  if (opts.multi_kernel_hints) {
    std::string error;
    size_t offset = 0;
    std::optional<std::vector<int64_t>> hints = passes::parse_multi_kernel_hints(*opts.multi_kernel_hints, error, offset);
    if (!hints) {
      flag_error(session, "--multi-kernel-hints", *opts.multi_kernel_hints, offset, error);
      return finish_outputs(opts.out, outputs, request, session);
    }
    choices.multi_kernel_hints = std::move(*hints);
  }

  const opdef::OpLibrary library = opdef::load_op_library(opts.files, session.sources(), diags);
  opdef::OpCompat compat;
  if (!opts.op_compat.empty()) compat = opdef::load_op_compat(opts.op_compat, session.sources(), diags);
  std::optional<ir::Program> program = ir::read_program_file(session.sources(), opts.program, diags);
  request.dependencies.push_back(opts.program);
  request.dependencies.insert(request.dependencies.end(), opts.ops.begin(), opts.ops.end());
  if (!opts.op_compat.empty()) request.dependencies.push_back(opts.op_compat);
  if (!program || diags.has_errors()) return finish_outputs(opts.out, outputs, request, session);
  const passes::OpSet op_set(library, opts.op_compat.empty() ? nullptr : &compat, diags);
  if (diags.has_errors()) return finish_outputs(opts.out, outputs, request, session);

  choices.layout = opts.layout == "auto"     ? target->auto_layout
                   : opts.layout == "nhwc"   ? passes::LayoutChoice::kNhwc
                   : opts.layout == "nchw8c" ? passes::LayoutChoice::kNchw8c
                                             : passes::LayoutChoice::kNchw;
  choices.layout_by_isa = opts.layout == "auto";
  choices.precision = ir::parse_dtype_name(opts.precision.value_or("float32")).value_or(ir::DataType::kFloat32);
  choices.float32_interface = opts.io_precision.value_or("float32") == "float32";
  choices.fuse = !opts.no_fuse;
  choices.trace_hooks = opts.trace_hooks;
  choices.scratch_bytes = opts.cudnn_workspace_mib.value_or(kDefaultCudnnWorkspaceMib) << 20;
  choices.cuda_graph = opts.cuda_graph;
  choices.dump = opts.dump_lowered;
  // --layout auto's second layout plan (passes/isa_layouts.h) reports here, unseen: the first plan reported the
  // program's problems.
  std::ostringstream dropped;
  DiagnosticEngine second_plan_diags(session.sources(), dropped);
  std::optional<passes::CompiledProgram> compiled =
      passes::run_pipeline(*program, op_set, *target, choices, diags, &second_plan_diags);
  if (!compiled) return finish_outputs(opts.out, outputs, request, session);
  std::cerr << compiled->dump;

  tmpl::Environment env(session.sources(), diags);
  for (const std::string& dir : template_search_path(opts.out.template_dirs, {})) env.add_search_dir(dir);
  tmpl::register_codegen_filters(env);
  codegen::BackendOptions backend;
  backend.files.codegen.class_name = opts.name.empty() ? codegen::cpp_identifier(compiled->lowered.name) : opts.name;
  backend.files.codegen.program_path = opts.program;
  backend.files.codegen.output_dir = opts.output_dir;
  backend.files.codegen.trace_hooks = opts.trace_hooks;
  backend.files.codegen.cpp_namespace = opts.cpp_namespace.value_or("");
  backend.files.banner_inputs = request.dependencies;  // the program, the op files, op_compat
  backend.files.tool_version = std::string(kforge_version());
  backend.files.version_stamp = !opts.out.no_version_stamp;
  backend.files.python_module = opts.python_module;
  backend.cuda_graph = opts.cuda_graph;
  codegen::generate_backend_files(*compiled, *target, env, backend, outputs);
  if (!opts.dump_groups.empty() &&
      !outputs.add(opts.dump_groups, passes::fusion_dot(compiled->lowered, compiled->fusion))) {
    diags.error({}, "--dump-groups '" + opts.dump_groups + "' names a file that kforge compile already writes");
  }
  const std::vector<std::string>& loaded = env.loaded_files();
  // Every template rendered and every header copied beside the outputs (Environment::read_verbatim).
  request.dependencies.insert(request.dependencies.end(), loaded.begin(), loaded.end());
  return finish_outputs(opts.out, outputs, request, session);
}

}  // namespace

void register_compile_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a program into a straight-line C++ dispatch function");
  add_compile_options(*cmd, *opts);
  cmd->callback([opts, cmd, &action] {
    opts->files = op_files_in_order(*cmd, opts->op_files);
    opts->ops = op_file_paths(opts->files);
    action = [opts] { return run_compile(*opts); };
  });
}

}  // namespace kforge::driver
