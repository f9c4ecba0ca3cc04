// Math kernels (kernels/math.cc, compare.cc) and their infer-meta: hand-computed values (several from Paddle 3.3
// itself, noted), broadcasting, dtypes, error statuses for bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

Tensor same_as(const Tensor& x) { return output_from([&](Tensor* o) { return m::UnchangedInferMeta(x, o); }); }

Tensor compare_out(const Tensor& x, const Tensor& y) {
  return output_from([&](Tensor* o) { return m::CompareInferMeta(x, y, o); });
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("hardsigmoid and relu6 clamp") {
  Tensor x = f32({5}, {-4, -1, 0, 1, 8});
  Tensor out = same_as(x);
  REQUIRE(k::hardsigmoid(cpu(), x, 1.0f / 6, 0.5f, &out).ok());  // paddle.nn.functional.hardsigmoid's slope
  check_close<float>(out, {0, 0.5f - 1.0f / 6, 0.5f, 0.5f + 1.0f / 6, 1});
  Tensor d = f64({3}, {-10, 1, 10});
  Tensor dout = same_as(d);
  REQUIRE(k::hardsigmoid(cpu(), d, 0.2f, 0.5f, &dout).ok());
  check_close<double>(dout, {0, 0.7000000029802322, 1}, 1e-12);  // slope 0.2f as a float

  Tensor r = same_as(x);
  REQUIRE(k::relu6(cpu(), x, &r).ok());
  check_close<float>(r, {0, 0, 0, 1, 6});
  CHECK(error_of(k::relu6(cpu(), i32({1}, {1}), &r)).find("int32") != std::string::npos);
}

TEST_CASE("elu: alpha * (exp(x) - 1) below 0, x from 0 up; ceil rounds up") {
  Tensor x = f32({5}, {-3, -0.5f, 0, 0.25f, 7});
  Tensor out = same_as(x);
  REQUIRE(k::elu(cpu(), x, 1.0f, &out).ok());
  check_close<float>(out, {std::expm1(-3.0f), std::expm1(-0.5f), 0, 0.25f, 7}, 1e-6);
  Tensor d = f64({2}, {-2, 2});
  Tensor dout = same_as(d);
  REQUIRE(k::elu(cpu(), d, 0.5f, &dout).ok());
  check_close<double>(dout, {0.5 * std::expm1(-2.0), 2}, 1e-12);
  CHECK(error_of(k::elu(cpu(), i32({1}, {1}), 1.0f, &out)).find("int32") != std::string::npos);

  Tensor c = same_as(x);
  REQUIRE(k::ceil(cpu(), x, &c).ok());
  check_close<float>(c, {-3, -0.0f, 0, 1, 7});
}

TEST_CASE("sqrt, erf, log, sin, cos follow <cmath>") {
  Tensor x = f32({3}, {0.25f, 1, 2});
  Tensor out = same_as(x);
  REQUIRE(k::sqrt(cpu(), x, &out).ok());
  CHECK(values<float>(out) == std::vector<float>{0.5f, 1, std::sqrt(2.0f)});
  REQUIRE(k::erf(cpu(), x, &out).ok());
  CHECK(values<float>(out) == std::vector<float>{std::erf(0.25f), std::erf(1.0f), std::erf(2.0f)});
  REQUIRE(k::log(cpu(), x, &out).ok());
  CHECK(values<float>(out) == std::vector<float>{std::log(0.25f), 0, std::log(2.0f)});
  REQUIRE(k::sin(cpu(), x, &out).ok());
  CHECK(values<float>(out)[2] == std::sin(2.0f));
  Tensor d = f64({2}, {0, 3.141592653589793});
  Tensor dout = same_as(d);
  REQUIRE(k::cos(cpu(), d, &dout).ok());
  check_close<double>(dout, {1, -1}, 1e-15);
  // In place: out aliases x.
  REQUIRE(k::sqrt(cpu(), x, &x).ok());
  CHECK(values<float>(x)[0] == 0.5f);
}

TEST_CASE("abs keeps integer dtypes, without overflow at the lowest value") {
  Tensor x = i32({3}, {-3, 4, std::numeric_limits<int32_t>::lowest()});
  Tensor out = output_from([&](Tensor* o) { return m::RealAndImagInferMeta(x, o); });
  CHECK(out.dtype == DataType::kInt32);
  REQUIRE(k::abs(cpu(), x, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{3, 4, std::numeric_limits<int32_t>::lowest()});
  Tensor f = f32({2}, {-1.5f, 2});
  Tensor fout = same_as(f);
  REQUIRE(k::abs(cpu(), f, &fout).ok());
  check_close<float>(fout, {1.5f, 2});
}

TEST_CASE("pow: float exponent, integer powers, and the integer cases Paddle cannot run") {
  Tensor x = f32({3}, {2, 9, -2});
  Tensor out = same_as(x);
  REQUIRE(k::pow(cpu(), x, Scalar(0.5), &out).ok());
  CHECK(values<float>(out)[1] == 3.0f);
  CHECK(std::isnan(values<float>(out)[2]));
  REQUIRE(k::pow(cpu(), x, Scalar(3.0), &out).ok());
  check_close<float>(out, {8, 729, -8});

  // Integers: the exponent becomes the integer type first (2.5 -> 2), as Paddle's PowFunctor casts it.
  Tensor xi = i64({3}, {3, -2, 10});
  Tensor iout = same_as(xi);
  REQUIRE(k::pow(cpu(), xi, Scalar(2.5), &iout).ok());
  CHECK(values<int64_t>(iout) == std::vector<int64_t>{9, 4, 100});
  REQUIRE(k::pow(cpu(), xi, Scalar(0), &iout).ok());
  CHECK(values<int64_t>(iout) == std::vector<int64_t>{1, 1, 1});
  Tensor big = i32({1}, {65536});
  Tensor bout = same_as(big);
  REQUIRE(k::pow(cpu(), big, Scalar(2), &bout).ok());  // wraps like the hardware, no undefined behaviour
  CHECK(values<int32_t>(bout)[0] == 0);
  // Paddle's integer pow never returns for a negative exponent: an error here.
  CHECK(error_of(k::pow(cpu(), xi, Scalar(-1.0), &iout)).find("negative") != std::string::npos);
}

TEST_CASE("floor_divide: Python's floor division") {
  Tensor x = i32({5}, {7, -7, 7, -7, -8});
  Tensor y = i32({5}, {2, 2, -2, -2, 3});
  Tensor out = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(x, y, o); });
  REQUIRE(k::floor_divide(cpu(), x, y, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{3, -4, -4, 3, -3});  // Paddle 3.3's result

  Tensor lowest = i64({1}, {std::numeric_limits<int64_t>::lowest()});
  Tensor minus_one = i64({1}, {-1});
  Tensor lout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(lowest, minus_one, o); });
  REQUIRE(k::floor_divide(cpu(), lowest, minus_one, &lout).ok());  // wraps instead of trapping
  CHECK(values<int64_t>(lout)[0] == std::numeric_limits<int64_t>::lowest());

  Tensor zero = i32({5}, {1, 1, 0, 1, 1});
  CHECK(error_of(k::floor_divide(cpu(), x, zero, &out)).find("division by zero") != std::string::npos);

  // Floats: 1.0 // 0.1 is 9 (not floor(10.000000000000002)); x // 0 is IEEE's x / 0. Paddle 3.3's results.
  Tensor fx = f64({6}, {1.0, 7.0, -7.0, 5.0, 0.0, -1.0});
  Tensor fy = f64({6}, {0.1, -2.0, 2.0, 0.0, 0.0, 0.0});
  Tensor fout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(fx, fy, o); });
  REQUIRE(k::floor_divide(cpu(), fx, fy, &fout).ok());
  std::vector<double> got = values<double>(fout);
  CHECK(got[0] == 9.0);
  CHECK(got[1] == -4.0);
  CHECK(got[2] == -4.0);
  CHECK(got[3] == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(got[4]));
  CHECK(got[5] == -std::numeric_limits<double>::infinity());

  // Broadcasting, and uint8.
  Tensor u = make<uint8_t>(DataType::kUInt8, {2, 2}, {9, 8, 7, 6});
  Tensor d = make<uint8_t>(DataType::kUInt8, {2}, {2, 4});
  Tensor uout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(u, d, o); });
  REQUIRE(k::floor_divide(cpu(), u, d, &uout).ok());
  CHECK(values<uint8_t>(uout) == std::vector<uint8_t>{4, 2, 3, 1});
}

