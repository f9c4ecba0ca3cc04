// kforge fused attention for --target cuda (header-only): out = softmax(scale * q k^T + mask) v over 16-bit q, k,
// v, in one kernel, FlashAttention's way: the scores never reach memory. The fusion pass (passes/fusion_attention.cpp)
// replaces the pattern Paddle's MultiHeadAttention exports (transposes of q, k and v to [B, H, S, D], a scale, the
// q k^T matmul, an optional additive mask, softmax over the last axis, the p v matmul and the transpose back) with
// one call of attention() below, which reads q, k and v where the projections wrote them and writes the output
// where the transpose would have: every operand is addressed by strides.
//
// Prefill: a block of 4 warps takes 128 query rows of one (batch, head), 32 per warp as two m16 tiles, so that every
// K and V fragment ldmatrix reads feeds two tensor-core products (64 rows, 16 per warp, where 128-row blocks would
// leave multiprocessors idle: launch() picks by the grid's size). It walks the keys in tiles of 64, the next tile
// copied in by cp.async while the warps work on this one. The scores come from tensor cores (mma.sync m16n8k16,
// float accumulation) and stay in registers: the online softmax (running row maximum and per-lane sums in float,
// exponentials as ex2 of pre-scaled values) works on the accumulators, whose layout is that of the A operand of the
// next product, so the 16-bit probabilities multiply the V tile without touching shared memory; the output
// accumulates in float registers, rescaled when a row's maximum grows, and is divided by the row's sum once at the
// end (FlashAttention-2's scheme; the building blocks are in kforge_attention_tile.cuh). Under a causal mask the
// last row blocks start first (they have the most keys), the tiles past a block's bound are skipped and only the
// diagonal's tiles are masked by position. An additive mask gets its own kernel by form: one row for every query
// (padding) is staged in shared memory a tile ahead; a row per query is prefetched into registers a tile ahead
// (64-row blocks). Decoding (at most 16 query rows) takes attention_decode_kernel instead, whose warps split the
// keys (below).
//
// Differences from the unfused program: the probabilities are rounded to 16 bits before their sum divides them (the
// program rounds them after), and the scale applies to the float scores (the program multiplies q by it in 16 bits;
// exact for the powers of two 1 / sqrt(head_dim) of head_dim 64 or 16 ...). A row whose every key is masked to -inf
// gives NaN, as softmax does. Measured against the single-warp-tile version and cuDNN: BENCHMARKS.md.
//
// Requirements (fusion_attention.cpp checks them): T __half or __nv_bfloat16; head_dim D 32, 64 or 128 (a
// template parameter); the head dim contiguous in q, k, v and out; mask (optional) float or T, any strides
// (0: broadcast). Sizes are int64. sm_80 or later (mma.sync with bf16, ldmatrix, cp.async).
#ifndef KFORGE_ATTENTION_CUH_
#define KFORGE_ATTENTION_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kforge_attention_tile.cuh"

