#include "program/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace kforge::ir {

namespace {

struct DTypeInfo {
  DataType dtype;
  std::string_view name;     // Paddle DataType spelling
  std::string_view element;  // PIR element type spelling ("" when PIR has none)
  size_t size;
};

constexpr std::array<DTypeInfo, 20> kDTypes = {{
    {DataType::kUndefined, "Undefined", "undefined", 0},
    {DataType::kBool, "bool", "b", 1},
    {DataType::kInt8, "int8", "i8", 1},
    {DataType::kUInt8, "uint8", "u8", 1},
    {DataType::kInt16, "int16", "i16", 2},
    {DataType::kUInt16, "uint16", "", 2},
    {DataType::kInt32, "int32", "i32", 4},
    {DataType::kUInt32, "uint32", "", 4},
    {DataType::kInt64, "int64", "i64", 8},
    {DataType::kUInt64, "uint64", "", 8},
    {DataType::kFloat16, "float16", "f16", 2},
    {DataType::kBFloat16, "bfloat16", "bf16", 2},
    {DataType::kFloat32, "float32", "f32", 4},
    {DataType::kFloat64, "float64", "f64", 8},
    {DataType::kComplex64, "complex64", "c64", 8},
    {DataType::kComplex128, "complex128", "c128", 16},
    {DataType::kFloat8E4M3FN, "float8_e4m3fn", "f8e4m3fn", 1},
    {DataType::kFloat8E5M2, "float8_e5m2", "f8e5m2", 1},
    {DataType::kPString, "pstring", "", 0},
    {DataType::kIndex, "index", "index", 8},
}};

const DTypeInfo& info(DataType dtype) {
  for (const DTypeInfo& i : kDTypes) {
    if (i.dtype == dtype) return i;
  }
  return kDTypes[0];
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

struct LayoutInfo {
  DataLayout layout;
  std::string_view name;
};

constexpr std::array<LayoutInfo, 10> kLayouts = {{
    {DataLayout::kUndefined, "Undefined(AnyLayout)"},
    {DataLayout::kNHWC, "NHWC"},
    {DataLayout::kNCHW, "NCHW"},
    {DataLayout::kNCDHW, "NCDHW"},
    {DataLayout::kNDHWC, "NDHWC"},
    {DataLayout::kOneDNN, "ONEDNN"},
    {DataLayout::kSparseCoo, "SPARSE_COO"},
    {DataLayout::kSparseCsr, "SPARSE_CSR"},
    {DataLayout::kPStringUnion, "PSTRING_UNION"},
    {DataLayout::kStrided, "STRIDED"},
}};

}  // namespace

std::string_view dtype_name(DataType dtype) { return info(dtype).name; }

std::optional<DataType> parse_dtype_name(std::string_view name) {
  // Paddle 3.1+ prints UNDEFINED as "Undefined(ALL_DTYPE)" (DataTypeToString), e.g. pd_op.sum's dtype.
  if (name == "undefined" || name == "Undefined(ALL_DTYPE)") return DataType::kUndefined;
  for (const DTypeInfo& i : kDTypes) {
    if (i.name == name) return i.dtype;
  }
  return std::nullopt;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const DTypeInfo& i : kDTypes) {
      if (i.dtype != DataType::kIndex) out.emplace_back(i.name);
    }
    return out;
  }();
  return names;
}

std::string_view pir_element_name(DataType dtype) { return info(dtype).element; }

std::optional<DataType> parse_pir_element_name(std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (const DTypeInfo& i : kDTypes) {
    if (i.element == name) return i.dtype;
  }
  return std::nullopt;
}

size_t dtype_size(DataType dtype) { return info(dtype).size; }

bool is_floating(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E5M2: return true;
    default: return false;
  }
}

