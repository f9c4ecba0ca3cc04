// Elementwise kernels and their infer-meta: hand-computed values, Paddle's broadcasting, error statuses.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

Tensor binary_out(const Tensor& x, const Tensor& y) {
  return output_from([&](Tensor* o) { return m::ElementwiseInferMeta(x, y, o); });
}

}  // namespace

TEST_CASE("ElementwiseInferMeta broadcasts like numpy") {
  Tensor out;
  REQUIRE(m::ElementwiseInferMeta(f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 2, 3}), &out).ok());
  CHECK(dims_of(out) == std::vector<int64_t>{2, 3});
  CHECK(out.dtype == DataType::kFloat32);
  REQUIRE(m::ElementwiseInferMeta(f32({2, 1, 3}, std::vector<float>(6)), f32({4, 1}, std::vector<float>(4)), &out).ok());
  CHECK(dims_of(out) == std::vector<int64_t>{2, 4, 3});
  REQUIRE(m::ElementwiseInferMeta(f32({}, {1}), f32({5}, std::vector<float>(5)), &out).ok());
  CHECK(dims_of(out) == std::vector<int64_t>{5});
  CHECK(error_of(m::ElementwiseInferMeta(f32({2, 3}, std::vector<float>(6)), f32({2}, {1, 2}), &out))
            .find("cannot be broadcast") != std::string::npos);
  CHECK(error_of(m::ElementwiseInferMeta(f32({2}, {1, 2}), i32({2}, {1, 2}), &out)).find("int32") != std::string::npos);
}

TEST_CASE("add, subtract, multiply, divide with broadcasting") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor row = f32({3}, {10, 20, 30});
  Tensor out = binary_out(x, row);
  REQUIRE(k::add(cpu(DataType::kFloat32), x, row, &out).ok());
  check_close<float>(out, {11, 22, 33, 14, 25, 36});

  Tensor col = f32({2, 1}, {1, 2});
  Tensor r13 = f32({1, 3}, {10, 20, 30});
  Tensor outer = binary_out(col, r13);
  REQUIRE(k::add(cpu(DataType::kFloat32), col, r13, &outer).ok());
  check_close<float>(outer, {11, 21, 31, 12, 22, 32});

  Tensor scalar = f32({}, {1});
  Tensor v = f32({2}, {5, 6});
  Tensor diff = binary_out(v, scalar);
  REQUIRE(k::subtract(cpu(), v, scalar, &diff).ok());
  check_close<float>(diff, {4, 5});
  Tensor rdiff = binary_out(scalar, v);
  REQUIRE(k::subtract(cpu(), scalar, v, &rdiff).ok());
  check_close<float>(rdiff, {-4, -5});

  Tensor prod = binary_out(x, row);
  REQUIRE(k::multiply(cpu(), x, row, &prod).ok());
  check_close<float>(prod, {10, 40, 90, 40, 100, 180});

  Tensor q = binary_out(f64({2}, {1, 2}), f64({2}, {4, 8}));
  REQUIRE(k::divide(cpu(), f64({2}, {1, 2}), f64({2}, {4, 8}), &q).ok());
  check_close<double>(q, {0.25, 0.25});
}

TEST_CASE("broadcasting over three dims") {
  std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  std::vector<float> ys = {100, 200, 300, 400};
  Tensor x = f32({2, 1, 3}, xs);
  Tensor y = f32({4, 1}, ys);
  Tensor out = binary_out(x, y);
  REQUIRE(k::add(cpu(), x, y, &out).ok());
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int c = 0; c < 3; ++c) want.push_back(xs[i * 3 + c] + ys[j]);
  check_close<float>(out, want);
}

