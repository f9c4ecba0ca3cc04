// The Python extension module of `kforge ops --python MODULE`, decided before any template runs: for every API
// function of the op library (out-of-place and in-place twin), its Python parameters in Paddle's order (the
// YAML `args` order: tensors, then attributes), how each argument is converted (tensor, optional tensor,
// Tensor[], tensor updated in place, attribute of a C++ value type), its default (the YAML default wherever it is
// valid C++, even where the C++ API had to drop it because a later parameter has none: Python arguments are
// matched by name), the C++ call, and which outputs come back (all but the intermediate ones, as Paddle's
// `_C_ops` does). docs/python.md describes the conventions.
#pragma once

#include <string>
#include <vector>

#include "codegen/op_api_model.h"

namespace kforge::codegen {

struct PyParam {
  enum class Kind { kTensor, kOptionalTensor, kTensorList, kOptionalTensorList, kInplaceTensor, kOptionalInplaceTensor,
                    kAttribute };
  std::string name;          // the YAML name: the Python keyword
  std::string local;         // the C++ local it is converted into
  Kind kind = Kind::kTensor;
  std::string value_type;    // attributes: the local's C++ type ("int", "kforge::IntArray")
  std::string cpp_default;   // attributes: the C++ initializer when the argument is absent; "" when required
  std::string doc_default;   // the YAML default as written, for the docstring; "" when required
  bool required = true;
};

struct PyOutput {
  enum class Kind { kTensor, kOptionalTensor, kTensorList, kInplace };
  std::string name;
  std::string local;         // the C++ local the API writes (kTensor, kOptionalTensor, kTensorList)
  Kind kind = Kind::kTensor;
  size_t param_index = 0;    // kInplace: the Python parameter whose object is returned
};

struct PyFunction {
  std::string name;                    // the Python name: the C++ API function's name
  std::string source;                  // "ops.yaml:12"
  std::vector<PyParam> params;
  std::vector<std::string> call_args;  // C++ expressions, in the API function's parameter order
  std::vector<std::string> locals;     // outputs the call writes: C++ locals declared before it
  std::vector<std::string> list_locals;  // the same for Tensor[] outputs
  std::vector<PyOutput> returns;       // what the Python function returns: one object, or a tuple of several
  std::string doc;                     // "add(x, y) -> Tensor" plus the source
};

struct PyOpModule {
  std::vector<PyFunction> functions;   // document order; a twin follows its op
  std::vector<std::string> skipped;    // "name: reason" for API functions Python does not get
};

/// The Python functions of every generated API function of `model`.
PyOpModule build_python_op_module(const OpApiModel& model);

}  // namespace kforge::codegen
