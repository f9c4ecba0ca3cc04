// Test helpers: owning tensors from literal values, and reading them back.
#ifndef KFORGE_TESTS_UNIT_KERNELS_TENSOR_BUILDER_H_
#define KFORGE_TESTS_UNIT_KERNELS_TENSOR_BUILDER_H_

#include <catch2/catch.hpp>

#include <cstring>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include "kforge_kernels.h"
#include "kforge_runtime.h"

namespace kforge::test {

// An allocated CPU tensor of `dims`; elements are left as the allocator gives them.
inline Tensor empty(DataType dtype, std::vector<int64_t> dims) {
  Tensor t;
  t.dtype = dtype;
  REQUIRE(t.set_dims(dims).ok());
  REQUIRE(t.allocate().ok());
  return t;
}

// A tensor holding `values` (converted to the C++ type of `dtype`).
template <typename T>
Tensor make(DataType dtype, std::vector<int64_t> dims, std::vector<T> values) {
  Tensor t = empty(dtype, dims);
  REQUIRE(static_cast<size_t>(t.numel()) == values.size());
  REQUIRE(sizeof(T) == size_of(dtype));
  if (!values.empty()) std::memcpy(t.data, values.data(), values.size() * sizeof(T));
  return t;
}

inline Tensor f32(std::vector<int64_t> dims, std::vector<float> values) {
  return make<float>(DataType::kFloat32, dims, values);
}
inline Tensor f64(std::vector<int64_t> dims, std::vector<double> values) {
  return make<double>(DataType::kFloat64, dims, values);
}
inline Tensor i32(std::vector<int64_t> dims, std::vector<int32_t> values) {
  return make<int32_t>(DataType::kInt32, dims, values);
}
inline Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return make<int64_t>(DataType::kInt64, dims, values);
}
inline Tensor boolean(std::vector<int64_t> dims, std::vector<uint8_t> values) {
  Tensor t = empty(DataType::kBool, dims);
  REQUIRE(static_cast<size_t>(t.numel()) == values.size());
  for (size_t i = 0; i < values.size(); ++i) t.data_as<bool>()[i] = values[i] != 0;
  return t;
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  REQUIRE(sizeof(T) == size_of(t.dtype));
  const T* p = t.data_as<const T>();
  return std::vector<T>(p, p + t.numel());
}

// Runs an infer-meta call into a fresh tensor, then allocates it, as generated code does.
template <typename Meta>
Tensor output_from(Meta meta) {
  Tensor out;
  Status s = meta(&out);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(out.allocate().ok());
  return out;
}

inline KernelContext cpu(DataType dtype = DataType::kUndefined) {
  KernelContext ctx;
  ctx.dtype = dtype;
  return ctx;
}

// Element-wise comparison with a tolerance, reporting the first mismatch.
template <typename T>
void check_close(const Tensor& t, const std::vector<T>& expected, double tolerance = 1e-6) {
  std::vector<T> got = values<T>(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(static_cast<double>(got[i]) == Approx(static_cast<double>(expected[i])).margin(tolerance));
  }
}

inline std::vector<int64_t> dims_of(const Tensor& t) { return t.shape(); }

// The error message of a status that must be an error.
inline std::string error_of(const Status& s) {
  REQUIRE_FALSE(s.ok());
  return s.message();
}

/// A float32 tensor of `dims` holding start, start + 1, ... in row-major order.
inline Tensor iota(std::vector<int64_t> dims, float start = 0) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return f32(dims, v);
}

}  // namespace kforge::test

#endif  // KFORGE_TESTS_UNIT_KERNELS_TENSOR_BUILDER_H_
