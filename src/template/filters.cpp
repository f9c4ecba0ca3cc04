// Built-in filters, registered through the public extension API. Each follows Jinja 3.1's
// implementation (jinja2/filters.py); signatures are Jinja's, deviations are noted where they exist.
// The filters over sequences and maps are in filters_sequences.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "template/callable.h"
#include "template/env_impl.h"
#include "template/unicode_case.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

namespace {

// The widest indentation `indent` and `tojson` accept: wider is a typo or hostile input, and would multiply the
// size of the text by that much (docs/fuzzing.md, "Limits").
constexpr int64_t kMaxIndentWidth = 1024;

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= '\x1c' && c <= '\x1f');
}
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

/// The input as text without copying it when it already is a string.
std::string_view text_of(const CallArgs& a, const Value& v, std::string& buffer) {
  if (v.is_string()) return v.as_string();
  buffer = a.to_string(v);
  return buffer;
}

/// Python's str.splitlines() for the ASCII line boundaries plus U+0085, U+2028, U+2029.
std::vector<std::string> splitlines(std::string_view s) {
  std::vector<std::string> lines;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    size_t brk = 0;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\r') {
      brk = (i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
    } else if (c == '\n' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e) {
      brk = 1;
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) {
      brk = 2;
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      brk = 3;
    }
    if (brk) {
      lines.emplace_back(s.substr(start, i - start));
      i += brk;
      start = i;
    } else {
      ++i;
    }
  }
  if (start < s.size()) lines.emplace_back(s.substr(start));
  return lines;
}

std::string python_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (count < 0) count = std::numeric_limits<int64_t>::max();
  if (old.empty()) {
    // Python inserts `repl` before every character and at the end.
    const auto chars = utf8_chars(s);
    int64_t done = 0;
    for (std::string_view c : chars) {
      if (done < count) {
        out += repl;
        ++done;
      }
      out += c;
    }
    if (done < count) out += repl;
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (done < count) {
    const size_t hit = s.find(old, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += repl;
    pos = hit + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

// ---- tojson: Python's json.dumps(sort_keys=True) + Jinja's HTML-safe escapes ----

void json_string(std::string_view s, std::string& out) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0x80) {
      len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0F : len == 2 ? c & 0x1F : 0xFFFD;
      for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    i += len;
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '<': out += "\\u003c"; continue;
      case '>': out += "\\u003e"; continue;
      case '&': out += "\\u0026"; continue;
      case '\'': out += "\\u0027"; continue;
      default: break;
    }
    if (cp >= 0x20 && cp < 0x7f) {
      out += static_cast<char>(cp);
    } else if (cp >= 0x10000) {
      const uint32_t v = cp - 0x10000;
      out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    } else {
      out += fmt::format("\\u{:04x}", cp);
    }
  }
  out += '"';
}

void json_value(const CallArgs& a, const Value& v, const std::optional<std::string>& indent, int depth,
                std::string& out) {
  // json.dumps: separators (', ', ': ') without indent, (',', ': ') plus newlines with one.
  auto newline = [&](int d) {
    out += '\n';
    for (int i = 0; i < d; ++i) out += *indent;
  };
  switch (v.kind()) {
    case Value::Kind::kNone: out += "null"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: {
      const double d = v.as_float();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d > 0 ? "Infinity" : "-Infinity";
      else out += format_float(d);
      return;
    }
    case Value::Kind::kString: json_string(v.as_string(), out); return;
    case Value::Kind::kList: {
      const List& items = v.as_list();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += indent ? "," : ", ";
        if (indent) newline(depth + 1);
        json_value(a, items[i], indent, depth + 1, out);
      }
      if (indent) newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::kMap:
    case Value::Kind::kNamespace: {
      const Map& map = v.is_map() ? v.as_map() : v.as_namespace().attrs;
      if (map.empty()) {
        out += "{}";
        return;
      }
      std::vector<const Map::Entry*> entries;
      for (const Map::Entry& e : map) entries.push_back(&e);
      std::stable_sort(entries.begin(), entries.end(), [](const Map::Entry* x, const Map::Entry* y) { return x->first < y->first; });
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += indent ? "," : ", ";
        if (indent) newline(depth + 1);
        json_string(entries[i]->first, out);
        out += ": ";
        json_value(a, entries[i]->second, indent, depth + 1, out);
      }
      if (indent) newline(depth);
      out += '}';
      return;
    }
    case Value::Kind::kUndefined: a.to_string(v); return;  // reports it
    default: a.fail(fmt::format("{} cannot be converted to JSON", a_type(v)));
  }
}