namespace kforge {
namespace cuda_attention {
namespace detail {

// The prefill kernel's blocks: 4 warps of MT x 16 query rows each, key tiles of kKeys. Two m16 tiles per warp (MT 2)
// let every K and V fragment that ldmatrix reads feed two products: one per 16 rows left the kernel bound by shared
// memory's bandwidth (one 512-byte ldmatrix per two mma); launch() takes them where the grid still fills the GPU.
// q stays in registers as A fragments where they fit; at head dim 128 with MT 2 they are read from shared memory per
// tile, as FlashAttention-2 does.
template <int D, int MT>
struct Tiling {
  static constexpr int kRows = kWarps * 16 * MT;
  static constexpr int kKeys = 64;
  static constexpr bool kQInRegisters = MT == 1 || D <= 64;
  // q, two K and two V tiles (double-buffered), then two tiles' worth of a mask row shared by every query (float).
  static constexpr size_t kBytes = size_t(kRows + 4 * kKeys) * kLd<D> * 2 + 2 * kKeys * sizeof(float);
};

// The additive mask's forms, each its own kernel: none (or a causal bound alone), one row for every query, a row
// per query.
enum class MaskKind { kNone, kSharedRow, kPerRow };

template <typename T, int D, typename M, bool Vec, int MT, MaskKind Kind>
__global__ void __launch_bounds__(kThreads) attention_kernel(AttentionArgs a) {
  using C = Tiling<D, MT>;
  constexpr int kRows = C::kRows, kKeys = C::kKeys, ld = kLd<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* kv = qs + kRows * ld;  // K tile t at kv + (t % 2) * 2 * kKeys * ld, its V tile kKeys rows after it
  float* mask_tiles = reinterpret_cast<float*>(kv + 4 * kKeys * ld);  // tile t's shared mask row at (t % 2) * kKeys

  const int warp = threadIdx.x / 32;
  const int64_t b = blockIdx.x / a.heads, h = blockIdx.x % a.heads;
  // The last rows' block first: under a causal mask it has the most keys, and the short blocks fill the tail.
  const int64_t q0 = int64_t(gridDim.y - 1 - blockIdx.y) * kRows;
  const T* q = static_cast<const T*>(a.q) + b * a.q_batch + h * a.q_head;
  const T* k = static_cast<const T*>(a.k) + b * a.k_batch + h * a.k_head;
  const T* v = static_cast<const T*>(a.v) + b * a.v_batch + h * a.v_head;
  auto load_keys = [&](int64_t tile) {
    T* ks = kv + (tile % 2) * 2 * kKeys * ld;
    load_tile<T, D, Vec>(ks, k, a.k_seq, tile * kKeys, kKeys, a.seq_k);
    load_tile<T, D, Vec>(ks + kKeys * ld, v, a.v_seq, tile * kKeys, kKeys, a.seq_k);
    __pipeline_commit();
  };
  load_tile<T, D, Vec>(qs, q, a.q_seq, q0, kRows, a.seq_q);
  load_keys(0);

  const int64_t row0 = q0 + warp * 16 * MT, first_row = row0 + threadIdx.x % 32 / 4;
  const T* warp_qs = qs + warp * 16 * MT * ld;
  const float scale2 = a.scale * kLog2e;
  WarpState<D, MT, C::kQInRegisters> w;
  // Causal: the tiles past the block's last row's bound are masked whole (at least one runs: a row that sees no
  // key gives NaN, as softmax does); a warp skips the tiles past its own last row's bound, and masks by position
  // only those past its first row's.
  const int64_t block_keys = key_limit(a, q0 + kRows - 1 < a.seq_q ? q0 + kRows - 1 : a.seq_q - 1);
  const int64_t warp_keys = key_limit(a, row0 + 16 * MT - 1), warp_fewest = key_limit(a, row0);
  const int64_t tiles = block_keys > 0 ? (block_keys + kKeys - 1) / kKeys : 1;
  const MaskSource<M> source = mask_source<M>(a, b, h);
  std::conditional_t<Kind == MaskKind::kPerRow, RowMask<M, MT, kKeys / 8>, NoMask> row_mask;
  if constexpr (Kind == MaskKind::kPerRow) {
    row_mask.source = source;
    row_mask.first_row = first_row;
    row_mask.fetch(0);
  }
  if constexpr (Kind == MaskKind::kSharedRow) {
    if (threadIdx.x < kKeys) mask_tiles[threadIdx.x] = source.at(0, threadIdx.x);
  }
  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      load_keys(t + 1);  // overlaps this tile's work
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    // The next tile's shared mask values, in flight while this tile's work runs.
    const float next_mask = Kind == MaskKind::kSharedRow && threadIdx.x < kKeys && t + 1 < tiles
                                ? source.at(0, (t + 1) * kKeys + threadIdx.x)
                                : 0.0f;
    __syncthreads();  // tile t (and q) in shared memory for every warp
    if constexpr (C::kQInRegisters) {
      if (t == 0) load_q_fragments<D, MT>(w, warp_qs);
    }
    const T* ks = kv + (t % 2) * 2 * kKeys * ld;
    if (t == 0 || t * kKeys < warp_keys) {
      const TileView view = view_tile<kKeys>(a, t * kKeys, first_row, warp_fewest);
      if constexpr (Kind == MaskKind::kSharedRow) {
        SharedRowMask mask{mask_tiles + (t % 2) * kKeys};
        attend_tile<T, D, kKeys, MT, C::kQInRegisters>(w, warp_qs, ks, ks + kKeys * ld, view, mask, 0, scale2);
      } else {
        attend_tile<T, D, kKeys, MT, C::kQInRegisters>(w, warp_qs, ks, ks + kKeys * ld, view, row_mask,
                                                       (t + 1) * kKeys, scale2);
      }
    }
    __syncthreads();  // every warp is done with tile t's buffers before the next iteration loads tile t + 2 there
    if constexpr (Kind == MaskKind::kSharedRow) {
      if (threadIdx.x < kKeys) mask_tiles[((t + 1) % 2) * kKeys + threadIdx.x] = next_mask;
    }
  }
  w.finish_sums();
  store_rows<T>(a, b, h, row0, w);
}

// Few query rows (decoding: one new token per sequence, seq_q <= 16): one block per 16 rows of a (batch, head),
// whose 4 warps split the keys -- warp w takes tiles w, w + 4, ... with its own double-buffered copies -- so that a
// block keeps 4 tiles in flight, not one, where there are too few blocks to fill the GPU otherwise (FlashDecoding's
// idea within a block; no workspace). The warps' states are combined through shared memory at the end:
// max m = max_w m_w, sum = sum_w l_w 2^(m_w - m), out = sum_w o_w 2^(m_w - m) / sum.
template <int D>
struct DecodeLayout {
  static constexpr int kKeys = D == 128 ? 32 : 64;  // keys per warp tile: 4 warps x 2 stages x (K, V) fit
  static constexpr int kLd = detail::kLd<D>;
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
  WarpState<D, 1, true> w;
  load_q_fragments<D, 1>(w, qs);

