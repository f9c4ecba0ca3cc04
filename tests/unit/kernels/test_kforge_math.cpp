// kforge_math.h (templates/runtime/): the exp and erf that the fused loops, the kernel library and constant
// folding share. Their error in ulp against long double's expl / erfl over dense sweeps of the float bit patterns
// and of doubles, the edge cases (zeros, infinities, NaN, the overflow and underflow thresholds, subnormals), and
// the kernel library's vectorised loops (kernels/transcendental.h) against the scalar formula, bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kforge_math.h"
#include "transcendental.h"

namespace kforge_math_test {

constexpr float kMathInfF = std::numeric_limits<float>::infinity();
constexpr double kMathInf = std::numeric_limits<double>::infinity();

// |got - exact| in units of the spacing of `Float` at `exact` (2^-149 or 2^-1074 below the normal range); a
// result that should be NaN, infinite or beyond the type's range must be exactly what rounding gives.
template <typename Float>
double ulp_error(Float got, long double exact) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0.0 : 1e30;
  const Float rounded = static_cast<Float>(exact);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0.0 : 1e30;
  constexpr int kDigits = std::numeric_limits<Float>::digits;
  constexpr int kMinExponent = std::numeric_limits<Float>::min_exponent - kDigits;  // -149, -1074
  int e = 0;
  std::frexp(static_cast<double>(std::fabs(exact)), &e);
  const int spacing = std::max(e - kDigits, kMinExponent);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / std::ldexp(1.0L, spacing));
}

float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

struct Worst {
  double ulp = 0;
  double at = 0;
  void add(double error, double x) {
    if (error > ulp) {
      ulp = error;
      at = x;
    }
  }
};

// The worst ulp error of f against `exact` (long double) over every 1021st float bit pattern (both signs, every
// exponent, subnormals, infinities; NaNs skipped) and 4 million points evenly across [lo, hi].
template <typename F, typename Exact>
Worst worst_float_error(F f, Exact exact, float lo, float hi) {
  Worst worst;
  auto check = [&](float x) { worst.add(ulp_error(f(x), exact(static_cast<long double>(x))), x); };
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 1021) {
    const float x = float_from_bits(static_cast<uint32_t>(bits));
    if (!std::isnan(x)) check(x);
  }
  const int kPoints = 4000000;
  for (int i = 0; i < kPoints; ++i) check(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(kPoints));
  return worst;
}

}  // namespace kforge_math_test

using namespace kforge_math_test;

TEST_CASE("kforge::math::exp(float) is within 1 ulp over the float range") {
  // Dense where the result is neither 0 nor +inf.
  const Worst worst = worst_float_error([](float x) { return kforge::math::exp(x); },
                                        [](long double x) { return expl(x); }, -104.0f, 89.0f);
  INFO("worst " << worst.ulp << " ulp at " << worst.at);
  CHECK(worst.ulp <= 1.0);
}

TEST_CASE("kforge::math::exp(float) at its edges") {
  using kforge::math::exp;
  CHECK(exp(0.0f) == 1.0f);
  CHECK(exp(-0.0f) == 1.0f);
  CHECK(exp(kMathInfF) == kMathInfF);
  CHECK(exp(-kMathInfF) == 0.0f);
  CHECK(std::isnan(exp(std::numeric_limits<float>::quiet_NaN())));
  // The largest x with a finite result, and the next float.
  CHECK(exp(88.72283935546875f) == static_cast<float>(expl(88.72283935546875L)));
  CHECK(exp(std::nextafter(88.72283935546875f, kMathInfF)) == kMathInfF);
  CHECK(exp(std::numeric_limits<float>::max()) == kMathInfF);
  // Subnormal results, the smallest one, and 0 below it.
  CHECK(ulp_error(exp(-100.0f), expl(-100.0f)) <= 1.0);
  CHECK(exp(-103.9f) == std::numeric_limits<float>::denorm_min());
  CHECK(exp(-104.0f) == 0.0f);
  CHECK(exp(-std::numeric_limits<float>::max()) == 0.0f);
  CHECK(exp(std::numeric_limits<float>::denorm_min()) == 1.0f);
}

