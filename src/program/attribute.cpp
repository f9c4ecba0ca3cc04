#include "program/attribute.h"

#include <fmt/format.h>

#include <cmath>

namespace kforge::ir {

std::string_view attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kNull: return "null";
    case AttrKind::kBool: return "bool";
    case AttrKind::kInt32: return "int32";
    case AttrKind::kInt64: return "int64";
    case AttrKind::kIndex: return "index";
    case AttrKind::kFloat: return "float";
    case AttrKind::kDouble: return "double";
    case AttrKind::kComplex64: return "complex64";
    case AttrKind::kComplex128: return "complex128";
    case AttrKind::kString: return "str";
    case AttrKind::kTensorName: return "tensor_name";
    case AttrKind::kArray: return "array";
    case AttrKind::kType: return "type";
    case AttrKind::kPointer: return "pointer";
    case AttrKind::kDataType: return "DataType";
    case AttrKind::kPlace: return "Place";
    case AttrKind::kDataLayout: return "DataLayout";
    case AttrKind::kIntArray: return "IntArray";
    case AttrKind::kScalar: return "Scalar";
    case AttrKind::kOpaque: return "opaque";
  }
  return "null";
}

namespace {

Attribute of_kind(AttrKind kind) {
  Attribute a;
  a.kind = kind;
  return a;
}

}  // namespace

Attribute Attribute::null() { return of_kind(AttrKind::kNull); }

Attribute Attribute::boolean(bool v) {
  Attribute a = of_kind(AttrKind::kBool);
  a.bool_value = v;
  return a;
}

Attribute Attribute::int32(int32_t v) {
  Attribute a = of_kind(AttrKind::kInt32);
  a.int_value = v;
  return a;
}

Attribute Attribute::int64(int64_t v) {
  Attribute a = of_kind(AttrKind::kInt64);
  a.int_value = v;
  return a;
}

Attribute Attribute::index(int64_t v) {
  Attribute a = of_kind(AttrKind::kIndex);
  a.int_value = v;
  return a;
}

Attribute Attribute::float32(float v) {
  Attribute a = of_kind(AttrKind::kFloat);
  a.float_value = v;
  return a;
}

Attribute Attribute::float64(double v) {
  Attribute a = of_kind(AttrKind::kDouble);
  a.float_value = v;
  return a;
}

Attribute Attribute::complex(AttrKind kind, double re, double im) {
  Attribute a = of_kind(kind);
  if (kind == AttrKind::kComplex64) {
    re = static_cast<float>(re);
    im = static_cast<float>(im);
  }
  a.float_value = re;
  a.imag_value = im;
  return a;
}

Attribute Attribute::string(std::string v) {
  Attribute a = of_kind(AttrKind::kString);
  a.text = std::move(v);
  return a;
}

Attribute Attribute::tensor_name(std::string v) {
  Attribute a = of_kind(AttrKind::kTensorName);
  a.text = std::move(v);
  return a;
}

Attribute Attribute::array(std::vector<Attribute> v) {
  Attribute a = of_kind(AttrKind::kArray);
  a.elements = std::move(v);
  return a;
}

Attribute Attribute::type_attr(Type v) {
  Attribute a = of_kind(AttrKind::kType);
  a.type = std::move(v);
  return a;
}

Attribute Attribute::pointer(std::string v) {
  Attribute a = of_kind(AttrKind::kPointer);
  a.text = std::move(v);
  return a;
}

Attribute Attribute::data_type(DataType v) {
  Attribute a = of_kind(AttrKind::kDataType);
  a.dtype = v;
  return a;
}

Attribute Attribute::place_attr(Place v) {
  Attribute a = of_kind(AttrKind::kPlace);
  a.place = std::move(v);
  return a;
}

Attribute Attribute::data_layout(DataLayout v) {
  Attribute a = of_kind(AttrKind::kDataLayout);
  a.layout = v;
  return a;
}

Attribute Attribute::int_array(std::vector<int64_t> v) {
  Attribute a = of_kind(AttrKind::kIntArray);
  a.ints = std::move(v);
  return a;
}

Attribute Attribute::scalar_int(DataType dtype, int64_t v) {
  Attribute a = of_kind(AttrKind::kScalar);
  a.dtype = dtype;
  a.int_value = v;
  return a;
}

Attribute Attribute::scalar_float(DataType dtype, double v) {
  Attribute a = of_kind(AttrKind::kScalar);
  a.dtype = dtype;
  a.float_value = dtype == DataType::kFloat32 ? static_cast<float>(v) : v;
  return a;
}

Attribute Attribute::scalar_bool(bool v) {
  Attribute a = of_kind(AttrKind::kScalar);
  a.dtype = DataType::kBool;
  a.bool_value = v;
  return a;
}

Attribute Attribute::scalar_complex(DataType dtype, double re, double im) {
  Attribute a = of_kind(AttrKind::kScalar);
  a.dtype = dtype;
  a.float_value = re;
  a.imag_value = im;
  return a;
}

Attribute Attribute::opaque(std::string source_text) {
  Attribute a = of_kind(AttrKind::kOpaque);
  a.text = std::move(source_text);
  return a;
}

bool Attribute::is_int_list() const {
  if (kind == AttrKind::kIntArray) return true;
  if (kind != AttrKind::kArray) return false;
  for (const Attribute& e : elements) {
    if (!e.is_integer()) return false;
  }
  return true;
}

