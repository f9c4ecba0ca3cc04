#include <catch2/catch.hpp>

#include <cmath>

#include "harness.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace {

using ST = ScalarType;

ExprContext emitted_context() {
  return ExprContext("mixed")
      .input("x", ST::kFloat32)
      .input("h", ST::kFloat16)
      .input("d", ST::kFloat64)
      .input("i", ST::kInt32)
      .input("k", ST::kInt64)
      .input("c", ST::kBool)
      .input("e", ST::kBool)
      .attribute("alpha", ST::kFloat32)
      .attribute("beta", ST::kFloat64)
      .attribute("flag", ST::kBool);
}

std::string cpp(std::string_view text, const EmitNames& names = {}) {
  Harness h;
  std::optional<Expression> e = h.typed(text, emitted_context());
  return e ? emit_cpp(*e, names) : h.take();
}

std::string cuda(std::string_view text, const EmitNames& names = {}) {
  Harness h;
  std::optional<Expression> e = h.typed(text, emitted_context());
  return e ? emit_cuda(*e, names) : h.take();
}

}  // namespace

TEST_CASE("emit: min and max per type and target") {
  CHECK(cpp("max(x, 0)") == "std::max(x, 0.0f)");
  CHECK(cuda("max(x, 0)") == "kforge::cuda::std_max(x, 0.0f)");
  CHECK(cpp("min(d, 0)") == "std::min(d, 0.0)");
  CHECK(cuda("min(d, 0)") == "kforge::cuda::std_min(d, 0.0)");
  CHECK(cpp("max(i, 0)") == "std::max(i, 0)");
  CHECK(cuda("max(i, 0)") == "max(i, 0)");
  CHECK(cpp("min(k, 1)") == "std::min(k, int64_t{1})");
  CHECK(cuda("min(k, 1)") == "min(k, int64_t{1})");
  CHECK(cpp("max(x, i)") == "std::max(x, static_cast<float>(i))");
  CHECK(cpp("max(x, -inf)") == "std::max(x, -std::numeric_limits<float>::infinity())");
  CHECK(cuda("max(x, -inf)") == "kforge::cuda::std_max(x, -HUGE_VALF)");
  CHECK(cuda("min(d, inf)") == "kforge::cuda::std_min(d, HUGE_VAL)");
}

TEST_CASE("emit: math functions, float and double") {
  CHECK(cpp("rsqrt(x)") == "1.0f / std::sqrt(x)");
  CHECK(cuda("rsqrt(x)") == "rsqrtf(x)");
  CHECK(cpp("rsqrt(d)") == "1.0 / std::sqrt(d)");
  CHECK(cuda("rsqrt(d)") == "rsqrt(d)");
  CHECK(cpp("rsqrt(x) * 2") == "1.0f / std::sqrt(x) * 2.0f");
  CHECK(cpp("2 * rsqrt(x)") == "2.0f * (1.0f / std::sqrt(x))");
  CHECK(cpp("sigmoid(x)") == "1.0f / (1.0f + kforge::math::exp(-x))");
  CHECK(cuda("sigmoid(x)") == "1.0f / (1.0f + expf(-x))");
  CHECK(cuda("sigmoid(d)") == "1.0 / (1.0 + exp(-d))");
  CHECK(cpp("sigmoid(x + 1)") == "1.0f / (1.0f + kforge::math::exp(-(x + 1.0f)))");
  CHECK(cpp("sigmoid(-x)") == "1.0f / (1.0f + kforge::math::exp(-(-x)))");
  CHECK(cpp("erf(x)") == "kforge::math::erf(x)");
  CHECK(cuda("erf(x)") == "erff(x)");
  CHECK(cuda("erf(d)") == "erf(d)");
  CHECK(cpp("tanh(h)") == "std::tanh(h)");
  CHECK(cuda("tanh(h)") == "tanhf(h)");
  CHECK(cuda("exp(x)") == "expf(x)");
  CHECK(cuda("exp(d)") == "exp(d)");
  CHECK(cpp("exp(k)") == "kforge::math::exp(static_cast<float>(k))");
  CHECK(cuda("log(x) + log1p(x) + expm1(x) + log2(x) + log10(x)") ==
        "logf(x) + log1pf(x) + expm1f(x) + log2f(x) + log10f(x)");
  CHECK(cuda("sin(x) * cos(x) * tan(x) * asin(x) * acos(x) * atan(x) * sinh(x) * cosh(x)") ==
        "sinf(x) * cosf(x) * tanf(x) * asinf(x) * acosf(x) * atanf(x) * sinhf(x) * coshf(x)");
  CHECK(cpp("sqrt(d)") == "std::sqrt(d)");
  CHECK(cuda("sqrt(x)") == "sqrtf(x)");
  CHECK(cpp("pow(x, alpha)") == "std::pow(x, alpha)");
  CHECK(cuda("pow(x, alpha)") == "powf(x, alpha)");
  CHECK(cuda("pow(d, 2)") == "pow(d, 2.0)");
  CHECK(cpp("abs(x)") == "std::abs(x)");
  CHECK(cuda("abs(x)") == "fabsf(x)");
  CHECK(cuda("abs(d)") == "fabs(d)");
  CHECK(cpp("abs(i)") == "std::abs(i)");
  CHECK(cuda("abs(i)") == "abs(i)");
  CHECK(cuda("abs(k)") == "static_cast<int64_t>(llabs(k))");
  CHECK(cpp("floor(x) + ceil(x) + trunc(x)") == "std::floor(x) + std::ceil(x) + std::trunc(x)");
  CHECK(cuda("floor(x) + ceil(x) + trunc(x)") == "floorf(x) + ceilf(x) + truncf(x)");
  CHECK(cpp("floor(i) * 2") == "i * 2");
  CHECK(cpp("isnan(x) || isinf(x) || !isfinite(x)") == "std::isnan(x) || std::isinf(x) || !std::isfinite(x)");
  CHECK(cuda("isnan(x) || isinf(d)") == "isnan(x) || isinf(d)");
}

