// Device helpers of the index-mapped kernels that `kforge compile --target cuda` generates (NAME_kernels.cu,
// src/codegen/cuda_index.h): the source coordinates of Paddle's nearest, bilinear and bicubic interpolation, computed
// exactly as Paddle's CPU kernels do (float32 ratios, the half-pixel centre in double), so that a kernel reads the
// same source elements and weights as kernels/nn.cc and kernels/resize.cc, and grid_sample's coordinates and pixels
// as kernels/losses.cc computes them, topk's selection and argsort's order (libstdc++'s algorithms, as the CPU
// kernel), and the per-element arithmetic of floor_divide and uniform as kernels/ computes it, and deformable_conv's
// sampled products (kernels/detection.cc; the sampling itself is kforge_sampling.h's, which the CPU kernel
// calls too), roi_align's samples (kernels/detection.cc's order) and yolo_box's decoding (kernels/yolo_box.cc's
// types). kforge copies this header and kforge_sampling.h beside the outputs when a program's index-mapped kernels
// use it.
// Needs nvcc and kforge_sampling.h.
#ifndef KFORGE_INDEX_CUH_
#define KFORGE_INDEX_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kforge_sampling.h"  // deformable_conv's sampling, shared with the CPU kernel library

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

// bicubic_interp (kernels/resize.cc, Paddle's BicubicInterpolation): output element [k, l] of one plane, four cubic
// rows along x over the clamped taps index - 1 .. index + 2, then one along y, in T (float or double) as the CPU
// kernel computes them (kforge_sampling.h's coordinates and convolution). sh, sw: the plane's strides along h, w.
template <typename T>
__device__ T bicubic_at(const T* plane, int64_t in_h, int64_t in_w, int64_t sh, int64_t sw, int64_t k, int64_t l,
                        float ratio_h, float ratio_w, bool align_corners) {
  const sampling::CubicSource<T> y = sampling::cubic_source<T>(ratio_h, k, align_corners);
  const sampling::CubicSource<T> x = sampling::cubic_source<T>(ratio_w, l, align_corners);
  int64_t xs[4];
  for (int64_t t = 0; t < 4; ++t) xs[t] = sampling::clamp_index(x.index - 1 + t, in_w) * sw;
  T coefficients[4];
  for (int64_t ii = 0; ii < 4; ++ii) {
    const T* row = plane + sampling::clamp_index(y.index - 1 + ii, in_h) * sh;
    coefficients[ii] = sampling::cubic_interp<T>(row[xs[0]], row[xs[1]], row[xs[2]], row[xs[3]], x.t);
  }
  return sampling::cubic_interp<T>(coefficients[0], coefficients[1], coefficients[2], coefficients[3], y.t);
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

// topk (kernels/reduce_math.cc), one thread per line, step for step as the CPU kernel, which follows Paddle's CPU
// kernel (phi FullTopK): the line's indices in order, then libstdc++'s std::partial_sort of the first k when
// k * 64 < len, else std::nth_element at k - 1 and, when `sorted`, std::sort of the first k - 1, each written out
// below as libstdc++ (GCC 8-14) implements it (heap select and heap sort; introselect and introsort with a median of
// three and a final insertion sort), so that equal values come out in the CPU kernel's order too: neither stable nor
// by index, but what those algorithms make of the sequence. An entry is an index into the line, in the call's scratch
// (passes/cuda_index_scratch.h).
template <typename T>
struct TopkLine {
  const T* line;
  int64_t step;
  bool largest;
  // argsort's stable order: equal values by index (any correct sort of that total order gives std::stable_sort's).
  bool by_index = false;
  // Whether entry p comes before entry q: NaN first when largest, last when smallest, then by value.
  __device__ __forceinline__ bool before(int32_t p, int32_t q) const {
    const T u = line[static_cast<int64_t>(p) * step], v = line[static_cast<int64_t>(q) * step];
    const bool un = u != u, vn = v != v;
    const bool first = largest ? ((un && !vn) || u > v) : ((!un && vn) || u < v);
    if (first || !by_index) return first;
    const bool second = largest ? ((vn && !un) || v > u) : ((!vn && un) || v < u);
    return !second && p < q;
  }

  __device__ void push_heap(int32_t* a, int64_t hole, int64_t top, int32_t value) const {
    int64_t parent = (hole - 1) / 2;
    while (hole > top && before(a[parent], value)) {
      a[hole] = a[parent];
      hole = parent;
      parent = (hole - 1) / 2;
    }
    a[hole] = value;
  }
  __device__ void adjust_heap(int32_t* a, int64_t hole, int64_t len, int32_t value) const {
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
      child = 2 * (child + 1);
      if (before(a[child], a[child - 1])) --child;
      a[hole] = a[child];
      hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
      child = 2 * (child + 1);
      a[hole] = a[child - 1];
      hole = child - 1;
    }
    push_heap(a, hole, top, value);
  }
  __device__ void make_heap(int32_t* a, int64_t len) const {
    if (len < 2) return;
    for (int64_t parent = (len - 2) / 2;; --parent) {
      adjust_heap(a, parent, len, a[parent]);
      if (parent == 0) return;
    }
  }
  // pop_heap(first, last, result): the top goes to *result, *result's entry sinks into the heap [0, len).
  __device__ void pop_heap(int32_t* a, int64_t len, int32_t* result) const {
    const int32_t value = *result;
    *result = a[0];
    adjust_heap(a, 0, len, value);
  }
  __device__ void heap_select(int32_t* a, int64_t middle, int64_t last) const {
    make_heap(a, middle);
    for (int64_t i = middle; i < last; ++i) {
      if (before(a[i], a[0])) pop_heap(a, middle, a + i);
    }
  }
  __device__ void sort_heap(int32_t* a, int64_t len) const {
    for (; len > 1; --len) pop_heap(a, len - 1, a + len - 1);
  }
  __device__ void partial_sort(int32_t* a, int64_t middle, int64_t last) const {
    heap_select(a, middle, last);
    sort_heap(a, middle);
  }
  __device__ static void swap(int32_t* p, int32_t* q) {
    const int32_t t = *p;
    *p = *q;
    *q = t;
  }
  __device__ void move_median_to_first(int32_t* result, int32_t* a, int32_t* b, int32_t* c) const {
    if (before(*a, *b)) {
      if (before(*b, *c)) swap(result, b);
      else if (before(*a, *c)) swap(result, c);
      else swap(result, a);
    } else if (before(*a, *c)) {
      swap(result, a);
    } else if (before(*b, *c)) {
      swap(result, c);
    } else {
      swap(result, b);
    }
  }
  __device__ int32_t* unguarded_partition(int32_t* first, int32_t* last, const int32_t* pivot) const {
    while (true) {
      while (before(*first, *pivot)) ++first;
      --last;
      while (before(*pivot, *last)) --last;
      if (!(first < last)) return first;
      swap(first, last);
      ++first;
    }
  }
  __device__ int32_t* unguarded_partition_pivot(int32_t* first, int32_t* last) const {
    int32_t* mid = first + (last - first) / 2;
    move_median_to_first(first, first + 1, mid, last - 1);
    return unguarded_partition(first + 1, last, first);
  }
  __device__ void unguarded_linear_insert(int32_t* last) const {
    const int32_t value = *last;
    int32_t* next = last - 1;
    while (before(value, *next)) {
      *last = *next;
      last = next;
      --next;
    }
    *last = value;
  }
  __device__ void insertion_sort(int32_t* first, int32_t* last) const {
    if (first == last) return;
    for (int32_t* i = first + 1; i != last; ++i) {
      if (before(*i, *first)) {
        const int32_t value = *i;
        for (int32_t* p = i; p != first; --p) *p = *(p - 1);
        *first = value;
      } else {
        unguarded_linear_insert(i);
      }
    }
  }
  __device__ static int64_t floor_log2(int64_t n) {
    int64_t k = 0;
    while (n > 1) {
      n >>= 1;
      ++k;
    }
    return k;
  }
  __device__ void nth_element(int32_t* first, int32_t* nth, int32_t* last) const {
    if (first == last || nth == last) return;
    int64_t depth = floor_log2(last - first) * 2;
    while (last - first > 3) {
      if (depth == 0) {
        heap_select(first, nth + 1 - first, last - first);
        swap(first, nth);
        return;
      }
      --depth;
      int32_t* cut = unguarded_partition_pivot(first, last);
      if (cut <= nth) first = cut;
      else last = cut;
    }
    insertion_sort(first, last);
  }
  // std::sort: introsort's loop, then the final insertion sort. The loop recurses into the upper part and goes on
  // with the lower one; the parts are disjoint, so an explicit stack visiting them in another order sorts alike.
  __device__ void sort(int32_t* first, int32_t* last) const {
    if (first == last) return;
    struct Part { int32_t* first; int32_t* last; int64_t depth; };
    Part stack[64];
    int top = 0;
    stack[top++] = Part{first, last, floor_log2(last - first) * 2};
    while (top > 0) {
      Part part = stack[--top];
      while (part.last - part.first > 16) {
        if (part.depth == 0) {
          partial_sort(part.first, part.last - part.first, part.last - part.first);
          break;
        }
        --part.depth;
        int32_t* cut = unguarded_partition_pivot(part.first, part.last);
        stack[top++] = Part{cut, part.last, part.depth};
        part.last = cut;
      }
    }
    if (last - first > 16) {
      insertion_sort(first, first + 16);
      for (int32_t* i = first + 16; i != last; ++i) unguarded_linear_insert(i);
    } else {
      insertion_sort(first, last);
    }
  }
};

