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
#include "passes/analysis.h"
#include "passes/pipeline.h"
#include "passes/op_set.h"
#include "passes/verify.h"
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

/// A program given as the YAML of its inputs, ops and outputs, verified and analysed (passes/analysis.h): what the
/// shape-rule and constant-propagation tests look at.
struct Analyzed {
  std::optional<ir::Program> program;
  std::optional<Analysis> analysis;
  std::string diagnostics;

  /// The analysis of the value called `name` (its name or its source id); null when there is none.
  const ValueInfo* find(const std::string& name) const {
    for (size_t i = 0; i < program->value_capacity(); ++i) {
      const ir::Value& v = program->value(ir::ValueId{static_cast<uint32_t>(i)});
      if (v.name == name || v.source_id == name) return &analysis->values.at(i);
    }
    return nullptr;
  }
  /// The analysis of `name`, failing the test when there is none.
  const ValueInfo& info(const std::string& name) const {
    const ValueInfo* found = find(name);
    if (found == nullptr) FAIL("no value " << name);
    return *found;
  }
  /// "float32[s0, 30]"; a vector's element dims "[[s0, 3], [2]]"; "unknown"; "no value NAME".
  std::string shape(const std::string& name) const {
    const ValueInfo* info = find(name);
    if (info == nullptr) return "no value " + name;
    if (!info->known) return "unknown";
    if (info->is_vector) {
      std::string s = "[";
      for (const ValueInfo& e : info->elements) s += (s.size() > 1 ? ", " : "") + to_string(e.dims);
      return s + "]";
    }
    return std::string(ir::dtype_name(info->dtype)) + to_string(info->dims);
  }
  /// The known integer contents of `name` as text ("[s0, 2 * s1]"), or "unknown".
  std::string ints(const std::string& name) const {
    const ValueInfo* info = find(name);
    if (info == nullptr || !info->data) return "unknown";
    SymShape values;
    for (int64_t i = 0; i < info->data->numel(); ++i) values.push_back(info->data->int_at(i));
    return to_string(values);
  }
};

/// A program YAML of these inputs, ops and outputs (each as written in a program file).
inline std::string program_yaml(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return "program: t\ninputs: " + inputs + "\nops:\n" + ops + "outputs: " + outputs + "\n";
}

/// The program file `text` (read as `path`: its extension says the format).
inline Analyzed analyze(const std::string& path, const std::string& text) {
  Env env;
  Analyzed a;
  a.program = env.read(path, text);
  if (verify_program(*a.program, env.ops(), env.diags())) a.analysis = analyze_program(*a.program, env.ops(), env.diags());
  a.diagnostics = env.diagnostics();
  return a;
}
/// The program YAML of these inputs, ops and outputs.
inline Analyzed analyze(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return analyze("p.yaml", program_yaml(inputs, ops, outputs));
}

/// analyze(), failing the test when the program does not verify or analyse.
inline Analyzed analyze_ok(const std::string& yaml_text) {
  Analyzed a = analyze("p.yaml", yaml_text);
  INFO(a.diagnostics);
  REQUIRE(a.analysis.has_value());
  return a;
}
inline Analyzed analyze_ok(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return analyze_ok(program_yaml(inputs, ops, outputs));
}

}  // namespace kforge::passes::test
