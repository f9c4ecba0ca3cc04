#include "opdef/types.h"

#include <array>

namespace kforge::opdef {

namespace {

// PIR attribute classes as Paddle's op_gen.py (gen_utils.py attr_types_map) spells them: Scalar(T)
// is a ScalarAttribute whatever T is. The opmaker types are parse_utils.py's data_type of Scalar*
// and IntArray attributes (type_mapping.py opmaker_attr_types_map).
constexpr std::array<ArgTypeInfo, 28> kArgTypes = {{
    {ArgType::kTensor, "Tensor", "", ""},
    {ArgType::kTensorList, "Tensor[]", "", ""},
    {ArgType::kInt, "int", "pir::Int32Attribute", ""},
    {ArgType::kInt32, "int32_t", "pir::Int32Attribute", ""},
    {ArgType::kInt64, "int64_t", "pir::Int64Attribute", ""},
    {ArgType::kLong, "long", "pir::LongAttribute", ""},
    {ArgType::kSizeT, "size_t", "pir::Size_tAttribute", ""},
    {ArgType::kFloat, "float", "pir::FloatAttribute", ""},
    {ArgType::kDouble, "double", "pir::DoubleAttribute", ""},
    {ArgType::kBool, "bool", "pir::BoolAttribute", ""},
    {ArgType::kStr, "str", "pir::StrAttribute", ""},
    {ArgType::kIntList, "int[]", "pir::ArrayAttribute<pir::Int32Attribute>", ""},
    {ArgType::kInt64List, "int64_t[]", "pir::ArrayAttribute<pir::Int64Attribute>", ""},
    {ArgType::kFloatList, "float[]", "pir::ArrayAttribute<pir::FloatAttribute>", ""},
    {ArgType::kDoubleList, "double[]", "pir::ArrayAttribute<pir::DoubleAttribute>", ""},
    {ArgType::kBoolList, "bool[]", "pir::ArrayAttribute<pir::BoolAttribute>", ""},
    {ArgType::kStrList, "str[]", "pir::ArrayAttribute<pir::StrAttribute>", ""},
    {ArgType::kIntArray, "IntArray", "paddle::dialect::IntArrayAttribute", "std::vector<int64_t>"},
    {ArgType::kScalar, "Scalar", "paddle::dialect::ScalarAttribute", "float"},
    {ArgType::kScalarBool, "Scalar(bool)", "paddle::dialect::ScalarAttribute", "bool"},
    {ArgType::kScalarInt, "Scalar(int)", "paddle::dialect::ScalarAttribute", "int"},
    {ArgType::kScalarInt64, "Scalar(int64_t)", "paddle::dialect::ScalarAttribute", "int64_t"},
    {ArgType::kScalarFloat, "Scalar(float)", "paddle::dialect::ScalarAttribute", "float"},
    {ArgType::kScalarDouble, "Scalar(double)", "paddle::dialect::ScalarAttribute", "double"},
    {ArgType::kScalarList, "Scalar[]", "pir::ArrayAttribute<paddle::dialect::ScalarAttribute>", "std::vector<Scalar>"},
    {ArgType::kDataType, "DataType", "paddle::dialect::DataTypeAttribute", ""},
    {ArgType::kDataLayout, "DataLayout", "paddle::dialect::DataLayoutAttribute", ""},
    {ArgType::kPlace, "Place", "paddle::dialect::PlaceAttribute", ""},
}};

template <typename Table>
std::vector<std::string> spellings_of(const Table& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.spelling);
  return out;
}

struct OutputTypeEntry {
  OutputType type;
  std::string_view spelling;
};
constexpr std::array<OutputTypeEntry, 3> kOutputTypes = {{
    {OutputType::kTensor, "Tensor"},
    {OutputType::kTensorList, "Tensor[]"},
    {OutputType::kSelectedRows, "SelectedRows"},
}};

struct TensorKindEntry {
  TensorKind kind;
  std::string_view spelling;
};
constexpr std::array<TensorKindEntry, 4> kTensorKinds = {{
    {TensorKind::kDense, "dense"},
    {TensorKind::kSelectedRows, "selected_rows"},
    {TensorKind::kSparseCoo, "sparse_coo"},
    {TensorKind::kSparseCsr, "sparse_csr"},
}};

struct PatternEntry {
  PatternKind kind;
  std::string_view spelling;
};
constexpr std::array<PatternEntry, 6> kPatterns = {{
    {PatternKind::kElementwise, "elementwise"},
    {PatternKind::kBroadcast, "broadcast"},
    {PatternKind::kInjective, "injective"},
    {PatternKind::kReduction, "reduction"},
    {PatternKind::kOutFusible, "out_fusible"},
    {PatternKind::kOpaque, "opaque"},
}};

struct RowPatternEntry {
  RowPatternKind kind;
  std::string_view spelling;
};
constexpr std::array<RowPatternEntry, 3> kRowPatterns = {{
    {RowPatternKind::kSoftmax, "softmax"},
    {RowPatternKind::kLayerNorm, "layer_norm"},
    {RowPatternKind::kRmsNorm, "rms_norm"},
}};

}  // namespace