// The k first entries of a line of `len` elements `step` apart, in the CPU kernel's order, into out and out_indices
// (either may be null; their entries `step` apart too); `a` is scratch for passes::topk_line_entries(k, len) entries
// (k on partial_sort's path, len on nth_element's).
template <typename T>
__device__ void topk_line(const T* line, int64_t len, int64_t step, int64_t k, bool largest, bool sorted, int32_t* a,
                          T* out, int64_t* out_indices) {
  if (k <= 0) return;
  const TopkLine<T> order{line, step, largest};
  if (k * 64 < len) {
    // partial_sort(first, first + k, last): heap_select, whose pop_heap(first, middle, i) puts the top into *i and
    // sinks *i (entry i, untouched before) into the heap, then sort_heap. *i is never read again, so the entries
    // past k need no memory: `a` holds k of them here.
    for (int64_t j = 0; j < k; ++j) a[j] = static_cast<int32_t>(j);
    order.make_heap(a, k);
    for (int64_t i = k; i < len; ++i) {
      if (order.before(static_cast<int32_t>(i), a[0])) order.adjust_heap(a, 0, k, static_cast<int32_t>(i));
    }
    order.sort_heap(a, k);
  } else {
    for (int64_t j = 0; j < len; ++j) a[j] = static_cast<int32_t>(j);
    order.nth_element(a, a + k - 1, a + len);
    if (sorted) order.sort(a, a + k - 1);
  }
  for (int64_t j = 0; j < k; ++j) {
    if (out != nullptr) out[j * step] = line[static_cast<int64_t>(a[j]) * step];
    if (out_indices != nullptr) out_indices[j * step] = a[j];
  }
}

