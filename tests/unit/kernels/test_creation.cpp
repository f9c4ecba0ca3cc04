// Creation and copy kernels (full, full_like, full_int_array, assign, assign_value, shape, dropout).
#include <catch2/catch.hpp>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

TEST_CASE("full fills a shape with a value of the requested dtype") {
  Tensor out = output_from([](Tensor* o) { return m::CreateInferMeta({2, 2}, DataType::kFloat32, o); });
  CHECK(dims_of(out) == std::vector<int64_t>{2, 2});
  REQUIRE(k::full(cpu(DataType::kFloat32), {2, 2}, 1.5, DataType::kFloat32, &out).ok());
  check_close<float>(out, {1.5f, 1.5f, 1.5f, 1.5f});
  Tensor ints = output_from([](Tensor* o) { return m::CreateInferMeta({3}, DataType::kInt64, o); });
  REQUIRE(k::full(cpu(DataType::kInt64), {3}, 3.0, DataType::kInt64, &ints).ok());
  CHECK(values<int64_t>(ints) == std::vector<int64_t>{3, 3, 3});
  Tensor flags = output_from([](Tensor* o) { return m::CreateInferMeta({2}, DataType::kBool, o); });
  REQUIRE(k::full(cpu(), {2}, true, DataType::kBool, &flags).ok());
  CHECK(values<bool>(flags) == std::vector<bool>{true, true});
  Tensor scalar = output_from([](Tensor* o) { return m::CreateInferMeta({}, DataType::kFloat64, o); });
  CHECK(scalar.ndim == 0);
  REQUIRE(k::full(cpu(), {}, -2.0, DataType::kFloat64, &scalar).ok());
  check_close<double>(scalar, {-2});
  Tensor bad;
  CHECK(error_of(m::CreateInferMeta({2, -1}, DataType::kFloat32, &bad)).find("negative") != std::string::npos);
  CHECK(error_of(k::full(cpu(), {3}, 1.0, DataType::kFloat32, &out)).find("expected [3]") != std::string::npos);
  CHECK(error_of(k::full(cpu(DataType::kInt32), {2, 2}, 1.0, DataType::kFloat32, &out)).find("kernel dtype int32") !=
        std::string::npos);
}

TEST_CASE("full_like takes x's dims and, when undefined, its dtype") {
  Tensor x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor same = output_from([&](Tensor* o) { return m::CreateLikeInferMeta(x, DataType::kUndefined, o); });
  CHECK(same.dtype == DataType::kInt32);
  CHECK(dims_of(same) == std::vector<int64_t>{2, 3});
  REQUIRE(k::full_like(cpu(DataType::kInt32), x, 7, DataType::kUndefined, &same).ok());
  CHECK(values<int32_t>(same) == std::vector<int32_t>(6, 7));
  Tensor f = output_from([&](Tensor* o) { return m::CreateLikeInferMeta(x, DataType::kFloat32, o); });
  REQUIRE(k::full_like(cpu(DataType::kFloat32), x, 0.5, DataType::kFloat32, &f).ok());
  check_close<float>(f, std::vector<float>(6, 0.5f));
}

TEST_CASE("full_int_array makes a 1-D tensor of its values") {
  std::vector<int64_t> value = {3, -1, 4};
  Tensor out = output_from([&](Tensor* o) { return m::CreateVecShapeInferMeta(value, DataType::kInt64, o); });
  CHECK(dims_of(out) == std::vector<int64_t>{3});
  REQUIRE(k::full_int_array(cpu(DataType::kInt64), value, DataType::kInt64, &out).ok());
  CHECK(values<int64_t>(out) == value);
  Tensor as32 = output_from([&](Tensor* o) { return m::CreateVecShapeInferMeta(value, DataType::kInt32, o); });
  REQUIRE(k::full_int_array(cpu(), value, DataType::kInt32, &as32).ok());
  CHECK(values<int32_t>(as32) == std::vector<int32_t>{3, -1, 4});
}

TEST_CASE("assign copies, assign_value writes literal values") {
  Tensor x = f32({2}, {1.25f, -3});
  Tensor out = output_from([&](Tensor* o) { return m::UnchangedInferMeta(x, o); });
  REQUIRE(k::assign_raw(cpu(), x, &out).ok());
  check_close<float>(out, {1.25f, -3});
  REQUIRE(k::assign_raw(cpu(), x, &x).ok());  // in place: a no-op
  check_close<float>(x, {1.25f, -3});

  std::vector<int> shape = {2, 2};
  std::vector<Scalar> vals = {1.5, 2, -1, 0.25f};
  Tensor av = output_from([&](Tensor* o) { return m::AssignValueInferMeta(shape, DataType::kFloat32, o); });
  REQUIRE(k::assign_value(cpu(DataType::kFloat32), shape, DataType::kFloat32, vals, &av).ok());
  check_close<float>(av, {1.5f, 2, -1, 0.25f});
  Tensor ai = output_from([&](Tensor* o) { return m::AssignValueInferMeta({3}, DataType::kInt32, o); });
  REQUIRE(k::assign_value(cpu(), {3}, DataType::kInt32, {Scalar(7), Scalar(8), Scalar(9)}, &ai).ok());
  CHECK(values<int32_t>(ai) == std::vector<int32_t>{7, 8, 9});
  CHECK(error_of(k::assign_value(cpu(), {3}, DataType::kInt32, {Scalar(1)}, &ai)).find("1 values") !=
        std::string::npos);
}

