// kforge CUDA GEMM variants (header-only, emitted beside generated CUDA code by the multi-kernel planner).
//
// Row-major C[M,N] = A[M,K] * B[K,N], optionally followed by a fused epilogue (bias add, or bias add then
// gelu in Paddle's default erf form: gelu(x) = 0.5 x (1 + erf(x / sqrt 2))).
//
//  * TensorCoreGemm<Tile>: bf16 inputs, fp32 accumulation on the tensor cores (mma.sync m16n8k16 fed by
//    ldmatrix), a STAGES-deep cp.async pipeline, bf16 output. Requirements: K % 8 == 0 and N % 8 == 0 and
//    16-byte aligned A, B, C (16-byte cp.async chunks); M is arbitrary. can_run() checks them, so a
//    dispatcher can drop the variant for a shape it cannot serve.
//  * SimtGemm<Tile>: fp32 inputs and output on the CUDA cores (no alignment requirement), A and/or B
//    optionally transposed.
//  * bias_gelu_bf16(), bias_epilogue_f32(): the unfused epilogue as its own kernel (what runs after a library
//    GEMM that cannot apply it; also the baseline of the fused-epilogue benchmark).
//
// The tile configurations are template parameters; kTileFor* below are the ones chosen for the multi-kernel
// size hints 64, 256 and 4096 (see docs/multi-kernel.md): few rows per tile and narrow columns for small M so
// that enough CTAs exist to fill 132 SMs, large 128x128 / 128x256 tiles for large M.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kforge {
namespace cuda_gemm {

enum class Epilogue : int { kNone = 0, kBias = 1, kBiasGelu = 2 };

inline const char* name_of(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return "none";
    case Epilogue::kBias: return "bias";
    case Epilogue::kBiasGelu: return "bias_gelu";
  }
  return "?";
}

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

template <Epilogue E>
__device__ __forceinline__ float apply_epilogue(float acc, float bias) {
  if constexpr (E == Epilogue::kNone) {
    (void)bias;
    return acc;
  } else if constexpr (E == Epilogue::kBias) {
    return acc + bias;
  } else {
    return gelu_erf(acc + bias);
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
// PTX wrappers (sm_80+: cp.async, ldmatrix, mma.sync bf16).
// ---------------------------------------------------------------------------------------------------------
namespace ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy; when !valid the destination is zero-filled and nothing is read.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// D += A(16x16, row) * B(16x8, col), bf16 in, fp32 accumulate.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace ptx

// ---------------------------------------------------------------------------------------------------------
// Tensor-core bf16 GEMM.
// ---------------------------------------------------------------------------------------------------------

// BM x BN output tile per CTA, BK deep per pipeline stage, WARPS_M x WARPS_N warps (each a WM x WN warp
// tile of 16x8 MMAs), STAGES shared-memory stages.
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct TensorCoreTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
  static constexpr int MT = WM / 16, NT = WN / 8;
  // Rows padded by 8 bf16 (16 bytes): the 8 row addresses of one ldmatrix land in 8 different 16-byte bank
  // groups for BK = 32 (80-byte rows) and BK = 64 (144-byte rows), so ldmatrix is conflict-free.
  static constexpr int A_STRIDE = BK + 8;
  static constexpr int B_STRIDE = BN + 8;
  static constexpr int A_STAGE = BM * A_STRIDE;  // elements
  static constexpr int B_STAGE = BK * B_STRIDE;
  static constexpr size_t kSmemBytes = size_t(STAGES) * (A_STAGE + B_STAGE) * sizeof(__nv_bfloat16);

  static_assert(BM % (WARPS_M * 16) == 0, "warp tile rows must be a multiple of 16");
  static_assert(BN % (WARPS_N * 16) == 0, "warp tile columns must be a multiple of 16 (ldmatrix.x4.trans)");
  static_assert(BK % 16 == 0, "BK must be a multiple of the MMA k (16)");
  static_assert((BM * BK / 8) % kThreads == 0, "A tile chunks must divide evenly among threads");
  static_assert((BK * BN / 8) % kThreads == 0, "B tile chunks must divide evenly among threads");
  static_assert(STAGES >= 2, "the pipeline needs at least two stages");
};

template <class T, Epilogue E>
__global__ void __launch_bounds__(T::kThreads)
    gemm_bf16_tc_kernel(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                        __nv_bfloat16* __restrict__ C, const __nv_bfloat16* __restrict__ bias, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* sA = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sB = sA + T::STAGES * T::A_STAGE;

  const int tiles_m = (M + T::BM - 1) / T::BM;
  const int tiles_n = (N + T::BN - 1) / T::BN;
  const TileIndex tile = grouped_tile(blockIdx.x, tiles_m, tiles_n);
  const int m0 = tile.tile_m * T::BM;
  const int n0 = tile.tile_n * T::BN;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / T::WARPS_N;
  const int warp_n = warp % T::WARPS_N;
  const int k_tiles = (K + T::BK - 1) / T::BK;

  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * T::BK;
    const uint32_t a_base = ptx::smem_addr(sA + stage * T::A_STAGE);
    const uint32_t b_base = ptx::smem_addr(sB + stage * T::B_STAGE);
    constexpr int kAChunksPerRow = T::BK / 8;
#pragma unroll
    for (int i = 0; i < T::BM * T::BK / 8 / T::kThreads; ++i) {
      const int chunk = tid + i * T::kThreads;
      const int row = chunk / kAChunksPerRow;
      const int kc = (chunk % kAChunksPerRow) * 8;
      const bool valid = (m0 + row < M) && (k0 + kc < K);
      const __nv_bfloat16* src = valid ? A + size_t(m0 + row) * K + k0 + kc : A;
      ptx::cp_async_16(a_base + (row * T::A_STRIDE + kc) * 2, src, valid);
    }
    constexpr int kBChunksPerRow = T::BN / 8;
#pragma unroll
    for (int i = 0; i < T::BK * T::BN / 8 / T::kThreads; ++i) {
      const int chunk = tid + i * T::kThreads;
      const int krow = chunk / kBChunksPerRow;
      const int nc = (chunk % kBChunksPerRow) * 8;
      const bool valid = (k0 + krow < K) && (n0 + nc < N);
      const __nv_bfloat16* src = valid ? B + size_t(k0 + krow) * N + n0 + nc : B;
      ptx::cp_async_16(b_base + (krow * T::B_STRIDE + nc) * 2, src, valid);
    }
  };

  float acc[T::MT][T::NT][4];
#pragma unroll
  for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mt][nt][r] = 0.0f;

  // Prologue: STAGES-1 tiles in flight (an empty group is committed past the end so the wait count below
  // stays uniform).
