// The bound behind GemmEpilogue::kBiasGeluTanh (passes/fusion_gemm.cpp; docs/compile.md, "Epilogue"): a 16-bit
// GEMM followed by Paddle's erf gelu computes the tanh form instead (cuBLASLt's GELU_BIAS epilogue). How far the
// two forms are apart, in exact (double) arithmetic, against half an ulp of float16 and bfloat16 at the output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace {

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// Half the spacing of a floating type with `mantissa` explicit bits and least normal exponent `min_exponent`
// at |y| (the subnormal spacing below the normal range).
double half_ulp(double y, int mantissa, int min_exponent) {
  int e = min_exponent + 1;
  if (y != 0) std::frexp(std::fabs(y), &e);
  e = std::max(e - 1, min_exponent);
  return std::ldexp(1.0, e - mantissa - 1);
}
double half_ulp_f16(double y) { return half_ulp(y, 10, -14); }
double half_ulp_bf16(double y) { return half_ulp(y, 7, -126); }

struct Largest {
  double value = 0, at = 0;
  void take(double v, double x) {
    if (v > value) value = v, at = x;
  }
};

}  // namespace

TEST_CASE("gelu forms: tanh within 4.74e-4 of erf, below half a 16-bit ulp of the output for x >= 0") {
  Largest diff, f16_pos, bf16_pos, f16_neg, tail;
  for (int64_t i = -1000000; i <= 1000000; ++i) {  // x in [-10, 10], steps of 1e-5
    const double x = double(i) * 1e-5;
    const double d = std::fabs(gelu_erf(x) - gelu_tanh(x));
    const double y = gelu_erf(x);
    diff.take(d, x);
    if (x >= 0) {
      f16_pos.take(d / half_ulp_f16(y), x);
      bf16_pos.take(d / half_ulp_bf16(y), x);
    } else {
      f16_neg.take(d / half_ulp_f16(y), x);
    }
    if (std::fabs(x) >= 5.3) tail.take(d, x);
  }
  // The largest difference: 4.7324e-4 at |x| = 2.699 (the difference is even in x).
  CHECK(diff.value > 4.73e-4);
  CHECK(diff.value < 4.74e-4);
  CHECK(std::fabs(std::fabs(diff.at) - 2.699) < 1e-3);
  CHECK(std::fabs((gelu_erf(2.69894) - gelu_tanh(2.69894)) - (gelu_erf(-2.69894) - gelu_tanh(-2.69894))) < 1e-15);
  // There (output 2.69) it is 0.48 of half a float16 ulp and 0.06 of half a bfloat16 ulp.
  const double y = gelu_erf(2.69894);
  CHECK(diff.value / half_ulp_f16(y) < 0.49);
  CHECK(diff.value / half_ulp_bf16(y) < 0.061);
  // For every x >= 0 below half an ulp of the output: at most 0.82 (float16) / 0.11 (bfloat16), at x = 1.144
  // where the output crosses 1 and its ulp halves.
  CHECK(f16_pos.value < 0.82);
  CHECK(bf16_pos.value < 0.11);
  CHECK(std::fabs(f16_pos.at - 1.144) < 1e-2);
  // Everywhere below half a float16 ulp of 1 (2^-11 = 4.88e-4): small against the scale of an activation tensor.
  CHECK(diff.value < half_ulp_f16(1.0));
  // For x < 0 the output is small (|gelu| <= 0.17) and the same absolute difference is many of its ulps:
  // 115 half float16 ulps at x = -2.5 (output -0.0155), up to 1842 at x = -4.0 (output -1.2e-4).
  CHECK(std::fabs(gelu_erf(-2.5) - gelu_tanh(-2.5)) / half_ulp_f16(gelu_erf(-2.5)) > 115);
  CHECK(f16_neg.value > 1800);
  // Beyond |x| = 5.3 both forms are x or 0 to within 2.8e-7.
  CHECK(tail.value < 2.8e-7);
}
