#include "passes/attr_values.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace kforge::passes {

using ir::AttrKind;
using ir::Attribute;
using opdef::ArgType;

namespace {

std::string describe(const Attribute& a) {
  const std::string text = ir::to_string(a);
  if (text.size() > 40) return fmt::format("{}", ir::attr_kind_name(a.kind));
  return fmt::format("{} {}", ir::attr_kind_name(a.kind), text);
}

std::optional<ArgType> list_element_type(ArgType type) {
  switch (type) {
    case ArgType::kIntList: return ArgType::kInt;
    case ArgType::kInt64List: return ArgType::kInt64;
    case ArgType::kFloatList: return ArgType::kFloat;
    case ArgType::kDoubleList: return ArgType::kDouble;
    case ArgType::kBoolList: return ArgType::kBool;
    case ArgType::kStrList: return ArgType::kStr;
    case ArgType::kScalarList: return ArgType::kScalar;
    default: return std::nullopt;
  }
}

std::string strip_place(std::string_view s) {
  if (s.starts_with("Place(") && s.ends_with(")")) s = s.substr(6, s.size() - 7);
  return std::string(s);
}

/// The text after the last "::" (DataType::FLOAT32 -> FLOAT32).
std::string_view unqualified(std::string_view s) {
  const size_t colons = s.rfind("::");
  return colons == std::string_view::npos ? s : s.substr(colons + 2);
}

std::optional<ir::DataType> dtype_from_text(std::string_view text) {
  std::string lower;
  for (char c : unqualified(text)) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.starts_with("paddle.")) lower = lower.substr(7);
  if (auto d = ir::parse_dtype_name(lower)) return d;
  if (auto d = ir::parse_pir_element_name(lower)) return d;
  if (lower == "float") return ir::DataType::kFloat32;
  if (lower == "double") return ir::DataType::kFloat64;
  return std::nullopt;
}

Attribute scalar_for(ArgType type, const Attribute& a) {
  // Guessed numbers take the kind of the Scalar's declared C++ type (Paddle's opmaker data_type).
  const bool floating = a.is_floating();
  const double f = floating ? a.float_value : static_cast<double>(a.int_value);
  switch (type) {
    case ArgType::kScalarBool: return Attribute::boolean(a.kind == AttrKind::kBool ? a.bool_value : f != 0);
    case ArgType::kScalarInt: return Attribute::int32(static_cast<int32_t>(floating ? std::trunc(f) : a.int_value));
    case ArgType::kScalarInt64: return Attribute::int64(floating ? static_cast<int64_t>(f) : a.int_value);
    case ArgType::kScalarDouble: return Attribute::float64(f);
    case ArgType::kScalar:
      // An untyped Scalar keeps what the text says: integers stay integers (an axis), others are float.
      if (a.kind == AttrKind::kBool) return Attribute::boolean(a.bool_value);
      if (!floating) return Attribute::int64(a.int_value);
      return Attribute::float32(static_cast<float>(f));
    default: return Attribute::float32(static_cast<float>(f));
  }
}

}  // namespace

std::string expected_kind_text(ArgType type) {
  switch (type) {
    case ArgType::kBool: return "a bool";
    case ArgType::kInt:
    case ArgType::kInt32: return "an int32";
    case ArgType::kInt64:
    case ArgType::kLong:
    case ArgType::kSizeT: return "an int64";
    case ArgType::kFloat: return "a float";
    case ArgType::kDouble: return "a double";
    case ArgType::kStr: return "a string";
    case ArgType::kIntArray: return "an IntArray (list of integers)";
    case ArgType::kDataType: return "a DataType";
    case ArgType::kDataLayout: return "a DataLayout";
    case ArgType::kPlace: return "a Place";
    case ArgType::kScalarList: return "a list of scalars";
    case ArgType::kTensor:
    case ArgType::kTensorList: return "a tensor";
    default: break;
  }
  if (opdef::is_scalar_type(type)) return "a scalar (bool or number)";
  return fmt::format("a list ({})", opdef::arg_type_info(type).spelling);
}

