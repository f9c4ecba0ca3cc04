// The YAML 1.2 core schema's resolution of a plain (unquoted) scalar, the one every YAML reader of kforge that
// types scalars uses (program YAML, template data). Op YAML keeps Paddle's PyYAML (YAML 1.1) booleans in
// opdef/yaml_reader.cpp: that is Paddle's format, not a second resolver of the core schema.
#pragma once

#include <cstdint>
#include <string_view>

namespace kforge::yaml {

enum class CoreKind : uint8_t { kNull, kBool, kInt, kFloat, kString };

/// What a plain scalar resolves to. Only the field of `kind` is meaningful, except that an int also gives its
/// value as a double in `float_value` (the text rounded once, so also for an int out of range).
struct CoreScalar {
  CoreKind kind = CoreKind::kString;
  bool bool_value = false;
  int64_t int_value = 0;
  bool out_of_range = false;  // kInt only: the integer does not fit in int64_t (int_value is 0)
  double float_value = 0;
};

/// The YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1023-core-schema), tag resolution of plain scalars:
///   null   ''  ~  null Null NULL
///   bool   true True TRUE false False FALSE
///   int    [-+]?[0-9]+ (decimal)   0o[0-7]+ (octal)   0x[0-9a-fA-F]+ (hex)
///   float  [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?   [-+]?\.(inf|Inf|INF)   \.(nan|NaN|NAN)
///   str    anything else (yes, on, 0X1F, 1_000, -0x1F, 0b101 are strings)
CoreScalar resolve_core_scalar(std::string_view plain);

}  // namespace kforge::yaml
