// How every file that `kforge ops` and `kforge compile` write is placed and headed, said once for the three
// generators (ops_codegen, program_codegen, cuda_program): DIR/FILE paths and the banner (output/banner.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics.h"

namespace kforge::codegen {

/// DIR/FILE; FILE alone when DIR is empty; no doubled '/'.
std::string join_output_path(const std::string& dir, const std::string& file);

/// The name a template copied verbatim has beside the outputs: its path after the folder
/// ("runtime/kforge_python.h" -> "kforge_python.h").
std::string copied_file_name(std::string_view template_path);

/// A class generator's last step (program_codegen, cuda_program): `placed` is false when two of its files got one
/// path (OutputSet::add refused the second: --name NAME named the class like a header copied beside it), which is
/// an error of --name, reported here once for both. Returns `placed`.
bool check_outputs_placed(bool placed, const std::string& name, DiagnosticEngine& diags);

/// The banner of the generated file `path`: kforge and `tool_version` (omitted without `version_stamp`), the
/// inputs relative to the file's directory, DO NOT EDIT, @generated.
std::string generated_banner(const std::string& tool_version, bool version_stamp,
                             const std::vector<std::string>& inputs, const std::string& path);

/// The same from a generator's options (OpsCodegenOptions, ProgramFilesOptions: tool_version, version_stamp,
/// banner_inputs).
template <typename Options>
std::string generated_banner(const Options& options, const std::string& path) {
  return generated_banner(options.tool_version, options.version_stamp, options.banner_inputs, path);
}

}  // namespace kforge::codegen
