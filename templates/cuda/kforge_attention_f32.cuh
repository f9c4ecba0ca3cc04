// kforge fused attention over float32 values for --target cuda (header-only): out = softmax(scale * q k^T + mask) v
// in one kernel, FlashAttention's way (the scores never reach memory), computed in float32 throughout: the float32
// twin of kforge_attention.cuh, whose arguments (AttentionArgs, kforge_attention_tile.cuh) it takes. The fusion pass
// (passes/fusion_attention.cpp) replaces the pattern Paddle's MultiHeadAttention exports with one call of
// attention_float() below, which reads q, k and v where the projections wrote them and writes the output where the
// transpose back would have: every operand is addressed by strides.
//
// A block of 4 warps takes 64 query rows of one (batch, head) (16 where 64-row blocks would not fill the GPU once,
// and for decoding: at most 16 query rows) and walks the keys in tiles of 64 (32 above head dim 64), the next tile
// copied in (cp.async, 16 bytes a step where rows are 16-byte aligned) while this one is worked on.
// Thread (g, c) = (threadIdx.x / 8, threadIdx.x % 8) holds the scores of rows g + 16 i (i < R) and keys c + 8 j, and
// the output of the same rows at columns 4 c + 32 n .. + 3 (those below D: under 32, some lanes hold none): the 8 lanes
// of a row share its maximum and sum by shuffles, and every float4 read of shared memory by 8 lanes touches 32
// different banks (rows padded by 4 floats). The scores are float32 dot products summed in order of d with fused
// multiply-adds (as a plain GEMM sums them), then scaled and masked with separately rounded float32 operations (as the
// program's scale and add do); the online softmax keeps each row's running maximum and sum (expf, float32: no
// approximate exponentials), rescales the output accumulators when the maximum grows, and divides by the sum once at
// the end (FlashAttention-2's scheme); the probabilities go through shared memory to the p v products (float32 fused
// multiply-adds). With the class's TF32 switch on, the products run on TF32 tensor cores instead (the second kernel
// below), as the program's GEMMs then do. With it off nothing is 16-bit and no tensor core is used: the result differs from the unfused
// program (cuBLASLt products, softmax row kernel) only by float32 rounding in another order (relative errors near
// 1e-6). Under a causal mask the last row blocks start first and each block skips the key tiles past its last row's
// bound. A row whose every key is masked to -inf gives NaN, as softmax does.
//
// Requirements (fusion_attention.cpp checks them): head_dim D a multiple of 4 up to 128 (a template parameter); the
// head dim contiguous in q, k, v and out; mask (optional) float, any strides (0: broadcast). Sizes are int64. sm_80 or
// later (cp.async).
#ifndef KFORGE_ATTENTION_F32_CUH_
#define KFORGE_ATTENTION_F32_CUH_

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kforge_attention_tile.cuh"

