// The reference interpreter's op registry: op name -> implementation, looked up by name at run time, as an
// executor does. Each implementation reads its attributes from the op's AttrMap by name, runs the op's
// infer_meta function, allocates every output (fresh memory on every call) and calls the kernel of
// kernels/.
//
// Operands arrive in PIR order: the tensor inputs, then the mutable attributes (op_compat.yaml) as tensors or
// as vectors of one-element tensors. A program may instead give a mutable attribute as an ordinary attribute
// (program YAML often does); implementations accept both, the operand winning when present.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attr_map.h"
#include "kforge_runtime.h"

namespace kforge::interp {

/// A run-time value: absent (a null operand), one tensor, or a vector of tensors (builtin.combine results,
/// Tensor[] outputs).
struct RtValue {
  enum class Kind { kAbsent, kTensor, kList };
  Kind kind = Kind::kAbsent;
  kforge::Tensor tensor;
  std::vector<kforge::Tensor> list;

  static RtValue of(kforge::Tensor t) {
    RtValue v;
    v.kind = Kind::kTensor;
    v.tensor = std::move(t);
    return v;
  }
  static RtValue of_list(std::vector<kforge::Tensor> ts) {
    RtValue v;
    v.kind = Kind::kList;
    v.list = std::move(ts);
    return v;
  }
  bool present() const { return kind != Kind::kAbsent; }
};

using OpFn = std::function<kforge::Status(const kforge::KernelContext& ctx, const std::vector<RtValue>& inputs,
                                          const AttrMap& attrs, std::vector<RtValue>& outputs)>;

class OpRegistry {
 public:
  /// Every op of kernels/ops.yaml (by op YAML name; in-place twins `relu_` resolve to `relu`).
  static const OpRegistry& builtin();

  void add(std::string name, OpFn fn) { ops_[std::move(name)] = std::move(fn); }
  /// The implementation of `name` ("add", "batch_norm_"), or null.
  const OpFn* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::unordered_map<std::string, OpFn> ops_;
};

// Registration, one function per group of ops (ops_*.cc).
void register_elementwise_ops(OpRegistry& registry);
void register_creation_ops(OpRegistry& registry);
void register_manipulation_ops(OpRegistry& registry);
void register_nn_ops(OpRegistry& registry);
// --- math/compare ops (issue 11) ---
void register_math_ops(OpRegistry& registry);
// --- data movement / nn ops (issue 11) ---
void register_index_nn_ops(OpRegistry& registry);
// --- GraphNet's missing ops (issue 34) ---
void register_graphnet_ops(OpRegistry& registry);
void register_detection_ops(OpRegistry& registry);

// ---- helpers for the implementations -------------------------------------------------------------------------

/// The tensor of input `i`; an error naming `what` when it is absent or a list.
kforge::Status input_tensor(const std::vector<RtValue>& inputs, size_t i, const char* what, const kforge::Tensor** out);
/// The tensor of optional input `i`, or null when absent (or past the end).
const kforge::Tensor* optional_tensor(const std::vector<RtValue>& inputs, size_t i);
/// Input `i` as a list of tensors (a single tensor counts as a list of one); empty when absent.
std::vector<const kforge::Tensor*> input_list(const std::vector<RtValue>& inputs, size_t i);

/// A mutable IntArray: from operand `i` when present (an int tensor, or a vector of one-element tensors),
/// else from attribute `name` (with a default when `fallback` is given).
kforge::Status int_array_arg(const std::vector<RtValue>& inputs, size_t i, const AttrMap& attrs, std::string_view name,
                             kforge::IntArray* out, const std::vector<int64_t>* fallback = nullptr);
/// A mutable Scalar: from operand `i` when present, else from attribute `name`.
kforge::Status scalar_arg(const std::vector<RtValue>& inputs, size_t i, const AttrMap& attrs, std::string_view name,
                          kforge::Scalar* out, const kforge::Scalar* fallback = nullptr);

/// Allocates `t` (dtype and dims already set by infer_meta) on the CPU.
kforge::Status allocate(kforge::Tensor* t);

/// The kernel context for a kernel whose data type is `dtype`.
inline kforge::KernelContext context_for(const kforge::KernelContext& base, kforge::DataType dtype) {
  kforge::KernelContext ctx = base;
  ctx.dtype = dtype;
  return ctx;
}

}  // namespace kforge::interp