std::optional<Attribute> convert_attribute(const Attribute& a, ArgType type, std::string* why) {
  auto fail = [&]() -> std::optional<Attribute> {
    if (why) *why = fmt::format("expected {}, got {}", expected_kind_text(type), describe(a));
    return std::nullopt;
  };
  auto located = [&](Attribute out) -> std::optional<Attribute> {
    out.loc = a.loc;
    return out;
  };
  const bool is_text = a.kind == AttrKind::kString;
  switch (type) {
    case ArgType::kBool:
      if (a.kind == AttrKind::kBool) return located(Attribute::boolean(a.bool_value));
      return fail();
    case ArgType::kInt:
    case ArgType::kInt32:
      if (a.is_integer() && a.int_value >= INT32_MIN && a.int_value <= INT32_MAX) {
        return located(Attribute::int32(static_cast<int32_t>(a.int_value)));
      }
      return fail();
    case ArgType::kInt64:
    case ArgType::kLong:
    case ArgType::kSizeT:
      if (a.is_integer()) return located(Attribute::int64(a.int_value));
      return fail();
    case ArgType::kFloat:
      if (a.is_floating()) return located(Attribute::float32(static_cast<float>(a.float_value)));
      if (a.is_integer()) return located(Attribute::float32(static_cast<float>(a.int_value)));
      return fail();
    case ArgType::kDouble:
      if (a.is_floating()) return located(Attribute::float64(a.float_value));
      if (a.is_integer()) return located(Attribute::float64(static_cast<double>(a.int_value)));
      return fail();
    case ArgType::kStr:
      if (is_text) return located(Attribute::string(a.text));
      return fail();
    case ArgType::kIntArray:
      if (a.kind == AttrKind::kIntArray) return located(Attribute::int_array(a.ints));
      if (a.kind == AttrKind::kArray && a.is_int_list()) return located(Attribute::int_array(a.as_int_list()));
      return fail();
    case ArgType::kDataType:
      if (a.kind == AttrKind::kDataType) return located(Attribute::data_type(a.dtype));
      if (is_text) {
        if (auto d = dtype_from_text(a.text)) return located(Attribute::data_type(*d));
      }
      return fail();
    case ArgType::kDataLayout:
      if (a.kind == AttrKind::kDataLayout) return located(Attribute::data_layout(a.layout));
      if (is_text) {
        if (auto l = ir::parse_layout_name(unqualified(a.text))) return located(Attribute::data_layout(*l));
      }
      return fail();
    case ArgType::kPlace:
      if (a.kind == AttrKind::kPlace) return located(Attribute::place_attr(a.place));
      if (is_text) {
        if (auto p = ir::parse_place_body(strip_place(a.text))) return located(Attribute::place_attr(*p));
      }
      return fail();
    case ArgType::kTensor:
    case ArgType::kTensorList: return fail();
    default: break;
  }
  if (opdef::is_scalar_type(type)) {
    switch (a.kind) {
      case AttrKind::kBool:
      case AttrKind::kInt32:
      case AttrKind::kInt64:
      case AttrKind::kIndex:
      case AttrKind::kFloat:
      case AttrKind::kDouble:
        if (a.kind_guessed) return located(scalar_for(type, a));
        if (a.kind == AttrKind::kIndex) return located(Attribute::int64(a.int_value));
        {
          Attribute out = a;
          out.kind_guessed = false;
          return out;
        }
      case AttrKind::kScalar:
      case AttrKind::kComplex64:
      case AttrKind::kComplex128: {
        Attribute out = a;
        out.kind_guessed = false;
        return out;
      }
      default: return fail();
    }
  }
  if (auto element = list_element_type(type)) {
    std::vector<Attribute> items;
    if (a.kind == AttrKind::kIntArray) {
      for (int64_t v : a.ints) items.push_back(Attribute::int64(v));
    } else if (a.kind == AttrKind::kArray) {
      items = a.elements;
    } else {
      return fail();
    }
    std::vector<Attribute> converted;
    for (const Attribute& item : items) {
      std::string inner;
      auto c = convert_attribute(item, *element, &inner);
      if (!c) {
        if (why) *why = fmt::format("expected {}: element {}", expected_kind_text(type), inner);
        return std::nullopt;
      }
      converted.push_back(std::move(*c));
    }
    return located(Attribute::array(std::move(converted)));
  }
  return fail();
}

// ---- defaults ------------------------------------------------------------------------------------------------

namespace {

/// A number from a C++ default expression: integer or floating.
struct Number {
  bool floating = false;
  int64_t i = 0;
  double f = 0;
  double as_double() const { return floating ? f : static_cast<double>(i); }
};

/// Evaluates the arithmetic subset of C++ defaults: literals with suffixes, named limits, unary -/+,
/// + - * / << >> and parentheses.
class NumberParser {
 public:
  explicit NumberParser(std::string_view text) : s_(text) {}