// argsort (kernels/reduce_math.cc): a line of `len` elements `step` apart sorted, its values into out and their
// indices into out_indices (either may be null; entries `step` apart too), one thread per line, in `a`'s len
// scratch entries. As the CPU kernel, which follows Paddle's (phi FullSort): the line's indices in order, then
// libstdc++'s std::sort (TopkLine::sort, so that equal values come out in its order), or, when stable, a sort by
// value and then index, which is std::stable_sort's order.
template <typename T>
__device__ void argsort_line(const T* line, int64_t len, int64_t step, bool descending, bool stable, int32_t* a,
                             T* out, int64_t* out_indices) {
  const TopkLine<T> order{line, step, descending, stable};
  for (int64_t j = 0; j < len; ++j) a[j] = static_cast<int32_t>(j);
  order.sort(a, a + len);
  for (int64_t j = 0; j < len; ++j) {
    if (out != nullptr) out[j * step] = line[static_cast<int64_t>(a[j]) * step];
    if (out_indices != nullptr) out_indices[j * step] = a[j];
  }
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

// deformable_conv (kernels/detection.cc, Paddle's ModulatedDeformableIm2col and the grouped product): the geometry
// of one call, then one output element [b, o, y, x] as the CPU kernel computes it: the products of filter row o and
// the sampled column, in the column's order (channel of o's group, then tap), added from 0.
struct DeformGeometry {
  int64_t c, h, w, oc, kh, kw, oh, ow;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int64_t deformable_groups, groups;
};

// Output element e of [n, oc, oh, ow]; mask may be null (deformable convolution v1).
template <typename T>
__device__ T deformable_conv_at(const T* x, const T* offset, const T* mask, const T* filter, int64_t e,
                                const DeformGeometry& g) {
  const int64_t plane = g.oh * g.ow, p = e % plane, o = (e / plane) % g.oc, b = e / plane / g.oc;
  const int64_t y = p / g.ow, xo = p % g.ow;
  const int64_t kk = g.kh * g.kw, cpg = g.c / g.groups, ocpg = g.oc / g.groups, cpdg = g.c / g.deformable_groups;
  const T* f = filter + o * cpg * kk;
  T acc = T(0);
  for (int64_t r = 0; r < cpg * kk; ++r) {
    const int64_t ci = (o / ocpg) * cpg + r / kk, tap = r % kk, i = tap / g.kw, j = tap % g.kw;
    const int64_t dg = ci / cpdg;
    const T* off = offset + (b * g.deformable_groups + dg) * 2 * kk * plane;
    const T off_h = off[(2 * tap) * plane + p];
    const T off_w = off[(2 * tap + 1) * plane + p];
    const T h_im = static_cast<T>(y * g.stride_h - g.pad_h + i * g.dilation_h) + off_h;
    const T w_im = static_cast<T>(xo * g.stride_w - g.pad_w + j * g.dilation_w) + off_w;
    T val = T(0);
    if (h_im > -1 && w_im > -1 && h_im < static_cast<T>(g.h) && w_im < static_cast<T>(g.w)) {
      val = sampling::dmcn_bilinear(x + (b * g.c + ci) * g.h * g.w, g.h, g.w, h_im, w_im);
    }
    if (mask != nullptr) val *= mask[(b * g.deformable_groups + dg) * kk * plane + tap * plane + p];
    acc += f[r] * val;
  }
  return acc;
}

// roi_align (kernels/detection.cc, Paddle's GetIndexesAndRatios and AvgPool): the geometry of one call, then one
// output element [r, ch, py, px] as the CPU kernel computes it: the box scaled and shifted in T, its sample grid,
// each sample's four taps and weights, the bin's samples summed in order (one outside the image adds 0 * x[0], as
// the CPU kernel's empty sample does), times 1 / count. The box's image: the first whose running count of
// boxes_num passes r (every box of image 0 without boxes_num; counts that do not add up are the CPU kernel's error,
// here the last image).
struct RoiGeometry {
  int64_t batch, channels, height, width, pooled_h, pooled_w;
  float spatial_scale;
  int64_t sampling_ratio;
  bool aligned;
};

template <typename T, typename N>
__device__ T roi_align_at(const T* x, const T* boxes, const N* boxes_num, int64_t e, const RoiGeometry& g) {
  const int64_t px = e % g.pooled_w, py = (e / g.pooled_w) % g.pooled_h;
  const int64_t ch = (e / g.pooled_w / g.pooled_h) % g.channels, r = e / g.pooled_w / g.pooled_h / g.channels;
  int64_t image = 0;
  if (boxes_num != nullptr) {
    int64_t at = 0;
    for (image = 0; image < g.batch - 1; ++image) {
      at += static_cast<int64_t>(boxes_num[image]);
      if (r < at) break;
    }
  }
  const T* box = boxes + r * 4;
  const T roi_offset = g.aligned ? T(0.5) : T(0);
  const T xmin = box[0] * g.spatial_scale - roi_offset, ymin = box[1] * g.spatial_scale - roi_offset;
  const T xmax = box[2] * g.spatial_scale - roi_offset, ymax = box[3] * g.spatial_scale - roi_offset;
  T roi_w = xmax - xmin, roi_h = ymax - ymin;
  if (!g.aligned) {
    roi_w = roi_w < T(1) ? T(1) : roi_w;  // std::max(roi_w, 1)
    roi_h = roi_h < T(1) ? T(1) : roi_h;
  }
  const int64_t grid_h =
      g.sampling_ratio > 0 ? g.sampling_ratio : static_cast<int64_t>(ceil(roi_h / static_cast<T>(g.pooled_h)));
  const int64_t grid_w =
      g.sampling_ratio > 0 ? g.sampling_ratio : static_cast<int64_t>(ceil(roi_w / static_cast<T>(g.pooled_w)));
  const T bin_w = roi_w / static_cast<T>(g.pooled_w), bin_h = roi_h / static_cast<T>(g.pooled_h);
  const T* data = x + (image * g.channels + ch) * g.height * g.width;
  T sum = 0;
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    const T y = ymin + bin_h * (static_cast<T>(py) + static_cast<T>(iy + .5f) / static_cast<T>(grid_h));
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      T xs = xmin + bin_w * (static_cast<T>(px) + static_cast<T>(ix + .5f) / static_cast<T>(grid_w));
      int64_t xy = 0, xY = 0, Xy = 0, XY = 0;
      T wxy = 0, wxY = 0, wXy = 0, wXY = 0;
      if (!(y < -1.0 || y > g.height || xs < -1.0 || xs > g.width)) {
        T yy = y <= 0 ? T(0) : y;
        xs = xs <= 0 ? T(0) : xs;
        int64_t x_lo = static_cast<int64_t>(xs), x_hi = 0;
        if (x_lo >= g.width - 1) {
          x_hi = x_lo = g.width - 1;
          xs = static_cast<T>(x_lo);
        } else {
          x_hi = x_lo + 1;
        }
        const T x_ratio = static_cast<T>(x_hi) - xs;
        int64_t y_lo = static_cast<int64_t>(yy), y_hi = 0;
        if (y_lo >= g.height - 1) {
          y_hi = y_lo = g.height - 1;
          yy = static_cast<T>(y_lo);
        } else {
          y_hi = y_lo + 1;
        }
        const T y_ratio = static_cast<T>(y_hi) - yy;
        xy = y_lo * g.width + x_lo;
        xY = y_hi * g.width + x_lo;
        Xy = y_lo * g.width + x_hi;
        XY = y_hi * g.width + x_hi;
        wxy = x_ratio * y_ratio;
        wxY = x_ratio * (1 - y_ratio);
        wXy = (1 - x_ratio) * y_ratio;
        wXY = (1 - x_ratio) * (1 - y_ratio);
      }
      sum = sum + (wxy * data[xy] + wXy * data[Xy] + wxY * data[xY] + wXY * data[XY]);
    }
  }
  const int64_t points = grid_h * grid_w;
  const T count = points == 0 ? static_cast<T>(HUGE_VAL) : static_cast<T>(1.0 / static_cast<double>(points));
  return sum * count;
}

