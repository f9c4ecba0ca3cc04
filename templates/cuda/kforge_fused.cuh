// Device helpers of the fused kernels that `kforge compile --target cuda` generates (NAME_kernels.cu).
// kforge copies this header beside the outputs. The generated kernels are templates over these pieces:
//   - Vec<T, V>: V consecutive elements as one aligned access (16 bytes: float4, 2 x double, 8 x half...);
//   - team_reduce<TEAM>: a reduction over the TEAM threads that share a row: warp shuffles for one warp,
//     then shared memory across the warps of a block (TEAM > 32 means one row per block);
//   - launch helpers: grid sizes from the element count, capped for grid-stride loops;
//   - std_min / std_max: the expressions' min and max, with std::min / std::max's NaN behaviour.
// Needs C++17 (if constexpr) and nvcc; no other dependency.
#ifndef KFORGE_FUSED_CUH_
#define KFORGE_FUSED_CUH_

#include <cuda_runtime.h>

#include <cstdint>

namespace kforge {
namespace cuda {

// min and max of the scalar expressions (src/scalar_expr/expr_emit.cpp) as std::min / std::max compute them, the CPU
// target's spelling and Paddle's kernels' (b < a ? b : a, a < b ? b : a): a NaN first operand is the result, a NaN
// second one is not. fminf / fmaxf return the other operand of a NaN either way, so relu6's min(max(x, 0), 6) gave
// 0 for NaN on the GPU where Paddle and the CPU keep NaN (tests/paddle/relu6_relu_nan).
template <typename T>
__host__ __device__ __forceinline__ T std_min(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
__host__ __device__ __forceinline__ T std_max(T a, T b) {
  return a < b ? b : a;
}

// V elements of T as one access: the alignment makes nvcc emit one 16-byte load/store (LDG.E.128) when
// sizeof(T) * V == 16. Callers check the pointer's alignment before taking this path.
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <int V, typename T>
__device__ __forceinline__ Vec<T, V> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, V>*>(p);
}

template <int V, typename T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, V>& x) {
  *reinterpret_cast<Vec<T, V>*>(p) = x;
}

// store_vec with the evict-first cache hint (st.global.cs): for elementwise groups, whose outputs are written
// once and not read again by the same kernel. Measured on an H200 (bias + gelu over 8192 x 8192 fp32): 2.3 %
// faster than plain stores; neutral on an 8-op chain; ~1 % slower in the row kernels, which keep plain
// stores. The hint on loads made three of four cases slower (BENCHMARKS.md, "Fused CUDA kernels").
template <int V, typename T>
__device__ __forceinline__ void store_vec_streaming(T* p, const Vec<T, V>& x) {
  if constexpr (sizeof(Vec<T, V>) == 16) {
    __stcs(reinterpret_cast<uint4*>(p), *reinterpret_cast<const uint4*>(&x));
  } else if constexpr (sizeof(Vec<T, V>) == 8) {
    __stcs(reinterpret_cast<uint2*>(p), *reinterpret_cast<const uint2*>(&x));
  } else if constexpr (sizeof(Vec<T, V>) == 4) {
    __stcs(reinterpret_cast<unsigned int*>(p), *reinterpret_cast<const unsigned int*>(&x));
  } else {
    *reinterpret_cast<Vec<T, V>*>(p) = x;
  }
}

template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int offset) {
  return __shfl_xor_sync(0xffffffffu, v, offset);
}
__device__ __forceinline__ bool shfl_xor(bool v, int offset) {
  return __shfl_xor_sync(0xffffffffu, static_cast<int>(v), offset) != 0;
}

// Reduces `v` over the TEAM threads of one row with `merge` (an associative combination of two partial
// accumulators); every thread of the team gets the result. TEAM is 32 (a warp per row) or the block size
// (a block per row, TEAM a multiple of 32 up to 1024): then every thread of the block must call it.
template <int TEAM, typename T, typename Merge>
__device__ __forceinline__ T team_reduce(T v, Merge merge) {
  static_assert(TEAM == 32 || (TEAM % 32 == 0 && TEAM <= 1024), "a team is a warp or a whole block");
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = merge(v, shfl_xor(v, offset));
  if constexpr (TEAM > 32) {
    __shared__ T partial[TEAM / 32];
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = partial[0];
#pragma unroll
    for (int w = 1; w < TEAM / 32; ++w) v = merge(v, partial[w]);
    __syncthreads();  // partial[] is reused by the next reduction of this type
  }
  return v;
}

inline bool aligned_to(const void* p, unsigned bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

// Multiprocessors of the current device, read once per process (grid caps for grid-stride loops).
inline int multiprocessor_count() {
  static int count = [] {
    int device = 0, n = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || n <= 0) {
      n = 132;
    }
    return n;
  }();
  return count;
}

// Blocks for `work` items of `per_block` each, capped at `blocks_per_sm` blocks per multiprocessor (the
// kernels loop grid-stride over the rest). The default cap is high on purpose: with one block per item group
// the last partial wave is a small fraction of the run (measured on an H100: a cap of one resident wave,
// 8 blocks per SM, left the 64M-element chain at 93 % of copy bandwidth, 7 % behind torch.compile).
inline unsigned grid_for(int64_t work, int64_t per_block, int64_t blocks_per_sm = 4096) {
  int64_t blocks = (work + per_block - 1) / per_block;
  int64_t cap = static_cast<int64_t>(multiprocessor_count()) * blocks_per_sm;
  if (cap > 0x7fffffff) cap = 0x7fffffff;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

// Unit `e` of `out` from unit `from` of `in`, a unit being `N` elements of T (16 bytes): one 16-byte move when
// `aligned` (every pointer of the kernel 16-byte aligned: the caller tests them once), else N element moves. The
// index-mapped data movement's vectorised copies (codegen/cuda_index.cpp: concat and stack along a leading axis,
// a transpose that keeps the last axis last).
template <int N, typename T>
__device__ __forceinline__ void move_unit(T* out, int64_t e, const T* in, int64_t from, bool aligned) {
  static_assert(N * sizeof(T) == 16, "a unit is 16 bytes");
  if (aligned) {
    reinterpret_cast<uint4*>(out)[e] = reinterpret_cast<const uint4*>(in)[from];
  } else {
#pragma unroll
    for (int u = 0; u < N; ++u) out[e * N + u] = in[from * N + u];
  }
}

}  // namespace cuda
}  // namespace kforge

#endif  // KFORGE_FUSED_CUH_
