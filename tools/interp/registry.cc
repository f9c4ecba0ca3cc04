#include "registry.h"

#include <algorithm>

namespace kforge::interp {

using kforge::Status;
using kforge::Tensor;

const OpRegistry& OpRegistry::builtin() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_creation_ops(r);
    register_manipulation_ops(r);
    register_nn_ops(r);
    register_math_ops(r);  // --- math/compare ops (issue 11) ---
    register_index_nn_ops(r);  // issue 11
    register_graphnet_ops(r);  // issue 34
    register_detection_ops(r);  // issue 34
    return r;
  }();
  return registry;
}

const OpFn* OpRegistry::find(const std::string& name) const {
  auto it = ops_.find(name);
  if (it != ops_.end()) return &it->second;
  // The in-place twin `name_` runs the same kernel; the interpreter gives it a fresh output.
  if (!name.empty() && name.back() == '_') {
    it = ops_.find(name.substr(0, name.size() - 1));
    if (it != ops_.end()) return &it->second;
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : ops_) out.push_back(entry.first);
  std::sort(out.begin(), out.end());
  return out;
}

Status input_tensor(const std::vector<RtValue>& inputs, size_t i, const char* what, const Tensor** out) {
  if (i >= inputs.size() || inputs[i].kind == RtValue::Kind::kAbsent) {
    return Status::Error("missing input '", what, "' (operand ", i, ")");
  }
  if (inputs[i].kind == RtValue::Kind::kList) return Status::Error("input '", what, "' must be a tensor, got a vector");
  *out = &inputs[i].tensor;
  return Status::OK();
}

const Tensor* optional_tensor(const std::vector<RtValue>& inputs, size_t i) {
  if (i >= inputs.size() || inputs[i].kind != RtValue::Kind::kTensor) return nullptr;
  return &inputs[i].tensor;
}

std::vector<const Tensor*> input_list(const std::vector<RtValue>& inputs, size_t i) {
  std::vector<const Tensor*> out;
  if (i >= inputs.size()) return out;
  if (inputs[i].kind == RtValue::Kind::kTensor) out.push_back(&inputs[i].tensor);
  if (inputs[i].kind == RtValue::Kind::kList) {
    for (const Tensor& t : inputs[i].list) out.push_back(&t);
  }
  return out;
}

Status int_array_arg(const std::vector<RtValue>& inputs, size_t i, const AttrMap& attrs, std::string_view name,
                     kforge::IntArray* out, const std::vector<int64_t>* fallback) {
  if (i < inputs.size() && inputs[i].kind == RtValue::Kind::kTensor) {
    return kforge::int_array_from_tensor(inputs[i].tensor, out);
  }
  if (i < inputs.size() && inputs[i].kind == RtValue::Kind::kList) {
    std::vector<const Tensor*> items = input_list(inputs, i);
    return kforge::int_array_from_tensors(kforge::TensorList{items.data(), items.size()}, out);
  }
  std::vector<int64_t> values;
  if (fallback != nullptr) {
    KFORGE_RETURN_IF_ERROR(attrs.get_ints(name, &values, *fallback));
  } else {
    KFORGE_RETURN_IF_ERROR(attrs.get_ints(name, &values));
  }
  *out = kforge::IntArray(std::move(values));
  return Status::OK();
}

Status scalar_arg(const std::vector<RtValue>& inputs, size_t i, const AttrMap& attrs, std::string_view name,
                  kforge::Scalar* out, const kforge::Scalar* fallback) {
  if (i < inputs.size() && inputs[i].kind == RtValue::Kind::kTensor) {
    return kforge::scalar_from_tensor(inputs[i].tensor, out);
  }
  if (fallback != nullptr) return attrs.get_scalar(name, out, *fallback);
  return attrs.get_scalar(name, out);
}

Status allocate(Tensor* t) {
  t->place = kforge::CPUPlace();
  return t->allocate();
}

}  // namespace kforge::interp
