// C++ spellings that generated code needs: identifiers, string and number literals, runtime type names,
// the calling convention's parameter types (docs/calling-convention.md) and typed attribute constants.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "scalar_expr/scalar_type.h"
#include "opdef/types.h"
#include "passes/lowered_program.h"
#include "program/dtype.h"

namespace kforge::codegen {

/// A valid C++ identifier for `text`: other characters become '_', a leading digit gets a '_' prefix, a
/// keyword a '_' suffix ("fc_0.w_0" -> "fc_0_w_0").
std::string cpp_identifier(std::string_view text);

/// Why `text` cannot be the namespace that generated code is put in (`kforge compile --namespace`): `offset` is
/// where in `text` the part at fault starts, `why` says what is wrong with it.
struct NamespaceProblem {
  size_t offset = 0;
  std::string why;
};
/// nullopt when `text` is `a` or `a::b::c` where every part is a C++ identifier that is not a keyword, not
/// reserved to the implementation (`__x`, `_X`) and not a name the generated code uses unqualified (`std`,
/// `kforge`, the <cstdint> / <cstddef> types), which a namespace of that name would hide inside it.
std::optional<NamespaceProblem> namespace_problem(std::string_view text);

/// Identifiers unique within one scope: `take("x")` gives "x", the next `take("x")` "x_2", and a name in
/// `reserved` is never given out as is.
class IdentifierScope {
 public:
  explicit IdentifierScope(std::set<std::string> reserved = {}) : used_(std::move(reserved)) {}
  std::string take(std::string_view text);

