// Reads the data files of `kforge render` (YAML or JSON) into template Values.
//
// YAML: maps keep document order; scalars are typed by the YAML 1.2 core schema (null/~/empty,
// true/false, decimal/0o/0x integers, floats with .inf/.nan; quoted or block scalars stay strings;
// explicit !!str/!!int/!!float/!!bool/!!null tags are honoured). JSON: nlohmann's ordered parser, so
// objects keep document order too. Malformed input is a located diagnostic with a caret; the data
// root must be a mapping. Each file is registered in the SourceManager so diagnostics (and the
// engine's "value comes from" notes) point into it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "support/diagnostics.h"
#include "support/source_manager.h"
#include "template/value.h"

namespace kforge::driver {

enum class DataFormat { kAuto, kYaml, kJson };

/// How deep maps and lists of render data may nest, in either format (the value tree is walked recursively).
inline constexpr int kMaxDataNesting = 256;

/// "yaml" / "json" / "" (auto) to a DataFormat; nullopt for anything else.
std::optional<DataFormat> parse_data_format(std::string_view name);

/// The format of `path` from its extension (.yaml/.yml, .json); kAuto when the extension says nothing.
DataFormat data_format_from_extension(std::string_view path);

/// Reads, parses and converts one data file. `format` kAuto means by extension. Reports every problem
/// to `diags` and returns nullopt.
std::optional<tmpl::Value> load_data_file(const std::string& path, DataFormat format, SourceManager& sources,
                                          DiagnosticEngine& diags);

/// Converts YAML text already registered as `file_id` in `sources`. Exposed for tests.
std::optional<tmpl::Value> parse_yaml_data(uint32_t file_id, SourceManager& sources, DiagnosticEngine& diags);
/// Converts JSON text already registered as `file_id` in `sources`. Exposed for tests.
std::optional<tmpl::Value> parse_json_data(uint32_t file_id, SourceManager& sources, DiagnosticEngine& diags);

/// Deep merge: maps merge key by key (recursively; a key keeps its first position), anything else in
/// `overlay` replaces what `base` had. Used for several --data files, later files winning.
tmpl::Value merge_data(const tmpl::Value& base, const tmpl::Value& overlay);

}  // namespace kforge::driver