double half_bits_to_double(DataType dtype, uint16_t bits) {
  if (dtype == DataType::kBFloat16) {
    const uint32_t f = static_cast<uint32_t>(bits) << 16;
    float out;
    std::memcpy(&out, &f, sizeof out);
    return out;
  }
  const int sign = (bits >> 15) ? -1 : 1;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

uint16_t half_bits_from_double(DataType dtype, double value) {
  // float16: 5 exponent bits, 10 mantissa bits; bfloat16: 8 and 7 (the top half of a float32).
  const int mantissa_bits = dtype == DataType::kBFloat16 ? 7 : 10;
  const int exponent_bits = 15 - mantissa_bits;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint32_t exponent_all_ones = (1u << exponent_bits) - 1;
  const uint32_t sign = std::signbit(value) ? 0x8000u : 0u;
  const double a = std::fabs(value);
  if (std::isnan(a)) return static_cast<uint16_t>(sign | exponent_all_ones << mantissa_bits | 1u << (mantissa_bits - 1));
  if (a == 0) return static_cast<uint16_t>(sign);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | exponent_all_ones << mantissa_bits);
  int e = 0;
  std::frexp(a, &e);          // a = f * 2^e, f in [0.5, 1): the leading bit has weight 2^(e - 1)
  const int emin = 1 - bias;  // the exponent of the smallest normal number
  // The value in units of the last mantissa bit at its exponent (subnormals: at emin). Scaling by a power of two
  // is exact and the quotient has at most 53 significant bits, so nearbyint (round to nearest even, the default
  // mode) rounds exactly once. A subnormal that rounds up to 2^mantissa_bits becomes the smallest normal, and a
  // normal that rounds up to 2^(mantissa_bits + 1) the next binade: both come out right of the bit layout below.
  const int exponent = std::max(e - 1, emin);
  const double q = std::nearbyint(std::ldexp(a, mantissa_bits - exponent));
  uint64_t bits = static_cast<uint64_t>(q);
  if (e - 1 >= emin) {  // normal: the leading bit becomes the exponent field
    bits += static_cast<uint64_t>(exponent + bias - 1) << mantissa_bits;
  }
  if (bits >= static_cast<uint64_t>(exponent_all_ones) << mantissa_bits) bits = uint64_t{exponent_all_ones} << mantissa_bits;
  return static_cast<uint16_t>(sign | bits);
}

bool is_integer(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kIndex: return true;
    default: return false;
  }
}

bool is_complex(DataType dtype) { return dtype == DataType::kComplex64 || dtype == DataType::kComplex128; }

std::string_view layout_name(DataLayout layout) {
  for (const LayoutInfo& l : kLayouts) {
    if (l.layout == layout) return l.name;
  }
  return kLayouts[0].name;
}

std::optional<DataLayout> parse_layout_name(std::string_view name) {
  const std::string u = upper(name);
  for (const LayoutInfo& l : kLayouts) {
    if (upper(l.name) == u) return l.layout;
  }
  // Paddle's StringToDataLayout aliases.
  if (u == "ANYLAYOUT" || u == "UNDEFINED" || u == "ANY_LAYOUT") return DataLayout::kUndefined;
  if (u == "MKLDNNLAYOUT" || u == "MKLDNN") return DataLayout::kOneDNN;
  return std::nullopt;
}

std::string place_type_name(const Place& place) {
  switch (place.type) {
    case AllocationType::kUndefined: return "undefined";
    case AllocationType::kCpu: return "cpu";
    case AllocationType::kGpu: return "gpu";
    case AllocationType::kGpuPinned: return "gpu_pinned";
    case AllocationType::kXpu: return "xpu";
    case AllocationType::kIpu: return "ipu";
    case AllocationType::kCustom: return place.custom_type;
  }
  return "undefined";
}

std::string place_to_string(const Place& place) {
  std::string out = "Place(" + place_type_name(place);
  // phi::Place::DebugString omits the device id for CPU and pinned memory.
  if (place.type != AllocationType::kCpu && place.type != AllocationType::kGpuPinned) {
    out += ':' + std::to_string(place.device_id);
  }
  out += ')';
  return out;
}

std::optional<Place> parse_place_body(std::string_view body) {
  Place place;
  std::string_view type = body;
  const size_t colon = body.rfind(':');
  if (colon != std::string_view::npos) {
    type = body.substr(0, colon);
    const std::string_view id = body.substr(colon + 1);
    int value = 0;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
    if (ec != std::errc() || end != id.data() + id.size() || id.empty()) return std::nullopt;
    place.device_id = value;
  }
  if (type == "undefined") {
    place.type = AllocationType::kUndefined;
  } else if (type == "cpu") {
    place.type = AllocationType::kCpu;
  } else if (type == "gpu") {
    place.type = AllocationType::kGpu;
  } else if (type == "gpu_pinned") {
    place.type = AllocationType::kGpuPinned;
  } else if (type == "xpu") {
    place.type = AllocationType::kXpu;
  } else if (type == "ipu") {
    place.type = AllocationType::kIpu;
  } else {
    for (char c : type) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return std::nullopt;
    }
    place.type = AllocationType::kCustom;
    place.custom_type = std::string(type);
  }
  return place;
}

std::optional<AllocationType> allocation_type_from_code(int64_t code) {
  switch (code) {
    case 0: return AllocationType::kUndefined;
    case 1: return AllocationType::kCpu;
    case 2: return AllocationType::kGpu;
    case 3: return AllocationType::kGpuPinned;
    case 4: return AllocationType::kXpu;
    case 7: return AllocationType::kIpu;
    case 9: return AllocationType::kCustom;
    default: return std::nullopt;
  }
}

}  // namespace kforge::ir