std::optional<int64_t> parse_python_int(std::string_view s, int base) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.size() >= 2 && s[0] == '0') {
    const char p = ascii_lower(s[1]);
    const int prefix_base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefix_base && (base == 0 || base == prefix_base)) {
      base = prefix_base;
      s.remove_prefix(2);
      if (!s.empty() && s[0] == '_') s.remove_prefix(1);
    }
  }
  if (base == 0) {
    base = 10;
    if (s.size() > 1 && s[0] == '0' && s.find_first_not_of("0_") != std::string_view::npos) return std::nullopt;
  }
  if (s.empty() || s.front() == '_' || s.back() == '_') return std::nullopt;
  __int128 value = 0;
  char prev = 0;
  for (char c : s) {
    if (c == '_') {
      if (prev == '_') return std::nullopt;
      prev = c;
      continue;
    }
    prev = c;
    int d = c >= '0' && c <= '9' ? c - '0' : (ascii_lower(c) >= 'a' && ascii_lower(c) <= 'z') ? ascii_lower(c) - 'a' + 10 : 99;
    if (d >= base) return std::nullopt;
    value = value * base + d;
    if (value > static_cast<__int128>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
  }
  if (negative) value = -value;
  if (value > std::numeric_limits<int64_t>::max() || value < std::numeric_limits<int64_t>::min()) return std::nullopt;
  return static_cast<int64_t>(value);
}

std::optional<double> parse_python_float(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  std::string t;
  char prev = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      const bool digit_before = prev >= '0' && prev <= '9';
      const bool digit_after = i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9';
      if (!digit_before || !digit_after) return std::nullopt;
      prev = c;
      continue;
    }
    t += ascii_lower(c);
    prev = c;
  }
  std::string_view body = t;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity") return negative ? -HUGE_VAL : HUGE_VAL;
  if (body == "nan") return std::nan("");
  if (body.empty() || body.find_first_not_of("0123456789.e+-") != std::string_view::npos) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return d;
}

}  // namespace

