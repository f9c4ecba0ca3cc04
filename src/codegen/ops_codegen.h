// `kforge ops`: renders the op library of an OpLibrary into an OutputSet (nothing touches the disk here).
//
// Files, in DIR (P = the prefix):
//   P_api.h          one typed C++ function per op (+ the in-place twin), the args-info types and lookup
//   P_api.cc         the functions: checks, kernel key, infer_meta, output allocation / aliasing, kernel
//   P_args_info.cc   the static args-info table and its lookup (Paddle's get_kernel_ops_args_info)
//   P_decls.h        every infer_meta and kernel function the library calls (docs/calling-convention.md)
//   kforge_runtime.h the runtime header, copied from the template search path
// With shards > 1 the two .cc files become P_api_<i>.cc and P_args_info_<i>.cc, i in [0, shards): an op
// goes to shard fnv1a(name) % shards, so adding or removing an op changes only its own shard, and the
// file names depend on the options alone (--list-outputs needs no input). Each file starts with the
// banner; the templates are templates/ops/*.j2 (overridable through the search path).
// With --python MODULE, also P_python.cc (templates/python/ops_module.cc.j2: a CPython extension module exposing
// every API function, docs/python.md) and kforge_python.h with its parts (what that module needs beside
// kforge_runtime.h; kPythonHeaderTemplates).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opdef/op_compat.h"
#include "opdef/op_library.h"
#include "output/output_set.h"
#include "template/environment.h"

namespace kforge::codegen {

struct OpsCodegenOptions {
  std::string output_dir;
  std::string prefix = "ops";
  std::string name_space = "ops";  // C++ namespace of the API ("a::b" allowed)
  uint32_t shards = 1;
  std::vector<std::string> banner_inputs;  // every input file, as the user spelled it
  std::string tool_version;
  bool version_stamp = true;
  std::string python_module;  // --python MODULE: also P_python.cc and kforge_python*.h ("" for none)
};

/// The paths `generate_op_library_files` produces, in output order (P_api.h first), from the options alone.
std::vector<std::string> op_library_file_names(const OpsCodegenOptions& options);

/// The shard of an op: FNV-1a of its name modulo `shards`.
uint32_t op_shard(std::string_view op_name, uint32_t shards);

/// Whether `text` can be a C++ namespace (`a`, `a::b`, identifiers that are not keywords); `why` says why not.
bool is_valid_namespace(std::string_view text, std::string* why);

/// Renders every file. `compat` (may be null) marks mutable attributes in the args-info table.
/// Returns false after reporting errors to env.diags().
bool generate_op_library_files(const opdef::OpLibrary& library, const opdef::OpCompat* compat, tmpl::Environment& env,
                               const OpsCodegenOptions& options, OutputSet& outputs);

}  // namespace kforge::codegen