TEST_CASE("square and reciprocal") {
  Tensor x = f32({4}, {-3, 0.5f, 0, 2});
  Tensor out = same_as(x);
  REQUIRE(k::square(cpu(), x, &out).ok());
  check_close<float>(out, {9, 0.25f, 0, 4});
  Tensor xi = i64({3}, {-5, 7, std::numeric_limits<int64_t>::lowest()});
  Tensor iout = same_as(xi);
  REQUIRE(k::square(cpu(), xi, &iout).ok());  // wraps like the hardware, no undefined behaviour
  CHECK(values<int64_t>(iout) == std::vector<int64_t>{25, 49, 0});
  Tensor x32 = i32({2}, {-4, 46341});
  Tensor out32 = same_as(x32);
  REQUIRE(k::square(cpu(), x32, &out32).ok());
  CHECK(values<int32_t>(out32) == std::vector<int32_t>{16, -2147479015});

  Tensor d = f64({4}, {-4, 0.5, 3, 0});
  Tensor r = same_as(d);
  REQUIRE(k::reciprocal(cpu(), d, &r).ok());
  std::vector<double> got = values<double>(r);
  CHECK(got[0] == -0.25);
  CHECK(got[1] == 2.0);
  CHECK(got[2] == 1.0 / 3.0);
  CHECK(got[3] == std::numeric_limits<double>::infinity());
  // Paddle's reciprocal has no integer kernel.
  Tensor ri = same_as(xi);
  CHECK(error_of(k::reciprocal(cpu(), xi, &ri)).find("int64") != std::string::npos);
}

