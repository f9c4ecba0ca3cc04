#include "attr_map.h"

#include <cmath>
#include <type_traits>

namespace kforge::interp {

using kforge::Status;

kforge::DataType runtime_dtype(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kBool: return kforge::DataType::kBool;
    case ir::DataType::kInt8: return kforge::DataType::kInt8;
    case ir::DataType::kUInt8: return kforge::DataType::kUInt8;
    case ir::DataType::kInt16: return kforge::DataType::kInt16;
    case ir::DataType::kInt32: return kforge::DataType::kInt32;
    case ir::DataType::kInt64: return kforge::DataType::kInt64;
    case ir::DataType::kIndex: return kforge::DataType::kInt64;
    case ir::DataType::kFloat16: return kforge::DataType::kFloat16;
    case ir::DataType::kBFloat16: return kforge::DataType::kBFloat16;
    case ir::DataType::kFloat32: return kforge::DataType::kFloat32;
    case ir::DataType::kFloat64: return kforge::DataType::kFloat64;
    case ir::DataType::kComplex64: return kforge::DataType::kComplex64;
    case ir::DataType::kComplex128: return kforge::DataType::kComplex128;
    default: return kforge::DataType::kUndefined;
  }
}

namespace {

kforge::Scalar scalar_of(const ir::Attribute& a) {
  const kforge::DataType dtype = runtime_dtype(a.dtype);
  if (a.dtype == ir::DataType::kBool) return kforge::Scalar(a.bool_value);
  if (ir::is_floating(a.dtype) || ir::is_complex(a.dtype)) return kforge::Scalar(a.float_value).with_dtype(dtype);
  return kforge::Scalar(a.int_value).with_dtype(dtype);
}

/// Converts one attribute; returns false for kinds with no run-time meaning here.
bool convert(const ir::Attribute& a, AttrValue* out) {
  switch (a.kind) {
    case ir::AttrKind::kBool: *out = a.bool_value; return true;
    case ir::AttrKind::kInt32:
    case ir::AttrKind::kInt64:
    case ir::AttrKind::kIndex: *out = a.int_value; return true;
    case ir::AttrKind::kFloat:
    case ir::AttrKind::kDouble: *out = a.float_value; return true;
    case ir::AttrKind::kString:
    case ir::AttrKind::kTensorName: *out = a.text; return true;
    case ir::AttrKind::kDataType: *out = runtime_dtype(a.dtype); return true;
    case ir::AttrKind::kIntArray: *out = a.ints; return true;
    case ir::AttrKind::kScalar: *out = scalar_of(a); return true;
    case ir::AttrKind::kArray: {
      if (a.elements.empty() || a.is_int_list()) {
        *out = a.as_int_list();
        return true;
      }
      bool all_numbers = true, all_strings = true, all_bools = true, all_scalars = true;
      for (const ir::Attribute& e : a.elements) {
        all_numbers = all_numbers && (e.is_integer() || e.is_floating());
        all_strings = all_strings && e.kind == ir::AttrKind::kString;
        all_bools = all_bools && e.kind == ir::AttrKind::kBool;
        all_scalars = all_scalars && (e.kind == ir::AttrKind::kScalar || e.is_integer() || e.is_floating());
      }
      if (all_numbers) {
        std::vector<double> v;
        for (const ir::Attribute& e : a.elements) v.push_back(e.is_integer() ? static_cast<double>(e.int_value) : e.float_value);
        *out = std::move(v);
      } else if (all_strings) {
        std::vector<std::string> v;
        for (const ir::Attribute& e : a.elements) v.push_back(e.text);
        *out = std::move(v);
      } else if (all_bools) {
        std::vector<bool> v;
        for (const ir::Attribute& e : a.elements) v.push_back(e.bool_value);
        *out = std::move(v);
      } else if (all_scalars) {
        std::vector<kforge::Scalar> v;
        for (const ir::Attribute& e : a.elements) {
          if (e.kind == ir::AttrKind::kScalar) {
            v.push_back(scalar_of(e));
          } else if (e.is_integer()) {
            v.emplace_back(e.int_value);
          } else {
            v.emplace_back(e.float_value);
          }
        }
        *out = std::move(v);
      } else {
        return false;
      }
      return true;
    }
    default: return false;
  }
}

Status missing(std::string_view name) { return Status::Error("missing attribute '", std::string(name), "'"); }
Status wrong_kind(std::string_view name, const char* wanted) {
  return Status::Error("attribute '", std::string(name), "' is not ", wanted);
}

}  // namespace