namespace kforge {
namespace cuda_attention {
namespace float32_detail {

constexpr int kThreads = detail::kThreads;  // 4 warps

// A block's tiles: kRows = 16 R query rows, key tiles of kKeys; each thread holds R rows, kKeys / 8 keys and up to
// 4 ceil(D / 32) output columns. Shared memory: q, two K and two V tiles (double-buffered), the tile's probabilities.
template <int D, int R>
struct Tiling {
  static constexpr int kRows = 16 * R;
  static constexpr int kKeys = D > 64 ? 32 : 64;  // keeps shared memory near 110 KB: two blocks a multiprocessor
  static constexpr int kLd = D + 4;                 // q, K and V rows: 16-byte aligned, 8 lanes' float4s in 32 banks
  static constexpr int kLdP = kKeys + 8;            // probabilities: a warp's 4 row groups store to different banks
  static constexpr size_t kBytes = (size_t(kRows) * kLd + size_t(4) * kKeys * kLd + size_t(kRows) * kLdP) * 4;
};

// Starts copying rows [row0, row0 + count) of a [rows x D] float operand into a shared tile (row stride ld),
// zeros beyond `limit`: 16 bytes per step, asynchronously (cp.async) when `Vec` (every row start 16-byte aligned),
// else one element per step, synchronously. The caller commits and waits.
template <int D, bool Vec, int ld = Tiling<D, 1>::kLd>
__device__ __forceinline__ void load_rows(float* dst, const float* src, int64_t stride, int64_t row0, int count,
                                          int64_t limit) {
  if constexpr (Vec) {
    constexpr int kChunks = D / 4;
    for (int i = threadIdx.x; i < count * kChunks; i += kThreads) {
      const int r = i / kChunks, col = (i % kChunks) * 4;
      if (row0 + r < limit) {
        __pipeline_memcpy_async(dst + r * ld + col, src + (row0 + r) * stride + col, 16);
      } else {
        *reinterpret_cast<float4*>(dst + r * ld + col) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
    }
  } else {
    for (int i = threadIdx.x; i < count * D; i += kThreads) {
      const int r = i / D, col = i % D;
      dst[r * ld + col] = row0 + r < limit ? src[(row0 + r) * stride + col] : 0.0f;
    }
  }
}

__device__ __forceinline__ void fma4(float4& acc, float p, const float4& v) {
  acc.x = fmaf(p, v.x, acc.x);
  acc.y = fmaf(p, v.y, acc.y);
  acc.z = fmaf(p, v.z, acc.z);
  acc.w = fmaf(p, v.w, acc.w);
}

// The maximum and the sum of a row over its 8 lanes (consecutive lanes c = 0 .. 7 of one g).
__device__ __forceinline__ float row_max8(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 4));
}
__device__ __forceinline__ float row_sum8(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  return x + __shfl_xor_sync(0xffffffffu, x, 4);
}

// R: rows per thread (4: 64-row blocks; 1: 16-row blocks).
template <int D, int R, bool Vec, bool Masked>
__global__ void __launch_bounds__(kThreads) attention_f32_kernel(AttentionArgs a) {
  using C = Tiling<D, R>;
  constexpr int kRows = C::kRows, kKeys = C::kKeys, ld = C::kLd, ldp = C::kLdP;
  constexpr int NK = kKeys / 8, NC = (D + 31) / 32;  // per thread: keys, float4 output column groups
  constexpr bool kEveryLane = D % 32 == 0;                   // else lanes whose columns 4 c + 32 n pass D skip them
  extern __shared__ __align__(16) unsigned char smem_f32[];
  float* qs = reinterpret_cast<float*>(smem_f32);
  float* kv = qs + kRows * ld;  // tile t's K at kv + (t % 2) * 2 * kKeys * ld, its V kKeys rows after it
  float* ps = kv + 4 * kKeys * ld;

  const int g = threadIdx.x / 8, c = threadIdx.x % 8;
  const int64_t b = blockIdx.x / a.heads, h = blockIdx.x % a.heads;
  // The last rows' block first: under a causal mask it has the most keys, and the short blocks fill the tail.
  const int64_t q0 = int64_t(gridDim.y - 1 - blockIdx.y) * kRows;
  const float* q = static_cast<const float*>(a.q) + b * a.q_batch + h * a.q_head;
  const float* k = static_cast<const float*>(a.k) + b * a.k_batch + h * a.k_head;
  const float* v = static_cast<const float*>(a.v) + b * a.v_batch + h * a.v_head;
  const float* mask = Masked ? static_cast<const float*>(a.mask) + b * a.m_batch + h * a.m_head : nullptr;
  auto load_keys = [&](int64_t tile) {
    float* ks = kv + (tile % 2) * 2 * kKeys * ld;
    load_rows<D, Vec>(ks, k, a.k_seq, tile * kKeys, kKeys, a.seq_k);
    load_rows<D, Vec>(ks + kKeys * ld, v, a.v_seq, tile * kKeys, kKeys, a.seq_k);
    __pipeline_commit();
  };
  load_rows<D, Vec>(qs, q, a.q_seq, q0, kRows, a.seq_q);
  load_keys(0);

  // Causal: the tiles past the block's last row's bound are masked whole and skipped (at least one runs: a row that
  // sees no key gives NaN, as softmax does).
  const int64_t block_keys = detail::key_limit(a, q0 + kRows - 1 < a.seq_q ? q0 + kRows - 1 : a.seq_q - 1);
  const int64_t tiles = block_keys > 0 ? (block_keys + kKeys - 1) / kKeys : 1;
  int64_t limit[R], mask_row[R];  // the keys each row sees; the mask row it reads (rows past seq_q read the last)
  float row_max[R], row_sum[R];
  float4 o[R][NC];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int64_t row = q0 + g + 16 * i;
    limit[i] = detail::key_limit(a, row);
    mask_row[i] = (row < a.seq_q ? row : a.seq_q - 1) * a.m_row;
    row_max[i] = -INFINITY;
    row_sum[i] = 0.0f;
#pragma unroll
    for (int n = 0; n < NC; ++n) o[i][n] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }

  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      load_keys(t + 1);  // overlaps this tile's work
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // tile t (and q) in shared memory for every warp
    const float* ks = kv + (t % 2) * 2 * kKeys * ld;
    const float* vs = ks + kKeys * ld;