void register_builtin_filters(Environment& env) {
  const BuiltinOptions undefined_ok{.accepts_undefined = true};
  register_sequence_filters(env);

  auto default_filter = [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_undefined() || (truthy(a[1]) && !truthy(v))) return a[0];
    return v;
  };
  env.register_filter("default", {{"default_value", Value("")}, {"boolean", Value(false)}}, default_filter, undefined_ok);
  env.register_filter("d", {{"default_value", Value("")}, {"boolean", Value(false)}}, default_filter, undefined_ok);

  auto length = [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_string()) return Value(static_cast<int64_t>(utf8_length(v.as_string())));
    if (v.is_list() || v.is_map()) return Value(static_cast<int64_t>(v.size()));
    if (v.is_namespace()) return Value(static_cast<int64_t>(v.as_namespace().attrs.size()));
    a.fail(fmt::format("{} has no length", a_type(v)));
  };
  env.register_filter("length", {}, length);
  env.register_filter("count", {}, length);
  env.register_filter("upper", {}, [](const CallArgs& a) -> Value {
    std::string buffer;
    return Value(utf8_upper(text_of(a, a.input(), buffer)));
  });
  env.register_filter("lower", {}, [](const CallArgs& a) -> Value {
    std::string buffer;
    return Value(utf8_lower(text_of(a, a.input(), buffer)));
  });
  env.register_filter("capitalize", {}, [](const CallArgs& a) -> Value {
    std::string buffer;
    return Value(utf8_capitalize(text_of(a, a.input(), buffer)));
  });
  env.register_filter("title", {}, [](const CallArgs& a) -> Value {
    // Words start after '-', whitespace, '(', '{', '[' or '<' (Jinja's _word_beginning_split_re).
    const std::string s = a.to_string(a.input());
    std::string out;
    bool word_start = true;
    size_t i = 0;
    while (i < s.size()) {
      const size_t begin = i;
      const uint32_t cp = utf8_decode(s, i);
      const bool sep = cp == '-' || (cp < 0x80 && is_ascii_space(static_cast<char>(cp))) || cp == '(' || cp == '{' ||
                       cp == '[' || cp == '<';
      if (sep) {
        out.append(s, begin, i - begin);
        word_start = true;
      } else {
        out += word_start ? utf8_upper(std::string_view(s).substr(begin, i - begin))
                          : utf8_lower(std::string_view(s).substr(begin, i - begin));
        word_start = false;
      }
    }
    return Value(std::move(out));
  });
  env.register_filter("trim", {{"chars", Value()}}, [](const CallArgs& a) -> Value {
    std::string buffer;
    const std::string_view s = text_of(a, a.input(), buffer);
    size_t b = 0, e = s.size();
    if (a[0].is_none()) {
      while (b < e && is_ascii_space(s[b])) ++b;
      while (e > b && is_ascii_space(s[e - 1])) --e;
    } else {
      const std::string chars = a.to_string(a[0]);
      while (b < e && chars.find(s[b]) != std::string::npos) ++b;
      while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
    }
    return Value(s.substr(b, e - b));
  });
  env.register_filter("replace", {"old", "new", {"count", Value()}}, [](const CallArgs& a) -> Value {
    int64_t count = -1;
    if (!a[2].is_none()) {
      if (!a[2].is_int()) a.fail(fmt::format("'count' must be an integer, not {}", a_type(a[2])));
      count = a[2].as_int();
    }
    std::string b0, b1, b2;
    return Value(python_replace(text_of(a, a.input(), b0), text_of(a, a[0], b1), text_of(a, a[1], b2), count));
  });
  env.register_filter("indent", {{"width", Value(4)}, {"first", Value(false)}, {"blank", Value(false)}},
                      [](const CallArgs& a) -> Value {
    std::string indention;
    if (a[0].is_string()) {
      indention = a[0].as_string();
    } else if (a[0].is_int()) {
      indention.assign(static_cast<size_t>(std::clamp<int64_t>(a[0].as_int(), 0, kMaxIndentWidth + 1)), ' ');
    } else {
      a.fail(fmt::format("'width' must be an integer or a string, not {}", a_type(a[0])));
    }
    if (indention.size() > kMaxIndentWidth) a.fail(fmt::format("'width' must be at most {}", kMaxIndentWidth));
    std::string s = a.to_string(a.input()) + "\n";  // Jinja's splitlines quirk
    const std::vector<std::string> lines = splitlines(s);
    if (s.size() + lines.size() * indention.size() > a.env().options().max_text_bytes) {
      a.fail(fmt::format("the indented text would be larger than the limit of {} bytes", a.env().options().max_text_bytes));
    }
    std::string rv;
    if (truthy(a[2])) {
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i) rv += "\n" + indention;
        rv += lines[i];
      }
    } else {
      rv = lines.empty() ? "" : lines[0];
      for (size_t i = 1; i < lines.size(); ++i) {
        rv += "\n";
        if (!lines[i].empty()) rv += indention;
        rv += lines[i];
      }
    }
    if (truthy(a[1])) rv = indention + rv;
    return Value(std::move(rv));
  });

  env.register_filter("string", {}, [](const CallArgs& a) -> Value {
    if (a.input().is_string()) return a.input();
    return Value(a.to_string(a.input()));
  });
  env.register_filter("int", {{"default", Value(0)}, {"base", Value(10)}}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_int()) return v;
    if (v.is_bool()) return Value(static_cast<int64_t>(v.as_bool()));
    auto from_double = [&](double d) -> Value {
      if (std::isnan(d) || std::isinf(d)) return a[0];
      const double t = std::trunc(d);
      if (t < -9.2233720368547758e18 || t >= 9.2233720368547758e18) a.fail("integer too large for 64 bits");
      return Value(static_cast<int64_t>(t));
    };
    if (v.is_float()) return from_double(v.as_float());
    if (v.is_string()) {
      if (!a[1].is_int()) return a[0];
      if (auto i = parse_python_int(v.as_string(), static_cast<int>(a[1].as_int()))) return Value(*i);
      if (auto d = parse_python_float(v.as_string())) return from_double(*d);
    }
    return a[0];
  });
  env.register_filter("float", {{"default", Value(0.0)}}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_float()) return v;
    if (v.is_int() || v.is_bool()) return Value(v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : static_cast<double>(v.as_int()));
    if (v.is_string()) {
      if (auto d = parse_python_float(v.as_string())) return Value(*d);
    }
    return a[0];
  });
  env.register_filter("abs", {}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    if (v.is_bool()) return Value(static_cast<int64_t>(v.as_bool()));
    if (v.is_int()) {
      if (v.as_int() == std::numeric_limits<int64_t>::min()) a.fail("integer overflow in 'abs'");
      return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    a.fail(fmt::format("bad operand type for abs(): {}", v.type_name()));
  });
  env.register_filter("tojson", {{"indent", Value()}}, [](const CallArgs& a) -> Value {
    std::optional<std::string> indent;
    if (a[0].is_int()) indent = std::string(static_cast<size_t>(std::clamp<int64_t>(a[0].as_int(), 0, kMaxIndentWidth + 1)), ' ');
    else if (a[0].is_string()) indent = a[0].as_string();
    else if (!a[0].is_none()) a.fail(fmt::format("'indent' must be an integer or a string, not {}", a_type(a[0])));
    if (indent && indent->size() > kMaxIndentWidth) a.fail(fmt::format("'indent' must be at most {}", kMaxIndentWidth));
    std::string out;
    json_value(a, a.input(), indent, 0, out);
    return Value(std::move(out));
  });
}

}  // namespace kforge::tmpl