AttrMap AttrMap::from_attributes(const std::vector<ir::NamedAttribute>& attributes) {
  AttrMap map;
  for (const ir::NamedAttribute& named : attributes) {
    AttrValue value;
    if (convert(named.value, &value)) map.values_[named.name] = std::move(value);
  }
  return map;
}

const AttrValue* AttrMap::find(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? nullptr : &it->second;
}

// Each getter has a "required" form and a "with default" form; the required form does the conversion.
#define KFORGE_INTERP_DEFAULTED_GETTER(NAME, TYPE)                                    \
  Status AttrMap::NAME(std::string_view name, TYPE* out, const TYPE& fallback) const { \
    if (find(name) == nullptr) {                                                      \
      *out = fallback;                                                                \
      return Status::OK();                                                            \
    }                                                                                 \
    return NAME(name, out);                                                           \
  }

Status AttrMap::get_bool(std::string_view name, bool* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* b = std::get_if<bool>(v)) {
    *out = *b;
  } else if (auto* bs = std::get_if<std::vector<bool>>(v); bs != nullptr && bs->size() == 1) {
    *out = (*bs)[0];
  } else if (auto* i = std::get_if<int64_t>(v)) {
    *out = *i != 0;
  } else {
    return wrong_kind(name, "a bool");
  }
  return Status::OK();
}
Status AttrMap::get_bool(std::string_view name, bool* out, bool fallback) const {
  if (find(name) == nullptr) {
    *out = fallback;
    return Status::OK();
  }
  return get_bool(name, out);
}

Status AttrMap::get_int(std::string_view name, int64_t* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* i = std::get_if<int64_t>(v)) {
    *out = *i;
  } else if (auto* s = std::get_if<kforge::Scalar>(v)) {
    *out = s->to<int64_t>();
  } else if (auto* d = std::get_if<double>(v); d != nullptr && std::floor(*d) == *d) {
    *out = static_cast<int64_t>(*d);
  } else if (auto* b = std::get_if<bool>(v)) {
    *out = *b ? 1 : 0;
  } else {
    return wrong_kind(name, "an integer");
  }
  return Status::OK();
}
Status AttrMap::get_int(std::string_view name, int64_t* out, int64_t fallback) const {
  if (find(name) == nullptr) {
    *out = fallback;
    return Status::OK();
  }
  return get_int(name, out);
}

Status AttrMap::get_int32(std::string_view name, int* out) const {
  int64_t v = 0;
  KFORGE_RETURN_IF_ERROR(get_int(name, &v));
  *out = static_cast<int>(v);
  return Status::OK();
}
Status AttrMap::get_int32(std::string_view name, int* out, int fallback) const {
  if (find(name) == nullptr) {
    *out = fallback;
    return Status::OK();
  }
  return get_int32(name, out);
}

Status AttrMap::get_float(std::string_view name, double* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* d = std::get_if<double>(v)) {
    *out = *d;
  } else if (auto* i = std::get_if<int64_t>(v)) {
    *out = static_cast<double>(*i);
  } else if (auto* s = std::get_if<kforge::Scalar>(v)) {
    *out = s->to<double>();
  } else {
    return wrong_kind(name, "a number");
  }
  return Status::OK();
}
Status AttrMap::get_float(std::string_view name, double* out, double fallback) const {
  if (find(name) == nullptr) {
    *out = fallback;
    return Status::OK();
  }
  return get_float(name, out);
}

Status AttrMap::get_string(std::string_view name, std::string* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* s = std::get_if<std::string>(v)) {
    *out = *s;
    return Status::OK();
  }
  return wrong_kind(name, "a string");
}
KFORGE_INTERP_DEFAULTED_GETTER(get_string, std::string)

