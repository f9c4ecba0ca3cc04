// kforge CUDA GEMM pieces every generated GEMM uses (header-only; kforge copies it beside `kforge compile
// --target cuda` output that has GEMM groups).
//
// Row-major C[M,N] = op(A)[M,K] * op(B)[K,N], optionally followed by an epilogue (bias add, or bias add then
// gelu: kBiasGelu in Paddle's default erf form, gelu(x) = 0.5 x (1 + erf(x / sqrt 2)); kBiasGeluTanh in the tanh
// form, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the one cuBLASLt's GELU_BIAS epilogue computes, which
// kforge plans for 16-bit GEMMs only: see kforge_cublaslt.cuh), always computed in float.
//
//  * SimtGemm<Tile>: fp32 inputs and output on the CUDA cores (no alignment requirement), A and/or B
//    optionally transposed, the epilogue fused.
//  * bias_epilogue<T>(), gelu_epilogue<T>(): the epilogue as its own in-place kernel for float, __half or
//    __nv_bfloat16 C (what runs after a library GEMM that cannot apply it; also the baseline of the
//    fused-epilogue benchmark).
//  * GemmArgs<T>: the arguments of one GEMM call, as the variants of a multi-kernel GEMM site take them.
// The bf16 / fp16 tensor-core kernel is kforge_gemm_tc.cuh, kept apart so that programs without 16-bit GEMMs
// (and builds without hints) never compile it.
//
// The tile configurations are template parameters; kSimtTile* below are the ones chosen for the multi-kernel
// size hints (see docs/multi-kernel.md).
#ifndef KFORGE_GEMM_CUH_
#define KFORGE_GEMM_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kforge_fused.cuh"
#include "kforge_half.cuh"

namespace kforge {
namespace cuda_gemm {

enum class Epilogue : int { kNone = 0, kBias = 1, kBiasGelu = 2, kBiasGeluTanh = 3 };

inline const char* name_of(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return "none";
    case Epilogue::kBias: return "bias";
    case Epilogue::kBiasGelu: return "bias_gelu";
    case Epilogue::kBiasGeluTanh: return "bias_gelu_tanh";
  }
  return "?";
}

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
// Paddle's gelu(approximate=true), and cuBLASLt's GELU epilogue; within 4.74e-4 of gelu_erf for every x.
__device__ __forceinline__ float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}

template <Epilogue E>
__device__ __forceinline__ float apply_epilogue(float acc, float bias) {
  if constexpr (E == Epilogue::kNone) {
    (void)bias;
    return acc;
  } else if constexpr (E == Epilogue::kBias) {
    return acc + bias;
  } else if constexpr (E == Epilogue::kBiasGelu) {
    return gelu_erf(acc + bias);
  } else {
    return gelu_tanh(acc + bias);
  }
}

// Triton-style grouped rasterization: consecutive CTAs walk GROUP_M tile rows before moving right, so the
// CTAs of one wave share A rows and B columns in L2.
struct TileIndex {
  int tile_m;
  int tile_n;
};
__device__ __forceinline__ TileIndex grouped_tile(int pid, int tiles_m, int tiles_n) {
  constexpr int kGroupM = 8;
  const int per_group = kGroupM * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * kGroupM;
  const int rows_in_group = min(tiles_m - first_m, kGroupM);
  const int in_group = pid % per_group;
  return TileIndex{first_m + in_group % rows_in_group, in_group / rows_in_group};
}

// ---------------------------------------------------------------------------------------------------------
// SIMT fp32 GEMM (CUDA cores): BM x BN tile, BK deep, each thread a TM x TN block of outputs spread with a
// stride of BM/TM rows and BN/TN columns (conflict-free shared-memory reads, coalesced stores).
// TransA: A is stored [K, M] (C = A^T B); TransB: B is stored [N, K] (C = A B^T). The global loads of each
// operand walk its contiguous dimension, so they stay coalesced either way; B's shared tile gets one column
// of padding when B is transposed (its stores into shared memory then go down a column).
// ---------------------------------------------------------------------------------------------------------
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct SimtTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int kThreadsM = BM / TM, kThreadsN = BN / TN;
  static constexpr int kThreads = kThreadsM * kThreadsN;
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tile must divide the CTA tile");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
};