    // s[i][j] = q[g + 16 i] . k[c + 8 j], summed in order of d.
    float s[R][NK];
#pragma unroll
    for (int i = 0; i < R; ++i) {
#pragma unroll
      for (int j = 0; j < NK; ++j) s[i][j] = 0.0f;
    }
#pragma unroll 4
    for (int d = 0; d < D; d += 4) {
      float4 qv[R], kf[NK];
#pragma unroll
      for (int i = 0; i < R; ++i) qv[i] = *reinterpret_cast<const float4*>(qs + (g + 16 * i) * ld + d);
#pragma unroll
      for (int j = 0; j < NK; ++j) kf[j] = *reinterpret_cast<const float4*>(ks + (c + 8 * j) * ld + d);
#pragma unroll
      for (int i = 0; i < R; ++i) {
#pragma unroll
        for (int j = 0; j < NK; ++j) {
          s[i][j] = fmaf(qv[i].x, kf[j].x, s[i][j]);
          s[i][j] = fmaf(qv[i].y, kf[j].y, s[i][j]);
          s[i][j] = fmaf(qv[i].z, kf[j].z, s[i][j]);
          s[i][j] = fmaf(qv[i].w, kf[j].w, s[i][j]);
        }
      }
    }

    // Scaled, the mask added (each rounded on its own: no contraction into a fused multiply-add, as the program's
    // scale and add), keys outside a row's bound at -inf; then the online softmax of each row.
    const int64_t k0 = t * kKeys;
#pragma unroll
    for (int i = 0; i < R; ++i) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < NK; ++j) {
        const int64_t key = k0 + c + 8 * j;
        float x = __fmul_rn(s[i][j], a.scale);
        if constexpr (Masked) {
          if (key < a.seq_k) x = __fadd_rn(x, mask[mask_row[i] + key * a.m_col]);
        }
        s[i][j] = key < limit[i] ? x : -INFINITY;
        tile_max = fmaxf(tile_max, s[i][j]);
      }
      const float new_max = fmaxf(row_max[i], row_max8(tile_max));
      const float base = new_max == -INFINITY ? 0.0f : new_max;  // all -inf so far: every p is 0
      const float correction = expf(row_max[i] - base);
      row_max[i] = new_max;
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < NK; ++j) {
        const float p = expf(s[i][j] - base);
        ps[(g + 16 * i) * ldp + c + 8 * j] = p;
        sum += p;
      }
      row_sum[i] = row_sum[i] * correction + sum;
#pragma unroll
      for (int n = 0; n < NC; ++n) {
        o[i][n].x *= correction;
        o[i][n].y *= correction;
        o[i][n].z *= correction;
        o[i][n].w *= correction;
      }
    }
    __syncwarp();  // a row's probabilities come from its 8 lanes, all in this warp

    // o[i] += p[g + 16 i] v: columns 4 c + 32 n .. + 3 of the output rows, keys in order.
#pragma unroll 2
    for (int kk = 0; kk < kKeys; kk += 4) {
      float4 p[R];
#pragma unroll
      for (int i = 0; i < R; ++i) p[i] = *reinterpret_cast<const float4*>(ps + (g + 16 * i) * ldp + kk);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float4 vv[NC];
#pragma unroll
        for (int n = 0; n < NC; ++n) {
          const float* at = vs + (kk + e) * ld + 4 * c + 32 * n;
          vv[n] = kEveryLane || 4 * c + 32 * n < D ? *reinterpret_cast<const float4*>(at) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < R; ++i) {
          const float pe = e == 0 ? p[i].x : e == 1 ? p[i].y : e == 2 ? p[i].z : p[i].w;
#pragma unroll
          for (int n = 0; n < NC; ++n) fma4(o[i][n], pe, vv[n]);
        }
      }
    }
    __syncthreads();  // every warp is done with tile t's buffers (and its probabilities) before they are reused
  }

  // o / sum (every key masked: the sum is 0, 0 / 0 = NaN, as softmax gives).
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const float sum = row_sum8(row_sum[i]);
    const int64_t row = q0 + g + 16 * i;
    if (row >= a.seq_q) continue;
    float* out = static_cast<float*>(a.out) + b * a.o_batch + h * a.o_head + row * a.o_seq;
    const bool vec = reinterpret_cast<uintptr_t>(out) % 16 == 0;
