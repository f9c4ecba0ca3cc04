#include "codegen/op_api_defaults.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <string_view>
#include <vector>

#include "support/ascii.h"

namespace kforge::codegen {

namespace {

using ascii::is_digit;
using ascii::is_ident_char;
using ascii::is_ident_start;

using opdef::ArgType;
using opdef::DefaultKind;
using opdef::DefaultValue;


// Names from <cstdint> that Paddle's defaults use for integer limits; the runtime header includes it.
constexpr std::array<std::string_view, 14> kIntegerLimits = {
    "INT8_MAX",  "INT8_MIN",  "INT16_MAX",  "INT16_MIN",  "INT32_MAX",  "INT32_MIN",  "INT64_MAX",
    "INT64_MIN", "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "SIZE_MAX",   "INTPTR_MAX"};

bool is_integer_limit(std::string_view name) {
  for (std::string_view limit : kIntegerLimits) {
    if (name == limit) return true;
  }
  return false;
}

// Whether `text` is arithmetic on literals only: numbers, true/false, integer limits, operators and
// parentheses (`(2 << 12) - 1`, `1.0f/8`). `integral` rejects floating literals.
bool is_numeric_expression(std::string_view text, bool integral, std::string* why) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ') {
      ++i;
    } else if (is_digit(c) || (c == '.' && i + 1 < text.size() && is_digit(text[i + 1]))) {
      const size_t begin = i;
      const bool hex = c == '0' && i + 1 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X');
      bool floating = false;
      while (i < text.size()) {
        const char d = text[i];
        if (d == '.') {
          floating = true;
        } else if (!hex && (d == 'e' || d == 'E') && i + 1 < text.size() && (text[i + 1] == '+' || text[i + 1] == '-')) {
          floating = true;
          ++i;  // the exponent's sign
        } else if (!is_ident_char(d)) {
          break;
        } else if (!hex && (d == 'e' || d == 'E' || d == 'f' || d == 'F')) {
          floating = true;
        }
        ++i;
      }
      if (floating && integral) {
        *why = "the floating-point literal '" + std::string(text.substr(begin, i - begin)) + "'";
        return false;
      }
    } else if (is_ident_start(c)) {
      const size_t begin = i;
      while (i < text.size() && is_ident_char(text[i])) ++i;
      const std::string_view name = text.substr(begin, i - begin);
      if (name != "true" && name != "false" && !is_integer_limit(name)) {
        *why = "the name '" + std::string(name) + "'";
        return false;
      }
    } else if (std::string_view("+-*/%()<>&|^~!").find(c) != std::string_view::npos) {
      ++i;
    } else {
      *why = "'" + std::string(1, c) + "'";
      return false;
    }
  }
  return true;
}

// `DataType::FLOAT32`, `phi::DataType::FLOAT32`: the enumerator after the last `Type::`, when the
// qualified name is of that enum.
std::optional<std::string_view> enumerator_of(std::string_view text, std::string_view enum_name) {
  const size_t sep = text.rfind("::");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view scope = text.substr(0, sep);
  const size_t scope_sep = scope.rfind("::");
  if (scope_sep != std::string_view::npos) scope = scope.substr(scope_sep + 2);
  if (scope != enum_name) return std::nullopt;
  return text.substr(sep + 2);
}

constexpr std::array<std::string_view, 26> kDataTypeEnumerators = {
    "UNDEFINED", "BOOL",      "INT8",       "UINT8",      "INT16",    "INT32",  "INT64",
    "FLOAT16",   "BFLOAT16",  "FLOAT32",    "FLOAT64",    "COMPLEX64", "COMPLEX128",
    "kUndefined", "kBool",    "kInt8",      "kUInt8",     "kInt16",   "kInt32", "kInt64",
    "kFloat16",  "kBFloat16", "kFloat32",   "kFloat64",   "kComplex64", "kComplex128"};
constexpr std::array<std::string_view, 8> kDataLayoutEnumerators = {"UNDEFINED", "NCHW",  "NHWC",  "ANY",
                                                                    "kUndefined", "kNCHW", "kNHWC", "kAnyLayout"};

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

std::string not_valid(const DefaultValue& value, ArgType type) {
  const std::string_view kind = opdef::default_kind_name(value.kind);
  const bool vowel = kind.front() == 'a' || kind.front() == 'e' || kind.front() == 'i' || kind.front() == 'o';
  return std::string(vowel ? "an " : "a ") + std::string(kind) + " default does not fit type '" + arg_type_name(type) + "'";
}

