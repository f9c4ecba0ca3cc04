#include "scalar_expr/scalar_type.h"

#include <array>
#include <utility>

namespace kforge::expr {

namespace {

constexpr std::array<std::pair<ScalarType, std::string_view>, 10> kNames = {{
    {ScalarType::kBool, "bool"},
    {ScalarType::kInt8, "int8"},
    {ScalarType::kUInt8, "uint8"},
    {ScalarType::kInt16, "int16"},
    {ScalarType::kInt32, "int32"},
    {ScalarType::kInt64, "int64"},
    {ScalarType::kFloat16, "float16"},
    {ScalarType::kBFloat16, "bfloat16"},
    {ScalarType::kFloat32, "float32"},
    {ScalarType::kFloat64, "float64"},
}};

// Position in the compute lattice; only defined for compute types.
int rank(ScalarType t) {
  switch (compute_type(t)) {
    case ScalarType::kBool: return 0;
    case ScalarType::kInt32: return 1;
    case ScalarType::kInt64: return 2;
    case ScalarType::kFloat32: return 3;
    case ScalarType::kFloat64: return 4;
    default: return 0;
  }
}

}  // namespace

std::string_view name_of(ScalarType t) {
  for (const auto& [type, name] : kNames) {
    if (type == t) return name;
  }
  return "?";
}

std::optional<ScalarType> scalar_type_from_name(std::string_view name) {
  for (const auto& [type, spelled] : kNames) {
    if (spelled == name) return type;
  }
  return std::nullopt;
}

bool is_float(ScalarType t) {
  return t == ScalarType::kFloat16 || t == ScalarType::kBFloat16 || t == ScalarType::kFloat32 ||
         t == ScalarType::kFloat64;
}

bool is_integer(ScalarType t) {
  return t == ScalarType::kInt8 || t == ScalarType::kUInt8 || t == ScalarType::kInt16 || t == ScalarType::kInt32 ||
         t == ScalarType::kInt64;
}

ScalarType compute_type(ScalarType t) {
  switch (t) {
    case ScalarType::kInt8:
    case ScalarType::kUInt8:
    case ScalarType::kInt16: return ScalarType::kInt32;
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16: return ScalarType::kFloat32;
    default: return t;
  }
}

ScalarType promote(ScalarType a, ScalarType b) {
  a = compute_type(a);
  b = compute_type(b);
  return rank(a) >= rank(b) ? a : b;
}

int category(ScalarType t) {
  if (t == ScalarType::kBool) return 0;
  return is_float(t) ? 2 : 1;
}

std::optional<std::string_view> cpp_scalar_name(ScalarType t) {
  switch (t) {
    case ScalarType::kBool: return "bool";
    case ScalarType::kInt8: return "int8_t";
    case ScalarType::kUInt8: return "uint8_t";
    case ScalarType::kInt16: return "int16_t";
    case ScalarType::kInt32: return "int32_t";
    case ScalarType::kInt64: return "int64_t";
    case ScalarType::kFloat32: return "float";
    case ScalarType::kFloat64: return "double";
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16: return std::nullopt;
  }
  return std::nullopt;
}

std::string_view cpp_type_name(ScalarType t) { return cpp_scalar_name(compute_type(t)).value_or("?"); }

std::optional<ScalarType> paddle_attribute_scalar_type(std::string_view paddle_type) {
  static constexpr std::array<std::pair<std::string_view, ScalarType>, 15> kTypes = {{
      {"bool", ScalarType::kBool},
      {"int", ScalarType::kInt32},
      {"int32_t", ScalarType::kInt32},
      {"int64_t", ScalarType::kInt64},
      {"long", ScalarType::kInt64},
      {"float", ScalarType::kFloat32},
      {"double", ScalarType::kFloat64},
      {"Scalar", ScalarType::kFloat32},
      {"Scalar(bool)", ScalarType::kBool},
      {"Scalar(int)", ScalarType::kInt32},
      {"Scalar(int32_t)", ScalarType::kInt32},
      {"Scalar(int64_t)", ScalarType::kInt64},
      {"Scalar(float)", ScalarType::kFloat32},
      {"Scalar(double)", ScalarType::kFloat64},
      {"size_t", ScalarType::kInt64},
  }};
  for (const auto& [spelled, type] : kTypes) {
    if (spelled == paddle_type) return type;
  }
  return std::nullopt;
}

}  // namespace kforge::expr
