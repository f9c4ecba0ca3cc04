// Calls the op library that `kforge ops` generated from ops.yaml (demo_api.h) and prints the results.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "demo_api.h"

namespace {

kforge::Tensor make_tensor(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  kforge::Tensor t;
  t.dtype = kforge::DataType::kFloat32;
  if (!t.set_dims(dims).ok() || !t.allocate().ok()) return kforge::Tensor{};
  std::memcpy(t.data, values.data(), values.size() * sizeof(float));
  return t;
}

void print(const char* label, const kforge::Tensor& t) {
  std::printf("%-28s %-8s %-9s [", label, kforge::name_of(t.dtype), t.dims_string().c_str());
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i != 0) std::printf(", ");
    if (t.dtype == kforge::DataType::kFloat32) {
      std::printf("%g", static_cast<double>(t.data_as<const float>()[i]));
    } else if (t.dtype == kforge::DataType::kInt64) {
      std::printf("%lld", static_cast<long long>(t.data_as<const int64_t>()[i]));
    } else {
      std::printf("?");
    }
  }
  std::printf("]\n");
}

bool check(const kforge::Status& status, const char* what) {
  if (!status.ok()) std::printf("%s failed: %s\n", what, status.message().c_str());
  return status.ok();
}

}  // namespace

#define CALL(expr) \
  if (!check((expr), #expr)) return 1

int main() {
  kforge::Tensor a = make_tensor({2, 3}, {1, -2, 3, -4, 5, -6});
  kforge::Tensor row = make_tensor({3}, {10, 20, 30});
  print("a", a);
  print("row", row);

  kforge::Tensor out;
  CALL(demo::add(a, row, &out));  // broadcasting
  print("add(a, row)", out);
  CALL(demo::relu(a, &out));
  print("relu(a)", out);
  CALL(demo::scale(a, &out, 2.0, 1.0));  // bias_after_scale defaults to true
  print("scale(a, 2, 1)", out);
  CALL(demo::matmul(a, a, &out, false, true));
  print("matmul(a, a^T)", out);
  CALL(demo::softmax(row, &out));  // axis = -1
  print("softmax(row)", out);
  CALL(demo::sum(a, &out));  // every axis, dtype of the input
  print("sum(a)", out);

  kforge::Tensor view;
  CALL(demo::reshape(a, &view, {3, 2}));
  print("reshape(a, [3, 2])", view);
  std::printf("%-28s %s\n", "  shares a's buffer", view.data == a.data ? "yes" : "no");

  const kforge::Tensor* pair[] = {&a, &a};
  CALL(demo::concat(kforge::TensorList{pair, 2}, &out));  // axis = 0
  print("concat([a, a])", out);
  std::vector<kforge::Tensor> parts;
  CALL(demo::split_with_num(a, &parts, 3, 1));
  for (size_t i = 0; i < parts.size(); ++i) print(("split_with_num(a, 3)[" + std::to_string(i) + "]").c_str(), parts[i]);

  // scale and bias are optional (null), mean and variance intermediate (not asked for).
  CALL(demo::layer_norm(a, nullptr, nullptr, &out, nullptr, nullptr));
  print("layer_norm(a)", out);

  CALL(demo::full(&out, {2, 2}, 7.0));  // float32 on the CPU by default
  print("full([2, 2], 7)", out);
  CALL(demo::full_like(row, &out, 0.5));
  print("full_like(row, 0.5)", out);
  CALL(demo::ones(&out, {3}, kforge::DataType::kInt64));  // invoke: full(shape, 1, dtype, place)
  print("ones([3], int64)", out);

  kforge::Tensor b = make_tensor({2, 3}, {1, -2, 3, -4, 5, -6});
  void* const before = b.data;
  CALL(demo::relu_(b));  // in place
  print("relu_(b)", b);
  std::printf("%-28s %s\n", "  same buffer", b.data == before ? "yes" : "no");

  // Errors come back as a status, not as a crash.
  const kforge::Status bad = demo::add(a, make_tensor({4}, {1, 2, 3, 4}), &out);
  std::printf("%-28s %s\n", "add(a, [4 elements])", bad.ok() ? "ok?!" : bad.message().c_str());
  const kforge::Status missing = demo::relu(kforge::Tensor{}, &out);
  std::printf("%-28s %s\n", "relu(undefined)", missing.ok() ? "ok?!" : missing.message().c_str());

  // The args-info table.
  const demo::OpArgsInfo* info = demo::find_op_args_info("scale");
  if (info == nullptr) return 1;
  std::printf("args of %s:", info->name);
  for (size_t i = 0; i < info->num_inputs; ++i) std::printf(" %s %s,", info->inputs[i].type, info->inputs[i].name);
  for (size_t i = 0; i < info->num_attributes; ++i) {
    const demo::ArgInfo& attr = info->attributes[i];
    std::printf(" %s %s = %s%s%s", attr.type, attr.name, attr.default_value, attr.mutable_attribute ? " (mutable)" : "",
                i + 1 < info->num_attributes ? "," : "\n");
  }
  size_t count = 0;
  demo::op_args_info_list(&count);
  std::printf("%zu ops in the args-info table\n", count);
  return 0;
}
