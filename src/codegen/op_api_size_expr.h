// The `{...}` size expression of a `Tensor[]` output, translated from Paddle's phi C++ to the runtime.
//
// Paddle writes them against phi types: `x.size()` on a `std::vector<Tensor>`, `input.dims()[axis]` on
// a DDim, `sections.size()` on an IntArray, `num` for an int attribute. The generated API has the
// runtime's types instead, so the expression is rewritten token by token:
//   LIST.size()    -> LIST.size            (TensorList / MutableTensorList keep the size in a field)
//   TENSOR.dims()  -> kforge_dims(TENSOR)  (a bounds-checked view of the dims: an out-of-range index
//                                           reads -1, so a bad axis gives a negative size, an error)
//   ATTR, ATTR.size(), literals and operators stay as they are.
// Anything else (another name, another member) cannot be translated and the op is skipped with the
// reason, rather than emitting code that may not compile or may read out of bounds.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "opdef/op_library.h"

namespace kforge::codegen {

std::optional<std::string> translate_size_expression(std::string_view expr, const opdef::Op& op, std::string* why);

}  // namespace kforge::codegen
