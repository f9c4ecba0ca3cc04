// kforge fused attention for --target cuda (header-only): out = softmax(scale * q k^T + mask) v over 16-bit q, k,
// v, in one kernel, FlashAttention's way: the scores never reach memory. The fusion pass (passes/fusion_attention.cpp)
// replaces the pattern Paddle's MultiHeadAttention exports (transposes of q, k and v to [B, H, S, D], a scale, the
// q k^T matmul, an optional additive mask, softmax over the last axis, the p v matmul and the transpose back) with
// one call of attention() below, which reads q, k and v where the projections wrote them and writes the output
// where the transpose would have: every operand is addressed by strides.
//
// One block of 4 warps takes 64 query rows of one (batch, head); it walks the keys in tiles of 64: the warp's 16
// x 64 scores come from tensor cores (WMMA, 16x16x16, float accumulation), then the online softmax (running row
// maximum and sum in float, exponentials as exp2 of pre-scaled values) turns them into 16-bit probabilities,
// which the tensor cores multiply by the V tile; each lane keeps half a row of the output in float registers,
// rescaled when a row's maximum grows, and divides by the row's sum once at the end. Differences from the
// unfused program: the probabilities are rounded to 16 bits before their sum divides them (the program rounds
// them after), and the scale applies to the float scores (the program multiplies q by it in 16 bits; exact for
// the powers of two 1 / sqrt(head_dim) of head_dim 64 or 16 ...). A row whose every key is masked to -inf
// gives NaN, as softmax does.
//
// Requirements (fusion_attention.cpp checks them): T __half or __nv_bfloat16; head_dim D 32, 64 or 128 (a
// template parameter); the head dim contiguous in q, k, v and out; mask (optional) float or T, any strides
// (0: broadcast). Sizes are int64. sm_80 or later (bf16 WMMA).
#ifndef KFORGE_ATTENTION_CUH_
#define KFORGE_ATTENTION_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>

#include "kforge_half.cuh"

