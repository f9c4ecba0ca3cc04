// The hand-off from the pipeline (passes/pipeline.h) to the backend of the program's target: the CPU's
// (program_codegen.h) or CUDA's (cuda_program.h). A new target's backend is one more branch here.
#pragma once

#include "codegen/program_codegen.h"
#include "output/output_set.h"
#include "passes/compile_target.h"
#include "passes/pipeline.h"
#include "template/environment.h"

namespace kforge::codegen {

struct BackendOptions {
  /// The files' options; its `codegen.fusion` and `codegen.multi_kernel` are set from the compiled program.
  ProgramFilesOptions files;
  bool cuda_graph = false;  // --cuda-graph (CompileTarget::cuda_graph)
};

/// Renders `compiled` with `target`'s backend into `outputs`. Returns false after reporting errors.
bool generate_backend_files(const passes::CompiledProgram& compiled, const passes::CompileTarget& target,
                            tmpl::Environment& env, const BackendOptions& options, OutputSet& outputs);

}  // namespace kforge::codegen