std::optional<ArgType> element_type(ArgType list_type) {
  switch (list_type) {
    case ArgType::kIntList: return ArgType::kInt;
    case ArgType::kInt64List: return ArgType::kInt64;
    case ArgType::kFloatList: return ArgType::kFloat;
    case ArgType::kDoubleList: return ArgType::kDouble;
    case ArgType::kBoolList: return ArgType::kBool;
    case ArgType::kStrList: return ArgType::kStr;
    case ArgType::kIntArray: return ArgType::kInt64;
    case ArgType::kScalarList: return ArgType::kScalar;
    default: return std::nullopt;
  }
}

bool is_integral_type(ArgType type) {
  return type == ArgType::kInt || type == ArgType::kInt32 || type == ArgType::kInt64 || type == ArgType::kLong ||
         type == ArgType::kSizeT;
}

}  // namespace

std::string arg_type_name(ArgType type) { return std::string(opdef::arg_type_info(type).spelling); }

std::optional<std::string> cpp_default_value(ArgType type, const DefaultValue& value, std::string* why) {
  const std::string& text = value.text;
  if (is_integral_type(type) || type == ArgType::kFloat || type == ArgType::kDouble || opdef::is_scalar_type(type)) {
    const bool integral = is_integral_type(type);
    switch (value.kind) {
      case DefaultKind::kInteger:
      case DefaultKind::kBool: return text;
      case DefaultKind::kFloat:
        if (!integral) return text;
        *why = not_valid(value, type);
        return std::nullopt;
      case DefaultKind::kEnumConstant:
      case DefaultKind::kExpression: {
        std::string what;
        if (is_numeric_expression(text, integral, &what)) return text;
        *why = "it uses " + what;
        return std::nullopt;
      }
      default: *why = not_valid(value, type); return std::nullopt;
    }
  }
  switch (type) {
    case ArgType::kBool:
      if (value.kind == DefaultKind::kBool || value.kind == DefaultKind::kInteger) return text;
      *why = not_valid(value, type);
      return std::nullopt;
    case ArgType::kStr:
      if (value.kind == DefaultKind::kString) return text;
      *why = not_valid(value, type);
      return std::nullopt;
    case ArgType::kIntList:
    case ArgType::kInt64List:
    case ArgType::kFloatList:
    case ArgType::kDoubleList:
    case ArgType::kBoolList:
    case ArgType::kStrList:
    case ArgType::kIntArray:
    case ArgType::kScalarList: {
      if (value.kind != DefaultKind::kList) {
        *why = not_valid(value, type);
        return std::nullopt;
      }
      const ArgType element = *element_type(type);
      std::vector<std::string> items;
      for (size_t i = 0; i < value.items.size(); ++i) {
        std::string item_why;
        const std::optional<std::string> item = cpp_default_value(element, value.items[i], &item_why);
        if (!item) {
          *why = "element " + std::to_string(i + 1) + ": " + item_why;
          return std::nullopt;
        }
        items.push_back(*item);
      }
      return fmt::format("{{{}}}", fmt::join(items, ", "));
    }
    case ArgType::kDataType: {
      const std::optional<std::string_view> e =
          value.kind == DefaultKind::kEnumConstant ? enumerator_of(text, "DataType") : std::nullopt;
      if (e && contains(kDataTypeEnumerators, *e)) return "kforge::DataType::" + std::string(*e);
      *why = "it is not a kforge::DataType enumerator";
      return std::nullopt;
    }
    case ArgType::kDataLayout: {
      const std::optional<std::string_view> e =
          value.kind == DefaultKind::kEnumConstant ? enumerator_of(text, "DataLayout") : std::nullopt;
      if (e && contains(kDataLayoutEnumerators, *e)) return "kforge::DataLayout::" + std::string(*e);
      *why = "it is not a kforge::DataLayout enumerator";
      return std::nullopt;
    }
    case ArgType::kPlace: {
      if (value.kind == DefaultKind::kList && value.items.empty()) return std::string("{}");
      // CPUPlace(), phi::CPUPlace(), GPUPlace(), GPUPlace(0): the runtime's functions of the same names.
      std::string_view call = text;
      const size_t paren = call.find('(');
      std::string_view callee = call.substr(0, paren);
      const size_t sep = callee.rfind("::");
      if (sep != std::string_view::npos) callee = callee.substr(sep + 2);
      if (paren != std::string_view::npos && (callee == "CPUPlace" || callee == "GPUPlace")) {
        std::string args(call.substr(paren));
        std::string arg_why;
        const std::string inner = args.size() >= 2 ? args.substr(1, args.size() - 2) : "";
        if (args.back() == ')' && (inner.empty() || (callee == "GPUPlace" && is_numeric_expression(inner, true, &arg_why)))) {
          return "kforge::" + std::string(callee) + args;
        }
      }
      *why = "it is not {}, CPUPlace() or GPUPlace(n)";
      return std::nullopt;
    }
    default: *why = "parameters of type " + arg_type_name(type) + " take no default"; return std::nullopt;
  }
}

}  // namespace kforge::codegen
