// kforge fused attention for --target cuda (header-only): out = softmax(scale * q k^T + mask) v over 16-bit q, k,
// v, in one kernel, FlashAttention's way: the scores never reach memory. The fusion pass (passes/fusion_attention.cpp)
// replaces the pattern Paddle's MultiHeadAttention exports (transposes of q, k and v to [B, H, S, D], a scale, the
// q k^T matmul, an optional additive mask, softmax over the last axis, the p v matmul and the transpose back) with
// one call of attention() below, which reads q, k and v where the projections wrote them and writes the output
// where the transpose would have: every operand is addressed by strides.
//
// Decoding (at most 16 query rows) takes attention_decode_kernel instead, whose warps split the keys (below).
// One block of 4 warps takes 64 query rows of one (batch, head); it walks the keys in tiles of 64 (the next tile
// copied in by cp.async while the warps work on this one). Each warp's 16 x 64 scores come from tensor cores
// (mma.sync m16n8k16, float accumulation) and stay in registers: the online softmax (running row maximum and sum
// in float, exponentials as exp2 of pre-scaled values) works on the accumulators, whose layout is that of the A
// operand of the next product, so the 16-bit probabilities multiply the V tile without touching shared memory;
// the output accumulates in float registers, rescaled when a row's maximum grows, and is divided by the row's
// sum once at the end (FlashAttention-2's scheme). Differences from the
// unfused program: the probabilities are rounded to 16 bits before their sum divides them (the program rounds
// them after), and the scale applies to the float scores (the program multiplies q by it in 16 bits; exact for
// the powers of two 1 / sqrt(head_dim) of head_dim 64 or 16 ...). A row whose every key is masked to -inf
// gives NaN, as softmax does.
//
// Requirements (fusion_attention.cpp checks them): T __half or __nv_bfloat16; head_dim D 32, 64 or 128 (a
// template parameter); the head dim contiguous in q, k, v and out; mask (optional) float or T, any strides
// (0: broadcast). Sizes are int64. sm_80 or later (mma.sync with bf16, ldmatrix, cp.async).
#ifndef KFORGE_ATTENTION_CUH_
#define KFORGE_ATTENTION_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

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
  // Causal: key j is masked for query i where j - i >= diagonal (the triu of -inf a decoder adds), applied by
  // position; the key tiles a block (or a warp) would mask whole are skipped.
  bool causal = false;
  int64_t diagonal = 1;
};

namespace detail {

constexpr int kRows = 64;     // query rows per block
constexpr int kKeys = 64;     // keys per tile
constexpr int kWarps = 4;     // 16 query rows each
constexpr int kThreads = kWarps * 32;

template <int D>
struct Layout {
  static constexpr int kLd = D + 8;  // rows padded by 16 bytes: ldmatrix's 8 row addresses hit 8 different bank groups
  // q, then two K and two V tiles (double-buffered).
  static constexpr size_t kBytes = size_t(kRows + 4 * kKeys) * kLd * 2;
};

// Starts copying rows [row0, row0 + count) of a [rows x D] operand into a shared tile (ld kLd), zeros beyond
// `limit`, by the `threads` threads numbered from 0 to threads - 1 (`tid`: this one): 16 bytes per step,
// asynchronously (cp.async) when `Vec` (every row start 16-byte aligned), else one element per step, synchronously.
// The caller commits and waits (__pipeline_commit / __pipeline_wait_prior).
template <typename T, int D, bool Vec>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t stride, int64_t row0, int count, int64_t limit,
                                          int tid = threadIdx.x, int threads = kThreads) {
  constexpr int kLd = Layout<D>::kLd;
  if constexpr (Vec) {
    constexpr int kChunks = D / 8;
    for (int i = tid; i < count * kChunks; i += threads) {
      const int r = i / kChunks, c = (i % kChunks) * 8;
      if (row0 + r < limit) {
        __pipeline_memcpy_async(dst + r * kLd + c, src + (row0 + r) * stride + c, 16);
      } else {
        *reinterpret_cast<uint4*>(dst + r * kLd + c) = make_uint4(0, 0, 0, 0);
      }
    }
  } else {
    for (int i = tid; i < count * D; i += threads) {
      const int r = i / D, c = i % D;
      dst[r * kLd + c] = row0 + r < limit ? src[(row0 + r) * stride + c] : cuda::from_float<T>(0.0f);
    }
  }
}