TEST_CASE("remainder: Python's %, the divisor's sign") {
  Tensor x = i32({6}, {7, -7, 7, -7, -8, 6});
  Tensor y = i32({6}, {2, 2, -2, -2, 3, 3});
  Tensor out = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(x, y, o); });
  REQUIRE(k::remainder(cpu(), x, y, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{1, 1, -1, -1, 1, 0});  // Python's results

  Tensor lowest = i64({2}, {std::numeric_limits<int64_t>::lowest(), 5});
  Tensor minus_one = i64({1}, {-1});
  Tensor lout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(lowest, minus_one, o); });
  REQUIRE(k::remainder(cpu(), lowest, minus_one, &lout).ok());  // no trap, broadcasting
  CHECK(values<int64_t>(lout) == std::vector<int64_t>{0, 0});

  Tensor zero = i32({6}, {1, 1, 0, 1, 1, 1});
  CHECK(error_of(k::remainder(cpu(), x, zero, &out)).find("remainder by zero") != std::string::npos);

  // Floats: fmod moved by y when the signs differ; x % 0 is NaN.
  Tensor fx = f64({5}, {5.5, -5.5, 5.5, -5.5, 1.0});
  Tensor fy = f64({5}, {2.0, 2.0, -2.0, -2.0, 0.0});
  Tensor fout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(fx, fy, o); });
  REQUIRE(k::remainder(cpu(), fx, fy, &fout).ok());
  std::vector<double> got = values<double>(fout);
  CHECK(got[0] == 1.5);
  CHECK(got[1] == 0.5);
  CHECK(got[2] == -0.5);
  CHECK(got[3] == -1.5);
  CHECK(std::isnan(got[4]));

  Tensor b = boolean({2}, {1, 0});
  Tensor bout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(b, b, o); });
  CHECK(error_of(k::remainder(cpu(), b, b, &bout)).find("bool") != std::string::npos);
}

TEST_CASE("bitwise ops: bits of integers, logic of bools") {
  Tensor x = i32({2, 3}, {12, -1, 0, 5, -8, 7});
  Tensor y = i32({3}, {10, 6, -3});
  Tensor out = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(x, y, o); });
  REQUIRE(k::bitwise_and(cpu(), x, y, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{8, 6, 0, 0, 0, 5});
  REQUIRE(k::bitwise_or(cpu(), x, y, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{14, -1, -3, 15, -2, -1});
  REQUIRE(k::bitwise_xor(cpu(), x, y, &out).ok());
  CHECK(values<int32_t>(out) == std::vector<int32_t>{6, -7, -3, 15, -2, -6});
  Tensor n = same_as(x);
  REQUIRE(k::bitwise_not(cpu(), x, &n).ok());
  CHECK(values<int32_t>(n) == std::vector<int32_t>{-13, 0, -1, -6, 7, -8});

  Tensor l = i64({2}, {std::numeric_limits<int64_t>::lowest(), 3});
  Tensor ln = same_as(l);
  REQUIRE(k::bitwise_not(cpu(), l, &ln).ok());
  CHECK(values<int64_t>(ln) == std::vector<int64_t>{std::numeric_limits<int64_t>::max(), -4});

  auto bools = [](const Tensor& t) {
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<const bool>()[i] ? 1 : 0);
    return v;
  };
  Tensor p = boolean({4}, {0, 0, 1, 1});
  Tensor q = boolean({4}, {0, 1, 0, 1});
  Tensor bout = output_from([&](Tensor* o) { return m::ElementwiseInferMeta(p, q, o); });
  REQUIRE(k::bitwise_and(cpu(), p, q, &bout).ok());
  CHECK(bools(bout) == std::vector<int>{0, 0, 0, 1});
  REQUIRE(k::bitwise_or(cpu(), p, q, &bout).ok());
  CHECK(bools(bout) == std::vector<int>{0, 1, 1, 1});
  REQUIRE(k::bitwise_xor(cpu(), p, q, &bout).ok());
  CHECK(bools(bout) == std::vector<int>{0, 1, 1, 0});
  Tensor pn = same_as(p);
  REQUIRE(k::bitwise_not(cpu(), p, &pn).ok());
  CHECK(bools(pn) == std::vector<int>{1, 1, 0, 0});

  Tensor u = make<uint8_t>(DataType::kUInt8, {2}, {0xF0, 0x0F});
  Tensor un = same_as(u);
  REQUIRE(k::bitwise_not(cpu(), u, &un).ok());
  CHECK(values<uint8_t>(un) == std::vector<uint8_t>{0x0F, 0xF0});

  Tensor f = f32({1}, {1});
  Tensor fout = same_as(f);
  CHECK(error_of(k::bitwise_and(cpu(), f, f, &fout)).find("float32") != std::string::npos);
  CHECK(error_of(k::bitwise_not(cpu(), f, &fout)).find("float32") != std::string::npos);
  Tensor mixed = i64({3}, {1, 2, 3});
  CHECK(error_of(k::bitwise_or(cpu(), x, mixed, &out)).find("int64") != std::string::npos);
}

