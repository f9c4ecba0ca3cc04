// Element data types, data layouts and places of the program model, with their spellings in every format
// kforge reads: Paddle's DataType strings ("float32"), PIR element types ("f32", JSON "0.t_f32"), layout
// strings ("NCHW", "Undefined(AnyLayout)") and places ("Place(gpu:0)", JSON [2, 0, ""]).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::ir {

/// Paddle's phi::DataType plus PIR's IndexType (`index`, which has no DataType spelling).
enum class DataType : uint8_t {
  kUndefined,
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kFloat8E4M3FN,
  kFloat8E5M2,
  kPString,
  kIndex,
};

/// Paddle's DataType spelling: "float32", "int64", "bool", ..., "Undefined" (as phi::DataTypeToString).
std::string_view dtype_name(DataType dtype);
/// Parses a Paddle DataType spelling (also accepts "undefined").
std::optional<DataType> parse_dtype_name(std::string_view name);
/// Every Paddle DataType spelling, for did-you-mean suggestions.
const std::vector<std::string>& dtype_names();

/// The PIR element-type spelling used in printed types: "f32", "b", "u8", "index", ...; empty when PIR has
/// no element type for it (uint16/32/64, pstring).
std::string_view pir_element_name(DataType dtype);
/// Parses a PIR element type as printed ("f32", "bf16", "b", "undefined", ...).
std::optional<DataType> parse_pir_element_name(std::string_view name);

/// Size of one element in bytes (0 for undefined and pstring; 8 for index).
size_t dtype_size(DataType dtype);
bool is_floating(DataType dtype);  // float16/bfloat16/float32/float64/float8
bool is_integer(DataType dtype);   // signed and unsigned integers and index, not bool
bool is_complex(DataType dtype);

/// The value of float16 (IEEE binary16) or bfloat16 bits (`dtype` one of the two).
double half_bits_to_double(DataType dtype, uint16_t bits);
/// The float16 or bfloat16 bits of `value`, rounded to nearest, ties to even, from the double directly (no
/// intermediate float, so no double rounding); beyond the largest finite value: infinity; NaN: a quiet NaN.
uint16_t half_bits_from_double(DataType dtype, double value);

/// phi::DataLayout.
enum class DataLayout : uint8_t {
  kUndefined,  // "Undefined(AnyLayout)"
  kNHWC,
  kNCHW,
  kNCDHW,
  kNDHWC,
  kOneDNN,
  kSparseCoo,
  kSparseCsr,
  kPStringUnion,
  kStrided,
};

/// Paddle's spelling (common::DataLayoutToString): "NCHW", "Undefined(AnyLayout)", "ONEDNN", ...
std::string_view layout_name(DataLayout layout);
/// Accepts the printed spellings and Paddle's StringToDataLayout aliases (case-insensitive:
/// "ANYLAYOUT", "MKLDNNLAYOUT", "Undefined", ...).
std::optional<DataLayout> parse_layout_name(std::string_view name);

/// phi::AllocationType, with Paddle's numeric codes (they appear in PIR JSON place attributes).
enum class AllocationType : uint8_t {
  kUndefined = 0,
  kCpu = 1,
  kGpu = 2,
  kGpuPinned = 3,
  kXpu = 4,
  kIpu = 7,
  kCustom = 9,
};

/// A device place: Place(cpu), Place(gpu:0), Place(npu:1) for a custom device type "npu".
struct Place {
  AllocationType type = AllocationType::kUndefined;
  int device_id = 0;
  std::string custom_type;  // only for kCustom

  friend bool operator==(const Place&, const Place&) = default;
};

/// "cpu", "gpu", "gpu_pinned", "xpu", "ipu", "undefined", or the custom device type.
std::string place_type_name(const Place& place);
/// As phi::Place::DebugString: "Place(cpu)", "Place(gpu:0)", "Place(undefined:0)", "Place(npu:1)".
std::string place_to_string(const Place& place);
/// Parses the inside of "Place(...)": "cpu", "gpu:0", "gpu_pinned", ":0" (a custom device with no name).
/// Any other device name is a custom device type.
std::optional<Place> parse_place_body(std::string_view body);
/// Maps a JSON allocation-type code to the enum; nullopt for codes Paddle does not define.
std::optional<AllocationType> allocation_type_from_code(int64_t code);

}  // namespace kforge::ir
