// `cuda_select::unique`: Paddle's unique over every element (sorted; kernels/detection.cc's `unique` on the CPU) for
// `kforge compile --target cuda`, whose count depends on the data (docs/compile.md, "Sizes that depend on data").
// The values are sorted with their positions (CUB's stable radix sort, on keys in which -0.0 is +0.0 and every NaN
// is one NaN sorted last, as the CPU kernel orders them), the first element of each run of equal keys is selected
// with kforge_select.cuh's compaction (its count stays in device memory: count_of), and one more launch writes
// each element's run (inverse) and each run's length (counts). Along an axis (unique_axis) the slices are ranked by
// comparing them (no radix key), then selected and counted the same way. CUDA runtime and CUB (the toolkit's) only.
#ifndef KFORGE_UNIQUE_CUH_
#define KFORGE_UNIQUE_CUH_

#include <cub/device/device_radix_sort.cuh>

#include <climits>
#include <type_traits>

#include "kforge_select.cuh"

namespace kforge::cuda_select {

namespace detail {

// The radix-sort key of a value: the value, but -0.0 as +0.0 and every NaN as one quiet NaN (after +inf), so that
// equal values are equal bits; bool as a byte.
template <typename T>
struct SortKey {
  using type = T;
  __device__ static T of(T v) { return v; }
};
template <>
struct SortKey<float> {
  using type = float;
  __device__ static float of(float v) { return v != v ? __int_as_float(0x7fc00000) : (v == 0.0f ? 0.0f : v); }
};
template <>
struct SortKey<double> {
  using type = double;
  __device__ static double of(double v) {
    return v != v ? __longlong_as_double(0x7ff8000000000000LL) : (v == 0.0 ? 0.0 : v);
  }
};
template <>
struct SortKey<bool> {
  using type = uint8_t;
  __device__ static uint8_t of(bool v) { return v ? 1 : 0; }
};

template <typename K>
__device__ inline bool same_key(K a, K b) {
  return a == b || (a != a && b != b);  // the one NaN equals itself
}

template <typename T, typename K>
__global__ void unique_keys_kernel(const T* x, int64_t n, K* keys, int64_t* positions) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    keys[i] = SortKey<T>::of(x[i]);
    positions[i] = i;
  }
}

// Over the sorted keys: the first of each run, with its value as x holds it at its first occurrence.
template <typename T, typename K, typename I>
struct UniqueHeads {
  const K* keys;
  const int64_t* positions;
  const T* x;
  T* out;
  I* indices;      // may be null
  int64_t* heads;  // each run's first place in the sorted order
  __device__ bool keep(int64_t k) const { return k == 0 || !same_key(keys[k - 1], keys[k]); }
  __device__ void write(int64_t k, int64_t run) const {
    out[run] = x[positions[k]];
    if (indices != nullptr) indices[run] = static_cast<I>(positions[k]);
    heads[run] = k;
  }
};

template <typename I>
__global__ void unique_runs_kernel(const int64_t* heads, const int64_t* count, int64_t n, const int64_t* positions,
                                   I* inverse, I* counts) {
  const int64_t runs = *count;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t lo = 0, hi = runs - 1;  // the last run that starts at or before k
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (heads[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    if (inverse != nullptr) inverse[positions[k]] = static_cast<I>(lo);
    if (counts != nullptr && heads[lo] == k) counts[lo] = static_cast<I>((lo + 1 < runs ? heads[lo + 1] : n) - k);
  }
}

inline size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Blocks of kThreads for a grid-stride loop over n elements: one element a thread, at most 65535 blocks.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
}

// The scratch of a unique over n elements, in order: the compaction's (kforge_select.cuh), the keys and positions
// before and after the sort, the runs' heads, CUB's temporary storage.
struct UniqueScratch {
  size_t select = 0, keys = 0, positions = 0, heads = 0, sort = 0;
  size_t total() const { return select + 2 * keys + 2 * positions + heads + sort; }
};

