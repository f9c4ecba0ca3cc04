// Device helpers of the index-mapped kernels that `kforge compile --target cuda` generates (NAME_kernels.cu,
// src/codegen/cuda_index.h): the source coordinates of Paddle's nearest and bilinear interpolation, computed
// exactly as Paddle's CPU kernels do (float32 ratios, the half-pixel centre in double), so that a kernel reads the
// same source elements and weights as kernels/nn.cc and kernels/resize.cc, and grid_sample's coordinates and pixels
// as kernels/losses.cc computes them, and the per-element arithmetic of topk's rank, floor_divide and uniform as
// kernels/ computes it. kforge copies this header beside the outputs when a program's index-mapped kernels use it.
// Needs nvcc; no other dependency.
#ifndef KFORGE_INDEX_CUH_
#define KFORGE_INDEX_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace kforge {
namespace cuda_index {

// Source units per output unit along one axis: (in - 1) / (out - 1) with align_corners, else 1 / scale when a
// scale was given (scale > 0), else in / out; 0 for an output of one element.
__device__ __forceinline__ float interp_ratio(int64_t in, int64_t out, float scale, bool align_corners) {
  if (out <= 1) return 0.f;
  if (align_corners) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return scale > 0.f ? static_cast<float>(1. / scale) : static_cast<float>(in) / static_cast<float>(out);
}

// The source index of output index o for nearest interpolation.
__device__ __forceinline__ int64_t nearest_source(float ratio, int64_t o, int64_t in, bool align_corners) {
  const int64_t i = align_corners ? static_cast<int64_t>(ratio * static_cast<float>(o) + 0.5f)
                                  : static_cast<int64_t>(ratio * static_cast<float>(o));
  return i < in ? i : in - 1;
}

// The two source indices of output index o for bilinear interpolation and their weights.
struct Tap {
  int64_t lo, hi;
  float w_lo, w_hi;
};

// align_flag: align_mode 0 without align_corners (half-pixel centres), else o * ratio.
__device__ __forceinline__ Tap bilinear_tap(int64_t o, int64_t in, float ratio, bool align_flag) {
  // Paddle writes ratio * (o + 0.5) - 0.5 with a double literal: the product is computed in double.
  const double centre = static_cast<double>(ratio) * (static_cast<double>(o) + 0.5) - 0.5;
  int64_t lo = align_flag ? static_cast<int64_t>(static_cast<int>(centre))
                          : static_cast<int64_t>(static_cast<int>(ratio * static_cast<float>(o)));
  lo = lo > 0 ? lo : 0;
  const int64_t hi = lo + 1 < in - 1 ? lo + 1 : in - 1;
  float src = static_cast<float>(centre);
  src = src > 0 ? src : 0;
  const float d = align_flag ? src - static_cast<float>(lo) : ratio * static_cast<float>(o) - static_cast<float>(lo);
  return Tap{lo, hi, 1.f - d, d};
}

// grid_sample (kernels/losses.cc, Paddle's grid_sample_kernel.cc): the floor and round of T (float or double).
template <typename T>
__device__ __forceinline__ T grid_floor(T v) {
  if constexpr (sizeof(T) == 4) {
    return floorf(v);
  } else {
    return floor(v);
  }
}
template <typename T>
__device__ __forceinline__ T grid_round(T v) {
  if constexpr (sizeof(T) == 4) {
    return roundf(v);
  } else {
    return round(v);
  }
}

// Paddle's Unnormalize then Clip of one grid coordinate: [-1, 1] to pixels of an axis of `size` samples, clamped
// (padding 1: border) or folded (2: reflection) into range; 0: zeros, left as it is.
template <typename T>
__device__ __forceinline__ T grid_coordinate(T g, int64_t size, bool align_corners, int padding) {
  const int64_t max_val = size - 1;
  T v = align_corners ? (g + T(1)) * static_cast<T>(max_val * 0.5)
                      : (g + T(1)) * static_cast<T>((max_val + 1) * 0.5) - static_cast<T>(0.5);
  auto clamp = [max_val](T a) {
    const T low = a < T(0) ? T(0) : a;  // std::max(a, 0), std::min(., max_val): a NaN stays NaN
    return static_cast<T>(max_val) < low ? static_cast<T>(max_val) : low;
  };
  if (padding == 1) {
    v = clamp(v);
  } else if (padding == 2) {
    if (align_corners) {
      if (max_val == 0) return T(0);
      const T range = static_cast<T>(max_val * 2);
      const T a = v < T(0) ? -v : v;
      const T extra = a - grid_floor(a / range) * range;
      v = range - extra < extra ? range - extra : extra;
    } else {
      const T range = static_cast<T>((max_val + 1) * 2);
      const T shifted = v + static_cast<T>(0.5);
      const T a = shifted < T(0) ? -shifted : shifted;
      const T extra = a - grid_floor(a / range) * range;
      v = (range - extra < extra ? range - extra : extra) - static_cast<T>(0.5);
      v = clamp(v);
    }
  }
  return v;
}

// The pixel of an [h, w] plane at the rounded (x, y); 0 outside it (and for a NaN coordinate).
template <typename T>
__device__ __forceinline__ T grid_pixel(const T* plane, int64_t h, int64_t w, T x, T y) {
  if (!(x >= 0 && x <= static_cast<T>(w - 1) && y >= 0 && y <= static_cast<T>(h - 1))) return T(0);
  return plane[static_cast<int64_t>(grid_round(y)) * w + static_cast<int64_t>(grid_round(x))];
}

// topk (kernels/reduce_math.cc): how many elements of a line of `len` elements `step` apart come before its element j
// (value v) in a strict order: NaN first when largest, last when smallest, then by value, equal values by the lower
// index (the CPU kernel orders equal values as Paddle's CPU kernel does; the values agree, tied indices may not). The ranks of a line are a permutation of 0..len-1.
template <typename T>
__device__ __forceinline__ int64_t topk_rank(const T* line, int64_t len, int64_t step, int64_t j, T v, bool largest) {
  const bool v_nan = v != v;
  int64_t rank = 0;
  for (int64_t q = 0; q < len; ++q) {
    const T u = line[q * step];
    const bool u_nan = u != u;
    const bool before = u_nan != v_nan ? (largest ? u_nan : v_nan)
                                       : (!u_nan && u != v ? (largest ? u > v : u < v) : q < j);
    rank += before ? 1 : 0;
  }
  return rank;
}

// Python's a // b as kernels/math.cc computes it (Paddle's FloorDivideFunctor). Integers: the truncated quotient,
// one less where the signs differ and the remainder is not 0; lowest // -1 wraps; b == 0 (the CPU kernel's error)
// gives 0. Floats: fmod, the quotient of a - mod, one less where the signs of b and mod differ, Paddle's rounding.
template <typename T>
__device__ __forceinline__ T floor_divide(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed<T>::value) {
      using U = std::make_unsigned_t<T>;
      if (b == T(-1)) return static_cast<T>(U(0) - static_cast<U>(a));
      const T quot = static_cast<T>(a / b);
      return (a < 0) != (b < 0) && static_cast<T>(a % b) != 0 ? static_cast<T>(quot - 1) : quot;
    } else {
      return static_cast<T>(a / b);
    }
  } else {
    if (b == 0) return a / b;  // IEEE: inf, -inf or nan
    T mod;
    if constexpr (sizeof(T) == 4) {
      mod = fmodf(a, b);
    } else {
      mod = fmod(a, b);
    }
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
    if (div == 0) {
      if constexpr (sizeof(T) == 4) {
        return copysignf(T(0), a / b);
      } else {
        return copysign(T(0), a / b);
      }
    }
    T floordiv = grid_floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
    return floordiv;
  }
}

// uniform (kernels/creation_math.cc): element i's draw, splitmix64(key * 0x100000001B3 + i)'s top 53 bits scaled
// into [lo, hi) in double, rounded to T, stepped below hi where it rounds to it.
template <typename T>
__device__ __forceinline__ T uniform_draw(uint64_t key, int64_t i, double lo, double hi) {
  uint64_t z = key * 0x100000001B3ull + static_cast<uint64_t>(i);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
  T v = static_cast<T>(lo + (hi - lo) * u);
  const T top = static_cast<T>(hi), bottom = static_cast<T>(lo);
  if (v >= top && top > bottom) {
    if constexpr (sizeof(T) == 4) {
      v = nextafterf(top, bottom);
    } else {
      v = nextafter(top, bottom);
    }
  }
  return v;
}

}  // namespace cuda_index
}  // namespace kforge

#endif  // KFORGE_INDEX_CUH_