TEST_CASE("kforge::math::exp(float) rounds a subnormal result as the float product p * 2^n would") {
  // exp rounds results below 2^-126 by an add instead of multiplying into a subnormal (a microcode assist on
  // x86); it must give the bits of the product, for every float x from where the result is 0 to above the
  // first normal one (n = -126 included, where p decides).
  using namespace kforge::math::detail;
  uint64_t checked = 0, subnormal = 0, differ = 0;
  for (float x = -110.0f; x <= -80.0f; x = std::nextafter(x, 0.0f)) {
    int32_t n;
    const float p = exp_reduced(x, n);
    const int32_t n1 = n / 2;
    const float product = p * pow2f(n1) * pow2f(n - n1);
    const float got = kforge::math::exp(x);
    differ += std::memcmp(&got, &product, sizeof got) != 0 ? 1 : 0;
    subnormal += std::fpclassify(got) == FP_SUBNORMAL ? 1 : 0;
    ++checked;
  }
  INFO(checked << " x checked, " << subnormal << " subnormal results");
  CHECK(subnormal > 1000000);
  CHECK(differ == 0);
}

TEST_CASE("kforge::math::erf(float) is within 1.5 ulp over the float range") {
  // Dense where erf is neither +-1 nor its linear term alone.
  const Worst worst = worst_float_error([](float x) { return kforge::math::erf(x); },
                                        [](long double x) { return erfl(x); }, -4.5f, 4.5f);
  INFO("worst " << worst.ulp << " ulp at " << worst.at);
  CHECK(worst.ulp <= 1.5);
}

TEST_CASE("kforge::math::erf(float) at its edges") {
  using kforge::math::erf;
  CHECK(erf(0.0f) == 0.0f);
  CHECK(!std::signbit(erf(0.0f)));
  CHECK(std::signbit(erf(-0.0f)));
  CHECK(erf(kMathInfF) == 1.0f);
  CHECK(erf(-kMathInfF) == -1.0f);
  CHECK(erf(4.0f) == 1.0f);
  CHECK(erf(-10.0f) == -1.0f);
  CHECK(std::isnan(erf(std::numeric_limits<float>::quiet_NaN())));
  CHECK(ulp_error(erf(1e-30f), erfl(1e-30f)) <= 1.0);
  CHECK(ulp_error(erf(std::numeric_limits<float>::denorm_min()), erfl(std::numeric_limits<float>::denorm_min())) <= 1.0);
  // Both sides of the switch between the two approximations at |x| = 1.
  CHECK(ulp_error(erf(1.0f), erfl(1.0L)) <= 1.5);
  CHECK(ulp_error(erf(std::nextafter(1.0f, 0.0f)), erfl(std::nextafter(1.0f, 0.0f))) <= 1.5);
}

TEST_CASE("kforge::math::exp(double) is within 2 ulp") {
  Worst worst;
  const int kSteps = 4000000;
  for (int i = 0; i <= kSteps; ++i) {
    const double x = -760.0 + 1480.0 * i / kSteps + 1e-7 * (i % 11);  // the last term varies the low bits
    worst.add(ulp_error(kforge::math::exp(x), expl(x)), x);
  }
  for (double x = -1.0; x < 1.0; x += 1.0 / 65536 + 1e-12) worst.add(ulp_error(kforge::math::exp(x), expl(x)), x);
  INFO("worst " << worst.ulp << " ulp at " << worst.at);
  CHECK(worst.ulp <= 2.0);

  using kforge::math::exp;
  CHECK(exp(0.0) == 1.0);
  CHECK(exp(kMathInf) == kMathInf);
  CHECK(exp(-kMathInf) == 0.0);
  CHECK(std::isnan(exp(std::numeric_limits<double>::quiet_NaN())));
  CHECK(ulp_error(exp(709.78), expl(709.78)) <= 2.0);
  CHECK(exp(709.79) == kMathInf);
  CHECK(ulp_error(exp(-740.0), expl(-740.0)) <= 1.0);  // subnormal
  CHECK(exp(-746.0) == 0.0);
}

