// kforge's exp and erf: the one definition that the generated fused loops (kforge compile --target cpu), the
// CPU kernel library (kernels/) and kforge's own constant folding (src/scalar_expr/expr_eval.cpp) all call, so
// that a fused loop, the kernel it replaces and the reference interpreter compute the same bits.
//
// libm's expf / erff are scalar calls with branches, which keep a loop from vectorising (BERT's gelu and
// softmax spent a third of their time in them). These are branch-free float arithmetic, integer bit
// operations and selects, inlined, so that GCC and Clang vectorise the loops that call them:
//   exp(float):  Cody-Waite reduction x = n ln2 + r, Cephes' degree-7 polynomial for e^r (within 1 ulp),
//                scaled by 2^n (a subnormal result rounded once by an add, never by a multiply);
//                0 below -104 (underflow), +inf above 88.73, NaN stays NaN.
//   exp(double): the same reduction with Cephes' rational approximation (within 2 ulp).
//   erf(float):  |x| < 1: x + x P(x^2); 1 <= |x| < 4: 1 - exp(-x^2) Q(1 / (1 + |x|)), Q approximating
//                erfcx; +-1 beyond (within 1.5 ulp). P and Q are Chebyshev fits (mpmath) of degree 6 and 7.
//   erf(double): libm's std::erf (no float64 model needs a vector erf).
// tests/unit/kernels/test_kforge_math.cpp measures the ulp error over dense sweeps against long double.
//
// Same bits on every ISA: each operation is a single IEEE-rounded add, multiply, divide or select. A compiler
// that contracts a * b + c into one fused multiply-add changes them, so the kernel library's AVX2 clones
// (KFORGE_MATH_CLONES) name an ISA without FMA, and code that must match the library bit for bit is compiled
// without FMA contraction (the default for the baseline x86-64 ISA, or -ffp-contract=off).
//
// An include guard, not `#pragma once`: every generated directory holds its own copy, and two programs #included into
// one translation unit would define everything twice (GCC takes copies written at different times for two files).
#ifndef KFORGE_MATH_H_
#define KFORGE_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// A float loop that calls these, compiled once more for AVX2 (8 floats per instruction; no FMA, see above) and
// picked at load time by the CPU (GCC's and Clang's function multiversioning).
#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define KFORGE_MATH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KFORGE_MATH_CLONES
#endif
// Inlined into every caller, so that each clone of a loop computes them with its own ISA, and a loop that calls
// them vectorises whatever the compiler's inlining limits.
#if defined(__GNUC__)
#define KFORGE_MATH_INLINE inline __attribute__((always_inline))
#else
#define KFORGE_MATH_INLINE inline
#endif

