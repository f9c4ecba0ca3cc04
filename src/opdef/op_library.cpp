#include "opdef/op_library.h"

#include <algorithm>

namespace kforge::opdef {

namespace {

template <typename T>
const T* find_named(const std::vector<T>& items, std::string_view name) {
  for (const T& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}

}  // namespace

bool KernelFunc::takes_sparse() const {
  auto sparse = [](TensorKind k) { return k == TensorKind::kSparseCoo || k == TensorKind::kSparseCsr; };
  return std::any_of(input_kinds.begin(), input_kinds.end(), sparse) ||
         std::any_of(output_kinds.begin(), output_kinds.end(), sparse);
}

bool Call::has_keywords() const {
  return std::any_of(keywords.begin(), keywords.end(), [](const std::string& k) { return !k.empty(); });
}

const Input* Op::find_input(std::string_view n) const { return find_named(inputs, n); }
const Attribute* Op::find_attribute(std::string_view n) const { return find_named(attributes, n); }
const Output* Op::find_output(std::string_view n) const { return find_named(outputs, n); }

std::vector<std::string> Op::effective_kernel_param() const {
  std::vector<std::string> out;
  if (kernel && kernel->param) {
    for (const ParamItem& p : *kernel->param) out.push_back(p.text);
    return out;
  }
  for (const Input& in : inputs) out.push_back(in.name);
  for (const Attribute& a : attributes) out.push_back(a.name);
  return out;
}

std::vector<std::string> Op::effective_infer_meta_param() const {
  if (infer_meta && infer_meta->param) {
    std::vector<std::string> out;
    for (const ParamItem& p : *infer_meta->param) out.push_back(p.text);
    return out;
  }
  return effective_kernel_param();
}

const Op* OpLibrary::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &ops_[it->second];
}

const Op* OpLibrary::find_sparse(std::string_view name) const {
  auto it = by_sparse_name_.find(name);
  return it == by_sparse_name_.end() ? nullptr : &ops_[it->second];
}

OpLibrary& OpLibrary::operator=(const OpLibrary& other) {
  if (this != &other) {
    ops_ = other.ops_;
    files_ = other.files_;
    index();
  }
  return *this;
}

void OpLibrary::index() {
  by_name_.clear();
  by_sparse_name_.clear();
  by_name_.reserve(ops_.size());
  for (size_t i = 0; i < ops_.size(); ++i) (ops_[i].sparse ? by_sparse_name_ : by_name_).emplace(ops_[i].name, i);
}

}  // namespace kforge::opdef
