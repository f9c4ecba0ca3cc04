// Op attributes of the program model: PIR's builtin attributes (bool, int32, int64, index, float, double,
// complex, string, tensor name, array, type, pointer) and the pd_op ones (DataType, Place, DataLayout,
// IntArray, Scalar). Kinds kforge does not look into (dist attributes, kernel keys, unknown JSON payloads)
// are kept as their source text, so a program never fails to load because of an attribute it does not use.
//
// Exactness. PIR JSON and the 2024 typed text say exactly which kind an attribute is. The 2025 untyped text
// and the program YAML do not: `3` may be an int32, an int64 or even a float attribute, and `[2,2]` may be
// an IntArray or an array of ints. Such attributes are read as the closest kind (Int64 for integers, Double
// for other numbers, Array for lists) with `kind_guessed` set; the verifier converts them to the kind the
// op definition asks for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/dtype.h"
#include "program/type.h"
#include "support/source_manager.h"

namespace kforge::ir {

enum class AttrKind : uint8_t {
  kNull,        // <#AttrNull>, JSON {"#":"NULL"}
  kBool,        // bool_value
  kInt32,       // int_value
  kInt64,       // int_value
  kIndex,       // int_value
  kFloat,       // float_value (already rounded to float precision)
  kDouble,      // float_value
  kComplex64,   // float_value (real), imag_value
  kComplex128,  // float_value (real), imag_value
  kString,      // text
  kTensorName,  // text
  kArray,       // elements
  kType,        // type
  kPointer,     // text: the address as printed or stored
  kDataType,    // dtype
  kPlace,       // place
  kDataLayout,  // layout
  kIntArray,    // ints
  kScalar,      // dtype, and bool_value / int_value / float_value (+ imag_value) by the dtype's class
  kOpaque,      // text: source text kept verbatim (dist attrs, kernel keys, <#AttrNotImplemented>, ...)
};

/// "bool", "int32", "int64", "index", "float", "double", "complex64", "complex128", "str", "tensor_name",
/// "array", "type", "pointer", "DataType", "Place", "DataLayout", "IntArray", "Scalar", "opaque", "null".
std::string_view attr_kind_name(AttrKind kind);

struct Attribute {
  AttrKind kind = AttrKind::kNull;
  /// The kind was guessed from untyped source (2025 text, program YAML): see the file comment.
  bool kind_guessed = false;

  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  double imag_value = 0;
  std::string text;
  std::vector<Attribute> elements;
  std::vector<int64_t> ints;
  DataType dtype = DataType::kUndefined;
  Place place;
  DataLayout layout = DataLayout::kUndefined;
  Type type;

  /// Where the value is written in the source (invalid for attributes made by passes).
  SourceLoc loc;

  static Attribute null();
  static Attribute boolean(bool v);
  static Attribute int32(int32_t v);
  static Attribute int64(int64_t v);
  static Attribute index(int64_t v);
  static Attribute float32(float v);
  static Attribute float64(double v);
  static Attribute complex(AttrKind kind, double re, double im);  // kComplex64 or kComplex128
  static Attribute string(std::string v);
  static Attribute tensor_name(std::string v);
  static Attribute array(std::vector<Attribute> v);
  static Attribute type_attr(Type v);
  static Attribute pointer(std::string v);
  static Attribute data_type(DataType v);
  static Attribute place_attr(Place v);
  static Attribute data_layout(DataLayout v);
  static Attribute int_array(std::vector<int64_t> v);
  static Attribute scalar_int(DataType dtype, int64_t v);   // integer dtypes
  static Attribute scalar_float(DataType dtype, double v);  // floating dtypes
  static Attribute scalar_bool(bool v);
  static Attribute scalar_complex(DataType dtype, double re, double im);
  static Attribute opaque(std::string source_text);

  Attribute&& at(SourceLoc where) && {
    loc = where;
    return std::move(*this);
  }
  Attribute&& guessed() && {
    kind_guessed = true;
    return std::move(*this);
  }

  bool is_null() const { return kind == AttrKind::kNull; }
  /// Int32, Int64 or Index.
  bool is_integer() const { return kind == AttrKind::kInt32 || kind == AttrKind::kInt64 || kind == AttrKind::kIndex; }
  /// Float or Double.
  bool is_floating() const { return kind == AttrKind::kFloat || kind == AttrKind::kDouble; }
  /// An Array whose elements are all integers (possibly empty), or an IntArray.
  bool is_int_list() const;
  /// The integers of an IntArray or of an Array of integers; empty for anything else.
  std::vector<int64_t> as_int_list() const;
  /// True for array elements and the first element of a one-element bool array, as Paddle stores
  /// stop_gradient/persistable: `[true]`. Returns `fallback` for other kinds.
  bool as_bool_flag(bool fallback = false) const;
};

/// Equality of values and kinds (not of `loc`; `kind_guessed` counts).
bool operator==(const Attribute& a, const Attribute& b);

/// Prints an attribute value in the 2024 typed PIR text form, which keeps every kind: `(Int32)3`,
/// `(Float)1e-05`, `(pd_op.IntArray)[2,2]`, `(pd_op.DataType)float32`, `"str"`, `[true]`. Guessed kinds
/// print untyped (`3`, `[2,2]`), as they were read. Scalars, which Paddle cannot print, print as
/// `(pd_op.Scalar)float32:1.5` (a kforge extension the text reader accepts). Floats print with the fewest
/// digits that read back to the same value.
std::string to_string(const Attribute& attr);

/// One entry of an op's attribute list.
struct NamedAttribute {
  std::string name;
  Attribute value;
  SourceLoc name_loc;  // where the name is written (invalid when made by a pass)
};

}  // namespace kforge::ir