TEST_CASE("masked_fill broadcasts x against mask") {
  Tensor x = f32({3}, {0, 1, 2});
  Tensor mask = boolean({2, 3}, {1, 0, 1, 0, 1, 0});
  Tensor value = f32({}, {9});
  Tensor out = output_from([&](Tensor* o) { return m::MaskedFillInferMeta(x, mask, value, o); });
  CHECK(dims_of(out) == std::vector<int64_t>{2, 3});
  REQUIRE(k::masked_fill(cpu(), x, mask, value, &out).ok());
  CHECK(values<float>(out) == std::vector<float>{9, 1, 9, 0, 9, 2});  // Paddle 3.3's result

  Tensor ix = i64({2}, {5, 6});
  Tensor imask = boolean({2}, {0, 1});
  Tensor ivalue = i64({1}, {-1});
  Tensor iout = output_from([&](Tensor* o) { return m::MaskedFillInferMeta(ix, imask, ivalue, o); });
  REQUIRE(k::masked_fill(cpu(), ix, imask, ivalue, &iout).ok());
  CHECK(values<int64_t>(iout) == std::vector<int64_t>{5, -1});

  Tensor bad;
  CHECK(error_of(m::MaskedFillInferMeta(x, f32({3}, {1, 0, 1}), value, &bad)).find("bool") != std::string::npos);
  CHECK(error_of(m::MaskedFillInferMeta(x, mask, f32({2}, {1, 2}), &bad)).find("one element") != std::string::npos);
  CHECK(error_of(m::MaskedFillInferMeta(x, mask, i64({1}, {1}), &bad)).find("int64") != std::string::npos);
  CHECK(error_of(k::masked_fill(cpu(), x, mask, i64({1}, {1}), &out)).find("int64") != std::string::npos);
}

TEST_CASE("swiglu: silu(x) * y, or the halves of x") {
  Tensor x = f32({1, 4}, {1, 2, -1, 0.5f});
  Tensor halves = output_from([&](Tensor* o) { return m::SwiGLUInferMeta(x, nullptr, o); });
  CHECK(dims_of(halves) == std::vector<int64_t>{1, 2});
  REQUIRE(k::swiglu(cpu(), x, nullptr, &halves).ok());
  check_close<float>(halves, {-0.7310586f, 0.8807971f});  // Paddle 3.3's result

  Tensor y = f32({1, 4}, {2, 2, 2, 2});
  Tensor out = output_from([&](Tensor* o) { return m::SwiGLUInferMeta(x, &y, o); });
  REQUIRE(k::swiglu(cpu(), x, &y, &out).ok());
  check_close<float>(out, {1.4621172f, 3.5231884f, -0.5378828f, 0.6224593f});

  Tensor odd;
  CHECK(error_of(m::SwiGLUInferMeta(f32({3}, {1, 2, 3}), nullptr, &odd)).find("even") != std::string::npos);
  CHECK(error_of(m::SwiGLUInferMeta(x, &halves, &odd)).find("same dims") != std::string::npos);
  CHECK(error_of(k::swiglu(cpu(), x, nullptr, &out)).find("dims") != std::string::npos);  // out is [1, 4]
}