#pragma unroll
    for (int n = 0; n < NC; ++n) {
      if (!kEveryLane && 4 * c + 32 * n >= D) continue;
      const float4 r = make_float4(o[i][n].x / sum, o[i][n].y / sum, o[i][n].z / sum, o[i][n].w / sum);
      float* at = out + 4 * c + 32 * n;
      if (vec) {
        *reinterpret_cast<float4*>(at) = r;
      } else {
        at[0] = r.x, at[1] = r.y, at[2] = r.z, at[3] = r.w;
      }
    }
  }
}

// One block per (batch, head) and `rows` query rows.
inline dim3 grid_of(const AttentionArgs& a, int rows) {
  return dim3(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_q + rows - 1) / rows));
}

template <int D, int R, bool Vec, bool Masked>
inline cudaError_t launch(const AttentionArgs& a, cudaStream_t stream) {
  return detail::launch_kernel(attention_f32_kernel<D, R, Vec, Masked>, grid_of(a, Tiling<D, R>::kRows),
                               Tiling<D, R>::kBytes, a, stream);
}

template <int D, int R>
inline cudaError_t launch_rows(const AttentionArgs& a, bool vec, cudaStream_t stream) {
  const bool masked = a.mask != nullptr;
  if (vec) return masked ? launch<D, R, true, true>(a, stream) : launch<D, R, true, false>(a, stream);
  return masked ? launch<D, R, false, true>(a, stream) : launch<D, R, false, false>(a, stream);
}

