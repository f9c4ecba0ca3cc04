// The template context of the CUDA class header, templates/program/cuda/program.h.j2 (`kforge compile
// --target cuda`, DIR/NAME.h): every name, count and spelling the template prints, computed here from the
// LoweredProgram and its FusionPlan, so that the template holds only the shape of the header. The keys the
// CPU class shares (templates/program/class.j2) mean what they mean in codegen/program_context.h.
//
// Context keys (strings unless noted; C++ text is ready to print):
//   class_name, header "NAME.h", guard, namespace, qualified_class_name (set_namespace_keys, program_context.h), source (the program, relative to the output directory), program_name,
//   runtime_version (int), num_launches (int: one per fused group and per convolution or pool outside every
//   group), cuda_graph (bool), constants (bool),
//   num_buffers, num_symbols (ints, at least 1: the sizes of the Bindings arrays)
//   gemm:        false, or {count (int), types "fp32, bf16", kernels ("SIMT", "tensor-core",
//                "SIMT or tensor-core", or "" without multi-kernel dispatchers), multi_kernel (bool)}
//   rows (bool): the row groups have multi-kernel dispatchers
//   convs, pools (ints): cuDNN convolutions and pooling kernels (codegen/cuda_conv.h)
//   inputs:      [{name, ident, dtype_name, shape_text "[?, 64]", condition (run()'s mismatch test), dtype, rank,
//                 spec_dims "{-1, 64}" (kInputSpecs)}]
//   parameters:  [{name, dtype_name, shape_text, condition (bind_parameter()'s mismatch test on `value`),
//                 dtype "kforge::DataType::kFloat32", rank (int), dims "{4, -1}" (-1: known only at run time)}]
//   parameter_file_order: [int]  parameter indices in the .pdiparams order (sorted by name)
//   outputs:     [{index (int), name, ident "y_out", dtype_name, shape_text, dtype, dims "{s0, 10}"}]
//   symbols:     [{id (int), init "x.dims[0]"}]   the dynamic dims, read from the inputs
//   run_params:  [text]  the parameters of run(); run_generic_args: [text] what run(TensorList, ...) passes
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "codegen/cpp_text.h"
#include "codegen/program_codegen.h"
#include "codegen/size_table.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "support/diagnostics.h"
#include "template/value.h"

namespace kforge::codegen {

/// What the header says of the GEMM groups (codegen/cuda_gemm.h, CudaGemmCode::summary).
struct CudaGemmSummary {
  size_t count = 0;          // GEMM groups; 0: none (the context's `gemm` is false)
  std::string types;         // the element types' descriptions, "fp32, bf16"
  std::string kernels;       // what the dispatchers pick besides cuBLASLt, or ""
  bool multi_kernel = false;  // --multi-kernel-hints
  bool float32 = false;       // some GEMM computes float32 (the class has the TF32 switch set_gemm_tf32)
};

/// The parts of the class that exist only for some programs.
struct CudaClassParts {
  CudaGemmSummary gemm;
  bool row_dispatchers = false;  // codegen/cuda_row_variants.h, CudaRowVariantCode::any()
  bool cuda_graph = false;       // --cuda-graph
  size_t convs = 0;              // cuDNN convolutions (codegen/cuda_conv.h)
  size_t pools = 0;              // pooling kernels
  size_t library_calls = 0;      // convolutions and pools outside every group (each a launch of its own)
  bool half_convs = false;       // the convolutions compute on float16 / bfloat16 values (--precision)
  // A size in run() (the emitter's table `sizes`: codegen/size_table.h); by default spelled out in full.
  SizeExpr size = [](const passes::SymExpr& e) { return cpp_int_expr(e); };
};

/// The host identifier of input `index` and output `index` (the CUDA class spells both thus everywhere).
std::string cuda_input_ident(const passes::LoweredProgram& program, size_t index);
std::string cuda_output_ident(const passes::LoweredProgram& program, size_t index);

/// Whether output `index` of `program` is copied (`ProgramOutput::copy`: an input, a parameter or a constant
/// fetched, or a value fetched twice) and not sized by data: run() copies it with the launches, into its slot of
/// `Bindings::buffers` (cuda_copy_slot); one sized by data is allocated and copied last, through `Bindings::outputs`.
bool cuda_eager_copy(const passes::LoweredProgram& program, size_t index);
/// The slots of `Bindings::buffers`: one per buffer of the plan, then one per output that is copied (an input,
/// a parameter or a constant fetched, or a value fetched twice: the plan gives such an output no buffer of its
/// own; those sized by data aside), so that a copy's destination is a bound pointer, part of the CUDA graph's key like every other.
size_t cuda_binding_slots(const passes::LoweredProgram& program);
/// The slot of copied output `index` (a `ProgramOutput` whose `copy` is set, its dims not sized by data: those are
/// allocated and copied last, through `Bindings::outputs`).
size_t cuda_copy_slot(const passes::LoweredProgram& program, size_t index);

/// "[?, 64]": a shape for comments and messages, `?` for a dim known only at run time.
std::string cuda_shape_text(const passes::SymShape& dims);

/// Builds the context (the CUDA target plan refused a tensor whose dtype the runtime has no name for:
/// passes::plan_cuda_tensor_dtypes).
tmpl::Value build_cuda_class_context(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                                     const ProgramFilesOptions& options, const CudaClassParts& parts);

}  // namespace kforge::codegen
