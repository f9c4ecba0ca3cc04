#include "codegen/python_program_module.h"

#include <string>
#include <vector>

#include "codegen/generated_file.h"

namespace kforge::codegen {

bool add_python_program_module(tmpl::Environment& env, const tmpl::Value& class_context, PythonModuleTarget target,
                               const ProgramFilesOptions& options, OutputSet& outputs, bool* path_clash) {
  const tmpl::Template* module_cc = env.load(kPythonProgramModuleTemplate);
  if (module_cc == nullptr) return false;
  tmpl::Value ctx = class_context;
  ctx.set("module", options.python_module);
  ctx.set("cuda", target == PythonModuleTarget::kCuda);
  std::string module_text;
  if (!env.render(*module_cc, ctx, module_text)) return false;

  const std::string& dir = options.codegen.output_dir;
  std::vector<std::pair<std::string, std::string>> files = {
      {options.codegen.class_name + "_python.cc", std::move(module_text)}};
  std::vector<const char*> headers(kPythonHeaderTemplates.begin(), kPythonHeaderTemplates.end());
  // Both targets write kforge_params.h beside the class already (its load_parameters reads the file).
  if (target == PythonModuleTarget::kCuda) {
    headers.insert(headers.end(), kPythonCudaHeaderTemplates.begin(), kPythonCudaHeaderTemplates.end());
  }
  for (const char* path : headers) {
    const std::optional<std::string_view> text = env.read_verbatim(path);
    if (!text) return false;
    files.emplace_back(copied_file_name(path), std::string(*text));
  }
  for (const auto& [file, text] : files) {
    const std::string path = join_output_path(dir, file);
    if (!outputs.add(path, generated_banner(options, path) + text)) *path_clash = true;
  }
  return true;
}

}  // namespace kforge::codegen