template <typename T>
UniqueScratch unique_scratch(int64_t n) {
  using K = typename SortKey<T>::type;
  UniqueScratch s;
  s.select = align256(scratch_bytes(n));
  s.keys = align256(static_cast<size_t>(n) * sizeof(K));
  s.positions = align256(static_cast<size_t>(n) * sizeof(int64_t));
  s.heads = s.positions;
  if (n > 0 && n <= INT_MAX) {
    cub::DeviceRadixSort::SortPairs(nullptr, s.sort, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                                    static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
                                    static_cast<int>(n));
  }
  return s;
}

// Along an axis: x as [outer, length, inner], slice i is x[:, i, :], compared element by element in row-major
// order with the CPU kernel's order of values (NaN after everything, equal to NaN; -0.0 equal to +0.0).
template <typename T>
__device__ inline bool value_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return !(a != a) && ((b != b) || a < b);
  return a < b;
}

template <typename T>
struct Slices {
  const T* x;
  int64_t outer, length, inner;
  __device__ T at(int64_t slice, int64_t k) const { return x[((k / inner) * length + slice) * inner + k % inner]; }
  __device__ bool less(int64_t p, int64_t q) const {
    for (int64_t k = 0, n = outer * inner; k < n; ++k) {
      const T a = at(p, k), b = at(q, k);
      if (value_less(a, b)) return true;
      if (value_less(b, a)) return false;
    }
    return false;
  }
};

// Each slice's place in the stable sort of the slices: the slices before it, or equal to it and before it in x.
// O(length^2 * slice) comparisons, one slice a thread: simple, not tuned for many long slices.
template <typename T>
__global__ void slice_ranks_kernel(Slices<T> s, int64_t* positions) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.length;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rank = 0;
    for (int64_t j = 0; j < s.length; ++j) rank += (s.less(j, i) || (j < i && !s.less(i, j))) ? 1 : 0;
    positions[rank] = i;
  }
}

// Over the sorted slices: the first of each run of equal ones.
template <typename T, typename I>
struct UniqueSliceHeads {
  Slices<T> s;
  const int64_t* positions;
  I* indices;      // may be null
  int64_t* heads;  // each run's first place in the sorted order
  __device__ bool keep(int64_t k) const { return k == 0 || s.less(positions[k - 1], positions[k]); }
  __device__ void write(int64_t k, int64_t run) const {
    if (indices != nullptr) indices[run] = static_cast<I>(positions[k]);
    heads[run] = k;
  }
};

// out as [outer, count, inner]: the first slice of each run, once the count is known on the device.
template <typename T>
__global__ void unique_slices_out_kernel(Slices<T> s, const int64_t* positions, const int64_t* heads,
                                         const int64_t* count, T* out) {
  const int64_t runs = *count, n = s.outer * runs * s.inner;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = e % s.inner, r = (e / s.inner) % runs, b = e / s.inner / runs;
    out[e] = s.x[(b * s.length + positions[heads[r]]) * s.inner + t];
  }
}

}  // namespace detail

// The device memory unique_axis() over `length` slices needs: the compaction's, the sorted positions, the heads.
inline size_t unique_axis_scratch_bytes(int64_t length) {
  return detail::align256(scratch_bytes(length)) + 2 * detail::align256(static_cast<size_t>(length) * sizeof(int64_t));
}