template <class T, Epilogue E, bool TransA = false, bool TransB = false>
__global__ void __launch_bounds__(T::kThreads)
    gemm_f32_simt_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                         const float* __restrict__ bias, int M, int N, int K) {
  constexpr int kBPad = TransB ? 1 : 0;
  __shared__ float As[T::BK][T::BM + 1];  // A transposed: As[k][m]
  __shared__ float Bs[T::BK][T::BN + kBPad];
  const int tiles_m = (M + T::BM - 1) / T::BM;
  const int tiles_n = (N + T::BN - 1) / T::BN;
  const TileIndex tile = grouped_tile(blockIdx.x, tiles_m, tiles_n);
  const int m0 = tile.tile_m * T::BM;
  const int n0 = tile.tile_n * T::BN;
  const int tid = threadIdx.x;
  const int tx = tid % T::kThreadsN;
  const int ty = tid / T::kThreadsN;

  float acc[T::TM][T::TN];
#pragma unroll
  for (int i = 0; i < T::TM; ++i)
#pragma unroll
    for (int j = 0; j < T::TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += T::BK) {
    for (int i = tid; i < T::BM * T::BK; i += T::kThreads) {
      if constexpr (TransA) {  // A[k][m]: consecutive threads take consecutive m
        const int r = i % T::BM, kk = i / T::BM;
        As[kk][r] = (m0 + r < M && k0 + kk < K) ? A[size_t(k0 + kk) * M + m0 + r] : 0.0f;
      } else {  // A[m][k]: consecutive threads take consecutive k
        const int r = i / T::BK, kk = i % T::BK;
        As[kk][r] = (m0 + r < M && k0 + kk < K) ? A[size_t(m0 + r) * K + k0 + kk] : 0.0f;
      }
    }
    for (int i = tid; i < T::BK * T::BN; i += T::kThreads) {
      if constexpr (TransB) {  // B[n][k]: consecutive threads take consecutive k
        const int cc = i / T::BK, kk = i % T::BK;
        Bs[kk][cc] = (k0 + kk < K && n0 + cc < N) ? B[size_t(n0 + cc) * K + k0 + kk] : 0.0f;
      } else {  // B[k][n]: consecutive threads take consecutive n
        const int kk = i / T::BN, cc = i % T::BN;
        Bs[kk][cc] = (k0 + kk < K && n0 + cc < N) ? B[size_t(k0 + kk) * N + n0 + cc] : 0.0f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T::BK; ++kk) {
      float a[T::TM], b[T::TN];
#pragma unroll
      for (int i = 0; i < T::TM; ++i) a[i] = As[kk][ty + i * T::kThreadsM];
#pragma unroll
      for (int j = 0; j < T::TN; ++j) b[j] = Bs[kk][tx + j * T::kThreadsN];
#pragma unroll
      for (int i = 0; i < T::TM; ++i)
#pragma unroll
        for (int j = 0; j < T::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int j = 0; j < T::TN; ++j) {
    const int col = n0 + tx + j * T::kThreadsN;
    if (col >= N) continue;
    const float bj = (E == Epilogue::kNone) ? 0.0f : bias[col];
#pragma unroll
    for (int i = 0; i < T::TM; ++i) {
      const int row = m0 + ty + i * T::kThreadsM;
      if (row < M) C[size_t(row) * N + col] = apply_epilogue<E>(acc[i][j], bj);
    }
  }
}

template <class Tile>
struct SimtGemm {
  using TileConfig = Tile;

  static bool can_run(const void*, const void*, const void*, const void* bias, int M, int N, int K, Epilogue epilogue) {
    return M > 0 && N > 0 && K > 0 && (epilogue == Epilogue::kNone || bias != nullptr);
  }

  // One instantiation: the epilogue and the transposes known at compile time (generated code knows them per
  // GEMM site, so only the kernels it uses are compiled). M == 0 or N == 0: nothing to compute; K == 0 gives
  // epilogue(0) (the loop over k does not run).
  template <Epilogue E, bool TransA = false, bool TransB = false>
  static cudaError_t run(const float* A, const float* B, float* C, const float* bias, int M, int N, int K,
                         cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K < 0) return M < 0 || N < 0 || K < 0 ? cudaErrorInvalidValue : cudaSuccess;
    if (E != Epilogue::kNone && bias == nullptr) return cudaErrorInvalidValue;
    const long long tiles = (static_cast<long long>(M) + Tile::BM - 1) / Tile::BM *
                            ((static_cast<long long>(N) + Tile::BN - 1) / Tile::BN);
    if (tiles > 0x7fffffffLL) return cudaErrorInvalidConfiguration;  // the grid's x limit
    gemm_f32_simt_kernel<Tile, E, TransA, TransB>
        <<<static_cast<unsigned>(tiles), Tile::kThreads, 0, stream>>>(A, B, C, bias, M, N, K);
    return cudaGetLastError();
  }

  // The epilogue chosen at run time, no transposes (benchmarks).
  static cudaError_t launch(const float* A, const float* B, float* C, const float* bias, int M, int N, int K,
                            Epilogue epilogue, cudaStream_t stream) {
    switch (epilogue) {
      case Epilogue::kNone: return run<Epilogue::kNone>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBias: return run<Epilogue::kBias>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBiasGelu: return run<Epilogue::kBiasGelu>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBiasGeluTanh: return run<Epilogue::kBiasGeluTanh>(A, B, C, bias, M, N, K, stream);
    }
    return cudaErrorInvalidValue;
  }
};

// fp32 SIMT configurations (256 threads each), chosen per multi-kernel hint (src/passes/variants.cpp,
// cuda_simt_variant_for_hint): a small tile for small M (more CTAs), a medium one, and a large one for
// large M (more register reuse).
using kSimtTileSmall = SimtTile<32, 64, 16, 2, 4>;
using kSimtTileMedium = SimtTile<64, 64, 16, 4, 4>;
using kSimtTileLarge = SimtTile<128, 128, 8, 8, 8>;

// ---------------------------------------------------------------------------------------------------------
// Separate epilogue, in place, computed in float for float, __half or __nv_bfloat16 elements:
//   bias_epilogue: C[M,N] = C + bias[N] (kBias), gelu_erf(C + bias[N]) (kBiasGelu) or gelu_tanh(C + bias[N])
//                  (kBiasGeluTanh);
//   gelu_epilogue: C[M,N] = gelu_erf(C) (form kBiasGelu) or gelu_tanh(C) (kBiasGeluTanh), after a library GEMM
//                  that added the bias itself (cuBLASLt adds the tanh one itself where it has a plan for it).
// Each step handles V elements: 16 bytes (kforge::cuda::Vec) when N is a multiple of that width and the
// pointers are 16-byte aligned, else one element (any alignment). Grid-stride, at most 16 blocks per
// multiprocessor. SeparateStep is what each element gets.
// ---------------------------------------------------------------------------------------------------------
enum class SeparateStep : int { kBias, kBiasGelu, kBiasGeluTanh, kGelu, kGeluTanh };

template <SeparateStep S>
__device__ __forceinline__ float separate_step(float c, float b) {
  if constexpr (S == SeparateStep::kBias) return c + b;
  else if constexpr (S == SeparateStep::kBiasGelu) return gelu_erf(c + b);
  else if constexpr (S == SeparateStep::kBiasGeluTanh) return gelu_tanh(c + b);
  else if constexpr (S == SeparateStep::kGelu) return gelu_erf(c);
  else return gelu_tanh(c);
}

template <SeparateStep S, typename T, int V>
static __global__ void separate_epilogue_kernel(T* __restrict__ C, const T* __restrict__ bias, size_t steps,
                                                int steps_per_row) {
  constexpr bool kAddBias = S != SeparateStep::kGelu && S != SeparateStep::kGeluTanh;
  for (size_t s = size_t(blockIdx.x) * blockDim.x + threadIdx.x; s < steps; s += size_t(gridDim.x) * blockDim.x) {
    kforge::cuda::Vec<T, V> c = kforge::cuda::load_vec<V>(C + s * V);
    kforge::cuda::Vec<T, V> b{};
    if constexpr (kAddBias) b = kforge::cuda::load_vec<V>(bias + (s % size_t(steps_per_row)) * V);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float x = kforge::cuda::to_float(c.v[k]);
      const float y = kAddBias ? kforge::cuda::to_float(b.v[k]) : 0.0f;
      c.v[k] = kforge::cuda::from_float<T>(separate_step<S>(x, y));
    }
    kforge::cuda::store_vec<V>(C + s * V, c);
  }
}

template <SeparateStep S, typename T>
inline cudaError_t separate_epilogue(T* C, const T* bias, int M, int N, cudaStream_t stream) {
  constexpr bool kAddBias = S != SeparateStep::kGelu && S != SeparateStep::kGeluTanh;
  if (M <= 0 || N <= 0) return cudaSuccess;
  if (kAddBias && bias == nullptr) return cudaErrorInvalidValue;
  constexpr int kVec = int(16 / sizeof(T));
  const size_t count = size_t(M) * size_t(N);
  const bool vectorized = N % kVec == 0 && kforge::cuda::aligned_to(C, 16) && (!kAddBias || kforge::cuda::aligned_to(bias, 16));
  const size_t steps = vectorized ? count / kVec : count;
  const unsigned blocks = kforge::cuda::grid_for(static_cast<int64_t>(steps), 256, 16);
  if (vectorized) {
    separate_epilogue_kernel<S, T, kVec><<<blocks, 256, 0, stream>>>(C, bias, steps, N / kVec);
  } else {
    separate_epilogue_kernel<S, T, 1><<<blocks, 256, 0, stream>>>(C, bias, steps, N);
  }
  return cudaGetLastError();
}

template <typename T>
inline cudaError_t bias_epilogue(T* C, const T* bias, int M, int N, Epilogue epilogue, cudaStream_t stream) {
  switch (epilogue) {
    case Epilogue::kNone: return cudaSuccess;
    case Epilogue::kBias: return separate_epilogue<SeparateStep::kBias>(C, bias, M, N, stream);
    case Epilogue::kBiasGelu: return separate_epilogue<SeparateStep::kBiasGelu>(C, bias, M, N, stream);
    case Epilogue::kBiasGeluTanh: return separate_epilogue<SeparateStep::kBiasGeluTanh>(C, bias, M, N, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
inline cudaError_t gelu_epilogue(T* C, int M, int N, cudaStream_t stream, Epilogue form = Epilogue::kBiasGelu) {
  return form == Epilogue::kBiasGeluTanh ? separate_epilogue<SeparateStep::kGeluTanh, T>(C, nullptr, M, N, stream)
                                         : separate_epilogue<SeparateStep::kGelu, T>(C, nullptr, M, N, stream);
}

// ---------------------------------------------------------------------------------------------------------
// A strided batch of products (kforge_cublaslt.cuh's file comment, "Batches"); the default is one product.
// `outer` such batches, the o-th at A + o * outer_stride_a (and B, C likewise), serve operands that broadcast
// differently over two runs of batch dims (cublaslt_gemm_batched: one cuBLASLt call per outer index).
// ---------------------------------------------------------------------------------------------------------
struct Batch {
  int count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements
  int64_t outer = 1;
  int64_t outer_stride_a = 0, outer_stride_b = 0, outer_stride_c = 0;
  int64_t stride_bias = 0;
};

inline bool is_single_product(const Batch& b) { return b.count == 1 && b.outer == 1; }

// ---------------------------------------------------------------------------------------------------------
// The arguments of one GEMM call as every variant of a multi-kernel GEMM site takes them (kforge_gemm_f32.cuh,
// kforge_gemm_tc.cuh): T is float, __half or __nv_bfloat16. A site over a batch of products passes its Batch
// (cuBLASLt's variants alone serve one: the tiles compute a single product).
// ---------------------------------------------------------------------------------------------------------
template <typename T>
struct GemmArgs {
  const T* A;     // [M, K] row-major ([K, M] when transpose_a)
  const T* B;     // [K, N] row-major ([N, K] when transpose_b)
  T* C;           // [M, N] row-major, written (never read)
  const T* bias;  // [N], or null when epilogue == kNone
  int M, N, K;
  Epilogue epilogue;
  cudaStream_t stream;
  bool transpose_a = false;
  bool transpose_b = false;
  Batch batch = {};
};

// The elements of C a call writes, from C on: what a benchmark's scratch output must hold.
template <typename T>
inline size_t output_extent(const GemmArgs<T>& a) {
  const Batch& b = a.batch;
  return size_t(a.M) * size_t(a.N) + size_t(b.count - 1) * size_t(b.stride_c) +
         size_t(b.outer - 1) * size_t(b.outer_stride_c);
}

}  // namespace cuda_gemm
}  // namespace kforge

#endif  // KFORGE_GEMM_CUH_