  std::optional<Number> parse() {
    auto n = sum();
    skip();
    if (!n || pos_ != s_.size()) return std::nullopt;
    return n;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view op) {
    skip();
    if (s_.substr(pos_, op.size()) == op) {
      pos_ += op.size();
      return true;
    }
    return false;
  }
  std::optional<Number> sum() {
    auto lhs = product();
    while (lhs) {
      if (eat("+")) {
        auto r = product();
        if (!r) return std::nullopt;
        lhs = combine(*lhs, *r, '+');
      } else if (eat("-")) {
        auto r = product();
        if (!r) return std::nullopt;
        lhs = combine(*lhs, *r, '-');
      } else {
        break;
      }
    }
    return lhs;
  }
  std::optional<Number> product() {
    auto lhs = unary();
    while (lhs) {
      char op = 0;
      if (eat("<<")) op = 'l';
      else if (eat(">>")) op = 'r';
      else if (eat("*")) op = '*';
      else if (eat("/")) op = '/';
      else break;
      auto r = unary();
      if (!r) return std::nullopt;
      lhs = combine(*lhs, *r, op);
    }
    return lhs;
  }
  std::optional<Number> unary() {
    if (eat("-")) {
      auto n = unary();
      if (n) {
        n->i = -n->i;
        n->f = -n->f;
      }
      return n;
    }
    if (eat("+")) return unary();
    if (eat("(")) {
      auto n = sum();
      if (!n || !eat(")")) return std::nullopt;
      return n;
    }
    return atom();
  }
  std::optional<Number> atom() {
    skip();
    const size_t begin = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                s_[pos_] == '_' || s_[pos_] == ':' ||
                                ((s_[pos_] == '-' || s_[pos_] == '+') && pos_ > begin &&
                                 (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E') &&
                                 !(s_.substr(begin, 2) == "0x" || s_.substr(begin, 2) == "0X")))) {
      ++pos_;
    }
    std::string word(s_.substr(begin, pos_ - begin));
    if (word.empty()) return std::nullopt;
    word = std::string(unqualified(word));
    if (word == "INT_MAX" || word == "INT32_MAX") return Number{false, INT32_MAX, 0};
    if (word == "INT_MIN" || word == "INT32_MIN") return Number{false, INT32_MIN, 0};
    if (word == "INT64_MAX") return Number{false, INT64_MAX, 0};
    if (word == "INT64_MIN") return Number{false, INT64_MIN, 0};
    if (word == "FLT_MAX") return Number{true, 0, std::numeric_limits<float>::max()};
    if (word == "DBL_MAX") return Number{true, 0, std::numeric_limits<double>::max()};
    if (!std::isdigit(static_cast<unsigned char>(word[0])) && word[0] != '.') return std::nullopt;
    const bool hex = word.starts_with("0x") || word.starts_with("0X");
    const bool floating = !hex && word.find_first_of(".eE") != std::string::npos;
    // Drop the suffixes (f, F, l, L, u, U) of C++ literals.
    while (!word.empty() && std::string_view("fFlLuU").find(word.back()) != std::string_view::npos &&
           !(hex && std::isxdigit(static_cast<unsigned char>(word.back())))) {
      word.pop_back();
    }
    char* end = nullptr;
    if (floating) {
      const double v = std::strtod(word.c_str(), &end);
      if (end != word.c_str() + word.size()) return std::nullopt;
      return Number{true, 0, v};
    }
    const long long v = std::strtoll(word.c_str(), &end, 0);
    if (end != word.c_str() + word.size()) return std::nullopt;
    return Number{false, static_cast<int64_t>(v), 0};
  }
  static Number combine(Number a, Number b, char op) {
    if (a.floating || b.floating) {
      const double x = a.as_double(), y = b.as_double();
      switch (op) {
        case '+': return {true, 0, x + y};
        case '-': return {true, 0, x - y};
        case '*': return {true, 0, x * y};
        case '/': return {true, 0, x / y};
        default: return {true, 0, x};
      }
    }
    switch (op) {
      case '+': return {false, a.i + b.i, 0};
      case '-': return {false, a.i - b.i, 0};
      case '*': return {false, a.i * b.i, 0};
      case '/': return {false, b.i == 0 ? 0 : a.i / b.i, 0};
      case 'l': return {false, static_cast<int64_t>(static_cast<uint64_t>(a.i) << (b.i & 63)), 0};
      case 'r': return {false, a.i >> (b.i & 63), 0};
      default: return a;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

std::optional<std::string> unquote(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    if (text[i] != '"') return std::nullopt;
    ++i;
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        const char c = text[i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        out += text[i];
      }
      ++i;
    }
    if (i == text.size()) return std::nullopt;
    ++i;  // adjacent literals concatenate
  }
  return out;
}

/// The default as an untyped attribute, to be converted by convert_attribute.
std::optional<Attribute> raw_default(const opdef::DefaultValue& v, ArgType type) {
  using opdef::DefaultKind;
  const std::string& t = v.text;
  switch (v.kind) {
    case DefaultKind::kBool: return Attribute::boolean(t == "true");
    case DefaultKind::kString: {
      auto s = unquote(t);
      if (!s) return std::nullopt;
      return Attribute::string(*s);
    }
    case DefaultKind::kList: {
      std::vector<Attribute> items;
      const ArgType element = list_element_type(type).value_or(ArgType::kInt64);
      for (const opdef::DefaultValue& item : v.items) {
        auto a = raw_default(item, element);
        if (!a) return std::nullopt;
        items.push_back(std::move(*a));
      }
      if (type == ArgType::kPlace && items.empty()) return Attribute::place_attr({});
      return Attribute::array(std::move(items));
    }
    default: break;
  }
  if (type == ArgType::kDataType || type == ArgType::kDataLayout) return Attribute::string(t);
  if (type == ArgType::kPlace) {
    const std::string_view name = unqualified(t);
    if (name == "CPUPlace()") return Attribute::place_attr({ir::AllocationType::kCpu, 0, {}});
    if (name == "GPUPlace()") return Attribute::place_attr({ir::AllocationType::kGpu, 0, {}});
    if (name == "Place()") return Attribute::place_attr({});
    return std::nullopt;
  }
  if (t == "true" || t == "false") return Attribute::boolean(t == "true");
  auto n = NumberParser(t).parse();
  if (!n) return std::nullopt;
  return n->floating ? Attribute::float64(n->f) : Attribute::int64(n->i);
}

}  // namespace