 private:
  std::set<std::string> used_;
};

/// A C++ string literal with escapes: "NCHW" -> "\"NCHW\"".
std::string cpp_string(std::string_view text);

/// A dim or size expression as int64_t C++ (`s0 * 30 + 2`, `kforge_floor_div(s0 + 2, 3)`,
/// `std::max<int64_t>(s0, 4)`): symbols as the generated code names them (`s<id>`), floor and ceiling division
/// as the functions the class templates define (templates/program/class.j2, dim_division).
std::string cpp_int_expr(const passes::SymExpr& e);
/// The same expression as kforge::CheckedInt arithmetic (templates/runtime/kforge_runtime.h): `.ok()` is false
/// where an int64 step overflows, `.value()` the result.
std::string cpp_checked_int_expr(const passes::SymExpr& e);
/// How the two above print (for printers that name some atoms themselves: codegen/size_table.h).
passes::SymExpr::PrintOptions cpp_int_options();
passes::SymExpr::PrintOptions cpp_checked_int_options();

/// A braced list of integers: {64, 0, 0} -> "{64, 0, 0}", {} -> "{}" (multi-kernel hints, shapes).
std::string cpp_int_list(const std::vector<int64_t>& values);

/// "{a, b}": each of `dims` as `item` spells it, in braces (a dims initializer); "[a, b]" with bracket_list.
template <typename Dims, typename Item>
std::string braced_list(const Dims& dims, Item&& item) {
  std::vector<std::string> items;
  for (const auto& d : dims) items.push_back(item(d));
  return fmt::format("{{{}}}", fmt::join(items, ", "));
}
template <typename Dims, typename Item>
std::string bracket_list(const Dims& dims, Item&& item) {
  std::vector<std::string> items;
  for (const auto& d : dims) items.push_back(item(d));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

/// "{4, -1}": the dims known at generation time, -1 for the others (kforge::ParameterSpec's dims).
std::string cpp_known_dims(const passes::SymShape& dims);

/// Shortest round-trip literals: 0.5 -> "0.5", 1 -> "1.0", 1e-05 -> "1e-05"; as float: "1e-05f". Infinities
/// and NaN spell std::numeric_limits (the file must include <limits>).
std::string cpp_double(double value);
std::string cpp_float(float value);
/// A floating constant inside a CUDA kernel, as `type` ("float", "double", "__half", an integer type...): cpp_float's
/// spelling for float, else static_cast<type>(its shortest round-trip text); infinities static_cast<type>(HUGE_VAL)
/// and NaN static_cast<type>(nan("")), because nvcc refuses std::numeric_limits' constexpr host functions in device
/// code.
std::string cuda_device_constant(double value, const std::string& type);
/// A double constant inside a CUDA kernel where the site spells finite values as their 17 significant digits
/// ("1.0000000000000001e-05", an operand of double arithmetic): those digits, or, for an infinity or NaN (which
/// `{:.17g}` would spell "inf" / "nan", no C++ token), cuda_device_constant's spelling as `type`.
std::string cuda_device_digits(double value, const std::string& type);

/// The runtime's enumerator: "kforge::DataType::kFloat32"; nullopt for dtypes the runtime has no name for
/// (uint16/32/64, float8, pstring).
std::optional<std::string> runtime_dtype(ir::DataType dtype);
/// The scalar type of a dtype (by its name), nullopt for dtypes that are no expr::ScalarType (uint16/32/64,
/// complex, float8, pstring, index).
std::optional<expr::ScalarType> scalar_type_of(ir::DataType dtype);
/// The C++ element type of a dtype ("float", "int64_t", "bool"): expr::cpp_scalar_name, the one table of plain
/// C++ spellings; nullopt for float16, bfloat16, complex and the other dtypes that are no expr::ScalarType.
std::optional<std::string> element_type(ir::DataType dtype);
/// The one table of CUDA's 16-bit float types (kforge_half.cuh): __half, __nv_bfloat16; nullopt otherwise.
std::optional<std::string> cuda_half_type(expr::ScalarType type);
/// The element type in CUDA code: cuda_half_type's for float16 and bfloat16, element_type's otherwise.
std::optional<std::string> cuda_element_type(ir::DataType dtype);
/// CUDA spelling of a storage/compute type the CUDA fused kernels support (bool, int32_t, int64_t, __half,
/// __nv_bfloat16, float, double), or nullopt (int8, uint8, int16: computed in int32, never stored by a group).
std::optional<std::string> cuda_scalar_type(expr::ScalarType type);

/// The parameter type of an argument of op YAML type `type` (Tensor types: `optional` picks the pointer).
std::string param_type(opdef::ArgType type, bool optional);

/// Whether a constant of this type is passed inline (a number, bool, enum) rather than named at namespace
/// scope (strings, lists, IntArray, Scalar, which the kernels take by reference and which would otherwise
/// be rebuilt on every call).
bool is_inline_constant(opdef::ArgType type);
/// The declared type of a named constant ("std::vector<int>", "kforge::IntArray", ...).
std::string constant_type(opdef::ArgType type);

/// The local an argument computed from the dims needs before its call: `const TYPE NAME{ITEMS};`, or for a Scalar
/// (`scalar`) `const kforge::Scalar NAME(static_cast<int64_t>(ITEM));`; the templates spell the declaration.
struct SymbolicLocal {
  std::string type;                // "kforge::IntArray", "std::vector<int>", ...
  std::string name;
  std::vector<std::string> items;  // C++ expressions
  bool scalar = false;
};

/// What symbolic_arg gives: the expression to pass, and the local it needs (when it needs one).
struct SymbolicArg {
  std::string text;
  std::optional<SymbolicLocal> local;
};

/// An argument of op YAML type `type` whose values are `items` (C++ expressions of the dims, one per value), its
/// local named `local`; nullopt where such a type takes no list of dims.
std::optional<SymbolicArg> symbolic_arg(opdef::ArgType type, const std::vector<std::string>& items,
                                        const std::string& local);

/// The C++ expression of an attribute constant, or nullopt (with `why`) when the runtime cannot express it.
std::optional<std::string> constant_literal(const passes::AttrConstant& constant, std::string* why);

}  // namespace kforge::codegen