const ArgTypeInfo& arg_type_info(ArgType type) { return kArgTypes[static_cast<size_t>(type)]; }

std::optional<ArgType> parse_arg_type(std::string_view spelling) {
  for (const ArgTypeInfo& info : kArgTypes) {
    if (info.spelling == spelling) return info.type;
  }
  return std::nullopt;
}

const std::vector<std::string>& arg_type_spellings() {
  static const std::vector<std::string> spellings = spellings_of(kArgTypes);
  return spellings;
}

std::string_view output_type_spelling(OutputType type) { return kOutputTypes[static_cast<size_t>(type)].spelling; }

std::optional<OutputType> parse_output_type(std::string_view spelling) {
  for (const OutputTypeEntry& e : kOutputTypes) {
    if (e.spelling == spelling) return e.type;
  }
  return std::nullopt;
}

const std::vector<std::string>& output_type_spellings() {
  static const std::vector<std::string> spellings = spellings_of(kOutputTypes);
  return spellings;
}

std::string_view tensor_kind_spelling(TensorKind kind) { return kTensorKinds[static_cast<size_t>(kind)].spelling; }

std::optional<TensorKind> parse_tensor_kind(std::string_view spelling) {
  for (const TensorKindEntry& e : kTensorKinds) {
    if (e.spelling == spelling) return e.kind;
  }
  return std::nullopt;
}

const std::vector<std::string>& tensor_kind_spellings() {
  static const std::vector<std::string> spellings = spellings_of(kTensorKinds);
  return spellings;
}

std::string_view default_kind_name(DefaultKind kind) {
  switch (kind) {
    case DefaultKind::kInteger: return "integer";
    case DefaultKind::kFloat: return "float";
    case DefaultKind::kBool: return "bool";
    case DefaultKind::kString: return "string";
    case DefaultKind::kList: return "list";
    case DefaultKind::kEnumConstant: return "enum constant";
    case DefaultKind::kExpression: return "expression";
  }
  return "expression";
}

std::string_view pattern_kind_spelling(PatternKind kind) { return kPatterns[static_cast<size_t>(kind)].spelling; }

std::optional<PatternKind> parse_pattern_kind(std::string_view spelling) {
  for (const PatternEntry& e : kPatterns) {
    if (e.spelling == spelling) return e.kind;
  }
  return std::nullopt;
}

const std::vector<std::string>& pattern_kind_spellings() {
  static const std::vector<std::string> spellings = spellings_of(kPatterns);
  return spellings;
}

std::string_view row_pattern_spelling(RowPatternKind kind) { return kRowPatterns[static_cast<size_t>(kind)].spelling; }

std::optional<RowPatternKind> parse_row_pattern(std::string_view spelling) {
  for (const RowPatternEntry& e : kRowPatterns) {
    if (e.spelling == spelling) return e.kind;
  }
  return std::nullopt;
}

const std::vector<std::string>& row_pattern_spellings() {
  static const std::vector<std::string> spellings = spellings_of(kRowPatterns);
  return spellings;
}

}  // namespace kforge::opdef
