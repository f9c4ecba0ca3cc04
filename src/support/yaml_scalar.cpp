#include "support/yaml_scalar.h"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>

namespace kforge::yaml {

namespace {

bool is_dec(char c) { return c >= '0' && c <= '9'; }
bool is_oct(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool all_digits(std::string_view s, bool (*digit)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!digit(c)) return false;
  }
  return true;
}

/// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_core_float(std::string_view s) {
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_dec(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_dec(s[i])) ++i, ++frac_digits;
    if (int_digits == 0 && frac_digits == 0) return false;
  } else if (int_digits == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_dec(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

/// An int in `base` from `digits` (for base 10 with its sign), and its value as a double.
CoreScalar core_int(std::string_view text, std::string_view digits, int base) {
  CoreScalar r;
  r.kind = CoreKind::kInt;
  const std::string d(digits);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(d.c_str(), &end, base);
  if (errno == ERANGE) {
    r.out_of_range = true;
  } else {
    r.int_value = static_cast<int64_t>(v);
  }
  if (base == 8) {
    // strtod reads decimal and hex only; an octal int out of range is rounded digit by digit.
    double f = 0;
    for (char c : digits) f = f * 8 + (c - '0');
    r.float_value = r.out_of_range ? f : static_cast<double>(r.int_value);
  } else {
    r.float_value = std::strtod(std::string(text).c_str(), nullptr);  // "0x.." is hex to strtod too
  }
  return r;
}

}  // namespace

CoreScalar resolve_core_scalar(std::string_view s) {
  CoreScalar r;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    r.kind = CoreKind::kNull;
    return r;
  }
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    r.kind = CoreKind::kBool;
    r.bool_value = s[0] == 't' || s[0] == 'T';
    return r;
  }
  const size_t sign = s[0] == '-' || s[0] == '+' ? 1 : 0;
  if (all_digits(s.substr(sign), is_dec)) return core_int(s, s, 10);
  if (s.size() > 2 && s[0] == '0' && s[1] == 'o' && all_digits(s.substr(2), is_oct)) return core_int(s, s.substr(2), 8);
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x' && all_digits(s.substr(2), is_hex)) return core_int(s, s.substr(2), 16);
  if (is_core_float(s)) {
    r.kind = CoreKind::kFloat;
    r.float_value = std::strtod(std::string(s).c_str(), nullptr);
    return r;
  }
  const std::string_view body = s.substr(sign);
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    r.kind = CoreKind::kFloat;
    r.float_value = s[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return r;
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    r.kind = CoreKind::kFloat;
    r.float_value = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  return r;
}

}  // namespace kforge::yaml