// yolo_box (kernels/yolo_box.cc, Paddle's YoloBoxKernel): the geometry of one call, then one coordinate of a box
// or one class score, each from its anchor's cell as the CPU kernel computes it, type for type (the sigmoid's
// division in double, the centres mixing T with the float scale and the integer sizes); 0 below conf_thresh.
struct YoloGeometry {
  int64_t h, w, an_num, class_num, downsample;
  float conf_thresh, scale_x_y, iou_aware_factor;
  bool clip, iou_aware;
};

__device__ __forceinline__ float yolo_exp(float v) { return expf(v); }
__device__ __forceinline__ double yolo_exp(double v) { return exp(v); }
__device__ __forceinline__ float yolo_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double yolo_pow(double a, double b) { return pow(a, b); }

template <typename T>
__device__ __forceinline__ T yolo_sigmoid(T v) {
  return static_cast<T>(1.0 / (1.0 + yolo_exp(-v)));
}

// Entry `entry` (0-3 box, 4 objectness, 5.. classes) of anchor an of cell hw of image i (funcs::GetEntryIndex).
__device__ __forceinline__ int64_t yolo_entry(const YoloGeometry& g, int64_t i, int64_t an, int64_t hw,
                                              int64_t entry) {
  const int64_t stride = g.h * g.w, an_stride = (g.class_num + 5) * stride;
  if (g.iou_aware) return (i * g.an_num + an) * an_stride + (i * g.an_num + g.an_num + entry) * stride + hw;
  return (i * g.an_num + an) * an_stride + entry * stride + hw;
}

