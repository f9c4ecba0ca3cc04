// Helpers for tests that compare the oneDNN paths of the kernels with the reference loops (reference.h).
//
// Tolerance: both compute each output as a float32 sum of `terms` products, in different orders (oneDNN blocks
// and vectorises the sum, the loops add in index order). For any order, |fl(sum) - sum| <= gamma(terms) *
// sum |products| with gamma(n) = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability of Numerical
// Algorithms, 3.1). So the two results differ by at most 2 gamma(terms) * S, where S is the same computation on the
// absolute values of the inputs, which the reference loops give us (and are exact enough for: they only bound).
// A wrong index, a missed tap or a wrong divisor is far outside that bound for random inputs.
#ifndef KFORGE_TESTS_UNIT_KERNELS_COMPARE_PATHS_H_
#define KFORGE_TESTS_UNIT_KERNELS_COMPARE_PATHS_H_

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tensor_builder.h"

namespace kforge::test {

// Uniform values in [-1, 1), reproducible from `seed`.
inline Tensor random_f32(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t = empty(DataType::kFloat32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

// An NHWC output written into channels [offset, offset + channels) of `wide` (pixels x wide_c, every element NaN
// before the write) against the same output written dense (pixels x channels): the slice must hold the same bits and
// no element outside it may be touched.
inline void check_slice_write(const Tensor& wide, const Tensor& dense, int64_t pixels, int64_t wide_c,
                              int64_t channels, int64_t offset) {
  int64_t wrong = 0, touched = 0;
  for (int64_t p = 0; p < pixels; ++p) {
    for (int64_t ch = 0; ch < wide_c; ++ch) {
      const float got = wide.data_as<const float>()[p * wide_c + ch];
      if (ch < offset || ch >= offset + channels) {
        touched += !std::isnan(got);
      } else {
        const float want = dense.data_as<const float>()[p * channels + ch - offset];
        wrong += std::memcmp(&got, &want, sizeof got) != 0;
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(touched == 0);
}

// Calls f(i, j) for each element of an N x C x H x W tensor: i its index in NCHW, j in NCHW8c ([N, C/8, H, W, 8],
// kernel_util.h: (((n * C/8 + c/8) * H + h) * W + w) * 8 + c % 8). Written out from the layout's definition rather
// than the kernels' helpers, so that a wrong channel index in them shows.
template <typename F>
void for_each_nchw8c(int64_t n, int64_t c, int64_t h, int64_t w, F f) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          f(((i * c + ch) * h + y) * w + x, (((i * (c / 8) + ch / 8) * h + y) * w + x) * 8 + ch % 8);
        }
}

// A float32 NCHW tensor re-blocked into NCHW8c, and back.
inline Tensor to_nchw8c(const Tensor& t) {
  REQUIRE(t.ndim == 4);
  REQUIRE(t.dims[1] % 8 == 0);
  Tensor b = empty(t.dtype, {t.dims[0], t.dims[1] / 8, t.dims[2], t.dims[3], 8});
  for_each_nchw8c(t.dims[0], t.dims[1], t.dims[2], t.dims[3],
                  [&](int64_t i, int64_t j) { b.data_as<float>()[j] = t.data_as<const float>()[i]; });
  return b;
}
inline Tensor from_nchw8c(const Tensor& b) {
  REQUIRE(b.ndim == 5);
  REQUIRE(b.dims[4] == 8);
  Tensor t = empty(b.dtype, {b.dims[0], b.dims[1] * 8, b.dims[2], b.dims[3]});
  for_each_nchw8c(t.dims[0], t.dims[1], t.dims[2], t.dims[3],
                  [&](int64_t i, int64_t j) { t.data_as<float>()[i] = b.data_as<const float>()[j]; });
  return t;
}

inline Tensor abs_of(const Tensor& t) {
  Tensor a = empty(t.dtype, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) a.data_as<float>()[i] = std::fabs(t.data_as<const float>()[i]);
  return a;
}

// An output-shaped tensor filled with NaN, so that an element a kernel forgets to write cannot pass.
inline Tensor poisoned_like(const Tensor& t) {
  Tensor p = empty(t.dtype, t.shape());
  for (int64_t i = 0; i < p.numel(); ++i) p.data_as<float>()[i] = std::nanf("");
  return p;
}

inline double gamma_of(int64_t terms) {
  const double u = std::ldexp(1.0, -24);
  return static_cast<double>(terms) * u / (1.0 - static_cast<double>(terms) * u);
}

// Checks |got - want| <= 2 gamma(terms) * abs_bound element by element (abs_bound: the reference on |inputs|).
inline void check_within_bound(const Tensor& got, const Tensor& want, const Tensor& abs_bound, int64_t terms) {
  REQUIRE(got.same_dims(want));
  REQUIRE(got.same_dims(abs_bound));
  const double g = 2.0 * gamma_of(terms);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double a = got.data_as<const float>()[i], b = want.data_as<const float>()[i];
    const double limit = g * abs_bound.data_as<const float>()[i];
    if (!(std::fabs(a - b) <= limit)) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad > 0) {
    INFO("first bad element " << first << ": got " << got.data_as<const float>()[first] << ", reference "
                              << want.data_as<const float>()[first] << ", bound "
                              << g * abs_bound.data_as<const float>()[first]);
    CHECK(bad == 0);
  }
}

// Declares a tensor's memory constant for the scope (kforge_kernels.h), releasing it even when a check fails.
class ConstantScope {
 public:
  ConstantScope(const Tensor& t, bool enabled) : data_(enabled ? t.data : nullptr) {
    if (data_ != nullptr) kernels::declare_constant(data_, t.bytes());
  }
  ~ConstantScope() {
    if (data_ != nullptr) kernels::release_constant(data_);
  }
  ConstantScope(const ConstantScope&) = delete;
  ConstantScope& operator=(const ConstantScope&) = delete;

 private:
  const void* data_;
};

// Sets the kernels' thread count for the scope, back to 1 after.
class ThreadsScope {
 public:
  explicit ThreadsScope(int threads) { kernels::set_num_threads(threads); }
  ~ThreadsScope() { kernels::set_num_threads(1); }
  ThreadsScope(const ThreadsScope&) = delete;
  ThreadsScope& operator=(const ThreadsScope&) = delete;
};

inline bool same_bits(const Tensor& a, const Tensor& b) {
  return a.same_dims(b) && a.dtype == b.dtype && std::memcmp(a.data, b.data, a.bytes()) == 0;
}

}  // namespace kforge::test

#endif  // KFORGE_TESTS_UNIT_KERNELS_COMPARE_PATHS_H_
