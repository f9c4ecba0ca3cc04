// Helpers shared by the passes unit tests: the reference op set (kernels/ops.yaml and its
// op_compat.yaml), programs read from in-memory buffers, and diagnostics captured as the CLI prints them.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "passes/lower.h"
#include "passes/op_set.h"
#include "program/program.h"
#include "program/program_reader.h"
#include "support/diagnostics.h"

namespace kforge::passes::test {

inline std::string source_path(const std::string& rel) {
  return (std::filesystem::path(KFORGE_SOURCE_ROOT) / rel).lexically_normal().string();
}

/// `<source root>/../shared/refdata/paddle/<sub>`, or "" when absent (tests then SKIP).
inline std::string refdata_dir(const std::string& sub) {
  const std::filesystem::path dir =
      std::filesystem::path(KFORGE_SOURCE_ROOT) / ".." / "shared" / "refdata" / "paddle" / sub;
  return std::filesystem::is_directory(dir) ? dir.lexically_normal().string() : std::string();
}

/// One session: sources, diagnostics and the reference op set.
class Env {
 public:
  /// `overlays`: more op files after kernels/ops.yaml (paths from the source root), e.g. the fusion
  /// overlay kernels/fusion.yaml for tests that need row groups.
  explicit Env(const std::vector<std::string>& overlays = {}) : diags_(sources_, out_) {
    std::vector<std::string> files = {source_path("kernels/ops.yaml")};
    for (const std::string& o : overlays) files.push_back(source_path(o));
    library_ = opdef::load_op_library(files, sources_, diags_);
    compat_ = opdef::load_op_compat(source_path("kernels/op_compat.yaml"), sources_, diags_);
    ops_ = std::make_unique<OpSet>(library_, &compat_, diags_);
    INFO(out_.str());
    REQUIRE_FALSE(diags_.has_errors());
  }

  /// Reads `text` as the file `path` (format from the extension). Fails the test when reading fails.
  ir::Program read(const std::string& path, const std::string& text) {
    const uint32_t file = sources_.add_buffer(path, text);
    std::optional<ir::Program> p = ir::read_program(sources_, file, diags_);
    INFO(out_.str());
    REQUIRE(p.has_value());
    return std::move(*p);
  }
  ir::Program read_file(const std::string& path) {
    std::optional<ir::Program> p = ir::read_program_file(sources_, path, diags_);
    INFO(out_.str());
    REQUIRE(p.has_value());
    return std::move(*p);
  }

  /// The full pipeline on a hand-written program.
  std::optional<LoweredProgram> compile(ir::Program& program, const PipelineOptions& options = {}) {
    return compile_program(program, *ops_, diags_, options);
  }
  std::optional<LoweredProgram> compile_yaml(const std::string& text) {
    ir::Program p = read("t.yaml", text);
    return compile(p);
  }

  const OpSet& ops() const { return *ops_; }
  DiagnosticEngine& diags() { return diags_; }
  SourceManager& sources() { return sources_; }
  /// Everything printed so far, with the summary line.
  std::string diagnostics() {
    diags_.print_summary();
    return out_.str();
  }
  std::string printed() const { return out_.str(); }

 private:
  SourceManager sources_;
  std::ostringstream out_;
  DiagnosticEngine diags_;
  opdef::OpLibrary library_;
  opdef::OpCompat compat_;
  std::unique_ptr<OpSet> ops_;
};

}  // namespace kforge::passes::test