namespace kforge {
namespace cuda_attention {

// Strides are in elements, per operand: batch, head and sequence position (the head dim is contiguous).
struct AttentionArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  const void* mask = nullptr;  // additive, float or T; nullptr: none
  int64_t batch = 0, heads = 0, seq_q = 0, seq_k = 0;
  int64_t q_batch = 0, q_head = 0, q_seq = 0;
  int64_t k_batch = 0, k_head = 0, k_seq = 0;
  int64_t v_batch = 0, v_head = 0, v_seq = 0;
  int64_t o_batch = 0, o_head = 0, o_seq = 0;
  int64_t m_batch = 0, m_head = 0, m_row = 0, m_col = 0;  // the mask's strides over [batch, head, query, key]
  float scale = 1.0f;
};

namespace detail {

constexpr int kRows = 64;     // query rows per block
constexpr int kKeys = 64;     // keys per tile
constexpr int kWarps = 4;     // 16 query rows each
constexpr int kThreads = kWarps * 32;

template <int D>
struct Layout {
  static constexpr int kLd = D + 8;                            // 16-bit tiles: rows padded by 16 bytes
  static constexpr int kScoreLd = (D > kKeys ? D : kKeys) + 4;  // float scores / products per warp
  static constexpr int kProbLd = kKeys + 8;                     // 16-bit probabilities per warp
  static constexpr size_t kBytes = size_t(kRows + 2 * kKeys) * kLd * 2 + size_t(kWarps) * 16 * kScoreLd * 4 +
                                   size_t(kWarps) * 16 * kProbLd * 2;
};

// Rows [row0, row0 + count) of a [rows x D] operand tile into shared memory (ld kLd), zero beyond `limit`;
// 16 bytes per step when `vec` (every row start 16-byte aligned), else one element per step.
template <typename T, int D, bool Vec>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t stride, int64_t row0, int count, int64_t limit) {
  constexpr int kLd = Layout<D>::kLd;
  if constexpr (Vec) {
    constexpr int kChunks = D / 8;
    for (int i = threadIdx.x; i < count * kChunks; i += kThreads) {
      const int r = i / kChunks, c = (i % kChunks) * 8;
      uint4 value = make_uint4(0, 0, 0, 0);
      if (row0 + r < limit) value = *reinterpret_cast<const uint4*>(src + (row0 + r) * stride + c);
      *reinterpret_cast<uint4*>(dst + r * kLd + c) = value;
    }
  } else {
    for (int i = threadIdx.x; i < count * D; i += kThreads) {
      const int r = i / D, c = i % D;
      dst[r * kLd + c] = row0 + r < limit ? src[(row0 + r) * stride + c] : cuda::from_float<T>(0.0f);
    }
  }
}

template <typename T, int D, typename M, bool Vec>
__global__ void __launch_bounds__(kThreads) attention_kernel(AttentionArgs a) {
  using namespace nvcuda;
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* ks = qs + kRows * L::kLd;
  T* vs = ks + kKeys * L::kLd;
  float* scores = reinterpret_cast<float*>(vs + kKeys * L::kLd);
  T* probs = reinterpret_cast<T*>(scores + kWarps * 16 * L::kScoreLd);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t b = blockIdx.x / a.heads, h = blockIdx.x % a.heads;
  const int64_t q0 = int64_t(blockIdx.y) * kRows;
  const T* q = static_cast<const T*>(a.q) + b * a.q_batch + h * a.q_head;
  const T* k = static_cast<const T*>(a.k) + b * a.k_batch + h * a.k_head;
  const T* v = static_cast<const T*>(a.v) + b * a.v_batch + h * a.v_head;
  load_tile<T, D, Vec>(qs, q, a.q_seq, q0, kRows, a.seq_q);

  float* my_scores = scores + warp * 16 * L::kScoreLd;
  T* my_probs = probs + warp * 16 * L::kProbLd;
  // Lane 2r + half owns row r of the warp's 16: score columns [32 half, 32 half + 32) of each tile and output
  // columns [D/2 half, D/2 half + D/2).
  const int row = lane / 2, half = lane % 2;
  const int64_t query = q0 + warp * 16 + row;
  constexpr float kLog2e = 1.4426950408889634f;
  const float scale2 = a.scale * kLog2e;
  const M* mask = static_cast<const M*>(a.mask);
  const M* mask_row = mask == nullptr || query >= a.seq_q ? nullptr : mask + b * a.m_batch + h * a.m_head + query * a.m_row;
  float row_max = -INFINITY, row_sum = 0.0f;  // in log2 units
  float acc[D / 2];
#pragma unroll
  for (int d = 0; d < D / 2; ++d) acc[d] = 0.0f;

  for (int64_t k0 = 0; k0 < a.seq_k; k0 += kKeys) {
    __syncthreads();  // the previous tile's K and V are consumed
    load_tile<T, D, Vec>(ks, k, a.k_seq, k0, kKeys, a.seq_k);
    load_tile<T, D, Vec>(vs, v, a.v_seq, k0, kKeys, a.seq_k);
    __syncthreads();
    // scores[16 x 64] = q rows x k^T
#pragma unroll
    for (int n = 0; n < kKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
      wmma::fill_fragment(s, 0.0f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fq;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fk;  // k^T: element (d, j) is k[j][d]
        wmma::load_matrix_sync(fq, qs + (warp * 16) * L::kLd + kk * 16, L::kLd);
        wmma::load_matrix_sync(fk, ks + (n * 16) * L::kLd + kk * 16, L::kLd);
        wmma::mma_sync(s, fq, fk, s);
      }
      wmma::store_matrix_sync(my_scores + n * 16, s, L::kScoreLd, wmma::mem_row_major);
    }
    __syncwarp();
    // The online softmax of this tile's half row.
    float x[32];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int64_t key = k0 + half * 32 + j;
      float value = my_scores[row * L::kScoreLd + half * 32 + j] * scale2;
      if (mask_row != nullptr && key < a.seq_k) value += cuda::to_float(mask_row[key * a.m_col]) * kLog2e;
      x[j] = key < a.seq_k ? value : -INFINITY;
      tile_max = fmaxf(tile_max, x[j]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float new_max = fmaxf(row_max, tile_max);
    const float base = new_max == -INFINITY ? 0.0f : new_max;  // all -inf so far: every p is 0
    const float correction = exp2f(row_max - base);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const float p = exp2f(x[j] - base);
      sum += p;
      my_probs[row * L::kProbLd + half * 32 + j] = cuda::from_float<T>(p);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    row_sum = row_sum * correction + sum;
    row_max = new_max;
#pragma unroll
    for (int d = 0; d < D / 2; ++d) acc[d] *= correction;
    __syncwarp();
    // products[16 x D] = probabilities x v (into the scores' space, read back by the lanes)
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
      wmma::fill_fragment(o, 0.0f);
#pragma unroll
      for (int kk = 0; kk < kKeys / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fp;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fv;
        wmma::load_matrix_sync(fp, my_probs + kk * 16, L::kProbLd);
        wmma::load_matrix_sync(fv, vs + (kk * 16) * L::kLd + n * 16, L::kLd);
        wmma::mma_sync(o, fp, fv, o);
      }
      wmma::store_matrix_sync(my_scores + n * 16, o, L::kScoreLd, wmma::mem_row_major);
    }
    __syncwarp();
#pragma unroll
    for (int d = 0; d < D / 2; ++d) acc[d] += my_scores[row * L::kScoreLd + half * (D / 2) + d];
    __syncwarp();  // the next tile's scores overwrite this space
  }
  if (query >= a.seq_q) return;
  T* out = static_cast<T*>(a.out) + b * a.o_batch + h * a.o_head + query * a.o_seq + half * (D / 2);
  const float inverse = 1.0f / row_sum;  // 0 (every key masked): inf * 0 = NaN, as softmax gives
#pragma unroll
  for (int d = 0; d < D / 2; ++d) out[d] = cuda::from_float<T>(acc[d] * inverse);
}

template <typename T, int D, typename M>
inline cudaError_t launch(const AttentionArgs& a, bool vec, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_q + kRows - 1) / kRows));
  constexpr size_t kBytes = Layout<D>::kBytes;
  auto kernel = vec ? attention_kernel<T, D, M, true> : attention_kernel<T, D, M, false>;
  // Above 48 KiB of shared memory a kernel must opt in (a host-side attribute: legal inside a graph capture).
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kBytes));
      e != cudaSuccess)
    return e;
  kernel<<<grid, kThreads, kBytes, stream>>>(a);
  return cudaGetLastError();
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace detail

