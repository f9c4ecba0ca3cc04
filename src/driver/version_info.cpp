#include "driver/version_info.h"

#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string_view>

#include "driver/common_options.h"
#include "driver/template_search_path.h"

namespace kforge::driver {

namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The value of `#define MACRO N` in `header`, or "missing".
std::string header_version(const std::string& dir, std::string_view header, std::string_view macro) {
  std::optional<std::string> text = read_file(dir + "/runtime/" + std::string(header));
  if (!text) return "missing";
  std::smatch match;
  const std::regex define("#define " + std::string(macro) + " ([0-9]+)");
  return std::regex_search(*text, match, define) ? match[1].str() : "no version macro";
}

}  // namespace

std::string version_text() {
  // CLI11 ends the text with a newline of its own.
  std::string text = "kforge " + std::string(kforge_version()) + "\n";
  std::optional<std::string> dir = builtin_template_dir();
  if (!dir) return text + "templates: not found (reinstall kforge, or pass --template-dir)";
  std::optional<std::string> version = read_file(*dir + "/VERSION");
  std::string template_version = version ? version->substr(0, version->find_first_of("\r\n")) : "unknown";
  text += "templates: " + template_version + " (" + *dir + ")\n";
  text += "runtime headers: kforge_runtime.h " + header_version(*dir, "kforge_runtime.h", "KFORGE_RUNTIME_VERSION") +
          ", kforge_multikernel.h " +
          header_version(*dir, "kforge_multikernel.h", "KFORGE_MULTIKERNEL_API_VERSION") +
          ", kforge_cuda_runtime.h " +
          header_version(*dir, "kforge_cuda_runtime.h", "KFORGE_CUDA_RUNTIME_VERSION");
  return text;
}

}  // namespace kforge::driver
