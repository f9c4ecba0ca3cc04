#include "codegen/runtime_version.h"

#include <string>
#include <string_view>

#include "codegen/program_codegen.h"

namespace kforge::codegen {

namespace {

std::optional<int64_t> parse_version(std::string_view header) {
  constexpr std::string_view kDefine = "#define KFORGE_RUNTIME_VERSION ";
  const size_t at = header.find(kDefine);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + kDefine.size();
  int64_t value = 0;
  bool any = false;
  while (i < header.size() && header[i] >= '0' && header[i] <= '9' && value < 1000000) {
    value = value * 10 + (header[i++] - '0');
    any = true;
  }
  return any ? std::optional<int64_t>(value) : std::nullopt;
}

}  // namespace

std::optional<int64_t> runtime_header_version(tmpl::Environment& env) {
  const std::optional<std::string_view> header = env.read_verbatim(kRuntimeHeaderTemplate);
  if (!header) return std::nullopt;  // read_verbatim reported it
  std::optional<int64_t> version = parse_version(*header);
  if (!version) {
    env.diags().error({}, "'" + env.resolve(kRuntimeHeaderTemplate).value_or(kRuntimeHeaderTemplate) +
                              "' does not #define KFORGE_RUNTIME_VERSION");
  }
  return version;
}

}  // namespace kforge::codegen
