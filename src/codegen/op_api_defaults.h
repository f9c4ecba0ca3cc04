// YAML argument defaults as C++ defaults of the generated API's parameters.
//
// The YAML keeps defaults as Paddle's C++ text (`{1, 1}`, `1.0f/8`, `DataType::FLOAT32`, `CPUPlace()`).
// A default is used only when it is valid C++ for the parameter's type in the generated header, which
// lives in the user's namespace: Paddle spellings of runtime constants are qualified
// (`DataType::FLOAT32` -> `kforge::DataType::FLOAT32`, `CPUPlace()` -> `kforge::CPUPlace()`), and text
// that names anything else, or whose kind does not fit the type (a string for an int, a float for an
// IntArray), is not used; the reason goes into the header as a comment.
#pragma once

#include <optional>
#include <string>

#include "opdef/op_library.h"

namespace kforge::codegen {

/// The C++ default for a parameter of YAML type `type`, or nullopt with `why` set.
std::optional<std::string> cpp_default_value(opdef::ArgType type, const opdef::DefaultValue& value, std::string* why);

/// A YAML type name for messages: "int[]", "Scalar(float)".
std::string arg_type_name(opdef::ArgType type);

}  // namespace kforge::codegen