namespace kforge {
namespace math {
namespace detail {

KFORGE_MATH_INLINE float float_from_bits(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

KFORGE_MATH_INLINE double double_from_bits(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// 2^n as a float, n in [-126, 127]: the biased exponent into its field.
KFORGE_MATH_INLINE float pow2f(int32_t n) { return float_from_bits(static_cast<int32_t>(static_cast<uint32_t>(n + 127) << 23)); }
// 2^n as a double, n in [-1022, 1023].
KFORGE_MATH_INLINE double pow2(int32_t n) { return double_from_bits(static_cast<int64_t>(static_cast<uint64_t>(n + 1023) << 52)); }

// cond ? a : b, through an integer mask. A float select with a constant arm lets GCC's partial redundancy
// elimination fold the arithmetic after it into the other arm, which -ftrapping-math (the default) then
// forbids it to execute unconditionally: the loop would not vectorise ("control flow in loop").
template <typename Float, typename Bits>
KFORGE_MATH_INLINE Float pick_bits(bool cond, Float a, Float b) {
  Bits ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  const Bits mask = -static_cast<Bits>(cond);
  const Bits picked = (ia & mask) | (ib & ~mask);
  Float result;
  std::memcpy(&result, &picked, sizeof result);
  return result;
}
KFORGE_MATH_INLINE float pick(bool cond, float a, float b) { return pick_bits<float, int32_t>(cond, a, b); }
KFORGE_MATH_INLINE double pick(bool cond, double a, double b) { return pick_bits<double, int64_t>(cond, a, b); }

// exp(float)'s reduction: e^x = p * 2^n, p in [0.7, 1.42] (NaN only for a NaN x), n in [-159, 130].
KFORGE_MATH_INLINE float exp_reduced(float x, int32_t& n) {
  // Clamped where the result is already 0 or +inf; a NaN fails both (quiet) comparisons and stays NaN.
  float c = detail::pick(std::isless(x, -110.0f), -110.0f, x);
  c = detail::pick(std::isgreater(c, 90.0f), 90.0f, c);
  // n = round(c / ln2) by the 1.5 * 2^23 shifter (round to nearest, no call); n in [-159, 130].
  const float shifter = 12582912.0f;
  const float k = (c * 1.44269504088896341f + shifter) - shifter;
  n = static_cast<int32_t>(detail::pick(k == k, k, 0.0f));
  // r = c - n ln2 in two steps: n * 0.693359375 is exact (n has 8 bits, the constant 9).
  float r = c - k * 0.693359375f;
  r = r + k * 2.12194440e-4f;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r2 + r + 1.0f;
  return p;
}

// p * 2^n where that is normal or +inf: p * 2^(n/2) * 2^(n - n/2), the first product exact and normal, the
// second exact or rounding to +inf as the true result does.
KFORGE_MATH_INLINE float scale_normal(float p, int32_t n) {
  const int32_t n1 = n / 2;
  return p * pow2f(n1) * pow2f(n - n1);
}

}  // namespace detail

/// e^x in float32, within 1 ulp (subnormal results within 1 ulp of their spacing).
KFORGE_MATH_INLINE float exp(float x) {
  int32_t n;
  const float p = detail::exp_reduced(x, n);
  // p * 2^n, rounded once. A normal result (or +inf) is scale_normal's. A subnormal result (or 0: n below -126,
  // or n = -126 and p < 1) is not computed so: a multiply that rounds to a subnormal takes a microcode assist on
  // x86 (3x the time of the whole exp per vector; a softmax over thousands of classes has most of its x - max
  // below -87: PP-OCRv5 rec's CTC head). Instead p * 2^(n + 149), the result in units of 2^-149 (exact: normal,
  // below 2^23), is added to 2^23, which rounds it to an integer, nearest even; the sum's low bits are then that
  // integer, the result's bit pattern (2^23 itself, when rounding up to it, is the smallest normal's): the
  // product's correctly rounded result, bit for bit. Masks, not branches, decided from n and p so that little
  // work follows the polynomial (it is the latency chain of a vectorised loop).
  const int32_t tiny_lane =
      -static_cast<int32_t>(n < -126) | (-static_cast<int32_t>(n == -126) & -static_cast<int32_t>(p < 1.0f));
  const float scaled = detail::scale_normal(p, n & -static_cast<int32_t>(n >= -126));
  const float units = p * detail::pow2f((n + 149) & -static_cast<int32_t>(n <= -126));
  int32_t rounded;
  const float sum = units + 8388608.0f;
  std::memcpy(&rounded, &sum, sizeof rounded);
  const float tiny = detail::float_from_bits(rounded - 0x4b000000);
  return detail::pick(tiny_lane != 0, tiny, scaled);
}

/// e^x in float64, within 2 ulp.
KFORGE_MATH_INLINE double exp(double x) {
  double c = detail::pick(std::isless(x, -750.0), -750.0, x);
  c = detail::pick(std::isgreater(c, 710.0), 710.0, c);
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52
  const double k = (c * 1.4426950408889634074 + shifter) - shifter;
  const int32_t n = static_cast<int32_t>(detail::pick(k == k, k, 0.0));  // in [-1082, 1025]
  double r = c - k * 6.93145751953125e-1;  // n * 0.693145751953125 is exact (n has 11 bits, the constant 15)
  r = r - k * 1.42860682030941723212e-6;
  const double r2 = r * r;
  const double px = r * ((1.26177193074810590878e-4 * r2 + 3.02994407707441961300e-2) * r2 + 9.99999999999999999910e-1);
  const double q = ((3.00198505138664455042e-6 * r2 + 2.52448340349684104192e-3) * r2 + 2.27265548208155028766e-1) * r2 +
                   2.00000000000000000009e0;
  const double p = 1.0 + 2.0 * (px / (q - px));
  const int32_t n1 = n / 2;
  return p * detail::pow2(n1) * detail::pow2(n - n1);
}

/// erf(x) in float32, within 1.5 ulp.
KFORGE_MATH_INLINE float erf(float x) {
  const float a = std::fabs(x);
  // |x| < 1: erf(x) = x + x g(x^2), g(u) = erf(sqrt(u)) / sqrt(u) - 1.
  const float u = a * a;
  float g = 7.8758750626854883e-5f;
  g = g * u + -8.0168642871658695e-4f;
  g = g * u + 5.1890874234339740e-3f;
  g = g * u + -2.6854212010626412e-2f;
  g = g * u + 1.1283594715160218e-1f;
  g = g * u + -3.7612626666720331e-1f;
  g = g * u + 1.2837916584835095e-1f;
  const float small = a + a * g;
  // 1 <= |x| < 4: erf(x) = 1 - e^(-x^2) erfcx(x), erfcx as a polynomial in s = 1 / (1 + x) - 0.35; at 4 and
  // beyond (clamped) the result rounds to 1.
  const float b = detail::pick(std::isless(a, 4.0f), a, 4.0f);
  const float s = 1.0f / (1.0f + b) - 0.35f;
  float q = -6.0016186822167410e-1f;
  q = q * s + -1.7557780935448183e-1f;
  q = q * s + 5.6695030220488606e-1f;
  q = q * s + -2.2208353157469264e-1f;
  q = q * s + -4.1117534032432829e-1f;
  q = q * s + 4.8235824614345499e-1f;
  q = q * s + 9.7758499184146071e-1f;
  q = q * s + 2.7155288407537533e-1f;
  // e^(-b^2) for b < 4 is normal: scale_normal's product alone, the bits exp(-(b * b)) gives.
  int32_t n;
  const float p = detail::exp_reduced(-(b * b), n);
  const float large = 1.0f - detail::scale_normal(p, n) * q;
  const float magnitude = detail::pick(std::isless(a, 1.0f), small, large);
  return detail::pick(x == x, std::copysign(magnitude, x), x);
}

/// erf(x) in float64: libm's.
KFORGE_MATH_INLINE double erf(double x) { return std::erf(x); }

// A softmax row's max and sum. An in-order reduction is a chain of dependent instructions (3-4 cycles per
// element for a sum) that no compiler vectorises without reassociating, which changes the bits; these fix an
// order that vectorises: kRowLanes running results (lane l takes x[l], x[l + kRowLanes], ...), combined pairwise,
// then the elements past the last whole block, in order. The kernel library's softmax and the fused softmax rows
// both call them, so a fused row and the kernel it replaces agree to the bit. (PP-OCRv5 rec's 18,385-class
// softmax spent a third of its time in the two in-order loops.)
constexpr int kRowLanes = 16;

/// The largest of x[0, n) (-inf for n = 0). NaNs are skipped, as `v > m ? v : m` skips them; which of +0 and
/// -0 comes back when both are the largest depends on the order, and x - max is the same either way.
template <typename T>
KFORGE_MATH_INLINE T row_max(const T* x, int64_t n) {
  T lanes[kRowLanes];
  for (int l = 0; l < kRowLanes; ++l) lanes[l] = -std::numeric_limits<T>::infinity();
  int64_t j = 0;
  for (; j + kRowLanes <= n; j += kRowLanes) {
    for (int l = 0; l < kRowLanes; ++l) lanes[l] = x[j + l] > lanes[l] ? x[j + l] : lanes[l];
  }
  for (int w = kRowLanes / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) lanes[l] = lanes[l + w] > lanes[l] ? lanes[l + w] : lanes[l];
  }
  for (; j < n; ++j) lanes[0] = x[j] > lanes[0] ? x[j] : lanes[0];
  return lanes[0];
}

/// The sum of x[0, n) in the order above (0 for n = 0).
template <typename T>
KFORGE_MATH_INLINE T row_sum(const T* x, int64_t n) {
  T lanes[kRowLanes] = {};
  int64_t j = 0;
  for (; j + kRowLanes <= n; j += kRowLanes) {
    for (int l = 0; l < kRowLanes; ++l) lanes[l] += x[j + l];
  }
  for (int w = kRowLanes / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  }
  for (; j < n; ++j) lanes[0] += x[j];
  return lanes[0];
}

}  // namespace math
}  // namespace kforge

#endif  // KFORGE_MATH_H_