// The objectness of anchor an of cell hw of image i (with the IoU channel's share when iou_aware).
template <typename T>
__device__ T yolo_conf(const T* x, const YoloGeometry& g, int64_t i, int64_t an, int64_t hw) {
  T conf = yolo_sigmoid<T>(x[yolo_entry(g, i, an, hw, 4)]);
  if (g.iou_aware) {
    const int64_t stride = g.h * g.w, an_stride = (g.class_num + 5) * stride;
    const T iou = yolo_sigmoid<T>(x[i * g.an_num * an_stride + (i * g.an_num + an) * stride + hw]);
    conf = yolo_pow(conf, static_cast<T>(1. - g.iou_aware_factor)) * yolo_pow(iou, static_cast<T>(g.iou_aware_factor));
  }
  return conf;
}

// Element e of boxes [n, an_num * h * w, 4].
template <typename T>
__device__ T yolo_box_at(const T* x, const int32_t* img_size, const int* anchors, int64_t e, const YoloGeometry& g) {
  const int64_t stride = g.h * g.w, box_num = g.an_num * stride;
  const int64_t q = e % 4, box = (e / 4) % box_num, i = e / 4 / box_num, an = box / stride, hw = box % stride;
  const T conf = yolo_conf(x, g, i, an, hw);
  if (conf < g.conf_thresh) return T(0);
  const int64_t img_h = img_size[2 * i], img_w = img_size[2 * i + 1];
  const int64_t k = hw / g.w, l = hw % g.w, input_h = g.downsample * g.h, input_w = g.downsample * g.w;
  const float scale = g.scale_x_y, bias = -0.5f * (scale - 1.f);
  const int64_t b = yolo_entry(g, i, an, hw, 0);
  const T cx = (l + yolo_sigmoid<T>(x[b]) * scale + bias) * img_w / g.w;
  const T cy = (k + yolo_sigmoid<T>(x[b + stride]) * scale + bias) * img_h / g.h;
  const T bw = yolo_exp(x[b + 2 * stride]) * anchors[2 * an] * img_w / input_w;
  const T bh = yolo_exp(x[b + 3 * stride]) * anchors[2 * an + 1] * img_h / input_h;
  T v = q == 0 ? cx - bw / 2 : q == 1 ? cy - bh / 2 : q == 2 ? cx + bw / 2 : cy + bh / 2;
  if (g.clip) {
    if (q == 0 || q == 1) v = v > 0 ? v : static_cast<T>(0);
    if (q == 2) v = v < img_w - 1 ? v : static_cast<T>(img_w - 1);
    if (q == 3) v = v < img_h - 1 ? v : static_cast<T>(img_h - 1);
  }
  return v;
}

// Element e of scores [n, an_num * h * w, class_num].
template <typename T>
__device__ T yolo_score_at(const T* x, const YoloGeometry& g, int64_t e) {
  const int64_t stride = g.h * g.w, box_num = g.an_num * stride;
  const int64_t c = e % g.class_num, box = (e / g.class_num) % box_num, i = e / g.class_num / box_num;
  const int64_t an = box / stride, hw = box % stride;
  const T conf = yolo_conf(x, g, i, an, hw);
  if (conf < g.conf_thresh) return T(0);
  return conf * yolo_sigmoid<T>(x[yolo_entry(g, i, an, hw, 5) + c * stride]);
}

}  // namespace cuda_index
}  // namespace kforge

#endif  // KFORGE_INDEX_CUH_
