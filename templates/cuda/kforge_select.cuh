// The ops whose output size depends on the data, for `kforge compile --target cuda` (docs/compile.md, "Sizes that
// depend on data"): `cuda_select::nonzero` and `cuda_select::masked_select`, as kernels/detection.cc computes them
// on the CPU. Each is a stable stream compaction of the elements in row-major order, in three launches: every
// block counts what it keeps of its tile (kTile consecutive elements), one block turns the counts into offsets
// and writes the total after them, and every block writes what it keeps at its offset. The total stays in device
// memory (`count_of`); the generated class copies it to the host, which sizes what comes after. CUDA runtime only.
#ifndef KFORGE_SELECT_CUH_
#define KFORGE_SELECT_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace kforge::cuda_select {

constexpr int kThreads = 256;
constexpr int kItems = 8;  // consecutive elements per thread, so that a thread's kept elements stay in order
constexpr int64_t kTile = static_cast<int64_t>(kThreads) * kItems;
constexpr int kMaxRank = 9;  // kforge::kMaxRank of the runtime

inline int64_t tiles_of(int64_t n) { return (n + kTile - 1) / kTile; }
// The device memory a selection over n elements needs: one count per tile, then the total.
inline size_t scratch_bytes(int64_t n) { return static_cast<size_t>(tiles_of(n) + 1) * sizeof(int64_t); }
// Where the selection over n elements leaves its total.
inline int64_t* count_of(int64_t* scratch, int64_t n) { return scratch + tiles_of(n); }

// A row-major shape and, per dim, the strides of the tensors read at each of its elements (0 where one is
// broadcast).
struct Shape {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

namespace detail {

// The exclusive prefix sum of `v` over the block (kThreads threads) and, in *total, the block's sum.
__device__ inline int64_t block_exclusive_sum(int64_t v, int64_t* total) {
  constexpr int kWarps = kThreads / 32;
  __shared__ int64_t warp_sums[kWarps];
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  int64_t inclusive = v;
  for (int o = 1; o < 32; o <<= 1) {
    const int64_t y = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int64_t w = lane < kWarps ? warp_sums[lane] : 0;
    for (int o = 1; o < 32; o <<= 1) {
      const int64_t y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kWarps) warp_sums[lane] = w;
  }
  __syncthreads();
  const int64_t before = warp > 0 ? warp_sums[warp - 1] : 0;
  *total = warp_sums[kWarps - 1];
  __syncthreads();  // every thread has read warp_sums before the next call writes it
  return before + inclusive - v;
}

template <class Select>
__device__ inline int64_t kept_by_thread(const Select& s, int64_t first, int64_t n) {
  int64_t kept = 0;
  for (int i = 0; i < kItems; ++i) kept += (first + i < n && s.keep(first + i)) ? 1 : 0;
  return kept;
}

template <class Select>
__global__ void __launch_bounds__(kThreads) count_kernel(Select s, int64_t n, int64_t* tile_counts) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kTile + static_cast<int64_t>(threadIdx.x) * kItems;
  int64_t total = 0;
  block_exclusive_sum(kept_by_thread(s, first, n), &total);
  if (threadIdx.x == 0) tile_counts[blockIdx.x] = total;
}

// One block: the tiles' counts become their offsets, and the total goes after them.
__global__ void __launch_bounds__(kThreads) offsets_kernel(int64_t* tile_counts, int64_t tiles) {
  int64_t carry = 0;
  for (int64_t base = 0; base < tiles; base += kThreads) {
    const int64_t t = base + static_cast<int64_t>(threadIdx.x);
    int64_t total = 0;
    const int64_t before = block_exclusive_sum(t < tiles ? tile_counts[t] : 0, &total);
    if (t < tiles) tile_counts[t] = carry + before;
    carry += total;
  }
  if (threadIdx.x == 0) tile_counts[tiles] = carry;
}

template <class Select>
__global__ void __launch_bounds__(kThreads) write_kernel(Select s, int64_t n, const int64_t* tile_offsets) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kTile + static_cast<int64_t>(threadIdx.x) * kItems;
  int64_t total = 0;
  int64_t at = tile_offsets[blockIdx.x] + block_exclusive_sum(kept_by_thread(s, first, n), &total);
  for (int i = 0; i < kItems; ++i) {
    if (first + i < n && s.keep(first + i)) s.write(first + i, at++);
  }
}