TEST_CASE("emit: operators, literals and parentheses") {
  CHECK(cpp("x % 2") == "std::fmod(x, 2.0f)");
  CHECK(cuda("x % 2") == "fmodf(x, 2.0f)");
  CHECK(cuda("d % 2") == "fmod(d, 2.0)");
  CHECK(cpp("i % 2") == "i % 2");
  CHECK(cpp("x - (1 - x)") == "x - (1.0f - x)");
  CHECK(cpp("(x - 1) - x") == "x - 1.0f - x");
  CHECK(cpp("x - -x") == "x - -x");
  CHECK(cpp("-(-x)") == "-(-x)");
  CHECK(cpp("-(x * x)") == "-(x * x)");
  CHECK(cpp("x * -2") == "x * -2.0f");
  CHECK(cpp("x / (x * x)") == "x / (x * x)");
  CHECK(cpp("x * 0.1") == "x * 0.1f");
  CHECK(cpp("d * 0.1") == "d * 0.1");
  CHECK(cpp("x * 1e-5") == "x * 1e-05f");
  CHECK(cpp("x * 100000000") == "x * 100000000.0f");
  CHECK(cpp("x * 1e20") == "x * 1e+20f");
  CHECK(cpp("d * 1e300") == "d * 1e+300");
  CHECK(cpp("d * 2") == "d * 2.0");
  CHECK(cpp("k + 3000000000") == "k + int64_t{3000000000}");
  CHECK(cpp("k - 1") == "k - int64_t{1}");
  CHECK(cpp("i + -1") == "i + -1");
  CHECK(cpp("x * beta") == "x * static_cast<float>(beta)");
  CHECK(cpp("c && !e || flag") == "(c && !e) || flag");
  CHECK(cpp("c || e && flag") == "c || (e && flag)");
  CHECK(cpp("(x > 0) == (i < 1)") == "(x > 0.0f) == (i < 1)");
  CHECK(cpp("!c == e") == "(!c) == e");
  CHECK(cpp("!(c && e)") == "!(c && e)");
  CHECK(cpp("x > 0 && i <= 3") == "x > 0.0f && i <= 3");
  CHECK(cpp("c ? x : 0") == "c ? x : 0.0f");
  CHECK(cpp("select(c, x, 1)") == "c ? x : 1.0f");
  CHECK(cpp("c ? (e ? x : 1) : 2") == "c ? (e ? x : 1.0f) : 2.0f");
  CHECK(cpp("c ? x : e ? x : 1") == "c ? x : (e ? x : 1.0f)");
  CHECK(cpp("(c ? x : 1) + 2") == "(c ? x : 1.0f) + 2.0f");
  CHECK(cpp("c || e ? 1 : 2") == "c || e ? 1 : 2");
  CHECK(cpp("int32(x) / 2") == "static_cast<int32_t>(x) / 2");
  CHECK(cpp("float16(i)") == "static_cast<float>(i)");
  CHECK(cpp("bool(x)") == "static_cast<bool>(x)");
  CHECK(cpp("int64(c) + k") == "static_cast<int64_t>(c) + k");
  CHECK(cuda("float64(x) * d") == "static_cast<double>(x) * d");
  CHECK(cpp("true") == "true");
  CHECK(cpp("int32(-inf) + i") == "INT32_MIN + i");
  CHECK(cpp("int64(inf) + k") == "INT64_MAX + k");
}

