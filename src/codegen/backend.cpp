#include "codegen/backend.h"

#include "codegen/cuda_program.h"

namespace kforge::codegen {

bool generate_backend_files(const passes::CompiledProgram& compiled, const passes::CompileTarget& target,
                            tmpl::Environment& env, const BackendOptions& options, OutputSet& outputs) {
  ProgramFilesOptions files = options.files;
  if (!compiled.fusion.empty()) files.codegen.fusion = &compiled.fusion;
  if (!compiled.multi_kernel.sites.empty()) files.codegen.multi_kernel = &compiled.multi_kernel;
  switch (target.backend) {
    case passes::CompileBackend::kCpu:
      return generate_program_files(compiled.lowered, env, files, outputs);
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
