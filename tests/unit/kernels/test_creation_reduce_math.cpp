// Creation (kernels/creation_math.cc) and scan / reduction / selection kernels (reduce_math.cc) with their
// infer-meta: hand-computed values (several from Paddle 3.3 itself, noted) and error statuses for bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

TEST_CASE("full_with_tensor converts its one value to dtype") {
  Tensor value = f32({1}, {2.7f});
  Tensor out = output_from([&](Tensor* o) { return m::FullWithTensorInferMeta(IntArray({2, 2}), DataType::kInt32, o); });
  REQUIRE(k::full_with_tensor(cpu(DataType::kInt32), value, IntArray({2, 2}), DataType::kInt32, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{2, 2, 2, 2});  // Paddle 3.3: 2.7 -> 2
  Tensor f = output_from([&](Tensor* o) { return m::FullWithTensorInferMeta(IntArray({3}), DataType::kFloat64, o); });
  REQUIRE(k::full_with_tensor(cpu(), i64({}, {-4}), IntArray({3}), DataType::kFloat64, &f).ok());
  CHECK(values<double>(f) == std::vector<double>{-4, -4, -4});
  CHECK(error_of(k::full_with_tensor(cpu(), f32({2}, {1, 2}), IntArray({3}), DataType::kFloat64, &f))
            .find("one element") != std::string::npos);
  CHECK(error_of(k::full_with_tensor(cpu(), value, IntArray({4}), DataType::kFloat64, &f)).find("dims") !=
        std::string::npos);
  Tensor bad;
  CHECK(error_of(m::FullWithTensorInferMeta(IntArray({2, -1}), DataType::kFloat32, &bad)).find("negative") !=
        std::string::npos);
}

TEST_CASE("randint: deterministic, inside [low, high), every value drawn; errors") {
  const IntArray shape({40, 10});
  Tensor out = output_from([&](Tensor* o) { return m::RandintInferMeta(-3, 4, shape, DataType::kInt64, o); });
  REQUIRE(k::randint(cpu(DataType::kInt64), -3, 4, shape, DataType::kInt64, &out).ok());
  std::vector<int64_t> a = values<int64_t>(out);
  REQUIRE(k::randint(cpu(DataType::kInt64), -3, 4, shape, DataType::kInt64, &out).ok());
  CHECK(a == values<int64_t>(out));
  for (int64_t v : a) CHECK((v >= -3 && v < 4));
  CHECK(std::set<int64_t>(a.begin(), a.end()).size() == 7);
  Tensor i32 = output_from([&](Tensor* o) { return m::RandintInferMeta(0, 2, shape, DataType::kInt32, o); });
  REQUIRE(k::randint(cpu(DataType::kInt32), 0, 2, shape, DataType::kInt32, &i32).ok());
  for (int32_t v : values<int32_t>(i32)) CHECK((v == 0 || v == 1));
  Tensor bad;
  CHECK(error_of(m::RandintInferMeta(2, 2, shape, DataType::kInt64, &bad)).find("less than high") != std::string::npos);
  CHECK(error_of(m::RandintInferMeta(0, 2, shape, DataType::kFloat32, &bad)).find("int32 or int64") !=
        std::string::npos);
}

TEST_CASE("uniform: deterministic per seed, inside [min, max)") {
  const IntArray shape({64, 8});
  auto draw = [&](int seed, DataType dtype, double lo, double hi) {
    Tensor out = output_from([&](Tensor* o) { return m::UniformRandomInferMeta(shape, dtype, o); });
    REQUIRE(k::uniform(cpu(dtype), shape, dtype, Scalar(lo), Scalar(hi), seed, &out).ok());
    return out;
  };
  std::vector<float> a = values<float>(draw(7, DataType::kFloat32, -1, 1));
  std::vector<float> b = values<float>(draw(7, DataType::kFloat32, -1, 1));
  std::vector<float> c = values<float>(draw(8, DataType::kFloat32, -1, 1));
  CHECK(a == b);
  CHECK(a != c);
  double sum = 0;
  for (float v : a) {
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
    sum += v;
  }
  CHECK(std::fabs(sum / static_cast<double>(a.size())) < 0.1);  // 512 draws of mean 0, sd 0.58
  CHECK(std::set<float>(a.begin(), a.end()).size() > 500);
  std::vector<double> d = values<double>(draw(0, DataType::kFloat64, 2, 3));
  for (double v : d) CHECK((v >= 2 && v < 3));
  Tensor out = draw(1, DataType::kFloat32, 0, 1);
  CHECK(error_of(k::uniform(cpu(), shape, DataType::kFloat32, Scalar(1.0), Scalar(0.0), 1, &out)).find("min") !=
        std::string::npos);
  Tensor ints = output_from([&](Tensor* o) { return m::UniformRandomInferMeta(shape, DataType::kInt32, o); });
  CHECK(error_of(k::uniform(cpu(), shape, DataType::kInt32, Scalar(0.0), Scalar(1.0), 1, &ints)).find("int32") !=
        std::string::npos);
}

TEST_CASE("arange: Paddle's size rule and accumulated values") {
  Tensor out = output_from(
      [&](Tensor* o) { return m::ArangeInferMeta(Scalar(0.0), Scalar(1.0), Scalar(0.1), DataType::kFloat32, o); });
  CHECK(dims_of(out) == std::vector<int64_t>{10});
  REQUIRE(k::arange(cpu(DataType::kFloat32), Scalar(0.0), Scalar(1.0), Scalar(0.1), &out).ok());
  // Paddle 3.3 accumulates in float: the 8th value is 0.70000005, not 0.7f.
  CHECK(values<float>(out)[7] == 0.70000005f);
  CHECK(values<float>(out)[9] == 0.90000010f);

  Tensor ints = output_from(
      [&](Tensor* o) { return m::ArangeInferMeta(Scalar(int64_t{10}), Scalar(int64_t{-3}), Scalar(int64_t{-4}),
                                                  DataType::kInt64, o); });
  REQUIRE(k::arange(cpu(DataType::kInt64), Scalar(int64_t{10}), Scalar(int64_t{-3}), Scalar(int64_t{-4}), &ints).ok());
  CHECK(values<int64_t>(ints) == std::vector<int64_t>{10, 6, 2, -2});

  Tensor empty = output_from(
      [&](Tensor* o) { return m::ArangeInferMeta(Scalar(3), Scalar(3), Scalar(1), DataType::kInt32, o); });
  CHECK(dims_of(empty) == std::vector<int64_t>{0});

  Tensor bad;
  CHECK(error_of(m::ArangeInferMeta(Scalar(0), Scalar(5), Scalar(0), DataType::kInt64, &bad)).find("must not be 0") !=
        std::string::npos);
  CHECK(error_of(m::ArangeInferMeta(Scalar(0), Scalar(5), Scalar(-1), DataType::kInt64, &bad)).find("points away") !=
        std::string::npos);
  CHECK(error_of(m::ArangeInferMeta(Scalar(0.0), Scalar(std::nan("")), Scalar(1.0), DataType::kFloat32, &bad))
            .find("finite") != std::string::npos);
  Tensor three = output_from(
      [&](Tensor* o) { return m::ArangeInferMeta(Scalar(0), Scalar(3), Scalar(1), DataType::kInt32, o); });
  CHECK(error_of(k::arange(cpu(DataType::kInt32), Scalar(0), Scalar(4), Scalar(1), &three)).find("dims") !=
        std::string::npos);
}

TEST_CASE("one_hot: float32 rows, class ids checked") {
  Tensor x = i64({3}, {1, 0, 4});
  Tensor out = output_from([&](Tensor* o) { return m::OneHotInferMeta(x, Scalar(5), o); });
  CHECK(out.dtype == DataType::kFloat32);
  CHECK(dims_of(out) == std::vector<int64_t>{3, 5});
  REQUIRE(k::one_hot(cpu(), x, Scalar(5), &out).ok());
  CHECK(values<float>(out) == std::vector<float>{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  Tensor oob = i32({2}, {1, 7});
  Tensor oout = output_from([&](Tensor* o) { return m::OneHotInferMeta(oob, Scalar(5), o); });
  CHECK(error_of(k::one_hot(cpu(), oob, Scalar(5), &oout)).find("outside [0, num_classes = 5)") != std::string::npos);
  Tensor neg = i32({1}, {-1});
  Tensor nout = output_from([&](Tensor* o) { return m::OneHotInferMeta(neg, Scalar(5), o); });
  CHECK_FALSE(k::one_hot(cpu(), neg, Scalar(5), &nout).ok());
  Tensor bad;
  CHECK(error_of(m::OneHotInferMeta(f32({1}, {1}), Scalar(5), &bad)).find("int32 or int64") != std::string::npos);
}

TEST_CASE("cumsum: axis, flatten, exclusive, reverse") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto run = [&](const Scalar& axis, bool flatten, bool exclusive, bool reverse) {
    Tensor out = output_from(
        [&](Tensor* o) { return m::CumScalarAxisInferMeta(x, axis, flatten, exclusive, reverse, o); });
    REQUIRE(k::cumsum(cpu(), x, axis, flatten, exclusive, reverse, &out).ok());
    return values<float>(out);
  };
  CHECK(run(Scalar(1), false, false, false) == std::vector<float>{1, 3, 6, 4, 9, 15});
  CHECK(run(Scalar(0), false, false, false) == std::vector<float>{1, 2, 3, 5, 7, 9});
  CHECK(run(Scalar(-1), true, false, false) == std::vector<float>{1, 3, 6, 10, 15, 21});
  CHECK(run(Scalar(1), false, true, false) == std::vector<float>{0, 1, 3, 0, 4, 9});
  CHECK(run(Scalar(1), false, false, true) == std::vector<float>{6, 5, 3, 15, 11, 6});
  CHECK(run(Scalar(1), false, true, true) == std::vector<float>{5, 3, 0, 11, 6, 0});

  Tensor small = make<int8_t>(DataType::kInt8, {3}, {100, 100, -50});
  Tensor sout = output_from([&](Tensor* o) { return m::CumScalarAxisInferMeta(small, Scalar(0), false, false, false, o); });
  REQUIRE(k::cumsum(cpu(), small, Scalar(0), false, false, false, &sout).ok());
  CHECK(values<int8_t>(sout) == std::vector<int8_t>{100, -56, -106});  // wraps like int8 arithmetic
  Tensor bad;
  CHECK(error_of(m::CumScalarAxisInferMeta(x, Scalar(2), false, false, false, &bad)).find("axis 2") !=
        std::string::npos);
  // In place.
  REQUIRE(k::cumsum(cpu(), x, Scalar(1), false, true, false, &x).ok());
  CHECK(values<float>(x) == std::vector<float>{0, 1, 3, 0, 4, 9});
}

TEST_CASE("prod: axes, keepdim, reduce_all") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto run = [&](std::vector<int64_t> axis, bool keepdim, bool reduce_all, std::vector<int64_t> dims) {
    Tensor out = output_from(
        [&](Tensor* o) { return m::ReduceIntArrayAxisInferMetaBase(x, IntArray(axis), keepdim, reduce_all, o); });
    CHECK(dims_of(out) == dims);
    REQUIRE(k::prod(cpu(), x, IntArray(axis), keepdim, reduce_all, &out).ok());
    return values<float>(out);
  };
  CHECK(run({1}, false, false, {2}) == std::vector<float>{6, 120});
  CHECK(run({0}, true, false, {1, 3}) == std::vector<float>{4, 10, 18});
  CHECK(run({}, false, false, {}) == std::vector<float>{720});        // an empty axis reduces all (Paddle 3.3)
  CHECK(run({1}, false, true, {}) == std::vector<float>{720});        // reduce_all wins over axis
  CHECK(run({0, 1}, true, false, {1, 1}) == std::vector<float>{720});
  Tensor big = i64({2}, {int64_t{1} << 40, int64_t{1} << 30});
  Tensor bout = output_from([&](Tensor* o) { return m::ReduceIntArrayAxisInferMetaBase(big, IntArray(), false, true, o); });
  REQUIRE(k::prod(cpu(), big, IntArray(), false, true, &bout).ok());  // wraps modulo 2^64
  CHECK(values<int64_t>(bout)[0] == 0);
  Tensor bad;
  CHECK(error_of(m::ReduceIntArrayAxisInferMetaBase(x, IntArray({3}), false, false, &bad)).find("axis 3") !=
        std::string::npos);
}

TEST_CASE("argmax: first maximum, NaN never wins, flatten and keepdims") {
  Tensor x = f32({4}, {1, std::nanf(""), 3, 3});
  Tensor out = output_from([&](Tensor* o) { return m::ArgMinMaxInferMeta(x, Scalar(0), false, false, DataType::kInt64, o); });
  CHECK(dims_of(out).empty());
  REQUIRE(k::argmax(cpu(), x, Scalar(0), false, false, DataType::kInt64, &out).ok());
  CHECK(values<int64_t>(out)[0] == 2);  // Paddle 3.3's result

  Tensor m2 = i32({2, 3}, {5, 1, 5, 0, 7, 7});
  Tensor rows = output_from([&](Tensor* o) { return m::ArgMinMaxInferMeta(m2, Scalar(-1), true, false, DataType::kInt32, o); });
  CHECK(dims_of(rows) == std::vector<int64_t>{2, 1});
  REQUIRE(k::argmax(cpu(), m2, Scalar(-1), true, false, DataType::kInt32, &rows).ok());
  CHECK(values<int32_t>(rows) == std::vector<int32_t>{0, 1});
  Tensor cols = output_from([&](Tensor* o) { return m::ArgMinMaxInferMeta(m2, Scalar(0), false, false, DataType::kInt64, o); });
  REQUIRE(k::argmax(cpu(), m2, Scalar(0), false, false, DataType::kInt64, &cols).ok());
  CHECK(values<int64_t>(cols) == std::vector<int64_t>{0, 1, 1});
  Tensor flat = output_from([&](Tensor* o) { return m::ArgMinMaxInferMeta(m2, Scalar(0), true, true, DataType::kInt64, o); });
  CHECK(dims_of(flat) == std::vector<int64_t>{1, 1});
  REQUIRE(k::argmax(cpu(), m2, Scalar(0), true, true, DataType::kInt64, &flat).ok());
  CHECK(values<int64_t>(flat)[0] == 4);

  Tensor bad;
  CHECK(error_of(m::ArgMinMaxInferMeta(m2, Scalar(0), false, false, DataType::kFloat32, &bad)).find("int32 or int64") !=
        std::string::npos);
  CHECK(error_of(m::ArgMinMaxInferMeta(m2, Scalar(2), false, false, DataType::kInt64, &bad)).find("axis 2") !=
        std::string::npos);
}

TEST_CASE("topk: largest or smallest, sorted, NaN as the largest, ties in the order of Paddle's CPU kernel") {
  Tensor x = f32({2, 4}, {3, 1, 4, 1, 5, std::nanf(""), 2, 5});
  Tensor out, idx;
  auto run = [&](int64_t k_value, int axis, bool largest) {
    Tensor meta_out, meta_idx;
    REQUIRE(m::TopKInferMeta(x, Scalar(k_value), axis, largest, true, &meta_out, &meta_idx).ok());
    REQUIRE(meta_out.allocate().ok());
    REQUIRE(meta_idx.allocate().ok());
    REQUIRE(k::topk(cpu(), x, Scalar(k_value), axis, largest, true, &meta_out, &meta_idx).ok());
    out = meta_out;
    idx = meta_idx;
  };
  run(2, -1, true);
  CHECK(dims_of(out) == std::vector<int64_t>{2, 2});
  CHECK(idx.dtype == DataType::kInt64);
  CHECK(values<float>(out)[0] == 4);
  CHECK(values<float>(out)[1] == 3);
  CHECK(std::isnan(values<float>(out)[2]));
  CHECK(values<float>(out)[3] == 5);
  // The ties (5 at 0 and 3) come out as Paddle 3.3.1's paddle.topk gives them on the CPU: nth_element's order.
  CHECK(values<int64_t>(idx) == std::vector<int64_t>{2, 0, 1, 3});
  run(3, 1, false);
  CHECK(values<float>(out) == std::vector<float>{1, 1, 3, 2, 5, 5});
  CHECK(values<int64_t>(idx) == std::vector<int64_t>{1, 3, 0, 2, 3, 0});
  run(1, 0, true);
  CHECK(dims_of(out) == std::vector<int64_t>{1, 4});
  CHECK(values<int64_t>(idx) == std::vector<int64_t>{1, 1, 0, 1});

  Tensor bad_out, bad_idx;
  CHECK(error_of(m::TopKInferMeta(x, Scalar(5), -1, true, true, &bad_out, &bad_idx)).find("k 5") != std::string::npos);
  CHECK(error_of(m::TopKInferMeta(x, Scalar(0), -1, true, true, &bad_out, &bad_idx)).find("k 0") != std::string::npos);
  CHECK(error_of(m::TopKInferMeta(x, Scalar(1), 2, true, true, &bad_out, &bad_idx)).find("axis 2") != std::string::npos);
  // A result PIR leaves unused may be null.
  Tensor only;
  REQUIRE(m::TopKInferMeta(x, Scalar(1), -1, true, true, &only, nullptr).ok());
  REQUIRE(only.allocate().ok());
  REQUIRE(k::topk(cpu(), x, Scalar(1), -1, true, true, &only, nullptr).ok());
  CHECK(values<float>(only)[0] == 4);
}

TEST_CASE("argsort: ascending or descending, NaN as the largest, ties as Paddle's CPU kernel (std::sort or stable)") {
  const float nan = std::nanf("");
  // 40 values of 0, 1, 2 and two NaNs: long enough for introsort's partitions; the expected orders are Paddle
  // 3.3.1's paddle.argsort on the CPU.
  Tensor x = f32({40}, {0, 1, 0, 1, 1, nan, 0, 2, 0, 0, 0, 2, 1, 2, 2, 0, 1, nan, 1, 1, 0, 1, 0, 0, 1, 2, 0, 2,
                        0, 1, 1, 2, 0, 1, 1, 1, 0, 2, 0, 2});
  auto run = [&](bool descending, bool stable) {
    Tensor out, idx;
    REQUIRE(m::ArgsortInferMeta(x, -1, descending, stable, &out, &idx).ok());
    REQUIRE(out.allocate().ok());
    REQUIRE(idx.allocate().ok());
    REQUIRE(k::argsort(cpu(), x, -1, descending, stable, &out, &idx).ok());
    CHECK(idx.dtype == DataType::kInt64);
    for (size_t j = 0; j < 40; ++j) {
      const float v = values<float>(x)[static_cast<size_t>(values<int64_t>(idx)[j])];
      CHECK((std::isnan(v) ? std::isnan(values<float>(out)[j]) : values<float>(out)[j] == v));
    }
    return values<int64_t>(idx);
  };
  CHECK(run(false, false) == std::vector<int64_t>{0,  22, 20, 23, 26, 28, 15, 32, 10, 9,  8,  6,  36, 38,
                                                  2,  33, 34, 30, 29, 35, 24, 1,  19, 18, 21, 3,  16, 4,
                                                  12, 39, 37, 7,  11, 31, 13, 14, 27, 25, 5,  17});
  CHECK(run(false, true) == std::vector<int64_t>{0,  2,  6,  8,  9,  10, 15, 20, 22, 23, 26, 28, 32, 36,
                                                 38, 1,  3,  4,  12, 16, 18, 19, 21, 24, 29, 30, 33, 34,
                                                 35, 7,  11, 13, 14, 25, 27, 31, 37, 39, 5,  17});
  CHECK(run(true, false) == std::vector<int64_t>{17, 5,  39, 37, 7,  31, 25, 14, 11, 27, 13, 21, 1,  24,
                                                 29, 30, 33, 34, 35, 18, 16, 3,  12, 4,  19, 10, 0,  38,
                                                 2,  36, 6,  32, 8,  9,  28, 26, 15, 23, 22, 20});
  CHECK(run(true, true) == std::vector<int64_t>{5,  17, 7,  11, 13, 14, 25, 27, 31, 37, 39, 1,  3,  4,
                                                12, 16, 18, 19, 21, 24, 29, 30, 33, 34, 35, 0,  2,  6,
                                                8,  9,  10, 15, 20, 22, 23, 26, 28, 32, 36, 38});

  // Along the first axis of a matrix, int64; either result may be null.
  Tensor ints = i64({3, 2}, {5, -1, 2, 7, 5, 0});
  Tensor idx;
  REQUIRE(m::ArgsortInferMeta(ints, 0, false, true, nullptr, &idx).ok());
  REQUIRE(idx.allocate().ok());
  REQUIRE(k::argsort(cpu(), ints, 0, false, true, nullptr, &idx).ok());
  CHECK(values<int64_t>(idx) == std::vector<int64_t>{1, 0, 0, 2, 2, 1});
  Tensor bad_out, bad_idx;
  CHECK(error_of(m::ArgsortInferMeta(ints, 2, false, false, &bad_out, &bad_idx)).find("axis 2") != std::string::npos);
}

TEST_CASE("log_softmax along an axis") {
  Tensor x = f64({2, 2}, {0, std::log(3.0), 1, 1});
  Tensor out = output_from([&](Tensor* o) { return m::UnchangedInferMetaCheckAxis(x, -1, o); });
  REQUIRE(k::log_softmax(cpu(), x, -1, &out).ok());
  check_close<double>(out, {std::log(0.25), std::log(0.75), std::log(0.5), std::log(0.5)}, 1e-15);
  Tensor cols = output_from([&](Tensor* o) { return m::UnchangedInferMetaCheckAxis(x, 0, o); });
  REQUIRE(k::log_softmax(cpu(), x, 0, &cols).ok());
  check_close<double>(cols, {std::log(1 / (1 + std::exp(1.0))), std::log(3 / (3 + std::exp(1.0))),
                             std::log(std::exp(1.0) / (1 + std::exp(1.0))), std::log(std::exp(1.0) / (3 + std::exp(1.0)))},
                      1e-15);
  // Large logits do not overflow: the max is subtracted first.
  Tensor big = f32({2}, {1000, 1000});
  Tensor bout = output_from([&](Tensor* o) { return m::UnchangedInferMetaCheckAxis(big, 0, o); });
  REQUIRE(k::log_softmax(cpu(), big, 0, &bout).ok());
  check_close<float>(bout, {-0.6931472f, -0.6931472f});
  Tensor bad;
  CHECK(error_of(m::UnchangedInferMetaCheckAxis(x, 2, &bad)).find("axis 2") != std::string::npos);
}