#pragma unroll
  for (int s = 0; s < T::STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<T::STAGES - 2>();
    // After this barrier tile kt is visible to every thread and every thread has finished computing on
    // tile kt-1, whose stage the prefetch below overwrites.
    __syncthreads();
    const int next = kt + T::STAGES - 1;
    if (next < k_tiles) load_stage(next % T::STAGES, next);
    ptx::cp_async_commit();

    const int stage = kt % T::STAGES;
    const __nv_bfloat16* a_tile = sA + stage * T::A_STAGE;
    const __nv_bfloat16* b_tile = sB + stage * T::B_STAGE;
#pragma unroll
    for (int kk = 0; kk < T::BK; kk += 16) {
      uint32_t a_frag[T::MT][4];
      uint32_t b_frag[T::NT][2];
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt) {
        // Lanes 0-15 address rows 0-15 at k, lanes 16-31 rows 0-15 at k+8: matrices a0..a3 in MMA order.
        const int row = warp_m * T::WM + mt * 16 + (lane & 15);
        const int col = kk + (lane >> 4) * 8;
        ptx::ldmatrix_x4(a_frag[mt], ptx::smem_addr(a_tile + row * T::A_STRIDE + col));
      }
#pragma unroll
      for (int np = 0; np < T::NT / 2; ++np) {
        // B is [k][n] in shared memory; .trans yields the col-major B fragment. Matrices: (k0-7, n), (k8-15,
        // n), (k0-7, n+8), (k8-15, n+8) = b0,b1 of n-tile 2np and b0,b1 of n-tile 2np+1.
        const int krow = kk + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = warp_n * T::WN + np * 16 + (lane >> 4) * 8;
        uint32_t r[4];
        ptx::ldmatrix_x4_trans(r, ptx::smem_addr(b_tile + krow * T::B_STRIDE + col));
        b_frag[2 * np][0] = r[0];
        b_frag[2 * np][1] = r[1];
        b_frag[2 * np + 1][0] = r[2];
        b_frag[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < T::NT; ++nt) ptx::mma_bf16_16816(acc[mt][nt], a_frag[mt], b_frag[nt][0], b_frag[nt][1]);
    }
  }
  ptx::cp_async_wait<0>();

  // Epilogue straight from the accumulators: thread holds (row g, cols 2c..2c+1) and (row g+8, same cols).
  const int g = lane >> 2;
  const int c = lane & 3;
