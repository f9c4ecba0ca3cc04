// Renders a LoweredProgram into the files of `kforge compile --target cpu`: DIR/NAME.h, DIR/NAME.cc,
// DIR/kforge_runtime.h and DIR/kforge_params.h (the .pdiparams reader of load_parameters), each with the banner,
// into an OutputSet (nothing touches the disk here).
#pragma once

#include <array>
#include <utility>
#include <string>
#include <vector>

#include "codegen/program_context.h"
#include "codegen/program_layouts.h"
#include "output/output_set.h"
#include "passes/lowered_program.h"
#include "support/diagnostics.h"
#include "template/environment.h"

namespace kforge::codegen {

struct ProgramFilesOptions {
  ProgramCodegenOptions codegen;
  std::vector<std::string> banner_inputs;  // every input file, as the user spelled it
  std::string tool_version;
  bool version_stamp = true;
  std::string python_module;  // --python MODULE: also NAME_python.cc and the kforge_python*.h ("" for none)
};

/// Loads program/program.h.j2, program/program.cc.j2, runtime/kforge_runtime.h and runtime/kforge_params.h
/// through `env`'s search path, renders them and adds the four files to `outputs`. Returns false after reporting errors.
/// With `layouts` (two layout plans, program_layouts.h: `program` is the first's), NAME.cc is rendered by
/// program/program_layouts.cc.j2 and holds both plans' classes.
bool generate_program_files(const passes::LoweredProgram& program, tmpl::Environment& env,
                            const ProgramFilesOptions& options, OutputSet& outputs,
                            const std::pair<LayoutPlanSource, LayoutPlanSource>* layouts = nullptr);

/// The runtime header's path on the template search path.
inline constexpr const char* kRuntimeHeaderTemplate = "runtime/kforge_runtime.h";
/// The parameter-file reader (Paddle's .pdiparams), emitted beside every --target cpu class.
inline constexpr const char* kParamsHeaderTemplate = "runtime/kforge_params.h";
/// What every Python extension module includes (--python MODULE), emitted beside it: kforge_python.h and the
/// parts it includes, one concern each (the header lists them).
inline constexpr std::array<const char*, 7> kPythonHeaderTemplates = {
    "runtime/kforge_python.h",        "runtime/kforge_python_args.h",   "runtime/kforge_python_dlpack.h",
    "runtime/kforge_python_tensor.h", "runtime/kforge_python_inputs.h", "runtime/kforge_python_ops.h",
    "runtime/kforge_python_model.h"};
/// The module of `kforge ops --python`.
inline constexpr const char* kPythonOpsModuleTemplate = "python/ops_module.cc.j2";
/// The module of `kforge compile --python`.
inline constexpr const char* kPythonProgramModuleTemplate = "python/program_module.cc.j2";
/// kforge's exp and erf, shared with the kernel library; emitted when the source calls them (fused groups with
/// exp, erf, sigmoid or softmax; the multi-kernel softmax variants).
inline constexpr const char* kMathHeaderTemplate = "runtime/kforge_math.h";
/// The multi-kernel runtime header (docs/multi-kernel.md), emitted with --multi-kernel-hints.
inline constexpr const char* kMultiKernelHeaderTemplate = "runtime/kforge_multikernel.h";

}  // namespace kforge::codegen