// out = softmax(scale * q k^T + mask) v for every (batch, head); T __half or __nv_bfloat16, D the head dim (32,
// 64 or 128), M the mask's element type (float or T; ignored without a mask). Returns the launch's error, or
// cudaErrorInvalidValue for sizes the grid cannot hold. seq_q, seq_k, batch or heads 0: nothing to do.
template <typename T, int D, typename M = T>
inline cudaError_t attention(const AttentionArgs& a, cudaStream_t stream) {
  static_assert(D == 32 || D == 64 || D == 128, "head dims 32, 64 and 128");
  if (a.batch < 0 || a.heads < 0 || a.seq_q < 0 || a.seq_k < 0) return cudaErrorInvalidValue;
  if (a.batch == 0 || a.heads == 0 || a.seq_q == 0) return cudaSuccess;
  if (a.batch * a.heads > 0x7fffffffLL || (a.seq_q + detail::kRows - 1) / detail::kRows > 65535) {
    return cudaErrorInvalidValue;
  }
  // 16-byte loads where every row of q, k and v starts 16-byte aligned.
  bool vec = detail::aligned16(a.q) && detail::aligned16(a.k) && detail::aligned16(a.v);
  for (int64_t s : {a.q_batch, a.q_head, a.q_seq, a.k_batch, a.k_head, a.k_seq, a.v_batch, a.v_head, a.v_seq}) {
    vec = vec && s % 8 == 0;
  }
  return detail::launch<T, D, M>(a, vec, stream);
}

}  // namespace cuda_attention
}  // namespace kforge

#endif  // KFORGE_ATTENTION_CUH_
