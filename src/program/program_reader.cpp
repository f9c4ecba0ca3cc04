#include "program/program_reader.h"

#include <filesystem>

#include "program/pir_json_reader.h"
#include "program/pir_text_reader.h"
#include "program/program_yaml_reader.h"
#include "support/input_file.h"

namespace kforge::ir {

SourceFormat detect_program_format(const SourceManager& sources, uint32_t file) {
  const std::string ext = std::filesystem::path(sources.path(file)).extension().string();
  if (ext == ".json") return SourceFormat::kPirJson;
  if (ext == ".yaml" || ext == ".yml") return SourceFormat::kProgramYaml;
  if (ext == ".txt" || ext == ".pir") return SourceFormat::kPirText;
  const std::string_view text = sources.contents(file);
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  };
  skip_space();
  if (i < text.size() && text[i] == '{') {
    ++i;
    skip_space();
    return i < text.size() && text[i] == '"' ? SourceFormat::kPirJson : SourceFormat::kPirText;
  }
  return SourceFormat::kProgramYaml;
}

std::optional<Program> read_program(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  switch (detect_program_format(sources, file)) {
    case SourceFormat::kPirJson: return read_pir_json(sources, file, diags);
    case SourceFormat::kPirText: return read_pir_text(sources, file, diags);
    case SourceFormat::kProgramYaml:
    case SourceFormat::kBuilt: break;
  }
  return read_program_yaml(sources, file, diags);
}

std::optional<Program> read_program_file(SourceManager& sources, const std::string& path, DiagnosticEngine& diags) {
  const std::optional<uint32_t> file = load_input_file(sources, diags, path, "program");
  if (!file) return std::nullopt;
  return read_program(sources, *file, diags);
}

}  // namespace kforge::ir
