// Internal to codegen/: what cuda_conv.cpp (convolutions) and cuda_pool_norm.cpp (pool2d and lone batch norms)
// share to spell the steps of passes/cuda_plan.h's forms: a dim as an int field, the activations' element types.
#pragma once

#include <optional>
#include <string>

#include "codegen/cpp_text.h"
#include "codegen/size_table.h"
#include "passes/lowered_program.h"

namespace kforge::codegen::conv_detail {

// A dim as the generated code passes it to an int field: the literal, or the size where the step runs.
inline std::string int_field(const passes::SymExpr& d, const SizeExpr& size) {
  if (std::optional<int64_t> c = d.constant()) return std::to_string(*c);
  return "static_cast<int>(" + size(d) + ")";
}

// The C++ element type of an activation dtype (float32 or 16-bit, or float64 for pooling).
inline std::string element_type_of(ir::DataType d) { return cuda_element_type(d).value_or("float"); }

// kforge::cuda_conv::ElementType's enumerator of `d`.
inline std::string element_enumerator(ir::DataType d) {
  switch (d) {
    case ir::DataType::kFloat16: return "kforge::cuda_conv::ElementType::kFloat16";
    case ir::DataType::kBFloat16: return "kforge::cuda_conv::ElementType::kBFloat16";
    default: return "kforge::cuda_conv::ElementType::kFloat32";
  }
}

inline int64_t element_bytes(ir::DataType d) { return d == ir::DataType::kFloat32 ? 4 : 2; }

}  // namespace kforge::codegen::conv_detail