// ---------------------------------------------------------------------------------------------------------
// TF32 tensor cores, for set_gemm_tf32(true): the products q k^T and p v as mma.sync m16n8k8 on operands rounded
// to TF32 (cvt.rna: 10-bit mantissa, as the program's GEMMs round theirs with the switch on), accumulated in
// float32; scale, mask and the online softmax exactly as above. A block of 4 warps takes 64 query rows, each warp
// 16 of them; thread (g, t) = (lane / 4, lane % 4) holds the scores and outputs of rows g and g + 8 of its warp at
// columns 2 t, 2 t + 1 of every 8-wide tile (the accumulator layout), so a row's maximum and sum take two shuffles.
// The probabilities go through shared memory to become A fragments. Row strides: q, K and p padded by 4 floats
// (fragment reads at 4 g + t hit 32 banks), V by 8 (reads at 8 t + g). Head dims: multiples of 8.
// ---------------------------------------------------------------------------------------------------------
template <int D>
struct Tf32Tiling {
  static constexpr int kRows = 64;
  static constexpr int kKeys = D > 64 ? 32 : 64;
  static constexpr int kLd = D + 4;
  static constexpr int kLdV = D + 8;
  static constexpr int kLdP = kKeys + 4;
  static constexpr size_t kBytes =
      (size_t(kRows) * kLd + size_t(2) * kKeys * (kLd + kLdV) + size_t(kRows) * kLdP) * 4;
};

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// c += a b over one 16 x 8 x 8 step (a: rows g, g + 8 at columns t, t + 4; b: column g at rows t, t + 4).
__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Rows g and g + 8 of a 16-row tile at columns k0 + t and k0 + t + 4, as TF32 A fragments.
__device__ __forceinline__ void load_a_tf32(uint32_t (&af)[4], const float* rows, int ld, int k0, int g, int t) {
  af[0] = to_tf32(rows[g * ld + k0 + t]);
  af[1] = to_tf32(rows[(g + 8) * ld + k0 + t]);
  af[2] = to_tf32(rows[g * ld + k0 + t + 4]);
  af[3] = to_tf32(rows[(g + 8) * ld + k0 + t + 4]);
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

template <int D, bool Vec, bool Masked>
__global__ void __launch_bounds__(kThreads) attention_tf32_kernel(AttentionArgs a) {
  using C = Tf32Tiling<D>;
  constexpr int kRows = C::kRows, kKeys = C::kKeys, ld = C::kLd, ldv = C::kLdV, ldp = C::kLdP;
  constexpr int NT = kKeys / 8, DT = D / 8;  // 8-wide tiles of a key tile and of the head dim
  extern __shared__ __align__(16) unsigned char smem_tf32[];
  float* qs = reinterpret_cast<float*>(smem_tf32);
  float* kv = qs + kRows * ld;  // tile t's K at kv + (t % 2) * kKeys * (ld + ldv), its V kKeys rows of ld after it
  float* ps = kv + 2 * kKeys * (ld + ldv);

  const int lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int r0 = (threadIdx.x / 32) * 16;  // the warp's first row in the block
  const int64_t b = blockIdx.x / a.heads, h = blockIdx.x % a.heads;
  const int64_t q0 = int64_t(gridDim.y - 1 - blockIdx.y) * kRows;  // the last rows' block first (causal)
  const float* q = static_cast<const float*>(a.q) + b * a.q_batch + h * a.q_head;
  const float* k = static_cast<const float*>(a.k) + b * a.k_batch + h * a.k_head;
  const float* v = static_cast<const float*>(a.v) + b * a.v_batch + h * a.v_head;
  const float* mask = Masked ? static_cast<const float*>(a.mask) + b * a.m_batch + h * a.m_head : nullptr;
  auto load_keys = [&](int64_t tile) {
    float* ks = kv + (tile % 2) * kKeys * (ld + ldv);
    load_rows<D, Vec, ld>(ks, k, a.k_seq, tile * kKeys, kKeys, a.seq_k);
    load_rows<D, Vec, ldv>(ks + kKeys * ld, v, a.v_seq, tile * kKeys, kKeys, a.seq_k);
    __pipeline_commit();
  };
  load_rows<D, Vec, ld>(qs, q, a.q_seq, q0, kRows, a.seq_q);
  load_keys(0);

  const int64_t block_keys = detail::key_limit(a, q0 + kRows - 1 < a.seq_q ? q0 + kRows - 1 : a.seq_q - 1);
  const int64_t tiles = block_keys > 0 ? (block_keys + kKeys - 1) / kKeys : 1;
  int64_t limit[2], mask_row[2];  // rows g and g + 8 of the warp
  float row_max[2], row_sum[2];   // row_sum: this lane's part (its columns), summed over the quad at the end
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int64_t row = q0 + r0 + g + 8 * i;
    limit[i] = detail::key_limit(a, row);
    mask_row[i] = (row < a.seq_q ? row : a.seq_q - 1) * a.m_row;
    row_max[i] = -INFINITY;
    row_sum[i] = 0.0f;
  }
  float o[DT][4];
#pragma unroll
  for (int n = 0; n < DT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      load_keys(t + 1);
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    const float* ks = kv + (t % 2) * kKeys * (ld + ldv);
    const float* vs = ks + kKeys * ld;

    float s[NT][4];
#pragma unroll
    for (int n = 0; n < NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kd = 0; kd < DT; ++kd) {
      uint32_t af[4];
      load_a_tf32(af, qs + r0 * ld, ld, kd * 8, g, t4);
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        const float* key = ks + (n * 8 + g) * ld + kd * 8 + t4;
        mma_tf32(s[n], af, to_tf32(key[0]), to_tf32(key[4]));
      }
    }

    const int64_t k0 = t * kKeys;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int n = 0; n < NT; ++n) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int64_t key = k0 + n * 8 + 2 * t4 + e;
          float x = __fmul_rn(s[n][2 * i + e], a.scale);
          if constexpr (Masked) {
            if (key < a.seq_k) x = __fadd_rn(x, mask[mask_row[i] + key * a.m_col]);
          }
          s[n][2 * i + e] = key < limit[i] ? x : -INFINITY;
          tile_max = fmaxf(tile_max, s[n][2 * i + e]);
        }
      }
      const float new_max = fmaxf(row_max[i], quad_max(tile_max));
      const float base = new_max == -INFINITY ? 0.0f : new_max;
      const float correction = expf(row_max[i] - base);
      row_max[i] = new_max;
      float sum = 0.0f;
      float* prow = ps + (r0 + g + 8 * i) * ldp + 2 * t4;
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        const float p0 = expf(s[n][2 * i] - base), p1 = expf(s[n][2 * i + 1] - base);
        *reinterpret_cast<float2*>(prow + n * 8) = make_float2(p0, p1);
        sum += p0 + p1;
      }
      row_sum[i] = row_sum[i] * correction + sum;
