// PIR JSON reader, types ("TT", §4.5) and attributes ("AT", §4.6).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "program/pir_json_internal.h"
#include "support/text.h"

namespace kforge::ir::pir_json {

namespace {

struct ElementTypeId {
  const char* id;
  DataType dtype;
};

// Builtin element types, as Paddle names them (builtin_type.h names, dialect id 0).
constexpr ElementTypeId kElementTypes[] = {
    {"0.t_bool", DataType::kBool},        {"0.t_bf16", DataType::kBFloat16},
    {"0.t_f16", DataType::kFloat16},      {"0.t_f32", DataType::kFloat32},
    {"0.t_f64", DataType::kFloat64},      {"0.t_i8", DataType::kInt8},
    {"0.t_ui8", DataType::kUInt8},        {"0.t_i16", DataType::kInt16},
    {"0.t_i32", DataType::kInt32},        {"0.t_i64", DataType::kInt64},
    {"0.t_index", DataType::kIndex},      {"0.t_c64", DataType::kComplex64},
    {"0.t_c128", DataType::kComplex128},  {"0.t_f8e4m3fn", DataType::kFloat8E4M3FN},
    {"0.t_f8e5m2", DataType::kFloat8E5M2},
};

const std::vector<std::string>& known_type_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (const ElementTypeId& e : kElementTypes) out.emplace_back(e.id);
    for (const char* id : {"0.t_dtensor", "0.t_vec", "1.t_dense_tensor_array", "1.t_selected_rows",
                           "1.t_sparse_coo_tensor", "1.t_sparse_csr_tensor", "4.t_dist_dtensor", "2.t_stack",
                           "2.t_inlet", "2.t_outlet", "NULL"}) {
      out.emplace_back(id);
    }
    return out;
  }();
  return ids;
}

const std::vector<std::string>& known_attribute_ids() {
  static const std::vector<std::string> ids = {
      "0.a_bool",   "0.a_f32",       "0.a_f64",    "0.a_i32",       "0.a_i64",         "0.a_index",
      "0.a_str",    "0.a_tensorname", "0.a_type",  "0.a_pointer",   "0.a_c64",         "0.a_c128",
      "0.a_array",  "1.a_intarray",  "1.a_dtype",  "1.a_place",     "1.a_layout",      "1.a_scalar",
      "4.a_process_mesh", "4.a_tensor_dist", "4.a_op_dist", "4.a_placements", "NULL"};
  return ids;
}

std::string unknown_with_suggestion(std::string_view what, const std::string& id,
                                    const std::vector<std::string>& known) {
  std::string msg = fmt::format("unknown {} '{}'", what, id);
  if (std::optional<std::string> close = closest_match(id, known)) msg += fmt::format("; did you mean '{}'?", *close);
  return msg;
}

std::string dims_text(const Type& t) {
  std::string out;
  for (int64_t d : t.dims) out += std::to_string(d) + "x";
  const std::string_view e = pir_element_name(t.dtype);
  return out + std::string(e.empty() ? dtype_name(t.dtype) : e);
}

}  // namespace

// ---------------------------------------------------------------------------------------------- types

