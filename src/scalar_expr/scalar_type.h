// Element types of the scalar expression language (`compute` / `reduce` op YAML keys).
//
// Storage types are the dense dtypes a tensor can hold (Paddle's spellings: bool, int8, ..., float64; no
// complex). Expressions never compute in the narrow types: int8/uint8/int16 compute in int32 (C++ integer
// promotion), float16/bfloat16 in float32. So every node of a checked expression has one of the five
// *compute types* bool < int32 < int64 < float32 < float64, the promotion lattice of the language.
#pragma once

#include <optional>
#include <string_view>

namespace kforge::expr {

enum class ScalarType { kBool, kInt8, kUInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64 };

/// Paddle's spelling: "bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64".
std::string_view name_of(ScalarType t);
/// Inverse of name_of.
std::optional<ScalarType> scalar_type_from_name(std::string_view name);

bool is_float(ScalarType t);
bool is_integer(ScalarType t);  // bool is neither integer nor float

/// The type a value of storage type `t` is computed in: int8/uint8/int16 -> int32, float16/bfloat16 -> float32.
ScalarType compute_type(ScalarType t);

/// Least upper bound of two compute types in bool < int32 < int64 < float32 < float64.
ScalarType promote(ScalarType a, ScalarType b);

/// 0 bool, 1 integer, 2 float: literals and attributes adapt to the other operand within one category.
int category(ScalarType t);

/// The one table of a scalar type's plain C++ spelling (the same in CUDA): bool, int8_t, uint8_t, int16_t,
/// int32_t, int64_t, float, double; nullopt for float16 and bfloat16, which plain C++ has no type for (CUDA's
/// spellings: codegen/cpp_text.h cuda_half_type). Every dtype -> C++ name map of kforge reads it.
std::optional<std::string_view> cpp_scalar_name(ScalarType t);

/// C++ (and CUDA) spelling of the compute type of `t` (compute_type): bool, int32_t, int64_t, float, double.
std::string_view cpp_type_name(ScalarType t);

/// The scalar type of a Paddle op-YAML attribute type, or nullopt for types that are not one number
/// (str, IntArray, int[], DataType, Place, ...). `Scalar` without a type computes as float32.
/// int -> int32, int64_t -> int64, float -> float32, double -> float64, bool -> bool,
/// Scalar(int) / Scalar(int64_t) / Scalar(float) / Scalar(double) / Scalar(bool) likewise.
std::optional<ScalarType> paddle_attribute_scalar_type(std::string_view paddle_type);

}  // namespace kforge::expr
