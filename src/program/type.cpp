#include "program/type.h"

namespace kforge::ir {

Type Type::element(DataType dtype) {
  Type t;
  t.kind = TypeKind::kElement;
  t.dtype = dtype;
  return t;
}

Type Type::tensor(DataType dtype, std::vector<int64_t> dims) {
  Type t;
  t.kind = TypeKind::kDenseTensor;
  t.dtype = dtype;
  t.dims = std::move(dims);
  return t;
}

Type Type::vector(std::vector<Type> elements) {
  Type t;
  t.kind = TypeKind::kVector;
  t.elements = std::move(elements);
  return t;
}

Type Type::other(std::string name, std::string params) {
  Type t;
  t.kind = TypeKind::kOther;
  t.name = std::move(name);
  t.params = std::move(params);
  return t;
}

bool Type::has_static_shape() const {
  if (kind != TypeKind::kDenseTensor) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

std::optional<int64_t> Type::static_numel() const {
  if (!has_static_shape()) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {

std::string element_spelling(DataType dtype) {
  const std::string_view e = pir_element_name(dtype);
  // uint16/32/64 and pstring have no PIR element type; print the DataType name so nothing prints empty.
  return e.empty() ? std::string(dtype_name(dtype)) : std::string(e);
}

}  // namespace

std::string to_string(const Type& type) {
  switch (type.kind) {
    case TypeKind::kNone: return "<<NULL TYPE>>";
    case TypeKind::kElement: return element_spelling(type.dtype);
    case TypeKind::kDenseTensor: {
      std::string out = type.place ? place_type_name(*type.place) + "_tensor<" : "tensor<";
      for (int64_t d : type.dims) out += std::to_string(d) + "x";
      out += element_spelling(type.dtype);
      out += '>';
      return out;
    }
    case TypeKind::kVector: {
      std::string out = "vec[";
      for (size_t i = 0; i < type.elements.size(); ++i) {
        if (i) out += ',';
        out += to_string(type.elements[i]);
      }
      out += ']';
      return out;
    }
    case TypeKind::kOther: return type.params.empty() ? type.name : type.name + "<" + type.params + ">";
  }
  return "<<NULL TYPE>>";
}

}  // namespace kforge::ir