std::optional<Attribute> default_attribute(const opdef::DefaultValue& value, ArgType type, std::string* why) {
  std::optional<Attribute> raw = raw_default(value, type);
  if (!raw) {
    if (why) *why = fmt::format("kforge cannot evaluate the default '{}'", value.text);
    return std::nullopt;
  }
  raw->kind_guessed = true;  // C++ literals say little about the PIR kind: convert like untyped text
  for (Attribute& e : raw->elements) e.kind_guessed = true;
  raw->loc = value.loc;
  return convert_attribute(*raw, type, why);
}

// ---- constants -----------------------------------------------------------------------------------------------

namespace {

ScalarConstant scalar_constant(const Attribute& a) {
  ScalarConstant s;
  switch (a.kind) {
    case AttrKind::kBool:
      s = {ir::DataType::kBool, false, 0, a.bool_value ? 1 : 0};
      break;
    case AttrKind::kInt32: s = {ir::DataType::kInt32, false, 0, a.int_value}; break;
    case AttrKind::kInt64:
    case AttrKind::kIndex: s = {ir::DataType::kInt64, false, 0, a.int_value}; break;
    case AttrKind::kFloat: s = {ir::DataType::kFloat32, true, a.float_value, 0}; break;
    case AttrKind::kDouble: s = {ir::DataType::kFloat64, true, a.float_value, 0}; break;
    case AttrKind::kComplex64: s = {ir::DataType::kComplex64, true, a.float_value, 0}; break;
    case AttrKind::kComplex128: s = {ir::DataType::kComplex128, true, a.float_value, 0}; break;
    case AttrKind::kScalar:
      s.dtype = a.dtype;
      if (ir::is_floating(a.dtype) || ir::is_complex(a.dtype)) {
        s.is_floating = true;
        s.float_value = a.float_value;
      } else {
        s.is_floating = false;
        s.int_value = a.dtype == ir::DataType::kBool ? (a.bool_value ? 1 : 0) : a.int_value;
      }
      break;
    default: break;
  }
  return s;
}

}  // namespace

AttrConstant to_constant(const Attribute& a, ArgType type) {
  AttrConstant c;
  c.type = type;
  switch (type) {
    case ArgType::kBool: c.bool_value = a.bool_value; return c;
    case ArgType::kInt:
    case ArgType::kInt32:
    case ArgType::kInt64:
    case ArgType::kLong:
    case ArgType::kSizeT: c.int_value = a.int_value; return c;
    case ArgType::kFloat:
    case ArgType::kDouble: c.float_value = a.is_floating() ? a.float_value : static_cast<double>(a.int_value); return c;
    case ArgType::kStr: c.string_value = a.text; return c;
    case ArgType::kIntArray:
    case ArgType::kIntList:
    case ArgType::kInt64List: c.ints = a.as_int_list(); return c;
    case ArgType::kFloatList:
    case ArgType::kDoubleList:
      for (const Attribute& e : a.elements) c.floats.push_back(e.is_floating() ? e.float_value : static_cast<double>(e.int_value));
      return c;
    case ArgType::kBoolList:
      for (const Attribute& e : a.elements) c.bools.push_back(e.bool_value);
      return c;
    case ArgType::kStrList:
      for (const Attribute& e : a.elements) c.strings.push_back(e.text);
      return c;
    case ArgType::kScalarList:
      for (const Attribute& e : a.elements) c.scalars.push_back(scalar_constant(e));
      return c;
    case ArgType::kDataType: c.dtype = a.dtype; return c;
    case ArgType::kDataLayout: c.layout = a.layout; return c;
    case ArgType::kPlace: c.place = a.place; return c;
    default: break;
  }
  if (opdef::is_scalar_type(type)) c.scalar = scalar_constant(a);
  return c;
}

}  // namespace kforge::passes
