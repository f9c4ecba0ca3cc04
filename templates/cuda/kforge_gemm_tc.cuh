// kforge tensor-core GEMM for 16-bit inputs (header-only; sm_80+ instructions, built for sm_90). kforge copies
// it beside `kforge compile --target cuda --multi-kernel-hints` output whose 16-bit GEMM sites have tile
// variants; the benchmark's hand-built sets (kforge_gemm_variants.cuh) use it too.
//
// TensorCoreGemm<Tile>: row-major C[M,N] = A[M,K] * B[K,N] for bf16 (__nv_bfloat16) or fp16 (__half) A, B, C
// and bias, fp32 accumulation on the tensor cores (mma.sync m16n8k16 fed by ldmatrix), a STAGES-deep cp.async
// pipeline, the epilogue (kforge_gemm.cuh: none, bias, erf gelu, tanh gelu) applied to the fp32 accumulators and
// the result rounded to the element type once. (Generated 16-bit gelu sites ask for the tanh form, as their
// cuBLASLt candidate computes it: every candidate of a dispatcher computes the same function.) Requirements: no
// transposes (A and B are read as stored, in 16-byte chunks), K % 8 == 0 and N % 8 == 0, 16-byte aligned A, B and
// C, a 4-byte aligned bias; M is arbitrary.
// tensor_core_applies() checks them; a multi-kernel variant (tensor_core<>) refuses other calls
// with cudaErrorNotSupported without launching anything.
//
// The tile configurations are template parameters; kTileFor* below are the ones chosen for the multi-kernel
// size hints 64, 256 and 4096 (src/passes/variants.cpp, cuda_tensor_core_variant_for_hint).
#ifndef KFORGE_GEMM_TC_CUH_
#define KFORGE_GEMM_TC_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kforge_gemm.cuh"

namespace kforge {
namespace cuda_gemm {

// ---------------------------------------------------------------------------------------------------------
// PTX wrappers (sm_80+: cp.async, ldmatrix, mma.sync). cp.async and ldmatrix move 16-bit elements whatever
// their type; only the MMA instruction names it (MmaElement below).
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

}  // namespace ptx

// What the tensor-core kernel needs to know of its element type: the MMA (D += A(16x16, row) * B(16x8, col),
// fp32 accumulate) and how two adjacent outputs are rounded and stored as one 32-bit pair.
template <typename T>
struct MmaElement;

template <>
struct MmaElement<__nv_bfloat16> {
  using Pair = __nv_bfloat162;
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ Pair pack(float x, float y) { return __floats2bfloat162_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(Pair p) { return __bfloat1622float2(p); }
};

template <>
struct MmaElement<__half> {
  using Pair = __half2;
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ Pair pack(float x, float y) { return __floats2half2_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(Pair p) { return __half22float2(p); }
};

// BM x BN output tile per CTA, BK deep per pipeline stage, WARPS_M x WARPS_N warps (each a WM x WN warp
// tile of 16x8 MMAs), STAGES shared-memory stages. Elements are 16-bit (bf16 or fp16).
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct TensorCoreTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
  static constexpr int MT = WM / 16, NT = WN / 8;
  // Rows padded by 8 elements (16 bytes): the 8 row addresses of one ldmatrix land in 8 different 16-byte bank
  // groups for BK = 32 (80-byte rows) and BK = 64 (144-byte rows), so ldmatrix is conflict-free.
  static constexpr int A_STRIDE = BK + 8;
  static constexpr int B_STRIDE = BN + 8;
  static constexpr int A_STAGE = BM * A_STRIDE;  // elements
  static constexpr int B_STAGE = BK * B_STRIDE;
  static constexpr size_t kSmemBytes = size_t(STAGES) * (A_STAGE + B_STAGE) * sizeof(uint16_t);