// mma.sync m16n8k16 (row.col, float accumulation) and ldmatrix: the fragment layouts of PTX's ISA guide. Lane l is
// in group g = l / 4 at place c = l % 4. A (16 x 16): a0 row g, k 2c and 2c+1; a1 row g+8; a2 and a3 the same at
// k + 8. B (16 x 8): b0 k 2c and 2c+1 of column g; b1 at k + 8. C (16 x 8): c0, c1 row g, columns 2c, 2c+1; c2, c3
// row g+8.
template <typename T>
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Four 8 x 8 matrices of 16-bit elements from shared memory, matrix i's rows addressed by lanes 8i .. 8i + 7; with
// `Trans` each is transposed (lane l gets rows 2c, 2c+1 of column g).
template <bool Trans>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(row));
  if constexpr (Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
}

// Two floats rounded to T, packed as one 32-bit register (the lower one first).
template <typename T>
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// One warp's running state over its 16 query rows: lane (g, c) holds rows g and g + 8, and of each 8-wide slice of
// the output columns 2c and 2c + 1; the maxima and sums are in log2 units, the output not yet divided by the sum.
template <int D>
struct WarpState {
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};
  float o[D / 8][4];
  uint32_t qf[D / 16][4];  // the warp's q rows as A fragments

  __device__ WarpState() {
#pragma unroll
    for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  }
};

// The warp's 16 query rows against one tile of `Keys` keys (ks, vs: its K and V rows in shared memory, the first
// key k0; a key at or past limit[r] -- the sequence's end, or the causal bound -- is masked for row r): the scores from tensor cores, the online softmax on the accumulators (whose layout is that of the A
// operand of the next product, so the 16-bit probabilities multiply V without touching shared memory) and o += p v.
template <typename T, int D, int Keys, typename M>
__device__ __forceinline__ void attend_tile(WarpState<D>& w, const T* ks, const T* vs, int64_t k0,
                                            const int64_t (&limit)[2], const M* const (&mask_rows)[2], int64_t m_col,
                                            float scale2) {
  constexpr int kLd = Layout<D>::kLd;
  constexpr float kLog2e = 1.4426950408889634f;
  const int lane = threadIdx.x % 32, c = lane % 4;
  // scores[16 x Keys] = q rows x k^T, 8 keys per slice: B's column j (a key) is a row of the K tile.
  float s[Keys / 8][4];
#pragma unroll
  for (int n = 0; n < Keys / 8; ++n) {
    s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 32; ++kk) {
      uint32_t kb[4];
      ldmatrix_x4<false>(kb, ks + (n * 8 + lane % 8) * kLd + kk * 32 + (lane / 8) * 8);
      mma<T>(s[n], w.qf[2 * kk], kb[0], kb[1]);
      mma<T>(s[n], w.qf[2 * kk + 1], kb[2], kb[3]);
    }
  }
  // The online softmax of rows g and g + 8 (the four lanes of a group share them).
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int n = 0; n < Keys / 8; ++n) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = i / 2;
      const int64_t key = k0 + n * 8 + 2 * c + (i % 2);
      float x = s[n][i] * scale2;
      if (mask_rows[r] != nullptr && key < limit[r]) x += cuda::to_float(mask_rows[r][key * m_col]) * kLog2e;
      s[n][i] = key < limit[r] ? x : -INFINITY;
      tile_max[r] = fmaxf(tile_max[r], s[n][i]);
    }
  }
  float correction[2], base[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    const float new_max = fmaxf(w.row_max[r], tile_max[r]);
    base[r] = new_max == -INFINITY ? 0.0f : new_max;  // all -inf so far: every p is 0
    correction[r] = exp2f(w.row_max[r] - base[r]);
    w.row_max[r] = new_max;
  }
  float sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int n = 0; n < Keys / 8; ++n) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      s[n][i] = exp2f(s[n][i] - base[i / 2]);
      sum[i / 2] += s[n][i];
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], 1);
    sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], 2);
    w.row_sum[r] = w.row_sum[r] * correction[r] + sum[r];
  }
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    w.o[n][0] *= correction[0];
    w.o[n][1] *= correction[0];
    w.o[n][2] *= correction[1];
    w.o[n][3] *= correction[1];
  }
  // o += p v: the scores' C fragments are the A fragments of p (16 keys = two 8-key slices); V's rows are keys.
