#include "driver/data_loader.h"

#include <algorithm>
#include <filesystem>

#include "support/input_file.h"

namespace kforge::driver {

std::optional<DataFormat> parse_data_format(std::string_view name) {
  if (name.empty() || name == "auto") return DataFormat::kAuto;
  if (name == "yaml" || name == "yml") return DataFormat::kYaml;
  if (name == "json") return DataFormat::kJson;
  return std::nullopt;
}

DataFormat data_format_from_extension(std::string_view path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".yaml" || ext == ".yml") return DataFormat::kYaml;
  if (ext == ".json") return DataFormat::kJson;
  return DataFormat::kAuto;
}

std::optional<tmpl::Value> load_data_file(const std::string& path, DataFormat format, SourceManager& sources,
                                          DiagnosticEngine& diags) {
  if (format == DataFormat::kAuto) format = data_format_from_extension(path);
  if (format == DataFormat::kAuto) {
    Diagnostic d{Severity::kError, {}, "cannot tell the format of data file '" + path + "' from its extension", {}};
    d.note("name it .yaml, .yml or .json, or pass --data-format yaml|json");
    diags.report(std::move(d));
    return std::nullopt;
  }
  const std::optional<uint32_t> file_id = load_input_file(sources, diags, path, "data file");
  if (!file_id) return std::nullopt;
  return format == DataFormat::kYaml ? parse_yaml_data(*file_id, sources, diags)
                                     : parse_json_data(*file_id, sources, diags);
}

tmpl::Value merge_data(const tmpl::Value& base, const tmpl::Value& overlay) {
  if (!base.is_map() || !overlay.is_map()) return overlay;
  tmpl::Value merged = base;
  for (const auto& [key, value] : overlay.as_map()) {
    const tmpl::Value* existing = merged.find(key);
    merged.set(key, existing ? merge_data(*existing, value) : value);
  }
  return merged;
}

}  // namespace kforge::driver