  static_assert(BM % (WARPS_M * 16) == 0, "warp tile rows must be a multiple of 16");
  static_assert(BN % (WARPS_N * 16) == 0, "warp tile columns must be a multiple of 16 (ldmatrix.x4.trans)");
  static_assert(BK % 16 == 0, "BK must be a multiple of the MMA k (16)");
  static_assert((BM * BK / 8) % kThreads == 0, "A tile chunks must divide evenly among threads");
  static_assert((BK * BN / 8) % kThreads == 0, "B tile chunks must divide evenly among threads");
  static_assert(STAGES >= 2, "the pipeline needs at least two stages");
};

template <typename T, class Tile, Epilogue E>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_tc_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, const T* __restrict__ bias,
                   int M, int N, int K) {
  static_assert(sizeof(T) == 2, "the tensor-core kernel moves 16-bit elements");
  using Mma = MmaElement<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sA = reinterpret_cast<T*>(smem_raw);
  T* sB = sA + Tile::STAGES * Tile::A_STAGE;

  const int tiles_m = (M + Tile::BM - 1) / Tile::BM;
  const int tiles_n = (N + Tile::BN - 1) / Tile::BN;
  const TileIndex tile = grouped_tile(blockIdx.x, tiles_m, tiles_n);
  const int m0 = tile.tile_m * Tile::BM;
  const int n0 = tile.tile_n * Tile::BN;

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / Tile::WARPS_N;
  const int warp_n = warp % Tile::WARPS_N;
  const int k_tiles = (K + Tile::BK - 1) / Tile::BK;

  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * Tile::BK;
    const uint32_t a_base = ptx::smem_addr(sA + stage * Tile::A_STAGE);
    const uint32_t b_base = ptx::smem_addr(sB + stage * Tile::B_STAGE);
    constexpr int kAChunksPerRow = Tile::BK / 8;
#pragma unroll
    for (int i = 0; i < Tile::BM * Tile::BK / 8 / Tile::kThreads; ++i) {
      const int chunk = tid + i * Tile::kThreads;
      const int row = chunk / kAChunksPerRow;
      const int kc = (chunk % kAChunksPerRow) * 8;
      const bool valid = (m0 + row < M) && (k0 + kc < K);
      const T* src = valid ? A + size_t(m0 + row) * K + k0 + kc : A;
      ptx::cp_async_16(a_base + (row * Tile::A_STRIDE + kc) * 2, src, valid);
    }
    constexpr int kBChunksPerRow = Tile::BN / 8;
#pragma unroll
    for (int i = 0; i < Tile::BK * Tile::BN / 8 / Tile::kThreads; ++i) {
      const int chunk = tid + i * Tile::kThreads;
      const int krow = chunk / kBChunksPerRow;
      const int nc = (chunk % kBChunksPerRow) * 8;
      const bool valid = (k0 + krow < K) && (n0 + nc < N);
      const T* src = valid ? B + size_t(k0 + krow) * N + n0 + nc : B;
      ptx::cp_async_16(b_base + (krow * Tile::B_STRIDE + nc) * 2, src, valid);
    }
  };

  float acc[Tile::MT][Tile::NT][4];
#pragma unroll
  for (int mt = 0; mt < Tile::MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < Tile::NT; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mt][nt][r] = 0.0f;