TEST_CASE("comparisons: exact, broadcasting, bool out") {
  Tensor x = f32({2, 3}, {1, 2, 3, kNaN, kInf, 0.01f});
  Tensor y = f32({3}, {1, 3, 3});
  Tensor out = compare_out(x, y);
  CHECK(out.dtype == DataType::kBool);
  CHECK(dims_of(out) == std::vector<int64_t>{2, 3});
  auto bools = [](const Tensor& t) {
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<const bool>()[i] ? 1 : 0);
    return v;
  };
  REQUIRE(k::equal(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{1, 0, 1, 0, 0, 0});
  REQUIRE(k::not_equal(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{0, 1, 0, 1, 1, 1});
  REQUIRE(k::greater_than(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{0, 0, 0, 0, 1, 0});
  REQUIRE(k::greater_equal(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{1, 0, 1, 0, 1, 0});
  REQUIRE(k::less_than(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{0, 1, 0, 0, 0, 1});
  REQUIRE(k::less_equal(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{1, 1, 1, 0, 0, 1});

  // 0.01 and the next float differ by less than 1e-8: still not equal (Paddle 3.3 compares exactly).
  Tensor a = f32({1}, {0.01f});
  Tensor b = f32({1}, {std::nextafter(0.01f, 1.0f)});
  Tensor ab = compare_out(a, b);
  REQUIRE(k::equal(cpu(), a, b, &ab).ok());
  CHECK_FALSE(ab.data_as<bool>()[0]);

  // Integer and bool operands; a scalar y.
  Tensor ints = i64({3}, {1, 5, 9});
  Tensor five = i64({}, {5});
  Tensor iout = compare_out(ints, five);
  REQUIRE(k::greater_equal(cpu(), ints, five, &iout).ok());
  CHECK(bools(iout) == std::vector<int>{0, 1, 1});
  Tensor p = boolean({2}, {1, 0});
  Tensor pout = compare_out(p, p);
  REQUIRE(k::equal(cpu(), p, p, &pout).ok());
  CHECK(bools(pout) == std::vector<int>{1, 1});

  Tensor bad;
  CHECK(error_of(m::CompareInferMeta(x, i64({3}, {1, 2, 3}), &bad)).find("int64") != std::string::npos);
  CHECK(error_of(k::equal(cpu(), x, i64({3}, {1, 2, 3}), &out)).find("int64") != std::string::npos);
  CHECK(error_of(m::CompareInferMeta(x, f32({2}, {1, 2}), &bad)).find("broadcast") != std::string::npos);
}

TEST_CASE("comparison in place: the bool result over x's own buffer") {
  Tensor x = f32({4}, {1, 2, 3, 4});
  Tensor y = f32({4}, {1, 0, 3, 0});
  Tensor alias = x;  // same buffer, bool dtype, as the in-place twin equal_ passes it
  alias.dtype = DataType::kBool;
  REQUIRE(k::equal(cpu(DataType::kFloat32), x, y, &alias).ok());
  const bool* b = static_cast<const bool*>(x.data);
  CHECK((b[0] && !b[1] && b[2] && !b[3]));
}

TEST_CASE("logical ops: non-zero is true; uint8 has no kernel") {
  Tensor x = f32({4}, {0, 2, 0, -1});
  Tensor y = f32({4}, {0, 0, 3, 1});
  Tensor out = output_from([&](Tensor* o) { return m::LogicalBinaryInferMeta(x, y, o); });
  auto bools = [](const Tensor& t) {
    std::vector<int> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data_as<const bool>()[i] ? 1 : 0);
    return v;
  };
  REQUIRE(k::logical_and(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{0, 0, 0, 1});
  REQUIRE(k::logical_or(cpu(), x, y, &out).ok());
  CHECK(bools(out) == std::vector<int>{0, 1, 1, 1});
  Tensor n = output_from([&](Tensor* o) { return m::LogicalNotInferMeta(x, o); });
  REQUIRE(k::logical_not(cpu(), x, &n).ok());
  CHECK(bools(n) == std::vector<int>{1, 0, 1, 0});
  Tensor p = boolean({2}, {1, 0});
  Tensor pn = output_from([&](Tensor* o) { return m::LogicalNotInferMeta(p, o); });
  REQUIRE(k::logical_not(cpu(), p, &pn).ok());
  CHECK(bools(pn) == std::vector<int>{0, 1});

  Tensor u = make<uint8_t>(DataType::kUInt8, {1}, {1});
  Tensor uout = output_from([&](Tensor* o) { return m::LogicalBinaryInferMeta(u, u, o); });
  CHECK(error_of(k::logical_and(cpu(), u, u, &uout)).find("uint8") != std::string::npos);
}