#pragma unroll
  for (int nt = 0; nt < T::NT; ++nt) {
    const int col = n0 + warp_n * T::WN + nt * 8 + 2 * c;
    if (col >= N) continue;  // N % 8 == 0, so col + 1 < N as well
    float bias0 = 0.0f, bias1 = 0.0f;
    if constexpr (E != Epilogue::kNone) {
      const __nv_bfloat162 b2 = *reinterpret_cast<const __nv_bfloat162*>(bias + col);
      bias0 = __bfloat162float(b2.x);
      bias1 = __bfloat162float(b2.y);
    }
#pragma unroll
    for (int mt = 0; mt < T::MT; ++mt) {
      const int row = m0 + warp_m * T::WM + mt * 16 + g;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = row + half * 8;
        if (r < M) {
          const __nv_bfloat162 out = __floats2bfloat162_rn(apply_epilogue<E>(acc[mt][nt][2 * half], bias0),
                                                           apply_epilogue<E>(acc[mt][nt][2 * half + 1], bias1));
          *reinterpret_cast<__nv_bfloat162*>(C + size_t(r) * N + col) = out;
        }
      }
    }
  }
}

template <class Tile>
struct TensorCoreGemm {
  using TileConfig = Tile;

  // Whether this variant can serve the call at all (shape and alignment rules above).
  static bool can_run(const void* A, const void* B, const void* C, const void* bias, int M, int N, int K,
                      Epilogue epilogue) {
    const auto aligned16 = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
    if (M <= 0 || N <= 0 || K <= 0 || N % 8 != 0 || K % 8 != 0) return false;
    if (!aligned16(A) || !aligned16(B) || !aligned16(C)) return false;
    if (epilogue != Epilogue::kNone && (bias == nullptr || (reinterpret_cast<uintptr_t>(bias) & 3u) != 0)) return false;
    return true;
  }

  static cudaError_t launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                            const __nv_bfloat16* bias, int M, int N, int K, Epilogue epilogue, cudaStream_t stream) {
    switch (epilogue) {
      case Epilogue::kNone: return launch_with<Epilogue::kNone>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBias: return launch_with<Epilogue::kBias>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBiasGelu: return launch_with<Epilogue::kBiasGelu>(A, B, C, bias, M, N, K, stream);
    }
    return cudaErrorInvalidValue;
  }

 private:
  template <Epilogue E>
  static cudaError_t launch_with(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                                 const __nv_bfloat16* bias, int M, int N, int K, cudaStream_t stream) {
    auto* kernel = &gemm_bf16_tc_kernel<Tile, E>;
    // Raising the dynamic shared-memory limit once per instantiation (it is a per-function attribute).
    static const cudaError_t attr_status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Tile::kSmemBytes));
    if (attr_status != cudaSuccess) return attr_status;
    const int tiles = ((M + Tile::BM - 1) / Tile::BM) * ((N + Tile::BN - 1) / Tile::BN);
    kernel<<<tiles, Tile::kThreads, Tile::kSmemBytes, stream>>>(A, B, C, bias, M, N, K);
    return cudaGetLastError();
  }
};

