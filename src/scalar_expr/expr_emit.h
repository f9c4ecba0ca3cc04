// Emitters: a checked (typed) expression as C++ or CUDA expression text.
//
// The text uses exactly the types of the tree: every operand conversion is already a cast node, float32
// literals carry an `f` suffix (`0.0f`), int64 literals are spelled `int64_t{5}`, so the text compiles
// warning-free with -Wall -Wextra -Werror in a context where:
//  - each input name maps to a value of that input's *compute* type (a float16 input is loaded as float, an
//    int8 input as int32_t), for example a local variable of the fused loop;
//  - each attribute maps to an expression of the attribute's declared scalar type (`float`, `int32_t`,
//    `int64_t`, `double`, `bool`), typically a named constant;
//  - `acc` and `n` (reductions) map to the accumulator (its compute type) and the element count (int64_t).
// C++ needs <algorithm>, <cmath>, <cstdint>, <limits> and, where calls_runtime_math says so, the runtime's
// kforge_math.h (exp and erf, the kernel library's own); CUDA needs <cstdint> and kforge_fused.cuh (std_min /
// std_max; the CUDA math library is implicit). CUDA text uses the precise single-precision functions (expf, erff,
// tanhf, rsqrtf), never the __expf-style intrinsics; float64 uses the double versions. Names and parentheses follow C
// precedence, with extra parentheses where GCC's -Wparentheses would ask for them.
//
// Semantics the two targets share: integer `/` and `%` truncate toward zero, float `%` is fmod, casts
// truncate, float16/bfloat16 casts compute in float32 (the rounding happens when a value is stored to a
// half-precision tensor). C++ min/max are std::min/std::max and CUDA's float ones kforge::cuda::std_min/std_max
// (kforge_fused.cuh: the same comparisons, so NaN operands give the same result); they differ only where the
// libraries differ: transcendental functions may differ by the libraries' ulp bounds.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "scalar_expr/expr_parser.h"

namespace kforge::expr {

enum class EmitTarget { kCpp, kCuda };

/// What the names of an expression become in the emitted text. Unset callbacks keep the name as written.
/// Text that is not a simple primary expression (identifier, member access or subscript) is parenthesised.
struct EmitNames {
  std::function<std::string(std::string_view input)> input;
  std::function<std::string(std::string_view attribute)> attribute;
  std::string accumulator = "acc";
  std::string count = "n";

  /// Convenience: look names up in maps; a name missing from its map is kept as written.
  static EmitNames from_maps(std::map<std::string, std::string, std::less<>> inputs,
                             std::map<std::string, std::string, std::less<>> attributes);
};

/// Whether the C++ text of `typed` calls kforge_math.h (exp, erf, sigmoid): its includer needs the header, and a
/// loop over it pays for an AVX2 clone (KFORGE_MATH_CLONES).
bool calls_runtime_math(const Node& typed);

/// Emits a typed node (from check_expression). The tree must be typed; an untyped node emits as "/*untyped*/".
std::string emit(const Node& typed, EmitTarget target, const EmitNames& names = {});

inline std::string emit_cpp(const Expression& typed, const EmitNames& names = {}) {
  return emit(*typed.root, EmitTarget::kCpp, names);
}
inline std::string emit_cuda(const Expression& typed, const EmitNames& names = {}) {
  return emit(*typed.root, EmitTarget::kCuda, names);
}

/// A literal of compute type `type` in the target's spelling: `0.5f`, `0.5`, `int64_t{3}`, `INT32_MIN`,
/// `std::numeric_limits<float>::infinity()` (C++) or `HUGE_VALF` (CUDA), `true`. Used by templates for
/// reduction identities and constants.
std::string emit_literal(const Literal& literal, ScalarType type, EmitTarget target);

}  // namespace kforge::expr
