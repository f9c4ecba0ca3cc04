// Internal operations on Values with Python/Jinja semantics: float repr, truthiness, equality,
// ordering, UTF-8 code point helpers. Not part of the public API.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "template/value.h"

namespace kforge::tmpl {

namespace ast {
struct Expr;
}

/// Why a value is undefined. Creating one is cheap (`x is defined` does it all the time); the text of
/// the diagnostic (path, existing keys, did-you-mean) is only worked out if the value is consumed.
struct UndefinedInfo {
  enum class Cause : uint8_t {
    kPlain,      // `reason` (or `path`) says it all
    kVariable,   // `path` is the variable name
    kAttribute,  // `key` (a string) is missing in `container`
    kIndex,      // `container[key]` does not exist
  };
  Cause cause = Cause::kPlain;
  std::string path;                      // kPlain/kVariable; else the container's path when object_expr is null
  const ast::Expr* object_expr = nullptr;  // the container's expression, to name it lazily
  Value container;
  Value key;
  SourceLoc loc;         // where it was looked up
  std::string reason;    // replaces "'path' is undefined" when set
  std::vector<std::string> notes;  // extra notes
  /// Jinja's plain Undefined rather than StrictUndefined: what `a if c` yields when c is false (Jinja
  /// uses the lenient Undefined there whatever the environment says). Prints as '', is falsy,
  /// iterates as empty; anything else is still an error.
  bool lenient = false;
};

inline bool is_lenient_undefined(const Value& v) {
  return v.is_undefined() && v.object() && v.as_undefined().lenient;
}

/// Whether arithmetic takes `v` as a number: an integer, a float or a boolean (Python's bool is an int).
inline bool is_numeric(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }
/// A number's value as an integer (an integer or a boolean) or as a double (any number), for arithmetic.
inline int64_t to_int(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int(); }
inline double to_double(const Value& v) { return v.is_float() ? v.as_float() : static_cast<double>(to_int(v)); }

/// The type with an article for messages: "an integer", "a list", "none".
std::string a_type(const Value& v);

/// Python repr() of a float: shortest round-trip digits, '.0' kept, exponent form outside 1e-4..1e16.
std::string format_float(double d);
/// Python repr() of any value (strings quoted with Python's rules), for `string` of containers and
/// AST dumps. Booleans in containers print as Python does (True/False).
std::string python_repr(const Value& v);

/// Jinja truthiness; undefined must be handled by the caller.
bool truthy(const Value& v);
/// Python ==: 1 == 1.0 == true, lists/maps elementwise (maps ignore order).
bool values_equal(const Value& a, const Value& b);
/// Python ordering for numbers, strings (by code point = UTF-8 byte order), lists (lexicographic).
/// Returns nullopt when the types cannot be ordered.
std::optional<int> compare_values(const Value& a, const Value& b);

// UTF-8 as code points, as Python's str does.
size_t utf8_length(std::string_view s);
/// Splits into code points.
std::vector<std::string_view> utf8_chars(std::string_view s);

}  // namespace kforge::tmpl
