// kforge_math.h's exp and erf and transcendental.h's sigmoid, silu and gelu, 8 floats at a time in AVX2
// registers: the same IEEE operations in the same order as the scalar formulas (each an add, multiply, divide,
// compare, select or integer bit operation; no FMA, which would round once where the formula rounds twice), so
// every lane's bits are the scalar formula's. The vectoriser's clones of the scalar loops (transcendental.cc's
// KFORGE_MATH_CLONES) give those bits too but keep half their constants on the stack and run at about half this
// speed (the detection head's final sigmoid: 28.6 -> 15.8 us for 12,288 values). Only for functions compiled
// with KFORGE_AVX2 and called where the CPU has AVX2. Internal to kernels/.
#ifndef KFORGE_KERNELS_MATH_AVX2_H_
#define KFORGE_KERNELS_MATH_AVX2_H_

#if defined(__x86_64__) && defined(__GNUC__)
#define KFORGE_HAVE_MATH_AVX2 1

#include <immintrin.h>

// AVX2 without FMA: kforge_math.h's formulas round every product (see its header comment).
#define KFORGE_AVX2 __attribute__((target("avx2")))
#define KFORGE_AVX2_INLINE inline __attribute__((target("avx2"), always_inline))

namespace kforge::kernels::util::avx2 {

// cond ? a : b per lane (cond all ones or all zeros).
KFORGE_AVX2_INLINE __m256 pick(__m256 cond, __m256 a, __m256 b) { return _mm256_blendv_ps(b, a, cond); }

// 2^n per lane, n in [-126, 127] (kforge_math.h's pow2f).
KFORGE_AVX2_INLINE __m256 pow2(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// detail::exp_reduced: e^x = p * 2^n.
KFORGE_AVX2_INLINE __m256 exp_reduced(__m256 x, __m256i& n) {
  const __m256 lo = _mm256_set1_ps(-110.0f);
  const __m256 hi = _mm256_set1_ps(90.0f);
  __m256 c = pick(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), lo, x);  // std::isless: false for NaN
  c = pick(_mm256_cmp_ps(c, hi, _CMP_GT_OQ), hi, c);         // std::isgreater
  const __m256 shifter = _mm256_set1_ps(12582912.0f);
  const __m256 k = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(c, _mm256_set1_ps(1.44269504088896341f)), shifter), shifter);
  // k == k ? k : 0, then truncated (k is an integer in [-159, 130]).
  n = _mm256_cvttps_epi32(_mm256_and_ps(_mm256_cmp_ps(k, k, _CMP_EQ_OQ), k));
  __m256 r = _mm256_sub_ps(c, _mm256_mul_ps(k, _mm256_set1_ps(0.693359375f)));
  r = _mm256_add_ps(r, _mm256_mul_ps(k, _mm256_set1_ps(2.12194440e-4f)));
  const __m256 r2 = _mm256_mul_ps(r, r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201e-1f));
  return _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(p, r2), r), _mm256_set1_ps(1.0f));
}

// detail::scale_normal: p * 2^(n / 2) * 2^(n - n / 2), n / 2 rounded toward zero as C++'s division.
KFORGE_AVX2_INLINE __m256 scale_normal(__m256 p, __m256i n) {
  const __m256i n1 = _mm256_srai_epi32(_mm256_add_epi32(n, _mm256_srli_epi32(n, 31)), 1);
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2(n1)), pow2(_mm256_sub_epi32(n, n1)));
}