TEST_CASE("shape and shape64") {
  Tensor x = empty(DataType::kFloat32, {2, 3, 4});
  Tensor s = output_from([&](Tensor* o) { return m::ShapeInferMeta(x, o); });
  CHECK(s.dtype == DataType::kInt32);
  REQUIRE(k::shape(cpu(), x, &s).ok());
  CHECK(values<int32_t>(s) == std::vector<int32_t>{2, 3, 4});
  Tensor s64 = output_from([&](Tensor* o) { return m::Shape64InferMeta(x, o); });
  CHECK(s64.dtype == DataType::kInt64);
  REQUIRE(k::shape64(cpu(), x, &s64).ok());
  CHECK(values<int64_t>(s64) == std::vector<int64_t>{2, 3, 4});
  Tensor scalar = f32({}, {1});
  Tensor s0 = output_from([&](Tensor* o) { return m::ShapeInferMeta(scalar, o); });
  CHECK(dims_of(s0) == std::vector<int64_t>{0});
  REQUIRE(k::shape(cpu(), scalar, &s0).ok());
}

TEST_CASE("numel: the element count as a 0-D int64") {
  Tensor x = empty(DataType::kFloat32, {2, 3, 4});
  Tensor n = output_from([&](Tensor* o) { return m::NumelInferMeta(x, o); });
  CHECK(n.dtype == DataType::kInt64);
  CHECK(dims_of(n).empty());
  REQUIRE(k::numel(cpu(), x, &n).ok());
  CHECK(values<int64_t>(n) == std::vector<int64_t>{24});
  Tensor scalar = f32({}, {1});
  REQUIRE(k::numel(cpu(), scalar, &n).ok());
  CHECK(values<int64_t>(n) == std::vector<int64_t>{1});
  Tensor none = empty(DataType::kInt32, {3, 0});
  REQUIRE(k::numel(cpu(), none, &n).ok());
  CHECK(values<int64_t>(n) == std::vector<int64_t>{0});
  Tensor wrong = empty(DataType::kInt32, {});
  CHECK(error_of(k::numel(cpu(), x, &wrong)).find("int64") != std::string::npos);
}

TEST_CASE("dropout at inference: upscale_in_train is identity, downgrade_in_infer scales") {
  Tensor x = f32({4}, {1, 2, 3, 4});
  Tensor out, mask;
  REQUIRE(m::DropoutInferMeta(x, nullptr, 0.25, true, "upscale_in_train", 0, false, &out, &mask).ok());
  CHECK(mask.dtype == DataType::kUInt8);
  CHECK(dims_of(mask) == std::vector<int64_t>{4});
  REQUIRE(out.allocate().ok());
  REQUIRE(mask.allocate().ok());
  REQUIRE(k::dropout(cpu(), x, nullptr, 0.25, true, "upscale_in_train", 0, false, &out, &mask).ok());
  check_close<float>(out, {1, 2, 3, 4});
  CHECK(values<uint8_t>(mask) == std::vector<uint8_t>{1, 1, 1, 1});
  REQUIRE(k::dropout(cpu(), x, nullptr, 0.25, true, "downgrade_in_infer", 0, false, &out, nullptr).ok());
  check_close<float>(out, {0.75f, 1.5f, 2.25f, 3});
  CHECK(error_of(m::DropoutInferMeta(x, nullptr, 1.5, true, "upscale_in_train", 0, false, &out, &mask))
            .find("p must be in [0, 1]") != std::string::npos);
  CHECK(error_of(k::dropout(cpu(), x, nullptr, 0.5, true, "sometimes", 0, false, &out, nullptr)).find("mode") !=
        std::string::npos);
}

TEST_CASE("dropout in training is seeded and deterministic") {
  const int n = 10000;
  Tensor x = f32({n}, std::vector<float>(n, 1.0f));
  Tensor a = empty(DataType::kFloat32, {n}), b = empty(DataType::kFloat32, {n}), c = empty(DataType::kFloat32, {n});
  Tensor mask = empty(DataType::kUInt8, {n});
  REQUIRE(k::dropout(cpu(), x, nullptr, 0.25, false, "upscale_in_train", 7, true, &a, &mask).ok());
  REQUIRE(k::dropout(cpu(), x, nullptr, 0.25, false, "upscale_in_train", 7, true, &b, nullptr).ok());
  REQUIRE(k::dropout(cpu(), x, nullptr, 0.25, false, "upscale_in_train", 8, true, &c, nullptr).ok());
  CHECK(values<float>(a) == values<float>(b));
  CHECK(values<float>(a) != values<float>(c));
  int dropped = 0;
  for (int i = 0; i < n; ++i) {
    float v = a.data_as<float>()[i];
    uint8_t keep = mask.data_as<uint8_t>()[i];
    CHECK((keep ? v == Approx(1.0f / 0.75f) : v == 0.0f));
    dropped += keep == 0;
  }
  CHECK(dropped > n / 5);
  CHECK(dropped < n * 3 / 10);
  // The seed tensor wins over the attribute.
  Tensor seed = i32({1}, {7});
  REQUIRE(k::dropout(cpu(), x, &seed, 0.25, false, "upscale_in_train", 99, false, &c, nullptr).ok());
  CHECK(values<float>(c) == values<float>(a));
}
