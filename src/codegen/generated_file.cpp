#include "codegen/generated_file.h"

#include "output/banner.h"

namespace kforge::codegen {

std::string join_output_path(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

bool check_outputs_placed(bool placed, const std::string& name, DiagnosticEngine& diags) {
  if (!placed) diags.error({}, "--name '" + name + "' makes two outputs with the same path");
  return placed;
}

std::string copied_file_name(std::string_view template_path) {
  return std::string(template_path.substr(template_path.find('/') + 1));
}

std::string generated_banner(const std::string& tool_version, bool version_stamp,
                             const std::vector<std::string>& inputs, const std::string& path) {
  BannerInfo info;
  info.tool_version = tool_version;
  info.version_stamp = version_stamp;
  info.inputs = inputs;
  info.output_path = path;
  return make_banner(info);
}

}  // namespace kforge::codegen
