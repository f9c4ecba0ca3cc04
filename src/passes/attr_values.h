// Conversions between program attributes (ir::Attribute), op YAML argument types and defaults, and the typed
// constants of a LoweredProgram (AttrConstant).
#pragma once

#include <optional>
#include <string>

#include "opdef/op_library.h"
#include "opdef/types.h"
#include "passes/lowered_program.h"
#include "program/attribute.h"

namespace kforge::passes {

/// The attribute converted to the exact kind PIR uses for an argument of YAML type `type`:
///   bool -> kBool; int/int32_t -> kInt32; int64_t/long/size_t -> kInt64; float -> kFloat; double -> kDouble;
///   str -> kString; X[] -> kArray of X; IntArray -> kIntArray; Scalar* -> kBool/kInt32/kInt64/kFloat/kDouble
///   (a kScalar stays a kScalar); Scalar[] -> kArray of those; DataType -> kDataType; DataLayout ->
///   kDataLayout; Place -> kPlace.
/// Integers of any width convert to any integer type that holds them; integers convert to floating types;
/// guessed kinds (attribute.h) convert as their text allows (an unquoted `float32` to a DataType). Anything
/// else is a mismatch: nullopt, and `why` says what was expected ("expected a bool, got int64 3").
std::optional<ir::Attribute> convert_attribute(const ir::Attribute& attr, opdef::ArgType type, std::string* why);

/// The YAML default of an attribute as a program attribute of the kind convert_attribute gives, or nullopt
/// when the default is an expression kforge does not evaluate (`why` says which).
std::optional<ir::Attribute> default_attribute(const opdef::DefaultValue& value, opdef::ArgType type, std::string* why);

/// A converted attribute (see convert_attribute) as a lowered constant of argument type `type`.
AttrConstant to_constant(const ir::Attribute& attr, opdef::ArgType type);

/// "bool", "int32", "IntArray", ... : how diagnostics name what an argument type expects.
std::string expected_kind_text(opdef::ArgType type);

}  // namespace kforge::passes
