#include "codegen/program_codegen.h"

#include "codegen/generated_file.h"
#include "codegen/python_program_module.h"
#include "codegen/runtime_version.h"
#include "output/banner.h"

namespace kforge::codegen {

namespace {

// kforge_multikernel.h beside the outputs, when some call has a multi-kernel dispatcher.
bool add_multi_kernel_header(tmpl::Environment& env, const std::string& dir, const ProgramFilesOptions& options,
                             OutputSet& outputs) {
  const std::optional<std::string_view> text = env.read_verbatim(kMultiKernelHeaderTemplate);
  if (!text) return true;  // reported; not a path clash
  const std::string out_path = join_output_path(dir, "kforge_multikernel.h");
  return outputs.add(out_path, generated_banner(options, out_path) + std::string(*text));
}

}  // namespace

bool generate_program_files(const passes::LoweredProgram& program, tmpl::Environment& env,
                            const ProgramFilesOptions& options, OutputSet& outputs) {
  DiagnosticEngine& diags = env.diags();
  std::optional<tmpl::Value> ctx = build_program_context(program, env.sources(), options.codegen, diags);
  const tmpl::Template* header = env.load("program/program.h.j2");
  const tmpl::Template* source = env.load("program/program.cc.j2");
  const std::optional<std::string_view> runtime = env.read_verbatim(kRuntimeHeaderTemplate);
  const std::optional<std::string_view> params = env.read_verbatim(kParamsHeaderTemplate);
  const std::optional<int64_t> version = runtime_header_version(env);
  if (!ctx || header == nullptr || source == nullptr || !runtime || !params || !version) return false;
  ctx->set("runtime_version", *version);

  const std::string& dir = options.codegen.output_dir;
  const std::string name = options.codegen.class_name;
  std::string h_text, cc_text;
  if (!env.render(*header, *ctx, h_text) || !env.render(*source, *ctx, cc_text)) return false;
  const std::string h_path = join_output_path(dir, name + ".h");
  const std::string cc_path = join_output_path(dir, name + ".cc");
  const std::string rt_path = join_output_path(dir, "kforge_runtime.h");
  bool ok = outputs.add(h_path, generated_banner(options, h_path) + h_text);
  ok = outputs.add(cc_path, generated_banner(options, cc_path) + cc_text) && ok;
  ok = outputs.add(rt_path, generated_banner(options, rt_path) + std::string(*runtime)) && ok;
  const std::string params_path = join_output_path(dir, "kforge_params.h");
  ok = outputs.add(params_path, generated_banner(options, params_path) + std::string(*params)) && ok;
  if (ok && options.codegen.multi_kernel != nullptr && !options.codegen.multi_kernel->sites.empty()) {
    ok = add_multi_kernel_header(env, dir, options, outputs);
  }
  if (ok && !options.python_module.empty()) {
    // NAME_python.cc: the class as a CPython extension module (docs/python.md).
    bool clash = false;
    if (!add_python_program_module(env, *ctx, PythonModuleTarget::kCpu, options, outputs, &clash)) return false;
    ok = !clash;
  }
  if (!ok) {
    diags.error({}, "--name '" + name + "' makes two outputs with the same path");
    return false;
  }
  return true;
}

}  // namespace kforge::codegen