std::optional<Type> Reader::read_type(const Json& j, int depth) {
  if (!j.is_object()) {
    error(j, fmt::format("expected a type object {{\"#\": type}}, got {}", json_kind_name(j)));
    return std::nullopt;
  }
  if (depth > kMaxNesting) {
    error(j, fmt::format("types nested more than {} deep", kMaxNesting));
    return std::nullopt;
  }
  const Json* id_json = member(j, "#", "type name", "type", true);
  if (!id_json || !expect_string(*id_json, "'#' (type name)")) return std::nullopt;
  const std::string id = id_json->get<std::string>();
  if (id == "NULL") {
    warn_unknown_keys(j, {"#"}, "type 'NULL'");
    return Type::none();
  }
  for (const ElementTypeId& e : kElementTypes) {
    if (id == e.id) {
      warn_unknown_keys(j, {"#"}, fmt::format("type '{}'", id));
      return Type::element(e.dtype);
    }
  }
  if (id == "2.t_stack" || id == "2.t_inlet" || id == "2.t_outlet") {
    warn_unknown_keys(j, {"#"}, fmt::format("type '{}'", id));
    return Type::other("cf." + id.substr(4));
  }
  const bool known = std::find(known_type_ids().begin(), known_type_ids().end(), id) != known_type_ids().end();
  if (!known) {
    error(*id_json, unknown_with_suggestion("type", id, known_type_ids()));
    return std::nullopt;
  }
  warn_unknown_keys(j, {"#", "D"}, fmt::format("type '{}'", id));
  const Json* data = member(j, "D", "data", fmt::format("type '{}'", id), true);
  if (!data || !expect_array(*data, fmt::format("the data of '{}'", id))) return std::nullopt;

  if (id == "0.t_vec") {
    std::vector<Type> elements;
    for (const Json& e : *data) {
      std::optional<Type> t = read_type(e, depth + 1);
      if (!t) return std::nullopt;
      elements.push_back(std::move(*t));
    }
    return Type::vector(std::move(elements));
  }

  // The tensor-like types start with [element type, dims, ...].
  auto tensor_prefix = [&](size_t expected_size, const char* fields) -> std::optional<Type> {
    if (data->size() != expected_size) {
      error(*data, fmt::format("expected {} entries [{}] in the data of '{}', got {}", expected_size, fields, id,
                               data->size()));
      return std::nullopt;
    }
    std::optional<Type> element = read_type((*data)[0], depth + 1);
    if (!element) return std::nullopt;
    if (element->kind != TypeKind::kElement) {
      error((*data)[0], fmt::format("the element type of '{}' must be an element type such as '0.t_f32', got '{}'",
                                    id, (*data)[0].value("#", std::string("?"))));
      return std::nullopt;
    }
    Type t = Type::tensor(element->dtype, {});
    const Json& dims = (*data)[1];
    if (!expect_array(dims, fmt::format("the dims of '{}'", id))) return std::nullopt;
    for (const Json& d : dims) {
      const std::optional<int64_t> dim = get_int(d, fmt::format("a dim of '{}'", id));
      if (!dim) return std::nullopt;
      // Paddle's infer_meta multiplies a dynamic -1 like any dim: instance_norm's saved_mean [N * C] of a dynamic
      // batch is written as [-3] for C = 3. Every negative dim is dynamic.
      t.dims.push_back(*dim < 0 ? kDynamicDim : *dim);
    }
    return t;
  };
  auto layout_at = [&](size_t index, Type& t) {
    const Json& l = (*data)[index];
    if (!expect_string(l, fmt::format("the layout of '{}'", id))) return false;
    const std::optional<DataLayout> layout = parse_layout_name(l.get<std::string>());
    if (!layout) {
      error(l, fmt::format("unknown data layout '{}' in '{}'", l.get<std::string>(), id));
      return false;
    }
    t.layout = *layout;
    return true;
  };

  if (id == "0.t_dtensor" || id == "1.t_selected_rows") {
    std::optional<Type> t = tensor_prefix(5, "element type, dims, layout, lod, offset");
    if (!t || !layout_at(2, *t)) return std::nullopt;
    const Json& lod = (*data)[3];
    if (!expect_array(lod, fmt::format("the lod of '{}'", id))) return std::nullopt;
    for (const Json& level : lod) {
      if (!expect_array(level, fmt::format("a lod level of '{}'", id))) return std::nullopt;
      std::vector<uint64_t> offsets;
      for (const Json& o : level) {
        const std::optional<int64_t> v = get_int(o, fmt::format("a lod offset of '{}'", id));
        if (!v) return std::nullopt;
        if (*v < 0) {
          error(o, fmt::format("invalid lod offset {} in '{}'", *v, id));
          return std::nullopt;
        }
        offsets.push_back(static_cast<uint64_t>(*v));
      }
      t->lod.push_back(std::move(offsets));
    }
    const std::optional<int64_t> offset = get_int((*data)[4], fmt::format("the offset of '{}'", id));
    if (!offset) return std::nullopt;
    if (*offset < 0) {
      error((*data)[4], fmt::format("invalid offset {} in '{}'", *offset, id));
      return std::nullopt;
    }
    t->offset = static_cast<uint64_t>(*offset);
    if (id == "1.t_selected_rows") {
      Type other = Type::other("pd_op.selectedrows", dims_text(*t));
      other.dtype = t->dtype;
      other.dims = t->dims;
      other.layout = t->layout;
      return other;
    }
    return t;
  }
  if (id == "1.t_dense_tensor_array") {
    std::optional<Type> t = tensor_prefix(3, "element type, dims, layout");
    if (!t || !layout_at(2, *t)) return std::nullopt;
    // Paddle prints a tensor array with its element type only: pd_op.tensor_array<f32>.
    Type other = Type::other("pd_op.tensor_array", std::string(pir_element_name(t->dtype)));
    other.dtype = t->dtype;
    other.dims = t->dims;
    other.layout = t->layout;
    return other;
  }
  if (id == "1.t_sparse_coo_tensor" || id == "1.t_sparse_csr_tensor") {
    // [dtype, dims, ...]: kforge does not compute with sparse tensors; keep what identifies them.
    if (data->size() < 2) {
      error(*data, fmt::format("expected at least [element type, dims] in the data of '{}'", id));
      return std::nullopt;
    }
    std::optional<Type> t = read_type((*data)[0], depth + 1);
    if (!t) return std::nullopt;
    Type other = Type::other(id == "1.t_sparse_coo_tensor" ? "pd_op.sparsecootensor" : "pd_op.sparsecsrtensor");
    other.dtype = t->dtype;
    if ((*data)[1].is_array()) {
      for (const Json& d : (*data)[1]) {
        if (d.is_number_integer()) other.dims.push_back(d.get<int64_t>());
      }
    }
    other.params = dims_text(other);
    return other;
  }
  // 4.t_dist_dtensor: [dense tensor type data object, tensor dist attr, local dims].
  if (data->size() != 3) {
    error(*data, fmt::format("expected 3 entries [dense tensor, dist attribute, local dims] in the data of '{}', "
                             "got {}",
                             id, data->size()));
    return std::nullopt;
  }
  std::optional<Type> t = read_type((*data)[0], depth + 1);
  if (!t) return std::nullopt;
  if (t->kind != TypeKind::kDenseTensor) {
    error((*data)[0], fmt::format("the first entry of '{}' must be a '0.t_dtensor'", id));
    return std::nullopt;
  }
  Type other = Type::other("pd_dist.tensor", dims_text(*t));
  other.dtype = t->dtype;
  other.dims = t->dims;
  return other;
}