// math::exp(float).
KFORGE_AVX2_INLINE __m256 exp(__m256 x) {
  __m256i n;
  const __m256 p = exp_reduced(x, n);
  const __m256i m126 = _mm256_set1_epi32(-126);
  const __m256i below = _mm256_cmpgt_epi32(m126, n);  // n < -126
  const __m256i at = _mm256_cmpeq_epi32(n, m126);     // n == -126
  const __m256i p_below_1 = _mm256_castps_si256(_mm256_cmp_ps(p, _mm256_set1_ps(1.0f), _CMP_LT_OQ));
  const __m256 tiny_lane = _mm256_castsi256_ps(_mm256_or_si256(below, _mm256_and_si256(at, p_below_1)));
  const __m256 scaled = scale_normal(p, _mm256_andnot_si256(below, n));  // n & -(n >= -126)
  // p * 2^(n + 149) where n <= -126 (else p * 2^0), added to 2^23: the result's bits in the sum's low bits.
  const __m256i at_most = _mm256_or_si256(below, at);
  const __m256 units = _mm256_mul_ps(p, pow2(_mm256_and_si256(_mm256_add_epi32(n, _mm256_set1_epi32(149)), at_most)));
  const __m256 sum = _mm256_add_ps(units, _mm256_set1_ps(8388608.0f));
  const __m256 tiny = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(sum), _mm256_set1_epi32(0x4b000000)));
  return pick(tiny_lane, tiny, scaled);
}

// math::erf(float).
KFORGE_AVX2_INLINE __m256 erf(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 u = _mm256_mul_ps(a, a);
  __m256 g = _mm256_set1_ps(7.8758750626854883e-5f);
  g = _mm256_add_ps(_mm256_mul_ps(g, u), _mm256_set1_ps(-8.0168642871658695e-4f));
  g = _mm256_add_ps(_mm256_mul_ps(g, u), _mm256_set1_ps(5.1890874234339740e-3f));
  g = _mm256_add_ps(_mm256_mul_ps(g, u), _mm256_set1_ps(-2.6854212010626412e-2f));
  g = _mm256_add_ps(_mm256_mul_ps(g, u), _mm256_set1_ps(1.1283594715160218e-1f));
  g = _mm256_add_ps(_mm256_mul_ps(g, u), _mm256_set1_ps(-3.7612626666720331e-1f));
  g = _mm256_add_ps(_mm256_mul_ps(g, u), _mm256_set1_ps(1.2837916584835095e-1f));
  const __m256 small = _mm256_add_ps(a, _mm256_mul_ps(a, g));
  const __m256 four = _mm256_set1_ps(4.0f);
  const __m256 b = pick(_mm256_cmp_ps(a, four, _CMP_LT_OQ), a, four);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 s = _mm256_sub_ps(_mm256_div_ps(one, _mm256_add_ps(one, b)), _mm256_set1_ps(0.35f));
  __m256 q = _mm256_set1_ps(-6.0016186822167410e-1f);
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(-1.7557780935448183e-1f));
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(5.6695030220488606e-1f));
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(-2.2208353157469264e-1f));
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(-4.1117534032432829e-1f));
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(4.8235824614345499e-1f));
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(9.7758499184146071e-1f));
  q = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_set1_ps(2.7155288407537533e-1f));
  __m256i n;
  const __m256 p = exp_reduced(_mm256_xor_ps(sign, _mm256_mul_ps(b, b)), n);
  const __m256 large = _mm256_sub_ps(one, _mm256_mul_ps(scale_normal(p, n), q));
  const __m256 magnitude = pick(_mm256_cmp_ps(a, one, _CMP_LT_OQ), small, large);
  const __m256 signed_magnitude = _mm256_or_ps(_mm256_andnot_ps(sign, magnitude), _mm256_and_ps(sign, x));  // copysign
  return pick(_mm256_cmp_ps(x, x, _CMP_EQ_OQ), signed_magnitude, x);
}

// transcendental.h's sigmoid_of, silu_of, gelu_erf_of.
KFORGE_AVX2_INLINE __m256 sigmoid(__m256 v) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp(_mm256_xor_ps(v, _mm256_set1_ps(-0.0f)))));
}
KFORGE_AVX2_INLINE __m256 silu(__m256 v) {
  return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), exp(_mm256_xor_ps(v, _mm256_set1_ps(-0.0f)))));
}
KFORGE_AVX2_INLINE __m256 gelu_erf(__m256 v) {
  const __m256 half_v = _mm256_mul_ps(_mm256_set1_ps(0.5f), v);
  const __m256 e = erf(_mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752440f)));
  return _mm256_mul_ps(half_v, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

}  // namespace kforge::kernels::util::avx2

#endif  // x86-64 GCC / Clang

#endif  // KFORGE_KERNELS_MATH_AVX2_H_