std::vector<int64_t> Attribute::as_int_list() const {
  if (kind == AttrKind::kIntArray) return ints;
  std::vector<int64_t> out;
  if (!is_int_list()) return out;
  for (const Attribute& e : elements) out.push_back(e.int_value);
  return out;
}

bool Attribute::as_bool_flag(bool fallback) const {
  if (kind == AttrKind::kBool) return bool_value;
  if (kind == AttrKind::kArray && elements.size() == 1 && elements[0].kind == AttrKind::kBool) {
    return elements[0].bool_value;
  }
  return fallback;
}

namespace {

// NaN compares unequal to itself; two NaN attributes are still the same attribute.
bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.kind != b.kind || a.kind_guessed != b.kind_guessed) return false;
  switch (a.kind) {
    case AttrKind::kNull: return true;
    case AttrKind::kBool: return a.bool_value == b.bool_value;
    case AttrKind::kInt32:
    case AttrKind::kInt64:
    case AttrKind::kIndex: return a.int_value == b.int_value;
    case AttrKind::kFloat:
    case AttrKind::kDouble: return same_number(a.float_value, b.float_value);
    case AttrKind::kComplex64:
    case AttrKind::kComplex128:
      return same_number(a.float_value, b.float_value) && same_number(a.imag_value, b.imag_value);
    case AttrKind::kString:
    case AttrKind::kTensorName:
    case AttrKind::kPointer:
    case AttrKind::kOpaque: return a.text == b.text;
    case AttrKind::kArray: return a.elements == b.elements;
    case AttrKind::kType: return a.type == b.type;
    case AttrKind::kDataType: return a.dtype == b.dtype;
    case AttrKind::kPlace: return a.place == b.place;
    case AttrKind::kDataLayout: return a.layout == b.layout;
    case AttrKind::kIntArray: return a.ints == b.ints;
    case AttrKind::kScalar:
      return a.dtype == b.dtype && a.bool_value == b.bool_value && a.int_value == b.int_value &&
             same_number(a.float_value, b.float_value) && same_number(a.imag_value, b.imag_value);
  }
  return false;
}

namespace {

std::string quote(const std::string& s) {
  // The PIR printer escapes only '"'; its reader turns only '\"' back, so this round-trips with it.
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string number(double v, bool single) {
  if (single) return fmt::format("{}", static_cast<float>(v));
  return fmt::format("{}", v);
}

std::string scalar_value(const Attribute& a) {
  if (a.dtype == DataType::kBool) return a.bool_value ? "true" : "false";
  if (is_complex(a.dtype)) {
    const bool single = a.dtype == DataType::kComplex64;
    return "real:" + number(a.float_value, single) + " imag:" + number(a.imag_value, single);
  }
  if (is_floating(a.dtype)) return number(a.float_value, a.dtype == DataType::kFloat32);
  return std::to_string(a.int_value);
}

}  // namespace

std::string to_string(const Attribute& a) {
  const bool tag = !a.kind_guessed;
  auto tagged = [&](std::string_view t, const std::string& body) {
    return tag ? fmt::format("({}){}", t, body) : body;
  };
  switch (a.kind) {
    case AttrKind::kNull: return "<#AttrNull>";
    case AttrKind::kBool: return a.bool_value ? "true" : "false";
    case AttrKind::kInt32: return tagged("Int32", std::to_string(a.int_value));
    case AttrKind::kInt64: return tagged("Int64", std::to_string(a.int_value));
    case AttrKind::kIndex: return tagged("Index", std::to_string(a.int_value));
    case AttrKind::kFloat: return tagged("Float", number(a.float_value, true));
    case AttrKind::kDouble: {
      std::string body = number(a.float_value, false);
      // An untyped `1` reads back as an integer; keep a guessed floating value floating.
      if (!tag && body.find_first_of(".eni") == std::string::npos) body += ".0";
      return tagged("Double", body);
    }
    case AttrKind::kComplex64:
      return tagged("Complex64", "real:" + number(a.float_value, true) + " imag:" + number(a.imag_value, true));
    case AttrKind::kComplex128:
      return tagged("Complex128",
                    "real:" + number(a.float_value, false) + " imag:" + number(a.imag_value, false));
    case AttrKind::kString:
    case AttrKind::kTensorName: return quote(a.text);
    case AttrKind::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < a.elements.size(); ++i) {
        if (i) out += ',';
        out += to_string(a.elements[i]);
      }
      return out + "]";
    }
    case AttrKind::kType: return to_string(a.type);
    case AttrKind::kPointer: return tagged("Pointer", a.text);
    case AttrKind::kDataType: return tagged("pd_op.DataType", std::string(dtype_name(a.dtype)));
    case AttrKind::kPlace: return tagged("pd_op.Place", place_to_string(a.place));
    case AttrKind::kDataLayout: return tagged("pd_op.DataLayout", std::string(layout_name(a.layout)));
    case AttrKind::kIntArray: {
      std::string out = "[";
      for (size_t i = 0; i < a.ints.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(a.ints[i]);
      }
      return tagged("pd_op.IntArray", out + "]");
    }
    case AttrKind::kScalar:
      return fmt::format("(pd_op.Scalar){}:{}", dtype_name(a.dtype), scalar_value(a));
    case AttrKind::kOpaque: return a.text;
  }
  return "<#AttrNull>";
}

}  // namespace kforge::ir
