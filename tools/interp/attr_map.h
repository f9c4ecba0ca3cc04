// The attribute map of the reference interpreter: an op's attributes converted once from the program model
// into run-time values keyed by name, read back by the op implementations with typed getters, as an
// executor's kernel context does (Paddle's AttributeMap + KernelContext::AttrAt).
//
// Readers of untyped sources (program YAML, 2025 PIR text) guess attribute kinds (`3` is an int64, `[2, 2]`
// an array, an unquoted `float32` a string), so the getters convert between the representations that can
// mean the same thing: an integer where a float is asked, a list of ints where an IntArray is asked, a
// string where a DataType is asked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "kforge_runtime.h"
#include "program/attribute.h"

namespace kforge::interp {

/// One attribute value. Lists keep their element representation; an empty list is an empty int list.
using AttrValue = std::variant<bool, int64_t, double, std::string, kforge::DataType, kforge::Scalar,
                               std::vector<int64_t>, std::vector<double>, std::vector<std::string>,
                               std::vector<bool>, std::vector<kforge::Scalar>>;

/// The runtime dtype of a program-model dtype; kUndefined for dtypes the runtime has no spelling for.
kforge::DataType runtime_dtype(ir::DataType dtype);

class AttrMap {
 public:
  /// Converts every attribute of an op. Attributes with no run-time meaning (places, layouts, types,
  /// opaque text, nulls) are left out; getters fall back to their defaults for them.
  static AttrMap from_attributes(const std::vector<ir::NamedAttribute>& attributes);

  void set(std::string name, AttrValue value) { values_[std::move(name)] = std::move(value); }
  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  const AttrValue* find(std::string_view name) const;

  // Typed getters. With a default, an absent attribute gives the default; without one it is an error. A
  // present attribute of an unconvertible kind is always an error. Errors name the attribute.
  kforge::Status get_bool(std::string_view name, bool* out) const;
  kforge::Status get_bool(std::string_view name, bool* out, bool fallback) const;
  kforge::Status get_int(std::string_view name, int64_t* out) const;
  kforge::Status get_int(std::string_view name, int64_t* out, int64_t fallback) const;
  kforge::Status get_int32(std::string_view name, int* out, int fallback) const;
  kforge::Status get_int32(std::string_view name, int* out) const;
  kforge::Status get_float(std::string_view name, double* out) const;
  kforge::Status get_float(std::string_view name, double* out, double fallback) const;
  kforge::Status get_string(std::string_view name, std::string* out) const;
  kforge::Status get_string(std::string_view name, std::string* out, const std::string& fallback) const;
  kforge::Status get_ints(std::string_view name, std::vector<int64_t>* out) const;
  kforge::Status get_ints(std::string_view name, std::vector<int64_t>* out, const std::vector<int64_t>& fallback) const;
  kforge::Status get_int32s(std::string_view name, std::vector<int>* out) const;
  kforge::Status get_int32s(std::string_view name, std::vector<int>* out, const std::vector<int>& fallback) const;
  kforge::Status get_floats(std::string_view name, std::vector<float>* out, const std::vector<float>& fallback) const;
  kforge::Status get_dtype(std::string_view name, kforge::DataType* out) const;
  kforge::Status get_dtype(std::string_view name, kforge::DataType* out, kforge::DataType fallback) const;
  kforge::Status get_scalar(std::string_view name, kforge::Scalar* out) const;
  kforge::Status get_scalar(std::string_view name, kforge::Scalar* out, const kforge::Scalar& fallback) const;
  kforge::Status get_scalars(std::string_view name, std::vector<kforge::Scalar>* out) const;

 private:
  std::unordered_map<std::string, AttrValue> values_;
};

}  // namespace kforge::interp
