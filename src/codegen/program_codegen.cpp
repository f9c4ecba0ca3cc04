#include "codegen/program_codegen.h"

#include "codegen/generated_file.h"
#include "codegen/python_program_module.h"
#include "codegen/runtime_version.h"
#include "output/banner.h"

namespace kforge::codegen {

namespace {

// A runtime header copied beside the outputs (kforge_multikernel.h when some call has a multi-kernel dispatcher,
// kforge_math.h when the source calls its exp or erf).
bool add_verbatim_header(tmpl::Environment& env, const char* template_path, const std::string& dir,
                         const ProgramFilesOptions& options, OutputSet& outputs) {
  const std::optional<std::string_view> text = env.read_verbatim(template_path);
  if (!text) return true;  // reported; not a path clash
  const std::string name(std::string_view(template_path).substr(std::string_view(template_path).rfind('/') + 1));
  const std::string out_path = join_output_path(dir, name);
  return outputs.add(out_path, generated_banner(options, out_path) + std::string(*text));
}

}  // namespace

bool generate_program_files(const passes::LoweredProgram& program, tmpl::Environment& env,
                            const ProgramFilesOptions& options, OutputSet& outputs,
                            const std::pair<LayoutPlanSource, LayoutPlanSource>* layouts) {
  DiagnosticEngine& diags = env.diags();
  std::optional<tmpl::Value> ctx = build_program_context(program, env.sources(), options.codegen, diags);
  const tmpl::Template* header = env.load("program/program.h.j2");
  const tmpl::Template* source = env.load(layouts != nullptr ? "program/program_layouts.cc.j2" : "program/program.cc.j2");
  const std::optional<std::string_view> runtime = env.read_verbatim(kRuntimeHeaderTemplate);
  const std::optional<std::string_view> params = env.read_verbatim(kParamsHeaderTemplate);
  const std::optional<int64_t> version = runtime_header_version(env);
  if (!ctx || header == nullptr || source == nullptr || !runtime || !params || !version) return false;
  ctx->set("runtime_version", *version);
  if (layouts != nullptr) {
    ctx = build_layout_plans_context(*ctx, layouts->first, layouts->second, env.sources(), options.codegen, env);
    if (!ctx) return false;
  }

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
    ok = add_verbatim_header(env, kMultiKernelHeaderTemplate, dir, options, outputs);
  }
  const tmpl::Value* runtime_math = ctx->find("runtime_math");
  if (ok && runtime_math != nullptr && runtime_math->as_bool()) {
    ok = add_verbatim_header(env, kMathHeaderTemplate, dir, options, outputs);
  }
  if (ok && !options.python_module.empty()) {
    // NAME_python.cc: the class as a CPython extension module (docs/python.md).
    bool clash = false;
    if (!add_python_program_module(env, *ctx, PythonModuleTarget::kCpu, options, outputs, &clash)) return false;
    ok = !clash;
  }
  return check_outputs_placed(ok, name, diags);
}

}  // namespace kforge::codegen