// Paddle's unique along an axis (kernels/detection.cc's `unique` with axis=[a]): x as [outer, length, inner]; the
// distinct slices x[:, i, :] in ascending order into `out` (room for [outer, length, inner], written compact as
// [outer, count, inner]), the first occurrence of each into `indices`, each slice's run into `inverse` (length of
// them), each run's length into `counts` (indices, inverse and counts may be null); the count at
// count_of(scratch, length). `scratch`: unique_axis_scratch_bytes(length) bytes.
template <typename T, typename I>
cudaError_t unique_axis(const T* x, T* out, I* indices, I* inverse, I* counts, int64_t outer, int64_t inner,
                        int64_t length, int64_t* scratch, cudaStream_t stream) {
  unsigned char* at = reinterpret_cast<unsigned char*>(scratch) + detail::align256(scratch_bytes(length));
  int64_t* positions = reinterpret_cast<int64_t*>(at);
  int64_t* heads = reinterpret_cast<int64_t*>(at + detail::align256(static_cast<size_t>(length) * sizeof(int64_t)));
  const detail::Slices<T> slices{x, outer, length, inner};
  if (length > 0) detail::slice_ranks_kernel<<<detail::grid_for(length), kThreads, 0, stream>>>(slices, positions);
  const detail::UniqueSliceHeads<T, I> heads_of{slices, positions, indices, heads};
  if (const cudaError_t e = detail::select(heads_of, length, length, scratch, stream); e != cudaSuccess) return e;
  if (length > 0 && (inverse != nullptr || counts != nullptr)) {
    detail::unique_runs_kernel<<<detail::grid_for(length), kThreads, 0, stream>>>(
        heads, count_of(scratch, length), length, positions, inverse, counts);
  }
  if (length > 0 && outer * inner > 0) {
    detail::unique_slices_out_kernel<<<detail::grid_for(outer * length * inner), kThreads, 0, stream>>>(
        slices, positions, heads, count_of(scratch, length), out);
  }
  return cudaGetLastError();
}

// The device memory unique() over n elements of T needs; its count lands at count_of(scratch, n).
template <typename T>
size_t unique_scratch_bytes(int64_t n) {
  return detail::unique_scratch<T>(n).total();
}

// The distinct values of x's n elements ascending into `out`, the position of each one's first occurrence into
// `indices`, each element's place in `out` into `inverse` (n of them), how often each occurs into `counts` (out,
// indices and counts with room for n; indices, inverse and counts may be null); the count at count_of(scratch, n).
// `scratch`: unique_scratch_bytes<T>(n) bytes. More than INT_MAX elements (CUB's sort counts in int):
// cudaErrorInvalidValue, nothing launched.
template <typename T, typename I>
cudaError_t unique(const T* x, T* out, I* indices, I* inverse, I* counts, int64_t n, int64_t* scratch,
                   cudaStream_t stream) {
  using K = typename detail::SortKey<T>::type;
  if (n > INT_MAX) return cudaErrorInvalidValue;
  const detail::UniqueScratch s = detail::unique_scratch<T>(n);
  unsigned char* at = reinterpret_cast<unsigned char*>(scratch) + s.select;
  K* keys_in = reinterpret_cast<K*>(at);
  K* keys = reinterpret_cast<K*>(at += s.keys);
  int64_t* positions_in = reinterpret_cast<int64_t*>(at += s.keys);
  int64_t* positions = reinterpret_cast<int64_t*>(at += s.positions);
  int64_t* heads = reinterpret_cast<int64_t*>(at += s.positions);
  void* sort_storage = at + s.heads;
  if (n > 0) {
    detail::unique_keys_kernel<<<detail::grid_for(n), kThreads, 0, stream>>>(x, n, keys_in, positions_in);
    size_t sort_bytes = s.sort;
    const cudaError_t e = cub::DeviceRadixSort::SortPairs(sort_storage, sort_bytes, keys_in, keys, positions_in,
                                                          positions, static_cast<int>(n), 0,
                                                          static_cast<int>(sizeof(K) * 8), stream);
    if (e != cudaSuccess) return e;
  }
  const detail::UniqueHeads<T, K, I> heads_of{keys, positions, x, out, indices, heads};
  if (const cudaError_t e = detail::select(heads_of, n, n, scratch, stream); e != cudaSuccess) return e;
  if (n > 0 && (inverse != nullptr || counts != nullptr)) {
    detail::unique_runs_kernel<<<detail::grid_for(n), kThreads, 0, stream>>>(heads, count_of(scratch, n), n, positions, inverse,
                                                                counts);
  }
  return cudaGetLastError();
}

}  // namespace kforge::cuda_select

#endif  // KFORGE_UNIQUE_CUH_