TEST_CASE("broadcasting with merged dims and a short last dim, against the index formula") {
  // A per-channel operand of an NHWC tensor with 4 channels (walked in pairs of dims), a scalar-like [1, 1, 1, 1],
  // a middle broadcast dim and unit dims that merge away, either operand the broadcast one.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1, 6, 5, 4}, {1, 1, 1, 4}}, {{1, 6, 5, 1}, {1, 1, 1, 1}}, {{2, 3, 1, 5}, {2, 1, 7, 1}},
      {{3, 1, 4}, {3, 20, 4}},      {{2, 40, 3}, {3}},             {{5, 1, 1, 9}, {1, 1, 1, 9}}};
  for (const auto& c : cases) {
    Tensor x = empty(DataType::kFloat32, c.first), y = empty(DataType::kFloat32, c.second);
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.5f * static_cast<float>(i) + 1.f;
    for (int64_t i = 0; i < y.numel(); ++i) y.data_as<float>()[i] = 1000.f * static_cast<float>(i + 1);
    Tensor out = binary_out(x, y);
    REQUIRE(k::add(cpu(), x, y, &out).ok());
    const int32_t rank = out.ndim;
    int64_t mismatches = 0;
    for (int64_t i = 0; i < out.numel(); ++i) {
      int64_t rest = i, xi = 0, yi = 0, xs = 1, ys = 1;
      for (int32_t d = rank - 1; d >= 0; --d) {
        const int64_t index = rest % out.dims[d];
        rest /= out.dims[d];
        const int32_t dx = d - (rank - x.ndim), dy = d - (rank - y.ndim);
        if (dx >= 0) {
          if (x.dims[dx] != 1) xi += index * xs;
          xs *= x.dims[dx];
        }
        if (dy >= 0) {
          if (y.dims[dy] != 1) yi += index * ys;
          ys *= y.dims[dy];
        }
      }
      if (out.data_as<float>()[i] != x.data_as<float>()[xi] + y.data_as<float>()[yi]) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("integer division truncates and rejects zero") {
  Tensor x = i32({2}, {7, -7});
  Tensor two = i32({2}, {2, 2});
  Tensor out = binary_out(x, two);
  REQUIRE(k::divide(cpu(), x, two, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{3, -3});
  Tensor zero = i32({2}, {2, 0});
  CHECK(error_of(k::divide(cpu(), x, zero, &out)).find("division by zero") != std::string::npos);
}

TEST_CASE("maximum, minimum: NaN when either operand is NaN (Paddle's MaximumFunctor), in both orders") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32({4}, {nan, 1, nan, 2});
  Tensor b = f32({4}, {1, nan, nan, 1});
  Tensor out = binary_out(a, b);
  for (int order = 0; order < 2; ++order) {
    const Tensor& x = order == 0 ? a : b;
    const Tensor& y = order == 0 ? b : a;
    REQUIRE(k::maximum(cpu(), x, y, &out).ok());
    std::vector<float> got = values<float>(out);
    CHECK((std::isnan(got[0]) && std::isnan(got[1]) && std::isnan(got[2]) && got[3] == 2));
    REQUIRE(k::minimum(cpu(), x, y, &out).ok());
    got = values<float>(out);
    CHECK((std::isnan(got[0]) && std::isnan(got[1]) && std::isnan(got[2]) && got[3] == 1));
  }
}

TEST_CASE("fmax, fmin: a NaN operand is ignored (std::fmax); integers through float / double, as Paddle's") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32({4}, {nan, 1, nan, 2});
  Tensor b = f32({4}, {1, nan, nan, 3});
  Tensor out = binary_out(a, b);
  REQUIRE(k::fmax(cpu(), a, b, &out).ok());
  std::vector<float> got = values<float>(out);
  CHECK((got[0] == 1 && got[1] == 1 && std::isnan(got[2]) && got[3] == 3));
  REQUIRE(k::fmin(cpu(), b, a, &out).ok());
  got = values<float>(out);
  CHECK((got[0] == 1 && got[1] == 1 && std::isnan(got[2]) && got[3] == 2));
  // Paddle's int32 fmax goes through float: 16777217 rounds to 16777216.
  Tensor ia = i32({2}, {16777217, -3});
  Tensor ib = i32({2}, {0, -5});
  Tensor io = binary_out(ia, ib);
  REQUIRE(k::fmax(cpu(), ia, ib, &io).ok());
  CHECK(values<int32_t>(io) == std::vector<int32_t>{16777216, -3});
}

TEST_CASE("maximum, minimum, elementwise_pow") {
  Tensor a = f32({3}, {1, 5, -2});
  Tensor b = f32({3}, {3, 4, -2});
  Tensor out = binary_out(a, b);
  REQUIRE(k::maximum(cpu(), a, b, &out).ok());
  check_close<float>(out, {3, 5, -2});
  REQUIRE(k::minimum(cpu(), a, b, &out).ok());
  check_close<float>(out, {1, 4, -2});
  Tensor base = f32({2}, {2, 3});
  Tensor exponent = f32({2}, {3, 2});
  Tensor p = binary_out(base, exponent);
  REQUIRE(k::elementwise_pow(cpu(), base, exponent, &p).ok());
  check_close<float>(p, {8, 9});
  Tensor ib = i64({2}, {2, 3});
  Tensor ie = i64({2}, {10, 2});
  Tensor ip = binary_out(ib, ie);
  REQUIRE(k::elementwise_pow(cpu(), ib, ie, &ip).ok());
  CHECK(values<int64_t>(ip) == std::vector<int64_t>{1024, 9});
}

TEST_CASE("binary kernels check dtypes and output dims") {
  Tensor x = f32({2, 3}, std::vector<float>(6, 1));
  Tensor row = f32({3}, {1, 2, 3});
  Tensor wrong = empty(DataType::kFloat32, {3});
  CHECK(error_of(k::add(cpu(), x, row, &wrong)).find("expected [2, 3]") != std::string::npos);
  Tensor ints = i32({3}, {1, 2, 3});
  Tensor out = empty(DataType::kFloat32, {2, 3});
  CHECK(error_of(k::add(cpu(), x, ints, &out)).find("int32") != std::string::npos);
  Tensor bools = boolean({3}, {1, 0, 1});
  Tensor bout = empty(DataType::kBool, {3});
  CHECK(error_of(k::add(cpu(), bools, bools, &bout)).find("unsupported dtype bool") != std::string::npos);
  Tensor no_data;
  no_data.dtype = DataType::kFloat32;
  REQUIRE(no_data.set_dims({2, 3}).ok());
  CHECK(error_of(k::add(cpu(), x, x, &no_data)).find("has no data") != std::string::npos);
}

TEST_CASE("binary kernels work in place") {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  Tensor y = f32({2}, {10, 20});
  REQUIRE(k::add(cpu(), x, y, &x).ok());
  check_close<float>(x, {11, 22, 13, 24});
}

TEST_CASE("activations") {
  Tensor x = f32({3}, {-1, 0, 2});
  Tensor out = output_from([&](Tensor* o) { return m::UnchangedInferMeta(x, o); });
  REQUIRE(k::relu(cpu(), x, &out).ok());
  check_close<float>(out, {0, 0, 2});
  Tensor ix = i64({2}, {-3, 3});
  Tensor iout = empty(DataType::kInt64, {2});
  REQUIRE(k::relu(cpu(), ix, &iout).ok());
  CHECK(values<int64_t>(iout) == std::vector<int64_t>{0, 3});

  Tensor s = f32({2}, {0, 2});
  Tensor so = empty(DataType::kFloat32, {2});
  REQUIRE(k::sigmoid(cpu(), s, &so).ok());
  check_close<float>(so, {0.5f, 0.880797f});
  REQUIRE(k::tanh(cpu(), f32({2}, {0.5f, 0}), &so).ok());
  check_close<float>(so, {0.462117f, 0});
  REQUIRE(k::exp(cpu(), f32({2}, {1, 0}), &so).ok());
  check_close<float>(so, {2.718282f, 1});
  REQUIRE(k::rsqrt(cpu(), f32({2}, {4, 0.25f}), &so).ok());
  check_close<float>(so, {0.5f, 2});
  REQUIRE(k::floor(cpu(), f32({2}, {-1.5f, 1.5f}), &so).ok());
  check_close<float>(so, {-2, 1});
  REQUIRE(k::silu(cpu(), f32({2}, {1, 0}), &so).ok());
  check_close<float>(so, {0.731059f, 0});
  REQUIRE(k::swish(cpu(), f32({2}, {1, -1}), &so).ok());
  check_close<float>(so, {0.731059f, -0.268941f});

  Tensor h = f32({4}, {-4, 1, 4, -1});
  Tensor ho = empty(DataType::kFloat32, {4});
  REQUIRE(k::hardswish(cpu(), h, &ho).ok());
  check_close<float>(ho, {0, 4.0f / 6, 4, -2.0f / 6});

  Tensor g = f64({2}, {1, -1});
  Tensor go = empty(DataType::kFloat64, {2});
  REQUIRE(k::gelu(cpu(), g, false, &go).ok());
  check_close<double>(go, {0.8413447460685429, -0.15865525393145707}, 1e-12);
  REQUIRE(k::gelu(cpu(), g, true, &go).ok());
  check_close<double>(go, {0.8411919906082768, -0.15880800939172324}, 1e-12);

  Tensor ints = i32({2}, {1, 2});
  Tensor io = empty(DataType::kInt32, {2});
  CHECK(error_of(k::exp(cpu(), ints, &io)).find("unsupported dtype int32") != std::string::npos);
  Tensor shorter = empty(DataType::kFloat32, {2});
  CHECK(error_of(k::relu(cpu(), x, &shorter)).find("expected [3]") != std::string::npos);
}

TEST_CASE("scale in both bias orders") {
  Tensor x = f32({2}, {1, 2});
  Tensor out = empty(DataType::kFloat32, {2});
  REQUIRE(k::scale(cpu(), x, 2.0, 1.0, true, &out).ok());
  check_close<float>(out, {3, 5});
  REQUIRE(k::scale(cpu(), x, 2.0, 1.0, false, &out).ok());
  check_close<float>(out, {4, 6});
  Tensor ix = i64({2}, {3, -4});
  Tensor io = empty(DataType::kInt64, {2});
  REQUIRE(k::scale(cpu(), ix, 3, -1, true, &io).ok());
  CHECK(values<int64_t>(io) == std::vector<int64_t>{8, -13});
  REQUIRE(k::scale(cpu(), x, Scalar(0.5f), Scalar(0), true, &x).ok());  // in place
  check_close<float>(x, {0.5f, 1});
}

TEST_CASE("clip") {
  Tensor x = f32({3}, {-2, 0.5f, 3});
  Tensor out = empty(DataType::kFloat32, {3});
  REQUIRE(k::clip(cpu(), x, 0.0f, 1.0f, &out).ok());
  check_close<float>(out, {0, 0.5f, 1});
  CHECK(error_of(k::clip(cpu(), x, 2.0f, 1.0f, &out)).find("greater than max") != std::string::npos);
}

TEST_CASE("cast between dtypes") {
  Tensor x = f32({4}, {1.7f, -1.7f, 0, std::numeric_limits<float>::quiet_NaN()});
  Tensor out = output_from([&](Tensor* o) { return m::CastInferMeta(x, DataType::kInt32, o); });
  CHECK(out.dtype == DataType::kInt32);
  REQUIRE(k::cast(cpu(DataType::kFloat32), x, DataType::kInt32, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{1, -1, 0, std::numeric_limits<int32_t>::lowest()});
  Tensor b = empty(DataType::kBool, {4});
  REQUIRE(k::cast(cpu(DataType::kFloat32), x, DataType::kBool, &b).ok());
  CHECK(values<bool>(b) == std::vector<bool>{true, true, false, true});
  Tensor back = empty(DataType::kFloat64, {4});
  REQUIRE(k::cast(cpu(DataType::kBool), b, DataType::kFloat64, &back).ok());
  check_close<double>(back, {1, 1, 0, 1});
  Tensor big = i64({2}, {int64_t{1} << 40, -3});
  Tensor d = empty(DataType::kFloat64, {2});
  REQUIRE(k::cast(cpu(), big, DataType::kFloat64, &d).ok());
  check_close<double>(d, {1099511627776.0, -3});
  // Widening in place: every element is read before any is overwritten.
  Tensor wide = empty(DataType::kInt64, {2});
  int32_t* narrow = static_cast<int32_t*>(wide.data);
  narrow[0] = 5;
  narrow[1] = -6;
  Tensor view = wide;
  view.dtype = DataType::kInt32;
  REQUIRE(k::cast(cpu(), view, DataType::kInt64, &wide).ok());
  CHECK(values<int64_t>(wide) == std::vector<int64_t>{5, -6});
  CHECK_FALSE(m::CastInferMeta(x, DataType::kUndefined, &out).ok());
  CHECK(error_of(k::cast(cpu(), x, DataType::kInt64, &out)).find("out is int32") != std::string::npos);
}

TEST_CASE("where selects by a bool condition") {
  Tensor c = boolean({2, 2}, {1, 0, 0, 1});
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  Tensor y = f32({2, 2}, {-1, -2, -3, -4});
  Tensor out = output_from([&](Tensor* o) { return m::WhereInferMeta(c, x, y, o); });
  REQUIRE(k::where(cpu(DataType::kFloat32), c, x, y, &out).ok());
  check_close<float>(out, {1, -2, -3, 4});
  Tensor ci = i32({2, 2}, {1, 0, 0, 1});
  CHECK(error_of(m::WhereInferMeta(ci, x, y, &out)).find("must be bool") != std::string::npos);
  CHECK(error_of(m::WhereInferMeta(c, x, f32({2}, {1, 2}), &out)).find("differ") != std::string::npos);
}

TEST_CASE("add_n sums a list of same-shape tensors and rejects mismatched ones") {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({2, 2}, {10, 20, 30, 40});
  Tensor c = f32({2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
  const Tensor* three[] = {&a, &b, &c};
  Tensor out = output_from([&](Tensor* o) { return m::AddNInferMeta(TensorList{three, 3}, o); });
  CHECK(out.dims_string() == "[2, 2]");
  REQUIRE(k::add_n(cpu(), TensorList{three, 3}, &out).ok());
  check_close<float>(out, {11.5f, 22.5f, 33.5f, 44.5f});

  Tensor row = f32({1, 2}, {1, 2});
  const Tensor* mismatched[] = {&a, &row};
  Tensor bad;
  Status s = m::AddNInferMeta(TensorList{mismatched, 2}, &bad);
  CHECK_FALSE(s.ok());
  CHECK(s.message() == "AddNInferMeta: input 1 dims [1, 2] differ from input 0 dims [2, 2]");
  CHECK_FALSE(m::AddNInferMeta(TensorList{}, &bad).ok());
}

TEST_CASE("thresholded_relu keeps values above the threshold and replaces the rest") {
  Tensor x = f32({5}, {-1, 0.5f, 1, 1.5f, 3});
  Tensor out = output_from([&](Tensor* o) { return m::UnchangedInferMeta(x, o); });
  REQUIRE(k::thresholded_relu(cpu(), x, 1.0f, 0.0f, &out).ok());
  check_close<float>(out, {0, 0, 0, 1.5f, 3});  // 1 is not above 1
  REQUIRE(k::thresholded_relu(cpu(), x, 0.0f, -7.0f, &out).ok());
  check_close<float>(out, {-7, 0.5f, 1, 1.5f, 3});
}