#pragma unroll
  for (int kk = 0; kk < Keys / 16; ++kk) {
    const uint32_t pa[4] = {pack<T>(s[2 * kk][0], s[2 * kk][1]), pack<T>(s[2 * kk][2], s[2 * kk][3]),
                            pack<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      uint32_t vb[4];
      ldmatrix_x4<true>(vb, vs + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * kLd + n * 16 + (lane / 16) * 8);
      mma<T>(w.o[2 * n], pa, vb[0], vb[1]);
      mma<T>(w.o[2 * n + 1], pa, vb[2], vb[3]);
    }
  }
}

// The mask rows of query rows `rows` (nullptr: no mask, or a row past the queries).
template <typename M>
__device__ __forceinline__ void mask_rows_of(const AttentionArgs& a, int64_t b, int64_t h, const int64_t (&rows)[2],
                                             const M* (&out)[2]) {
  const M* mask = static_cast<const M*>(a.mask);
  for (int r = 0; r < 2; ++r) {
    out[r] = mask == nullptr || rows[r] >= a.seq_q ? nullptr : mask + b * a.m_batch + h * a.m_head + rows[r] * a.m_row;
  }
}

// The keys row `row` may see: [0, limit) (every key, or those a causal mask leaves).
__device__ __forceinline__ int64_t key_limit(const AttentionArgs& a, int64_t row) {
  if (!a.causal) return a.seq_k;
  const int64_t bound = row + a.diagonal;
  return bound < 0 ? 0 : bound < a.seq_k ? bound : a.seq_k;
}

// The warp's q rows (16 from `first`, in shared memory) as A fragments.
template <int D, typename T>
__device__ __forceinline__ void load_q_fragments(WarpState<D>& w, const T* qs) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    ldmatrix_x4<false>(w.qf[kk], qs + (lane % 16) * Layout<D>::kLd + kk * 16 + (lane / 16) * 8);
  }
}

template <typename T, int D, typename M, bool Vec>
__global__ void __launch_bounds__(kThreads) attention_kernel(AttentionArgs a) {
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* kv = qs + kRows * L::kLd;  // K tile t at kv + (t % 2) * 2 * kKeys * kLd, its V tile kKeys rows after it

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const int64_t b = blockIdx.x / a.heads, h = blockIdx.x % a.heads;
  const int64_t q0 = int64_t(blockIdx.y) * kRows;
  const T* q = static_cast<const T*>(a.q) + b * a.q_batch + h * a.q_head;
  const T* k = static_cast<const T*>(a.k) + b * a.k_batch + h * a.k_head;
  const T* v = static_cast<const T*>(a.v) + b * a.v_batch + h * a.v_head;
  auto load_keys = [&](int64_t tile) {
    T* ks = kv + (tile % 2) * 2 * kKeys * L::kLd;
    load_tile<T, D, Vec>(ks, k, a.k_seq, tile * kKeys, kKeys, a.seq_k);
    load_tile<T, D, Vec>(ks + kKeys * L::kLd, v, a.v_seq, tile * kKeys, kKeys, a.seq_k);
    __pipeline_commit();
  };
  load_tile<T, D, Vec>(qs, q, a.q_seq, q0, kRows, a.seq_q);
  load_keys(0);

  const int64_t rows[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};
  const int64_t limit[2] = {key_limit(a, rows[0]), key_limit(a, rows[1])};
  const M* mask_rows[2];
  mask_rows_of(a, b, h, rows, mask_rows);
  const float scale2 = a.scale * 1.4426950408889634f;
  WarpState<D> w;
  // Causal: the tiles past the block's last row's bound are masked whole (at least one runs: a row that sees no
  // key gives NaN, as softmax does); a warp skips the tiles past its own last row's bound.
  const int64_t block_keys = key_limit(a, q0 + kRows - 1 < a.seq_q ? q0 + kRows - 1 : a.seq_q - 1);
  const int64_t warp_keys = key_limit(a, q0 + warp * 16 + 15);
  const int64_t tiles = block_keys > 0 ? (block_keys + kKeys - 1) / kKeys : 1;
  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      load_keys(t + 1);  // overlaps this tile's work
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // tile t (and q) in shared memory for every warp
    if (t == 0) load_q_fragments<D>(w, qs + warp * 16 * L::kLd);
    const T* ks = kv + (t % 2) * 2 * kKeys * L::kLd;
    if (t == 0 || t * kKeys < warp_keys) {
      attend_tile<T, D, kKeys, M>(w, ks, ks + kKeys * L::kLd, t * kKeys, limit, mask_rows, a.m_col, scale2);
    }
    __syncthreads();  // every warp is done with tile t's buffer before the next iteration loads tile t + 2 there
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (rows[r] >= a.seq_q) continue;
    T* out = static_cast<T*>(a.out) + b * a.o_batch + h * a.o_head + rows[r] * a.o_seq;
    const float inverse = 1.0f / w.row_sum[r];  // 0 (every key masked): inf * 0 = NaN, as softmax gives
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      out[n * 8 + 2 * c] = cuda::from_float<T>(w.o[n][2 * r] * inverse);
      out[n * 8 + 2 * c + 1] = cuda::from_float<T>(w.o[n][2 * r + 1] * inverse);
    }
  }
}