TEST_CASE("the kernel library's vectorised loops give the scalar formula's bits") {
  using kforge::kernels::util::Transcendental;
  // 203 elements: whole vectors (8 lanes of math_avx2.h where the CPU has AVX2, else blocks of 16) and a scalar tail.
  std::vector<float> x;
  for (int i = 0; i < 203; ++i) x.push_back(-9.0f + 0.0917f * static_cast<float>(i));
  x[5] = kMathInfF;
  x[6] = -kMathInfF;
  x[7] = std::numeric_limits<float>::quiet_NaN();
  x[8] = -120.0f;
  x[9] = 95.0f;
  for (Transcendental op : {Transcendental::kExp, Transcendental::kErf, Transcendental::kSigmoid,
                            Transcendental::kSilu, Transcendental::kGeluErf}) {
    std::vector<float> out(x.size());
    kforge::kernels::util::map_transcendental(op, x.data(), out.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float scalar = kforge::kernels::util::transcendental(op, x[i]);
      INFO("op " << static_cast<int>(op) << ", x = " << x[i]);
      CHECK(std::memcmp(&out[i], &scalar, sizeof scalar) == 0);
    }
    // In place.
    std::vector<float> in_place = x;
    kforge::kernels::util::map_transcendental(op, in_place.data(), in_place.data(),
                                              static_cast<int64_t>(in_place.size()));
    CHECK(std::memcmp(in_place.data(), out.data(), out.size() * sizeof(float)) == 0);
  }
  std::vector<float> shifted(x.size());
  kforge::kernels::util::map_exp_shifted(x.data(), 2.5f, shifted.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const float scalar = kforge::math::exp(x[i] - 2.5f);
    CHECK(std::memcmp(&shifted[i], &scalar, sizeof scalar) == 0);
  }
}

TEST_CASE("the kernel library's loops give the scalar formulas' bits over the whole float range") {
  // Every 1021st float bit pattern (both signs, every exponent, subnormals, infinities, NaNs): the AVX2 loops
  // (kernels/math_avx2.h, on a CPU that has AVX2) and the vectoriser's clones elsewhere must round as the
  // scalar formulas do in every lane, at the edges of exp's subnormal and overflow ranges and erf's pieces too.
  using kforge::kernels::util::Transcendental;
  std::vector<float> x;
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 1021) x.push_back(float_from_bits(static_cast<uint32_t>(bits)));
  for (float edge : {-126.0f * 0.69314718f, -87.33655f, -87.33654f, -103.97208f, 88.72283f, 88.72284f, 1.0f, -1.0f,
                     4.0f, -4.0f, 0.0f, -0.0f}) {
    x.push_back(edge);
  }
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> out(x.size());
  for (Transcendental op : {Transcendental::kExp, Transcendental::kErf, Transcendental::kSigmoid,
                            Transcendental::kSilu, Transcendental::kGeluErf}) {
    kforge::kernels::util::map_transcendental(op, x.data(), out.data(), n);
    int64_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float scalar = kforge::kernels::util::transcendental(op, x[i]);
      differ += std::memcmp(&out[i], &scalar, sizeof scalar) != 0;
    }
    INFO("op " << static_cast<int>(op));
    CHECK(differ == 0);
  }
  kforge::kernels::util::map_exp_shifted(x.data(), -3.25f, out.data(), n);
  int64_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float scalar = kforge::math::exp(x[i] - -3.25f);
    differ += std::memcmp(&out[i], &scalar, sizeof scalar) != 0;
  }
  CHECK(differ == 0);
}
