// The template context of `kforge compile --target cpu`: everything templates/program/*.j2 print, computed
// here from a LoweredProgram (passes/lowered_program.h), so that the templates only decide the shape of the
// output and every decision (names, expressions, which constants are named, what is checked) is C++.
//
// Context keys (all strings unless noted; C++ text is ready to print):
//   class_name, header, guard, namespace ("" or "a::b": --namespace; the class and everything private to the
//   program are in it), qualified_class_name ("a::b::NAME", or NAME without a namespace), source (the program file, relative to the output directory), program_name,
//   runtime_version (int; set by program_codegen.cpp from the runtime header), trace_hooks (bool), is_static (bool), workspace_bytes (a constant or an expression
//   over the symbols), has_workspace (bool: dynamic, or static and not 0 bytes), unshared_bytes, num_calls (int)
//   symbols:     [{name "s0", input, axis (int), meaning "x.dims[0]", init "x.dims[0]"}]
//   inputs:      [{name, ident, dtype, dtype_name, rank (int), shape_text "[?, 64]", dims "{-1, 64}",
//                  condition "x.dtype != ..."}]
//   parameters:  [{index (int), name, ident, dtype, dtype_name, rank (int), shape_text, dims "{64, 128}",
//                  condition (the mismatch test on `value`)}]
//   parameter_file_order: [int]  parameter indices in .pdiparams order (sorted by name; kforge_params.h)
//   outputs:     [{index (int), name, ident, dtype, dtype_name, rank (int), dims "{s0, 10}", shape_text,
//                  copy (bool), source "values_[3]" (the tensor to copy from when copy), aliases [values_ slots
//                  whose memory is this output's]}]
//   constants:   [{index (int), data_name, element_type, dtype, dims "{3}", numel (int), splat (bool),
//                  splat_value, data_lines [text], comment}]
//   values:      [{slot (int), dtype, dims "{2, 30}", in_workspace (bool), offset, comment}]
//   attrs:       [{name, type, init}]       named attribute constants at namespace scope
//   contexts:    [{name, dtype}]            one KernelContext per kernel dtype
//   kernel_decls:[{name, params [text]}]    declarations of the kernels called
//   run_params:  [text]  the parameters of run(); run_generic_args: [text] what run(TensorList, ...) passes
//   calls:       [{index (int), kernel, pir_name, where "mlp.yaml:7:5", ctx, pre [statements],
//                  args [expressions], traces [{key, expr}]}]
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "passes/variants.h"
#include "support/diagnostics.h"
#include "support/source_manager.h"
#include "template/value.h"

namespace kforge::codegen {

struct ProgramCodegenOptions {
  std::string class_name;        // --name
  std::string program_path;      // as the user spelled it
  std::string output_dir;        // -o DIR, for relative paths in the output
  bool trace_hooks = false;      // --trace-hooks
  /// --namespace ("" for none; valid per codegen::namespace_problem): the namespace the class and everything
  /// private to the program are put in, so that several programs compile in one translation unit.
  std::string cpp_namespace;
  /// Fused groups (passes/fusion.h); null or empty: every call is a kernel call (--no-fuse). Adds the keys
  /// fused_groups [see codegen/fused_cpu.h] and steps [what run() does, in order: the `calls` entries of the
  /// kernel calls, and one entry with fused = true per group, at the group's position].
  const passes::FusionPlan* fusion = nullptr;
  const passes::MultiKernelPlan* multi_kernel = nullptr;  // --multi-kernel-hints (docs/multi-kernel.md)
};

/// The context keys both targets' classes share about --namespace: `namespace` (options.cpp_namespace) and
/// `qualified_class_name` ("a::b::NAME"; NAME without a namespace).
void set_namespace_keys(tmpl::Value& ctx, const ProgramCodegenOptions& options);
/// What the header guard starts with, before the class name, so that classes of one name in different
/// namespaces have different guards: "a_b_" for a::b, "" without a namespace.
std::string namespace_guard_prefix(const ProgramCodegenOptions& options);

/// Builds the context. What the generated code cannot express (a dtype the runtime has no name for, a rank
/// above 9, a non-optional output nobody reads) is an error at the op or value; returns nullopt then.
std::optional<tmpl::Value> build_program_context(const passes::LoweredProgram& program, const SourceManager& sources,
                                                 const ProgramCodegenOptions& options, DiagnosticEngine& diags);

}  // namespace kforge::codegen