// Few query rows (decoding: one new token per sequence, seq_q <= 16): one block per 16 rows of a (batch, head),
// whose 4 warps split the keys -- warp w takes tiles w, w + 4, ... with its own double-buffered copies -- so that a
// block keeps 4 tiles in flight, not one, where there are too few blocks to fill the GPU otherwise (FlashDecoding's
// idea within a block; no workspace). The warps' states are combined through shared memory at the end:
// max m = max_w m_w, sum = sum_w l_w 2^(m_w - m), out = sum_w o_w 2^(m_w - m) / sum.
template <int D>
struct DecodeLayout {
  static constexpr int kKeys = D == 128 ? 32 : 64;  // keys per warp tile: 4 warps x 2 stages x (K, V) fit
  static constexpr int kLd = Layout<D>::kLd;
  static constexpr size_t kTileElems = size_t(kKeys) * kLd;
  // 16 q rows, then per warp two stages of a K and a V tile; the combine reuses the front as floats.
  static constexpr size_t kBytes = (size_t(16) * kLd + size_t(kWarps) * 4 * kTileElems) * 2;
  static_assert(size_t(kWarps) * 16 * (D + 2) * sizeof(float) <= kBytes, "the combine fits");
};

template <typename T, int D, typename M, bool Vec>
__global__ void __launch_bounds__(kThreads) attention_decode_kernel(AttentionArgs a) {
  using L = DecodeLayout<D>;
  constexpr int kKeys = L::kKeys;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  T* mine = qs + 16 * L::kLd + size_t(warp) * 4 * L::kTileElems;  // stage s: K at mine + 2s tiles, V after it
  const int64_t b = blockIdx.x / a.heads, h = blockIdx.x % a.heads;
  const int64_t q0 = int64_t(blockIdx.y) * 16;
  const T* q = static_cast<const T*>(a.q) + b * a.q_batch + h * a.q_head;
  const T* k = static_cast<const T*>(a.k) + b * a.k_batch + h * a.k_head;
  const T* v = static_cast<const T*>(a.v) + b * a.v_batch + h * a.v_head;
  // Causal: the tiles past the last row's bound are masked whole (at least one is computed, as above).
  const int64_t block_keys = key_limit(a, q0 + 15 < a.seq_q ? q0 + 15 : a.seq_q - 1);
  const int64_t tiles = block_keys > 0 ? (block_keys + kKeys - 1) / kKeys : 1;
  auto load_keys = [&](int64_t tile, int stage) {  // by this warp alone
    T* ks = mine + size_t(2 * stage) * L::kTileElems;
    load_tile<T, D, Vec>(ks, k, a.k_seq, tile * kKeys, kKeys, a.seq_k, lane, 32);
    load_tile<T, D, Vec>(ks + L::kTileElems, v, a.v_seq, tile * kKeys, kKeys, a.seq_k, lane, 32);
    __pipeline_commit();
  };
  load_tile<T, D, Vec>(qs, q, a.q_seq, q0, 16, a.seq_q);
  __pipeline_commit();
  if (warp < tiles) load_keys(warp, 0);
  __pipeline_wait_prior(warp < tiles ? 1 : 0);  // q
  __syncthreads();
  WarpState<D> w;
  load_q_fragments<D>(w, qs);

  const int64_t rows[2] = {q0 + g, q0 + g + 8};
  const int64_t limit[2] = {key_limit(a, rows[0]), key_limit(a, rows[1])};
  const M* mask_rows[2];
  mask_rows_of(a, b, h, rows, mask_rows);
  const float scale2 = a.scale * 1.4426950408889634f;
  for (int64_t t = warp, i = 0; t < tiles; t += kWarps, ++i) {
    if (t + kWarps < tiles) {
      load_keys(t + kWarps, int((i + 1) % 2));
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncwarp();  // the tile every lane copied, visible to the warp
    const T* ks = mine + size_t(2 * (i % 2)) * L::kTileElems;
    attend_tile<T, D, kKeys, M>(w, ks, ks + L::kTileElems, t * kKeys, limit, mask_rows, a.m_col, scale2);
    __syncwarp();  // done with this stage before it is loaded again
  }
  __syncthreads();  // every warp done with its tiles: the front of shared memory becomes the combine's
  float* po = reinterpret_cast<float*>(smem);          // [warp][row][D]: o, not divided
  float* pm = po + size_t(kWarps) * 16 * D;            // [warp][row]: max
  float* pl = pm + kWarps * 16;                         // [warp][row]: sum
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = g + 8 * r;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      po[(warp * 16 + row) * D + n * 8 + 2 * c] = w.o[n][2 * r];
      po[(warp * 16 + row) * D + n * 8 + 2 * c + 1] = w.o[n][2 * r + 1];
    }
    if (c == 0) {
      pm[warp * 16 + row] = w.row_max[r];
      pl[warp * 16 + row] = w.row_sum[r];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 16 * D; i += kThreads) {
    const int row = i / D, col = i % D;
    if (q0 + row >= a.seq_q) continue;
    float m = -INFINITY;
#pragma unroll
    for (int x = 0; x < kWarps; ++x) m = fmaxf(m, pm[x * 16 + row]);
    const float base = m == -INFINITY ? 0.0f : m;
    float sum = 0.0f, o = 0.0f;
#pragma unroll
    for (int x = 0; x < kWarps; ++x) {
      const float f = exp2f(pm[x * 16 + row] - base);
      sum += pl[x * 16 + row] * f;
      o += po[(x * 16 + row) * D + col] * f;
    }
    T* out = static_cast<T*>(a.out) + b * a.o_batch + h * a.o_head + (q0 + row) * a.o_seq;
    out[col] = cuda::from_float<T>(o * (1.0f / sum));  // every key masked: 0 * inf = NaN, as softmax gives
  }
}

template <typename T, int D, typename M>
inline cudaError_t launch(const AttentionArgs& a, bool vec, cudaStream_t stream) {
  const bool decode = a.seq_q <= 16;
  const int64_t rows = decode ? 16 : kRows;
  const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_q + rows - 1) / rows));
  const size_t bytes = decode ? DecodeLayout<D>::kBytes : Layout<D>::kBytes;
  auto kernel = decode ? (vec ? attention_decode_kernel<T, D, M, true> : attention_decode_kernel<T, D, M, false>)
                       : (vec ? attention_kernel<T, D, M, true> : attention_kernel<T, D, M, false>);
  // Above 48 KiB of shared memory a kernel must opt in (a host-side attribute: legal inside a graph capture).
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
      e != cudaSuccess)
    return e;
  kernel<<<grid, kThreads, bytes, stream>>>(a);
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