// ---------------------------------------------------------------------------------------------- attributes

std::optional<Attribute> Reader::read_attribute(const Json& j, int depth) {
  if (!j.is_object()) {
    error(j, fmt::format("expected an attribute object {{\"#\": kind, \"D\": data}}, got {}", json_kind_name(j)));
    return std::nullopt;
  }
  if (depth > kMaxNesting) {
    error(j, fmt::format("attributes nested more than {} deep", kMaxNesting));
    return std::nullopt;
  }
  const SourceLoc at = loc(j);
  const Json* id_json = member(j, "#", "attribute kind", "attribute value", true);
  if (!id_json || !expect_string(*id_json, "'#' (attribute kind)")) return std::nullopt;
  const std::string id = id_json->get<std::string>();
  if (id == "NULL") {
    warn_unknown_keys(j, {"#"}, "attribute 'NULL'");
    return Attribute::null().at(at);
  }
  if (std::find(known_attribute_ids().begin(), known_attribute_ids().end(), id) == known_attribute_ids().end()) {
    error(*id_json, unknown_with_suggestion("attribute kind", id, known_attribute_ids()));
    return std::nullopt;
  }
  const bool is_float = id == "0.a_f32" || id == "0.a_f64";
  warn_unknown_keys(j, is_float ? std::initializer_list<std::string_view>{"#", "D", "VD"}
                                : std::initializer_list<std::string_view>{"#", "D"},
                    fmt::format("attribute '{}'", id));
  const std::string data_what = fmt::format("the data of '{}'", id);

  if (is_float) {
    double value = 0;
    if (const Json* vd = member(j, "VD", "", "", false)) {
      // Paddle writes "NaN", "INF" or "-INF" where JSON has no number (its reader looks for "NAN").
      const std::string special = vd->is_string() ? vd->get<std::string>() : vd->dump();
      if (special == "NaN" || special == "NAN" || special == "nan") {
        value = std::numeric_limits<double>::quiet_NaN();
      } else if (special == "INF" || special == "inf") {
        value = std::numeric_limits<double>::infinity();
      } else if (special == "-INF" || special == "-inf") {
        value = -std::numeric_limits<double>::infinity();
      } else {
        error(*vd, fmt::format("unknown special float {} in 'VD' (expected \"NaN\", \"INF\" or \"-INF\")",
                               vd->dump()));
        return std::nullopt;
      }
    } else {
      const Json* d = member(j, "D", "data", fmt::format("attribute '{}'", id), true);
      if (!d) return std::nullopt;
      const std::optional<double> v = get_number(*d, data_what);
      if (!v) return std::nullopt;
      value = *v;
    }
    if (id == "0.a_f32") return Attribute::float32(static_cast<float>(value)).at(at);
    return Attribute::float64(value).at(at);
  }

  const Json* d = member(j, "D", "data", fmt::format("attribute '{}'", id), true);
  if (!d) return std::nullopt;

  if (id == "0.a_bool") {
    if (!d->is_boolean()) {
      error(*d, fmt::format("expected a boolean for {}, got {}", data_what, json_kind_name(*d)));
      return std::nullopt;
    }
    return Attribute::boolean(d->get<bool>()).at(at);
  }
  if (id == "0.a_i32" || id == "0.a_i64" || id == "0.a_index") {
    const std::optional<int64_t> v = get_int(*d, data_what);
    if (!v) return std::nullopt;
    if (id == "0.a_i32") {
      if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
        error(*d, fmt::format("value {} does not fit in an int32 attribute", *v));
        return std::nullopt;
      }
      return Attribute::int32(static_cast<int32_t>(*v)).at(at);
    }
    return (id == "0.a_i64" ? Attribute::int64(*v) : Attribute::index(*v)).at(at);
  }
  if (id == "0.a_str" || id == "0.a_tensorname") {
    if (!expect_string(*d, data_what)) return std::nullopt;
    return (id == "0.a_str" ? Attribute::string(d->get<std::string>()) : Attribute::tensor_name(d->get<std::string>()))
        .at(at);
  }
  if (id == "0.a_type") {
    std::optional<Type> t = read_type(*d, depth + 1);
    if (!t) return std::nullopt;
    return Attribute::type_attr(std::move(*t)).at(at);
  }
  if (id == "0.a_pointer") {
    // Paddle never writes pointers; keep whatever is there.
    return Attribute::pointer(d->is_string() ? d->get<std::string>() : d->dump()).at(at);
  }
  if (id == "0.a_c64" || id == "0.a_c128") {
    if (!d->is_array() || d->size() != 2) {
      error(*d, fmt::format("expected [real, imaginary] for {}, got {}", data_what, d->dump()));
      return std::nullopt;
    }
    const std::optional<double> re = get_number((*d)[0], "the real part");
    const std::optional<double> im = get_number((*d)[1], "the imaginary part");
    if (!re || !im) return std::nullopt;
    return Attribute::complex(id == "0.a_c64" ? AttrKind::kComplex64 : AttrKind::kComplex128, *re, *im).at(at);
  }
  if (id == "0.a_array") {
    if (!expect_array(*d, data_what)) return std::nullopt;
    std::vector<Attribute> elements;
    for (const Json& e : *d) {
      std::optional<Attribute> a = read_attribute(e, depth + 1);
      if (!a) return std::nullopt;
      elements.push_back(std::move(*a));
    }
    return Attribute::array(std::move(elements)).at(at);
  }
  if (id == "1.a_intarray") {
    if (!expect_array(*d, data_what)) return std::nullopt;
    std::vector<int64_t> ints;
    for (const Json& e : *d) {
      const std::optional<int64_t> v = get_int(e, "an element of '1.a_intarray'");
      if (!v) return std::nullopt;
      ints.push_back(*v);
    }
    return Attribute::int_array(std::move(ints)).at(at);
  }
  if (id == "1.a_dtype") {
    if (!expect_string(*d, data_what)) return std::nullopt;
    const std::string name = d->get<std::string>();
    const std::optional<DataType> dtype = parse_dtype_name(name);
    if (!dtype) {
      error(*d, unknown_with_suggestion("data type", name, dtype_names()));
      return std::nullopt;
    }
    return Attribute::data_type(*dtype).at(at);
  }
  if (id == "1.a_layout") {
    if (!expect_string(*d, data_what)) return std::nullopt;
    const std::optional<DataLayout> layout = parse_layout_name(d->get<std::string>());
    if (!layout) {
      error(*d, fmt::format("unknown data layout '{}'", d->get<std::string>()));
      return std::nullopt;
    }
    return Attribute::data_layout(*layout).at(at);
  }
  if (id == "1.a_place") {
    if (!d->is_array() || d->size() != 3) {
      error(*d, fmt::format("expected [allocation type, device id, custom device type] for {}, got {}", data_what,
                            d->dump()));
      return std::nullopt;
    }
    const std::optional<int64_t> code = get_int((*d)[0], "the allocation type of a place");
    const std::optional<int64_t> device = get_int((*d)[1], "the device id of a place");
    if (!code || !device || !expect_string((*d)[2], "the custom device type of a place")) return std::nullopt;
    const std::optional<AllocationType> type = allocation_type_from_code(*code);
    if (!type) {
      error((*d)[0], fmt::format("unknown allocation type {} in a place (known: 0 undefined, 1 cpu, 2 gpu, "
                                 "3 gpu_pinned, 4 xpu, 7 ipu, 9 custom)",
                                 *code));
      return std::nullopt;
    }
    Place place;
    place.type = *type;
    place.device_id = static_cast<int>(*device);
    if (*type == AllocationType::kCustom) place.custom_type = (*d)[2].get<std::string>();
    return Attribute::place_attr(std::move(place)).at(at);
  }
  if (id == "1.a_scalar") {
    if (!d->is_array() || d->size() < 2 || !(*d)[0].is_string()) {
      error(*d, fmt::format("expected [data type, value] for {}, got {}", data_what, d->dump()));
      return std::nullopt;
    }
    const std::string name = (*d)[0].get<std::string>();
    const std::optional<DataType> dtype = parse_dtype_name(name);
    if (!dtype || *dtype == DataType::kUndefined || *dtype == DataType::kPString) {
      error((*d)[0], unknown_with_suggestion("scalar data type", name, dtype_names()));
      return std::nullopt;
    }
    const Json& v = (*d)[1];
    if (*dtype == DataType::kBool) {
      if (v.is_boolean()) return Attribute::scalar_bool(v.get<bool>()).at(at);
      if (v.is_number_integer()) return Attribute::scalar_bool(v.get<int64_t>() != 0).at(at);
      error(v, fmt::format("expected a boolean for the value of a bool scalar, got {}", json_kind_name(v)));
      return std::nullopt;
    }
    if (is_complex(*dtype)) {
      if (d->size() != 3) {
        error(*d, fmt::format("expected [data type, real, imaginary] for a {} scalar, got {}", name, d->dump()));
        return std::nullopt;
      }
      const std::optional<double> re = get_number(v, "the real part of a scalar");
      const std::optional<double> im = get_number((*d)[2], "the imaginary part of a scalar");
      if (!re || !im) return std::nullopt;
      return Attribute::scalar_complex(*dtype, *re, *im).at(at);
    }
    if (*dtype == DataType::kFloat16 || *dtype == DataType::kBFloat16) {
      // Paddle writes these as their raw 16 bits (phi::Scalar::to<uint16_t>).
      const std::optional<int64_t> bits = get_int(v, fmt::format("the bits of a {} scalar", name));
      if (!bits) return std::nullopt;
      if (*bits < 0 || *bits > 0xFFFF) {
        error(v, fmt::format("{} is not the 16 bits of a {} scalar", *bits, name));
        return std::nullopt;
      }
      return Attribute::scalar_float(*dtype, half_bits_to_double(*dtype, static_cast<uint16_t>(*bits))).at(at);
    }
    if (is_floating(*dtype)) {
      const std::optional<double> x = get_number(v, fmt::format("the value of a {} scalar", name));
      if (!x) return std::nullopt;
      return Attribute::scalar_float(*dtype, *x).at(at);
    }
    const std::optional<int64_t> x = get_int(v, fmt::format("the value of a {} scalar", name));
    if (!x) return std::nullopt;
    return Attribute::scalar_int(*dtype, *x).at(at);
  }
  // 4.a_process_mesh, 4.a_tensor_dist, 4.a_op_dist, 4.a_placements: kept as their JSON text.
  return Attribute::opaque(j.dump()).at(at);
}

}  // namespace kforge::ir::pir_json