  // Prologue: STAGES-1 tiles in flight (an empty group is committed past the end so the wait count below
  // stays uniform).
#pragma unroll
  for (int s = 0; s < Tile::STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<Tile::STAGES - 2>();
    // After this barrier tile kt is visible to every thread and every thread has finished computing on
    // tile kt-1, whose stage the prefetch below overwrites.
    __syncthreads();
    const int next = kt + Tile::STAGES - 1;
    if (next < k_tiles) load_stage(next % Tile::STAGES, next);
    ptx::cp_async_commit();

    const int stage = kt % Tile::STAGES;
    const T* a_tile = sA + stage * Tile::A_STAGE;
    const T* b_tile = sB + stage * Tile::B_STAGE;
#pragma unroll
    for (int kk = 0; kk < Tile::BK; kk += 16) {
      uint32_t a_frag[Tile::MT][4];
      uint32_t b_frag[Tile::NT][2];
#pragma unroll
      for (int mt = 0; mt < Tile::MT; ++mt) {
        // Lanes 0-15 address rows 0-15 at k, lanes 16-31 rows 0-15 at k+8: matrices a0..a3 in MMA order.
        const int row = warp_m * Tile::WM + mt * 16 + (lane & 15);
        const int col = kk + (lane >> 4) * 8;
        ptx::ldmatrix_x4(a_frag[mt], ptx::smem_addr(a_tile + row * Tile::A_STRIDE + col));
      }
#pragma unroll
      for (int np = 0; np < Tile::NT / 2; ++np) {
        // B is [k][n] in shared memory; .trans yields the col-major B fragment. Matrices: (k0-7, n), (k8-15,
        // n), (k0-7, n+8), (k8-15, n+8) = b0,b1 of n-tile 2np and b0,b1 of n-tile 2np+1.
        const int krow = kk + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = warp_n * Tile::WN + np * 16 + (lane >> 4) * 8;
        uint32_t r[4];
        ptx::ldmatrix_x4_trans(r, ptx::smem_addr(b_tile + krow * Tile::B_STRIDE + col));
        b_frag[2 * np][0] = r[0];
        b_frag[2 * np][1] = r[1];
        b_frag[2 * np + 1][0] = r[2];
        b_frag[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < Tile::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < Tile::NT; ++nt) Mma::mma(acc[mt][nt], a_frag[mt], b_frag[nt][0], b_frag[nt][1]);
    }
  }
  ptx::cp_async_wait<0>();

  // Epilogue straight from the accumulators: thread holds (row g, cols 2c..2c+1) and (row g+8, same cols).
  const int g = lane >> 2;
  const int c = lane & 3;
#pragma unroll
  for (int nt = 0; nt < Tile::NT; ++nt) {
    const int col = n0 + warp_n * Tile::WN + nt * 8 + 2 * c;
    if (col >= N) continue;  // N % 8 == 0, so col + 1 < N as well
    float bias0 = 0.0f, bias1 = 0.0f;
    if constexpr (E != Epilogue::kNone) {
      const float2 b2 = Mma::unpack(*reinterpret_cast<const typename Mma::Pair*>(bias + col));
      bias0 = b2.x;
      bias1 = b2.y;
    }
#pragma unroll
    for (int mt = 0; mt < Tile::MT; ++mt) {
      const int row = m0 + warp_m * Tile::WM + mt * 16 + g;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = row + half * 8;
        if (r < M) {
          *reinterpret_cast<typename Mma::Pair*>(C + size_t(r) * N + col) =
              Mma::pack(apply_epilogue<E>(acc[mt][nt][2 * half], bias0),
                        apply_epilogue<E>(acc[mt][nt][2 * half + 1], bias1));
        }
      }
    }
  }
}

template <class Tile>
struct TensorCoreGemm {
  using TileConfig = Tile;