Status AttrMap::get_ints(std::string_view name, std::vector<int64_t>* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* is = std::get_if<std::vector<int64_t>>(v)) {
    *out = *is;
  } else if (auto* ds = std::get_if<std::vector<double>>(v)) {
    out->clear();
    for (double d : *ds) {
      if (std::floor(d) != d) return wrong_kind(name, "a list of integers");
      out->push_back(static_cast<int64_t>(d));
    }
  } else if (auto* ss = std::get_if<std::vector<kforge::Scalar>>(v)) {
    out->clear();
    for (const kforge::Scalar& s : *ss) out->push_back(s.to<int64_t>());
  } else if (auto* i = std::get_if<int64_t>(v)) {
    *out = {*i};  // Paddle accepts one int where a list is asked (an axis)
  } else {
    return wrong_kind(name, "a list of integers");
  }
  return Status::OK();
}
KFORGE_INTERP_DEFAULTED_GETTER(get_ints, std::vector<int64_t>)

Status AttrMap::get_int32s(std::string_view name, std::vector<int>* out) const {
  std::vector<int64_t> v;
  KFORGE_RETURN_IF_ERROR(get_ints(name, &v));
  out->assign(v.begin(), v.end());
  return Status::OK();
}
KFORGE_INTERP_DEFAULTED_GETTER(get_int32s, std::vector<int>)

Status AttrMap::get_floats(std::string_view name, std::vector<float>* out, const std::vector<float>& fallback) const {
  const AttrValue* v = find(name);
  if (v == nullptr) {
    *out = fallback;
    return Status::OK();
  }
  out->clear();
  if (auto* ds = std::get_if<std::vector<double>>(v)) {
    for (double d : *ds) out->push_back(static_cast<float>(d));
  } else if (auto* is = std::get_if<std::vector<int64_t>>(v)) {
    for (int64_t i : *is) out->push_back(static_cast<float>(i));
  } else {
    return wrong_kind(name, "a list of numbers");
  }
  return Status::OK();
}

Status AttrMap::get_dtype(std::string_view name, kforge::DataType* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* d = std::get_if<kforge::DataType>(v)) {
    *out = *d;
  } else if (auto* s = std::get_if<std::string>(v); s != nullptr && kforge::parse_data_type(*s, out)) {
    // parsed in the condition
  } else {
    return wrong_kind(name, "a data type");
  }
  return Status::OK();
}
Status AttrMap::get_dtype(std::string_view name, kforge::DataType* out, kforge::DataType fallback) const {
  if (find(name) == nullptr) {
    *out = fallback;
    return Status::OK();
  }
  return get_dtype(name, out);
}

Status AttrMap::get_scalar(std::string_view name, kforge::Scalar* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  if (auto* s = std::get_if<kforge::Scalar>(v)) {
    *out = *s;
  } else if (auto* d = std::get_if<double>(v)) {
    *out = kforge::Scalar(*d);
  } else if (auto* i = std::get_if<int64_t>(v)) {
    *out = kforge::Scalar(*i);
  } else if (auto* b = std::get_if<bool>(v)) {
    *out = kforge::Scalar(*b);
  } else {
    return wrong_kind(name, "a scalar");
  }
  return Status::OK();
}
KFORGE_INTERP_DEFAULTED_GETTER(get_scalar, kforge::Scalar)

Status AttrMap::get_scalars(std::string_view name, std::vector<kforge::Scalar>* out) const {
  const AttrValue* v = find(name);
  if (v == nullptr) return missing(name);
  out->clear();
  if (auto* ss = std::get_if<std::vector<kforge::Scalar>>(v)) {
    *out = *ss;
  } else if (auto* ds = std::get_if<std::vector<double>>(v)) {
    for (double d : *ds) out->emplace_back(d);
  } else if (auto* is = std::get_if<std::vector<int64_t>>(v)) {
    for (int64_t i : *is) out->emplace_back(i);
  } else if (auto* bs = std::get_if<std::vector<bool>>(v)) {
    for (bool b : *bs) out->emplace_back(b);
  } else {
    return wrong_kind(name, "a list of scalars");
  }
  return Status::OK();
}

#undef KFORGE_INTERP_DEFAULTED_GETTER

}  // namespace kforge::interp
