// The closed vocabularies of the op YAML: argument types, output types, kernel tensor kinds,
// default-value kinds and the kforge op pattern kinds, with their spellings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::opdef {

/// Every argument type of §2.3 (plus the ones Paddle's generators accept but these files do not use).
enum class ArgType {
  kTensor,         // Tensor
  kTensorList,     // Tensor[]
  kInt,            // int
  kInt32,          // int32_t
  kInt64,          // int64_t
  kLong,           // long
  kSizeT,          // size_t
  kFloat,          // float
  kDouble,         // double
  kBool,           // bool
  kStr,            // str
  kIntList,        // int[]
  kInt64List,      // int64_t[]
  kFloatList,      // float[]
  kDoubleList,     // double[]
  kBoolList,       // bool[]
  kStrList,        // str[]
  kIntArray,       // IntArray
  kScalar,         // Scalar
  kScalarBool,     // Scalar(bool)
  kScalarInt,      // Scalar(int)
  kScalarInt64,    // Scalar(int64_t)
  kScalarFloat,    // Scalar(float)
  kScalarDouble,   // Scalar(double)
  kScalarList,     // Scalar[]
  kDataType,       // DataType
  kDataLayout,     // DataLayout
  kPlace,          // Place
};

/// What the generators need to know about one argument type.
struct ArgTypeInfo {
  ArgType type;
  std::string_view spelling;       // as written in YAML
  std::string_view pir_attribute;  // PIR attribute class (gen_utils.py attr_types_map); empty for tensors
  std::string_view opmaker_type;   // parse_utils.py data_type of Scalar*/IntArray attributes; empty otherwise
};

const ArgTypeInfo& arg_type_info(ArgType type);
std::optional<ArgType> parse_arg_type(std::string_view spelling);
/// Every accepted spelling, for did-you-mean suggestions and the schema.
const std::vector<std::string>& arg_type_spellings();

inline bool is_tensor_type(ArgType t) { return t == ArgType::kTensor || t == ArgType::kTensorList; }
inline bool is_scalar_type(ArgType t) {
  return t == ArgType::kScalar || t == ArgType::kScalarBool || t == ArgType::kScalarInt || t == ArgType::kScalarInt64 ||
         t == ArgType::kScalarFloat || t == ArgType::kScalarDouble;
}

enum class OutputType {
  kTensor,        // Tensor
  kTensorList,    // Tensor[]
  kSelectedRows,  // SelectedRows
};
std::string_view output_type_spelling(OutputType type);
std::optional<OutputType> parse_output_type(std::string_view spelling);
const std::vector<std::string>& output_type_spellings();

/// Tensor kinds of a kernel signature `{dense, selected_rows -> dense}`.
enum class TensorKind { kDense, kSelectedRows, kSparseCoo, kSparseCsr };
std::string_view tensor_kind_spelling(TensorKind kind);
std::optional<TensorKind> parse_tensor_kind(std::string_view spelling);
const std::vector<std::string>& tensor_kind_spellings();

/// How the C++ text of a default value was classified.
enum class DefaultKind {
  kInteger,       // -1, 10000L, 0x10
  kFloat,         // 1.0f, .5f, 2., 1e-5
  kBool,          // true, false
  kString,        // "NCHW"
  kList,          // {}, {1, 1}, {"a"}
  kEnumConstant,  // DataType::FLOAT32, INT64_MAX: a name or qualified name
  kExpression,    // anything else that parses: (2 << 12) - 1, 1.0f/8, CPUPlace()
};
std::string_view default_kind_name(DefaultKind kind);

/// kforge extension `pattern`: CINN's op pattern kinds.
enum class PatternKind { kElementwise, kBroadcast, kInjective, kReduction, kOutFusible, kOpaque };
std::string_view pattern_kind_spelling(PatternKind kind);
std::optional<PatternKind> parse_pattern_kind(std::string_view spelling);
const std::vector<std::string>& pattern_kind_spellings();

/// kforge extension `row_pattern`: a named row-reduction composition (reduce -> broadcast -> elementwise over
/// the same rows) that the fused-kernel generator implements whole.
enum class RowPatternKind { kSoftmax, kLayerNorm, kRmsNorm };
std::string_view row_pattern_spelling(RowPatternKind kind);
std::optional<RowPatternKind> parse_row_pattern(std::string_view spelling);
const std::vector<std::string>& row_pattern_spellings();

}  // namespace kforge::opdef