#pragma unroll
      for (int n = 0; n < DT; ++n) {
        o[n][2 * i] *= correction;
        o[n][2 * i + 1] *= correction;
      }
    }
    __syncwarp();  // the warp's 16 rows of probabilities come from its own lanes

#pragma unroll
    for (int kk = 0; kk < NT; ++kk) {
      uint32_t af[4];
      load_a_tf32(af, ps + r0 * ldp, ldp, kk * 8, g, t4);
#pragma unroll
      for (int n = 0; n < DT; ++n) {
        const float* col = vs + (kk * 8 + t4) * ldv + n * 8 + g;
        mma_tf32(o[n], af, to_tf32(col[0]), to_tf32(col[4 * ldv]));
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const float sum = quad_sum(row_sum[i]);
    const int64_t row = q0 + r0 + g + 8 * i;
    if (row >= a.seq_q) continue;
    float* out = static_cast<float*>(a.out) + b * a.o_batch + h * a.o_head + row * a.o_seq + 2 * t4;
    const bool vec = reinterpret_cast<uintptr_t>(out) % 8 == 0;
#pragma unroll
    for (int n = 0; n < DT; ++n) {
      const float x0 = o[n][2 * i] / sum, x1 = o[n][2 * i + 1] / sum;
      if (vec) {
        *reinterpret_cast<float2*>(out + n * 8) = make_float2(x0, x1);
      } else {
        out[n * 8] = x0, out[n * 8 + 1] = x1;
      }
    }
  }
}

template <int D, bool Vec, bool Masked>
inline cudaError_t launch_tf32(const AttentionArgs& a, cudaStream_t stream) {
  return detail::launch_kernel(attention_tf32_kernel<D, Vec, Masked>, grid_of(a, Tf32Tiling<D>::kRows),
                               Tf32Tiling<D>::kBytes, a, stream);
}

}  // namespace float32_detail

// out = softmax(scale * q k^T + mask) v for every (batch, head) over float32 q, k, v and out; D the head dim (a
// multiple of 4 up to 128); the mask (optional) float32. Returns the launch's error, or cudaErrorInvalidValue for sizes
// the grid cannot hold. seq_q, batch or heads 0: nothing to do.
// tf32: the class's set_gemm_tf32 switch; on, head dims that are multiples of 8 and more than 16 query rows run the
// TF32 tensor-core kernel (the GEMMs' precision), the rest the float32 one.
template <int D>
inline cudaError_t attention_float(const AttentionArgs& a, cudaStream_t stream, bool tf32 = false) {
  static_assert(D > 0 && D % 4 == 0 && D <= 128, "head dims: multiples of 4 up to 128");
  namespace f = float32_detail;
  bool nothing = false;
  if (cudaError_t e = detail::check_sizes(a, &nothing); e != cudaSuccess || nothing) return e;
  const bool vec = detail::rows_aligned16(a, 4);  // 16-byte copies where every row of q, k and v allows them
  if constexpr (D % 8 == 0) {
    if (tf32 && a.seq_q > 16) {
      const bool masked = a.mask != nullptr;
      if (vec) return masked ? f::launch_tf32<D, true, true>(a, stream) : f::launch_tf32<D, true, false>(a, stream);
      return masked ? f::launch_tf32<D, false, true>(a, stream) : f::launch_tf32<D, false, false>(a, stream);
    }
  }
  // 64-row blocks where they fill every multiprocessor at least once; else 16-row blocks, four times as many (and a
  // quarter of the rows computed in vain when decoding a few queries).
  int device = 0, processors = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) {
    return e;
  }
  const bool wide = a.seq_q > 16 && a.batch * a.heads * ((a.seq_q + 63) / 64) >= processors;
  return wide ? f::launch_rows<D, 4>(a, vec, stream) : f::launch_rows<D, 1>(a, vec, stream);
}

}  // namespace cuda_attention
}  // namespace kforge

#endif  // KFORGE_ATTENTION_F32_CUH_