  RowMask<M, 1, kKeys / 8> mask;  // unused without a mask
  if (a.mask != nullptr) {
    mask.source = mask_source<M>(a, b, h);
    mask.first_row = q0 + g;
    mask.fetch(warp * kKeys);
  }
  NoMask none;
  const int64_t fewest = key_limit(a, q0);
  const float scale2 = a.scale * kLog2e;
  for (int64_t t = warp, i = 0; t < tiles; t += kWarps, ++i) {
    if (t + kWarps < tiles) {
      load_keys(t + kWarps, int((i + 1) % 2));
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncwarp();  // the tile every lane copied, visible to the warp
    const T* ks = mine + size_t(2 * (i % 2)) * L::kTileElems;
    const TileView view = view_tile<kKeys>(a, t * kKeys, q0 + g, fewest);
    if (a.mask != nullptr) {
      attend_tile<T, D, kKeys, 1, true>(w, qs, ks, ks + L::kTileElems, view, mask, (t + kWarps) * kKeys, scale2);
    } else {
      attend_tile<T, D, kKeys, 1, true>(w, qs, ks, ks + L::kTileElems, view, none, 0, scale2);
    }
    __syncwarp();  // done with this stage before it is loaded again
  }
  w.finish_sums();
  __syncthreads();  // every warp done with its tiles: the front of shared memory becomes the combine's
  float* po = reinterpret_cast<float*>(smem);          // [warp][row][D]: o, not divided
  float* pm = po + size_t(kWarps) * 16 * D;            // [warp][row]: max
  float* pl = pm + kWarps * 16;                         // [warp][row]: sum
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = g + 8 * r;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      po[(warp * 16 + row) * D + n * 8 + 2 * c] = w.o[0][n][2 * r];
      po[(warp * 16 + row) * D + n * 8 + 2 * c + 1] = w.o[0][n][2 * r + 1];
    }
    if (c == 0) {
      pm[warp * 16 + row] = w.row_max[0][r];
      pl[warp * 16 + row] = w.row_sum[0][r];
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

template <typename T, int D, typename M, int MT, MaskKind Kind>
inline cudaError_t launch_prefill(const AttentionArgs& a, bool vec, cudaStream_t stream) {
  constexpr int rows = Tiling<D, MT>::kRows;
  const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_q + rows - 1) / rows));
  return launch_kernel(vec ? attention_kernel<T, D, M, true, MT, Kind> : attention_kernel<T, D, M, false, MT, Kind>,
                       grid, Tiling<D, MT>::kBytes, a, stream);
}

// 128-row blocks from this many per multiprocessor on (fewer: 64-row blocks, twice as many, fill the GPU better):
// measured on an H200 (132 multiprocessors), 128-row blocks won from about 3 per multiprocessor on (BENCHMARKS.md).
constexpr int64_t kWideBlocksPerProcessor = 3;

template <typename T, int D, typename M>
inline cudaError_t launch(const AttentionArgs& a, bool vec, cudaStream_t stream) {
  if (a.seq_q <= 16) {
    const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_q + 15) / 16));
    return launch_kernel(vec ? attention_decode_kernel<T, D, M, true> : attention_decode_kernel<T, D, M, false>, grid,
                         DecodeLayout<D>::kBytes, a, stream);
  }
  // Two m16 tiles per warp (128 rows a block) where that still gives every multiprocessor a few blocks; else 64.
  int device = 0, processors = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) {
    return e;
  }
  const bool wide = a.batch * a.heads * ((a.seq_q + 127) / 128) >= kWideBlocksPerProcessor * processors;
  if (a.mask == nullptr) {
    return wide ? launch_prefill<T, D, M, 2, MaskKind::kNone>(a, vec, stream)
                : launch_prefill<T, D, M, 1, MaskKind::kNone>(a, vec, stream);
  }
  if (a.m_row == 0) {
    return wide ? launch_prefill<T, D, M, 2, MaskKind::kSharedRow>(a, vec, stream)
                : launch_prefill<T, D, M, 1, MaskKind::kSharedRow>(a, vec, stream);
  }
  return launch_prefill<T, D, M, 1, MaskKind::kPerRow>(a, vec, stream);  // the values held in registers: 64 rows
}

}  // namespace detail

// out = softmax(scale * q k^T + mask) v for every (batch, head); T __half or __nv_bfloat16, D the head dim (32,
// 64 or 128), M the mask's element type (float or T; ignored without a mask). Returns the launch's error, or
// cudaErrorInvalidValue for sizes the grid cannot hold. seq_q, seq_k, batch or heads 0: nothing to do.
template <typename T, int D, typename M = T>
inline cudaError_t attention(const AttentionArgs& a, cudaStream_t stream) {
  static_assert(D == 32 || D == 64 || D == 128, "head dims 32, 64 and 128");
  bool nothing = false;
  if (cudaError_t e = detail::check_sizes(a, &nothing); e != cudaSuccess || nothing) return e;
  return detail::launch<T, D, M>(a, detail::rows_aligned16(a, int(sizeof(T))), stream);
}

}  // namespace cuda_attention
}  // namespace kforge

#endif  // KFORGE_ATTENTION_CUH_