// Over n elements (n <= capacity): the offsets of the tiles of n, the total at count_of(scratch, capacity).
template <class Select>
cudaError_t select(const Select& s, int64_t capacity, int64_t n, int64_t* scratch, cudaStream_t stream) {
  const int64_t tiles = tiles_of(n);
  if (tiles > 0) count_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(s, n, scratch);
  offsets_kernel<<<1, kThreads, 0, stream>>>(scratch, tiles);  // also the total 0 of no element
  if (tiles > 0) write_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(s, n, scratch);
  if (tiles_of(capacity) != tiles) {  // the total where the caller reads it
    const cudaError_t e = cudaMemcpyAsync(count_of(scratch, capacity), scratch + tiles, sizeof(int64_t),
                                          cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaGetLastError();
}

template <typename T>
__device__ inline bool is_nonzero(T v) {
  return v != T(0);
}

// Element e's offset in a tensor of `strides` over the shape's row-major coordinates.
__device__ inline int64_t offset_in(const Shape& shape, const int64_t* strides, int64_t e) {
  int64_t offset = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {
    offset += (e % shape.dims[d]) * strides[d];
    e /= shape.dims[d];
  }
  return offset;
}

template <typename T>
struct NonzeroSelect {
  const T* condition;
  int64_t* out;  // [count, rank]: the coordinates of each nonzero element
  Shape shape;
  __device__ bool keep(int64_t e) const { return is_nonzero(condition[e]); }
  __device__ void write(int64_t e, int64_t row) const {
    for (int d = shape.rank - 1; d >= 0; --d) {
      out[row * shape.rank + d] = e % shape.dims[d];
      e /= shape.dims[d];
    }
  }
};

template <typename T>
struct MaskedSelect {
  const T* x;
  const bool* mask;
  T* out;
  Shape shape;  // the broadcast of x (a_strides) and mask (b_strides)
  __device__ bool keep(int64_t e) const { return mask[offset_in(shape, shape.b_strides, e)]; }
  __device__ void write(int64_t e, int64_t k) const { out[k] = x[offset_in(shape, shape.a_strides, e)]; }
};

// The row-major strides of `dims` right-aligned in a shape of `rank` dims, 0 along a dim of 1 that the shape
// broadcasts (NumPy's rules, as Paddle's masked_select).
inline void broadcast_strides(std::initializer_list<int64_t> dims, const Shape& shape, int64_t* strides) {
  const int32_t offset = shape.rank - static_cast<int32_t>(dims.size());
  int64_t stride = 1;
  for (int32_t d = shape.rank - 1; d >= 0; --d) {
    const int32_t own = d - offset;
    const int64_t dim = own >= 0 ? dims.begin()[own] : 1;
    strides[d] = dim == 1 && shape.dims[d] != 1 ? 0 : stride;
    stride *= own >= 0 ? dim : 1;
  }
}

}  // namespace detail

// The row-major coordinates of condition's nonzero elements, int64 [count, rank], into `out` (room for `capacity`
// rows); the count at count_of(scratch, capacity). `scratch`: scratch_bytes(capacity) bytes. More elements than
// `capacity`: cudaErrorInvalidValue, nothing launched.
template <typename T>
cudaError_t nonzero(const T* condition, std::initializer_list<int64_t> dims, int64_t* out, int64_t capacity,
                    int64_t* scratch, cudaStream_t stream) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) return cudaErrorInvalidValue;
  detail::NonzeroSelect<T> s{condition, out, {}};
  s.shape.rank = static_cast<int32_t>(dims.size());
  int64_t n = 1;
  for (int32_t d = 0; d < s.shape.rank; ++d) n *= (s.shape.dims[d] = dims.begin()[d]);
  if (n > capacity) return cudaErrorInvalidValue;
  return detail::select(s, capacity, n, scratch, stream);
}

// x's elements where mask is true, x and mask broadcast together (NumPy's rules), in row-major order of the
// broadcast shape, into `out` (room for `capacity`); the count at count_of(scratch, capacity). Shapes that do not
// broadcast, or more elements than `capacity`: cudaErrorInvalidValue, nothing launched.
template <typename T>
cudaError_t masked_select(const T* x, std::initializer_list<int64_t> x_dims, const bool* mask,
                          std::initializer_list<int64_t> mask_dims, T* out, int64_t capacity, int64_t* scratch,
                          cudaStream_t stream) {
  detail::MaskedSelect<T> s{x, mask, out, {}};
  const size_t rank = x_dims.size() > mask_dims.size() ? x_dims.size() : mask_dims.size();
  if (rank > static_cast<size_t>(kMaxRank)) return cudaErrorInvalidValue;
  s.shape.rank = static_cast<int32_t>(rank);
  int64_t n = 1;
  for (size_t d = 0; d < rank; ++d) {
    const size_t from_end = rank - 1 - d;
    const int64_t a = from_end < x_dims.size() ? x_dims.end()[-1 - static_cast<ptrdiff_t>(from_end)] : 1;
    const int64_t b = from_end < mask_dims.size() ? mask_dims.end()[-1 - static_cast<ptrdiff_t>(from_end)] : 1;
    if (a != b && a != 1 && b != 1) return cudaErrorInvalidValue;
    s.shape.dims[d] = a == 1 ? b : a;
    n *= s.shape.dims[d];
  }
  detail::broadcast_strides(x_dims, s.shape, s.shape.a_strides);
  detail::broadcast_strides(mask_dims, s.shape, s.shape.b_strides);
  if (n > capacity) return cudaErrorInvalidValue;
  return detail::select(s, capacity, n, scratch, stream);
}

}  // namespace kforge::cuda_select

#endif  // KFORGE_SELECT_CUH_