TEST_CASE("emit: names become the caller's text") {
  const EmitNames names = EmitNames::from_maps({{"x", "in0[i]"}, {"d", "v.d"}, {"k", "a + b"}},
                                               {{"alpha", "attrs.alpha"}, {"beta", "0.5 + 0.25"}});
  CHECK(cpp("x * alpha + 1", names) == "in0[i] * attrs.alpha + 1.0f");
  CHECK(cpp("d * beta", names) == "v.d * (0.5 + 0.25)");
  CHECK(cpp("-k", names) == "-(a + b)");
  CHECK(cpp("max(i, 0)", names) == "std::max(i, 0)");  // not in the map: kept
  EmitNames lambda;
  lambda.input = [](std::string_view n) { return "v_" + std::string(n); };
  lambda.attribute = [](std::string_view n) { return "kAttr_" + std::string(n); };
  CHECK(cuda("x * alpha + h", lambda) == "v_x * kAttr_alpha + v_h");
}

TEST_CASE("emit: gelu, both ways") {
  const ExprContext gelu = ExprContext("gelu").input("x", ST::kFloat32).attribute("approximate", ST::kBool);
  Harness h;
  std::optional<Expression> e = h.typed(
      "approximate ? 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) : 0.5 * x * (1 + erf(x * "
      "0.7071067811865476))",
      gelu);
  REQUIRE(e);
  CHECK(emit_cpp(*e) ==
        "approximate ? 0.5f * x * (1.0f + std::tanh(0.7978846f * (x + 0.044715f * x * x * x))) : 0.5f * x * (1.0f + "
        "kforge::math::erf(x * 0.70710677f))");
  CHECK(emit_cuda(*e) ==
        "approximate ? 0.5f * x * (1.0f + tanhf(0.7978846f * (x + 0.044715f * x * x * x))) : 0.5f * x * (1.0f + "
        "erff(x * 0.70710677f))");
  const ExprContext gelu64 = ExprContext("gelu").input("x", ST::kFloat64).attribute("approximate", ST::kBool);
  std::optional<Expression> e64 = h.typed("0.5 * x * (1 + erf(x * 0.7071067811865476))", gelu64);
  REQUIRE(e64);
  CHECK(emit_cuda(*e64) == "0.5 * x * (1.0 + erf(x * 0.7071067811865476))");
}

TEST_CASE("emit: literals for templates") {
  Literal inf;
  inf.kind = Literal::Kind::kFloat;
  inf.float_value = HUGE_VAL;
  CHECK(emit_literal(inf, ST::kFloat32, EmitTarget::kCpp) == "std::numeric_limits<float>::infinity()");
  CHECK(emit_literal(inf, ST::kFloat16, EmitTarget::kCuda) == "HUGE_VALF");
  CHECK(emit_literal(inf, ST::kFloat64, EmitTarget::kCuda) == "HUGE_VAL");
  Literal nan = inf;
  nan.float_value = std::nan("");
  CHECK(emit_literal(nan, ST::kFloat32, EmitTarget::kCpp) == "std::numeric_limits<float>::quiet_NaN()");
  CHECK(emit_literal(nan, ST::kFloat32, EmitTarget::kCuda) == "NAN");
  Literal three;
  three.kind = Literal::Kind::kInt;
  three.int_value = 3;
  CHECK(emit_literal(three, ST::kInt64, EmitTarget::kCpp) == "int64_t{3}");
  CHECK(emit_literal(three, ST::kInt8, EmitTarget::kCpp) == "3");
  Literal half;
  half.kind = Literal::Kind::kFloat;
  half.float_value = -0.5;
  CHECK(emit_literal(half, ST::kFloat32, EmitTarget::kCpp) == "-0.5f");
  CHECK(emit_literal(half, ST::kFloat64, EmitTarget::kCuda) == "-0.5");
}
