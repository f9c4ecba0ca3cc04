// The op library that `kforge ops` generates, decided op by op before any template runs: which C++ API
// functions each op gets (the out-of-place function and, for ops with `inplace` pairs, the in-place twin
// `name_`), their parameters and defaults, the checks, the kernel-key selection, the infer_meta and
// kernel calls, the aliasing of in-place and view outputs, and the infer_meta / kernel declarations the
// library needs (docs/calling-convention.md). Ops that cannot be expressed are kept with the reason.
//
// API shape (docs/calling-convention.md, "The generated op API"):
//   kforge::Status NAME(<tensor inputs>, <outputs as pointers>, <attributes, YAML defaults trailing>);
// Outputs come before the attributes so that the attributes' YAML defaults stay usable.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "opdef/op_compat.h"
#include "opdef/op_library.h"
#include "support/source_manager.h"

namespace kforge::codegen {

/// One parameter of a generated API function.
struct ApiParam {
  enum class Role { kInput, kOutput, kAttribute };
  std::string name;
  std::string type;           // C++ parameter type: "const kforge::Tensor&", "kforge::Tensor*", ...
  std::string default_value;  // C++ default ("" when none)
  std::string default_note;   // why the YAML default is not used ("" when there was none or it is used)
  Role role = Role::kInput;
  bool used = true;  // false for attributes that neither infer_meta nor the kernel take ([[maybe_unused]])
};

/// A tensor argument checked on entry.
struct InputCheck {
  enum class Kind { kTensor, kOptionalTensor, kList };
  std::string name;
  Kind kind = Kind::kTensor;
  bool needs_data = true;  // false for no_need_buffer inputs: only dtype and dims are read
};

/// An output of one API function and how it is produced.
struct ApiOutput {
  std::string name;         // YAML name; also the API parameter name unless it aliases an input
  std::string local;        // the local the function builds it in
  bool is_list = false;     // Tensor[]
  bool nullable = false;    // optional or intermediate: the caller may pass null, it is then not computed
  std::string size;         // Tensor[]: C++ expression of the element count
  // In-place (twin) or view: the input whose buffer the output shares, and how to reach it.
  std::string alias_input;  // "" when the output gets its own buffer
  bool alias_is_pointer = false;  // the aliased input is an optional `kforge::Tensor*`
  bool write_back = false;        // in-place twin: the input takes the output's dtype and dims afterwards
  bool is_param = true;           // false for in-place outputs of the twin (the input is the output)
};

/// A call of an infer_meta or kernel function, or of another API function (invoke).
struct ApiCall {
  std::string func;               // qualified: "kforge::meta::UnchangedInferMeta"
  std::vector<std::string> args;  // C++ expressions in order
};

struct ApiFunction {
  std::string name;
  bool inplace_twin = false;
  std::vector<ApiParam> params;
  std::vector<InputCheck> checks;
  std::vector<ApiOutput> outputs;
  std::vector<std::string> notes;  // for the header comment: defaults not used, twin not made

  // Kernel key. dtype: `dtype_candidates` in priority order (the first defined wins), or, when
  // `dtype_from_inputs`, Paddle's rule over the tensor inputs (the last defined one, complex promoted).
  std::vector<std::string> dtype_candidates;
  bool dtype_from_inputs = false;
  std::vector<std::string> place_candidates;  // first defined wins; none: from the inputs
  bool place_from_inputs = false;
  std::string forced_place;                   // force_backend: "kforge::CPUPlace()"

  ApiCall infer_meta;
  ApiCall kernel;
  bool is_invoke = false;  // calls another API function (`invoke`) instead of infer_meta + kernel
  ApiCall invoke;
};

/// One declaration of `<P>_decls.h`.
struct FunctionDecl {
  std::string name_space;           // "kforge::kernels", "kforge::meta", "kforge::meta::strings"
  std::string name;
  std::vector<std::string> params;  // "const kforge::Tensor& x"
  std::string first_use;            // the op that first needs it
};

struct OpApi {
  const opdef::Op* op = nullptr;
  std::string name;                  // op_api_name(*op)
  std::string source;                // "ops.yaml:12"
  bool generated = false;
  std::string skip_reason;           // when !generated
  std::vector<ApiFunction> functions;
};

struct OpApiModel {
  std::vector<OpApi> ops;             // document order, skipped ones included
  std::vector<FunctionDecl> kernels;  // deduplicated, first-use order
  std::vector<FunctionDecl> metas;
  size_t generated_count() const;
};

/// The name an op has in the library's tables and lists: its YAML name, or for an op of a sparse op file
/// the name plus `_sp`, the key Paddle's op_gen.py files sparse ops under (the sparse `abs` is `abs_sp`).
std::string op_api_name(const opdef::Op& op);

/// Decides the API of every op of `library`. `display_paths[file id]` names a YAML file in OpApi::source
/// (the SourceManager's path when empty or missing).
OpApiModel build_op_api_model(const opdef::OpLibrary& library, const SourceManager& sources,
                              const std::vector<std::string>& display_paths);

}  // namespace kforge::codegen