// Tile configurations chosen for the multi-kernel hints (N = K = 4096 class problems on 132 SMs):
//  hint 64:   64 x 32 tiles, 64-deep k stages: M = 64 gives 128 CTAs, which is what a memory-bound
//             (B-streaming) problem needs to pull full bandwidth;
//  hint 256:  64 x 128 tiles: M = 256 gives 128 CTAs;
//  hint 4096: 128 x 128 (4 warps of 64 x 64, two CTAs per SM) and 128 x 256 (8 warps of 64 x 64).
using kTileForHint64 = TensorCoreTile<64, 32, 64, 2, 2, 6>;
using kTileForHint256 = TensorCoreTile<64, 128, 32, 2, 2, 4>;
using kTileForHint4096 = TensorCoreTile<128, 128, 32, 2, 2, 4>;
using kTileForHint4096Wide = TensorCoreTile<128, 256, 32, 2, 4, 3>;

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
// Separate epilogue: C[M,N] = gelu(C + bias[N]) in place, bf16, 8 elements (16 bytes) per thread.
// Vectorized when N % 8 == 0 and C and bias are 16-byte aligned; a scalar kernel otherwise.
// ---------------------------------------------------------------------------------------------------------
static __global__ void bias_gelu_bf16_kernel(__nv_bfloat16* __restrict__ C, const __nv_bfloat16* __restrict__ bias,
                                      size_t vectors, int n_vectors_per_row) {
  for (size_t v = size_t(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += size_t(gridDim.x) * blockDim.x) {
    const int col_vec = int(v % size_t(n_vectors_per_row));
    uint4 data = reinterpret_cast<uint4*>(C)[v];
    const uint4 b = reinterpret_cast<const uint4*>(bias)[col_vec];
    __nv_bfloat162* d2 = reinterpret_cast<__nv_bfloat162*>(&data);
    const __nv_bfloat162* b2 = reinterpret_cast<const __nv_bfloat162*>(&b);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 x = __bfloat1622float2(d2[i]);
      const float2 y = __bfloat1622float2(b2[i]);
      d2[i] = __floats2bfloat162_rn(gelu_erf(x.x + y.x), gelu_erf(x.y + y.y));
    }
    reinterpret_cast<uint4*>(C)[v] = data;
  }
}

static __global__ void bias_gelu_bf16_scalar_kernel(__nv_bfloat16* __restrict__ C,
                                                    const __nv_bfloat16* __restrict__ bias, size_t count, int N) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    C[i] = __float2bfloat16_rn(gelu_erf(__bfloat162float(C[i]) + __bfloat162float(bias[i % size_t(N)])));
}

inline cudaError_t bias_gelu_bf16(__nv_bfloat16* C, const __nv_bfloat16* bias, int M, int N, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;
  const bool vectorizable = N % 8 == 0 && (reinterpret_cast<uintptr_t>(C) & 15u) == 0 &&
                            (reinterpret_cast<uintptr_t>(bias) & 15u) == 0;
  if (!vectorizable) {
    const size_t count = size_t(M) * N;
    const size_t blocks_needed = (count + 255) / 256;
    const int blocks = int(blocks_needed < 132u * 16u ? blocks_needed : 132u * 16u);
    bias_gelu_bf16_scalar_kernel<<<blocks, 256, 0, stream>>>(C, bias, count, N);
    return cudaGetLastError();
  }
  const size_t vectors = size_t(M) * N / 8;
  const int threads = 256;
  const size_t blocks_needed = (vectors + threads - 1) / threads;
  const int blocks = int(blocks_needed < 132u * 16u ? blocks_needed : 132u * 16u);
  bias_gelu_bf16_kernel<<<blocks, threads, 0, stream>>>(C, bias, vectors, N / 8);
  return cudaGetLastError();
}

// fp32 flavour of the separate epilogue (after a library fp32 GEMM), in place: C = C + bias[N] (kBias) or
// C = gelu(C + bias[N]) (kBiasGelu). Grid-stride, any alignment.
template <Epilogue E>
static __global__ void bias_epilogue_f32_kernel(float* __restrict__ C, const float* __restrict__ bias, size_t count,
                                                int N) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    C[i] = apply_epilogue<E>(C[i], bias[i % size_t(N)]);
}

inline cudaError_t bias_epilogue_f32(float* C, const float* bias, int M, int N, Epilogue epilogue, cudaStream_t stream) {
  if (M <= 0 || N <= 0 || epilogue == Epilogue::kNone) return cudaSuccess;
  const size_t count = size_t(M) * N;
  const size_t blocks_needed = (count + 255) / 256;
  const int blocks = int(blocks_needed < 132u * 16u ? blocks_needed : 132u * 16u);
  if (epilogue == Epilogue::kBias) {
    bias_epilogue_f32_kernel<Epilogue::kBias><<<blocks, 256, 0, stream>>>(C, bias, count, N);
  } else {
    bias_epilogue_f32_kernel<Epilogue::kBiasGelu><<<blocks, 256, 0, stream>>>(C, bias, count, N);
  }
  return cudaGetLastError();
}

inline cudaError_t bias_gelu_f32(float* C, const float* bias, int M, int N, cudaStream_t stream) {
  return bias_epilogue_f32(C, bias, M, N, Epilogue::kBiasGelu, stream);
}

}  // namespace cuda_gemm
}  // namespace kforge