  // One instantiation: element type and epilogue known at compile time (generated code knows them per site).
  // The caller has checked tensor_core_applies().
  template <Epilogue E, typename T>
  static cudaError_t run(const T* A, const T* B, T* C, const T* bias, int M, int N, int K, cudaStream_t stream) {
    auto* kernel = &gemm_tc_kernel<T, Tile, E>;
    // Raising the dynamic shared-memory limit once per instantiation (it is a per-function attribute).
    static const cudaError_t attr_status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Tile::kSmemBytes));
    if (attr_status != cudaSuccess) return attr_status;
    const int tiles = ((M + Tile::BM - 1) / Tile::BM) * ((N + Tile::BN - 1) / Tile::BN);
    kernel<<<tiles, Tile::kThreads, Tile::kSmemBytes, stream>>>(A, B, C, bias, M, N, K);
    return cudaGetLastError();
  }

  // The epilogue chosen at run time (benchmarks: every epilogue's kernel is compiled).
  template <typename T>
  static cudaError_t launch(const T* A, const T* B, T* C, const T* bias, int M, int N, int K, Epilogue epilogue,
                            cudaStream_t stream) {
    switch (epilogue) {
      case Epilogue::kNone: return run<Epilogue::kNone>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBias: return run<Epilogue::kBias>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBiasGelu: return run<Epilogue::kBiasGelu>(A, B, C, bias, M, N, K, stream);
      case Epilogue::kBiasGeluTanh: return run<Epilogue::kBiasGeluTanh>(A, B, C, bias, M, N, K, stream);
    }
    return cudaErrorInvalidValue;
  }
};

// Tile configurations chosen for the multi-kernel hints (N = K = 4096 class problems on 132 SMs):
//  hint 64:   64 x 32 tiles, 64-deep k stages: M = 64 gives 128 CTAs, which is what a memory-bound
//             (B-streaming) problem needs to pull full bandwidth;
//  hint 256:  64 x 128 tiles: M = 256 gives 128 CTAs;
//  hint 4096: 128 x 128 (4 warps of 64 x 64, two CTAs per SM) and 128 x 256 (8 warps of 64 x 64; the
//             benchmark's sets only: it lost to 128 x 128 at M = 4096, BENCHMARKS.md).
using kTileForHint64 = TensorCoreTile<64, 32, 64, 2, 2, 6>;
using kTileForHint256 = TensorCoreTile<64, 128, 32, 2, 2, 4>;
using kTileForHint4096 = TensorCoreTile<128, 128, 32, 2, 2, 4>;
using kTileForHint4096Wide = TensorCoreTile<128, 256, 32, 2, 4, 3>;

// ---------------------------------------------------------------------------------------------------------
// Variants of generated 16-bit GEMM sites (cudaError_t(const GemmArgs<T>&), kforge_gemm_f32.cuh's
// GemmMultiKernel<T>).
// ---------------------------------------------------------------------------------------------------------

// Whether the tensor-core tiles (every one has the same requirements, file comment) can serve a call. Generated
// code checks it after the dispatcher's pick: a tile picked for a call it cannot serve (forced, nearest hint,
// or a pick cached for the same shape with other pointers) gives way to cuBLASLt, the site's variant 0, so no
// tile is ever called for real with arguments it would refuse.
template <typename T>
inline bool tensor_core_applies(const GemmArgs<T>& a) {
  using kforge::cuda::aligned_to;
  if (!is_single_product(a.batch) || a.transpose_a || a.transpose_b || a.M <= 0 || a.N <= 0 || a.K <= 0 || a.N % 8 != 0 || a.K % 8 != 0) return false;
  if (!aligned_to(a.A, 16) || !aligned_to(a.B, 16) || !aligned_to(a.C, 16)) return false;
  return a.epilogue == Epilogue::kNone || (a.bias != nullptr && aligned_to(a.bias, 4));
}

// One tensor-core instantiation as a variant: the epilogue is the site's (generated code knows it), and a call
// the tiles cannot serve returns cudaErrorNotSupported without launching, which the dispatcher's benchmark
// times as +inf (the run on scratch marks the timer failed), so the variant never wins such a shape.
template <class Tile, Epilogue E, typename T>
inline cudaError_t tensor_core(const GemmArgs<T>& a) {
  if (a.epilogue != E) return cudaErrorInvalidValue;  // a caller bug, never a wrong result
  if (!tensor_core_applies(a)) return cudaErrorNotSupported;
  return TensorCoreGemm<Tile>::template run<E>(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.stream);
}

}  // namespace cuda_gemm
}  // namespace kforge

#endif  // KFORGE_GEMM_TC_CUH_
