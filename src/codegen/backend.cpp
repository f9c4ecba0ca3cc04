#include "codegen/backend.h"

#include "codegen/cuda_program.h"
#include "codegen/program_codegen.h"

namespace kforge::codegen {

namespace {

/// A layout as --layout spells it.
std::string layout_flag(passes::LayoutChoice layout) {
  switch (layout) {
    case passes::LayoutChoice::kNchw: return "nchw";
    case passes::LayoutChoice::kNhwc: return "nhwc";
    case passes::LayoutChoice::kNchw8c: return "nchw8c";
  }
  return "";
}

}  // namespace

bool generate_backend_files(const passes::CompiledProgram& compiled, const passes::CompileTarget& target,
                            tmpl::Environment& env, const BackendOptions& options, OutputSet& outputs) {
  ProgramFilesOptions files = options.files;
  if (!compiled.fusion.empty()) files.codegen.fusion = &compiled.fusion;
  if (!compiled.multi_kernel.sites.empty()) files.codegen.multi_kernel = &compiled.multi_kernel;
  switch (target.backend) {
    case passes::CompileBackend::kCpu: {
      if (compiled.isa_plan == nullptr) return generate_program_files(compiled.lowered, env, files, outputs);
      // Two layout plans (--layout auto, passes/isa_layouts.h): the class holds both.
      const std::pair<LayoutPlanSource, LayoutPlanSource> layouts{
          {&compiled.lowered, files.codegen.fusion, layout_flag(compiled.layout)},
          {&compiled.isa_plan->lowered, &compiled.isa_plan->fusion, layout_flag(compiled.isa_plan->layout)}};
      return generate_program_files(compiled.lowered, env, files, outputs, &layouts);
    }
    case passes::CompileBackend::kCuda: {
      CudaFilesOptions cuda;
      cuda.cuda_graph = options.cuda_graph;
      if (!compiled.gemm_variants.sites.empty()) cuda.multi_kernel = &compiled.gemm_variants;
      if (!compiled.row_variants.sites.empty()) cuda.row_multi_kernel = &compiled.row_variants;
      return generate_cuda_program_files(compiled.lowered, compiled.fusion, compiled.cuda, env, files, cuda, outputs);
    }
  }
  return false;
}

}  // namespace kforge::codegen
