// Value types of the program model.
//
// PIR has many type classes; kforge models the ones passes and codegen look into (element types, dense
// tensors, vectors) and keeps every other type by its dialect-qualified name, with its element type and
// dims where the format gives them, so nothing a reader meets is lost or crashes the reader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "program/dtype.h"

namespace kforge::ir {

enum class TypeKind : uint8_t {
  kNone,         // unknown or null (<<NULL TYPE>>, JSON {"#":"NULL"}, a YAML value with no declared type)
  kElement,      // a plain element type: f32, i64, b, index, ...
  kDenseTensor,  // builtin.tensor (and the older pd_op.tensor); lowered kernel tensors carry `place`
  kVector,       // vec[...] (the result of builtin.combine)
  kOther,        // any other dialect type, by name: pd_op.tensor_array, pd_op.selectedrows, cf.stack, ...
};

/// dims entry for a dimension unknown until run time (PIR prints -1).
constexpr int64_t kDynamicDim = -1;

struct Type {
  TypeKind kind = TypeKind::kNone;
  /// kElement: the type itself. kDenseTensor: the element type. kOther: the element type when the format
  /// gives one (tensor arrays, selected rows, dist tensors), else kUndefined.
  DataType dtype = DataType::kUndefined;
  /// kDenseTensor (and kOther when known): one entry per dimension; -1 (kDynamicDim) is dynamic. Rank 0
  /// (no entries) is a scalar tensor.
  std::vector<int64_t> dims;
  /// kDenseTensor: the layout, LoD and offset of pir::DenseTensorType. The text format does not print
  /// them; its tensors get NCHW (what Paddle's Python front end creates and what PIR JSON files hold).
  DataLayout layout = DataLayout::kNCHW;
  std::vector<std::vector<uint64_t>> lod;
  uint64_t offset = 0;
  /// kDenseTensor of the kernel dialect (`gpu_tensor<...>`, JSON never has them): where it is allocated.
  std::optional<Place> place;
  /// kVector: the element types, in order.
  std::vector<Type> elements;
  /// kOther: the dialect-qualified name as Paddle prints it ("pd_op.tensor_array", "cf.stack",
  /// "gpu_tensor_array", "pd_dist.tensor"), and the text between its angle brackets, verbatim ("f32",
  /// "4x4xf32, mesh_shape:[2],..."; empty when the type has none).
  std::string name;
  std::string params;

  static Type none() { return {}; }
  static Type element(DataType dtype);
  static Type tensor(DataType dtype, std::vector<int64_t> dims);
  static Type vector(std::vector<Type> elements);
  static Type other(std::string name, std::string params = {});

  bool is_none() const { return kind == TypeKind::kNone; }
  bool is_tensor() const { return kind == TypeKind::kDenseTensor; }
  bool is_vector() const { return kind == TypeKind::kVector; }
  size_t rank() const { return dims.size(); }
  /// True when every dim is known (a dense tensor with no -1).
  bool has_static_shape() const;
  /// Element count of a dense tensor with a static shape (1 for rank 0); nullopt when dynamic.
  std::optional<int64_t> static_numel() const;

  friend bool operator==(const Type&, const Type&) = default;
};

/// Prints a type as the current PIR printer does: "tensor<-1x3xf32>", "vec[tensor<2xf32>,f32]", "f32",
/// "<<NULL TYPE>>", "gpu_tensor<2xf32>", "pd_op.tensor_array<f32>", "cf.stack". Layout, LoD and offset
/// are not printed (PIR does not print them either).
std::string to_string(const Type& type);

}  // namespace kforge::ir
