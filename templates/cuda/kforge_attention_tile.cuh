// The building blocks of kforge's fused attention kernels (kforge_attention.cuh, which includes this): the
// arguments, shared-memory tile copies, the tensor-core fragments (mma.sync m16n8k16, ldmatrix), one warp's running
// softmax state and attend_tile(), which takes a warp's query rows through one tile of keys: scores, mask, online
// softmax and o += p v, all in registers. sm_80 or later.
#ifndef KFORGE_ATTENTION_TILE_CUH_
#define KFORGE_ATTENTION_TILE_CUH_

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

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;

// Shared tiles' rows are padded by 16 bytes: ldmatrix's 8 row addresses hit 8 different bank groups.
template <int D>
constexpr int kLd = D + 8;

// Starts copying rows [row0, row0 + count) of a [rows x D] operand into a shared tile (ld kLd), zeros beyond
// `limit`, by the `threads` threads numbered from 0 to threads - 1 (`tid`: this one): 16 bytes per step,
// asynchronously (cp.async) when `Vec` (every row start 16-byte aligned), else one element per step, synchronously.
// The caller commits and waits (__pipeline_commit / __pipeline_wait_prior).
template <typename T, int D, bool Vec>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t stride, int64_t row0, int count, int64_t limit,
                                          int tid = threadIdx.x, int threads = kThreads) {
  if constexpr (Vec) {
    constexpr int kChunks = D / 8;
    for (int i = tid; i < count * kChunks; i += threads) {
      const int r = i / kChunks, c = (i % kChunks) * 8;
      if (row0 + r < limit) {
        __pipeline_memcpy_async(dst + r * kLd<D> + c, src + (row0 + r) * stride + c, 16);
      } else {
        *reinterpret_cast<uint4*>(dst + r * kLd<D> + c) = make_uint4(0, 0, 0, 0);
      }
    }
  } else {
    for (int i = tid; i < count * D; i += threads) {
      const int r = i / D, c = i % D;
      dst[r * kLd<D> + c] = row0 + r < limit ? src[(row0 + r) * stride + c] : cuda::from_float<T>(0.0f);
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

// 2^x by the special-function unit, subnormal results flushed to 0 (exp2f adds a range fix-up around it): 0 for
// -inf, as softmax's masked keys need.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
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

// One warp's running state over its MT x 16 query rows: lane (g, c) holds rows g and g + 8 of each m16 tile, and of
// each 8-wide slice of the output columns 2c and 2c + 1; the maxima are in log2 units (shared by the group's four
// lanes), the sums each lane's own part of its row's (the four are added once, by finish_sums), the output not yet
// divided by the sum. QInRegisters: the q rows as A fragments.
template <int D, int MT, bool QInRegisters>
struct WarpState {
  float row_max[MT][2], row_sum[MT][2];
  float o[MT][D / 8][4];
  uint32_t qf[QInRegisters ? MT : 1][QInRegisters ? D / 16 : 1][4];

  __device__ WarpState() {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      row_max[m][0] = row_max[m][1] = -INFINITY;
      row_sum[m][0] = row_sum[m][1] = 0.0f;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) o[m][n][0] = o[m][n][1] = o[m][n][2] = o[m][n][3] = 0.0f;
    }
  }

  // The row sums over the group's four lanes.
  __device__ __forceinline__ void finish_sums() {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        row_sum[m][r] += __shfl_xor_sync(0xffffffffu, row_sum[m][r], 1);
        row_sum[m][r] += __shfl_xor_sync(0xffffffffu, row_sum[m][r], 2);
      }
    }
  }
};

// What a tile of keys [k0, k0 + Keys) shows a warp's rows, counted from k0: every row sees those before `end` (the
// sequence's); under a causal mask row 16 m + g + 8 r of the warp only those before first + 16 m + 8 r (first: row
// g's bound). `partial`: some row sees fewer than all, so the scores need masking by position (a tile inside every
// row's bound needs none: of a causal mask, only the diagonal's tiles pay for it).
struct TileView {
  bool partial, causal;
  int first, end;
};

// first_row: the lane's row g of the warp; fewest: the keys the warp's first row sees.
template <int Keys>
__device__ __forceinline__ TileView view_tile(const AttentionArgs& a, int64_t k0, int64_t first_row, int64_t fewest) {
  auto clamp = [](int64_t x) { return int(x < -2 * Keys ? -2 * Keys : x > Keys ? Keys : x); };  // [-2 Keys, Keys]
  TileView view;
  view.partial = k0 + Keys > fewest;
  view.causal = a.causal;
  view.first = clamp(first_row + a.diagonal - k0);  // rows 16 m + 8 r past it stay below 0 where it is clamped
  view.end = clamp(a.seq_k - k0);
  return view;
}

// The additive mask's element of (query row, key) in log2 units, 0 past the keys (masked by position there).
template <typename M>
struct MaskSource {
  const M* base;  // this (batch, head)'s
  int64_t last_row, row_stride, col, seq_k;

  __device__ __forceinline__ float at(int64_t row, int64_t key) const {
    if (key >= seq_k) return 0.0f;
    return cuda::to_float(base[(row < last_row ? row : last_row) * row_stride + key * col]) * kLog2e;
  }
};

template <typename M>
__device__ __forceinline__ MaskSource<M> mask_source(const AttentionArgs& a, int64_t b, int64_t h) {
  return {static_cast<const M*>(a.mask) + b * a.m_batch + h * a.m_head, a.seq_q - 1, a.m_row, a.m_col, a.seq_k};
}

// How a tile's scores get the additive mask (the Mask parameter of attend_tile): add() adds the tile's values to the
// scores s[m][n][i] (row 16 m + g + 8 (i / 2) of the warp, key n * 8 + 2 c + i % 2 of the tile); fetch(k0), called
// once they are added, starts reading those of the warp's next tile, which the loads have until then to bring in.
struct NoMask {
  template <int MT, int Slices>
  __device__ __forceinline__ void add(float (&)[MT][Slices][4]) const {}
  __device__ __forceinline__ void fetch(int64_t) {}
};

// One mask row for every query (a padding mask [B, 1, 1, Sk]): the block copies each tile's values into shared
// memory (`tile`: this one's) a tile ahead, so a score reads its key's value there.
struct SharedRowMask {
  const float* tile;

  template <int MT, int Slices>
  __device__ __forceinline__ void add(float (&s)[MT][Slices][4]) const {
    const int c = threadIdx.x % 4;
#pragma unroll
    for (int n = 0; n < Slices; ++n) {
      const float2 v = *reinterpret_cast<const float2*>(tile + n * 8 + 2 * c);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        s[m][n][0] += v.x, s[m][n][1] += v.y, s[m][n][2] += v.x, s[m][n][3] += v.y;
      }
    }
  }
  __device__ __forceinline__ void fetch(int64_t) {}
};

// A mask row per query: each lane holds its scores' values, the next tile's read while this one's products run.
template <typename M, int MT, int Slices>
struct RowMask {
  MaskSource<M> source;
  int64_t first_row;  // the lane's row g of the warp
  float values[MT][2][Slices][2];

  __device__ __forceinline__ void add(float (&s)[MT][Slices][4]) const {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int n = 0; n < Slices; ++n) {
#pragma unroll
        for (int i = 0; i < 4; ++i) s[m][n][i] += values[m][i / 2][n][i % 2];
      }
    }
  }
  __device__ __forceinline__ void fetch(int64_t k0) {
    const int c = threadIdx.x % 4;
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int n = 0; n < Slices; ++n) {
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            values[m][r][n][j] = source.at(first_row + 16 * m + 8 * r, k0 + n * 8 + 2 * c + j);
          }
        }
      }
    }
  }
};

// The warp's rows against one tile of `Keys` keys (ks, vs: its K and V rows in shared memory; qs: the warp's q rows,
// read when they are not in registers): the scores from tensor cores, the online softmax on the accumulators (whose
// layout is that of the A operand of the next product, so the 16-bit probabilities multiply V without touching
// shared memory) and o += p v. Each K and V fragment feeds the MT m16 tiles' products.
template <typename T, int D, int Keys, int MT, bool QInRegisters, typename Mask>
__device__ __forceinline__ void attend_tile(WarpState<D, MT, QInRegisters>& w, const T* qs, const T* ks, const T* vs,
                                            const TileView& view, Mask& mask, int64_t next_k0, float scale2) {
  constexpr int ld = kLd<D>;
  const int lane = threadIdx.x % 32, c = lane % 4;
  // scores[16 MT x Keys] = q rows x k^T, 8 keys per slice: B's column j (a key) is a row of the K tile.
  float s[MT][Keys / 8][4];
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int n = 0; n < Keys / 8; ++n) s[m][n][0] = s[m][n][1] = s[m][n][2] = s[m][n][3] = 0.0f;
  }
#pragma unroll
  for (int kk = 0; kk < D / 32; ++kk) {
    uint32_t qa[MT][2][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        if constexpr (QInRegisters) {
#pragma unroll
          for (int x = 0; x < 4; ++x) qa[m][j][x] = w.qf[m][2 * kk + j][x];
        } else {
          ldmatrix_x4<false>(qa[m][j], qs + (m * 16 + lane % 16) * ld + (2 * kk + j) * 16 + (lane / 16) * 8);
        }
      }
    }
#pragma unroll
    for (int n = 0; n < Keys / 8; ++n) {
      uint32_t kb[4];
      ldmatrix_x4<false>(kb, ks + (n * 8 + lane % 8) * ld + kk * 32 + (lane / 8) * 8);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        mma<T>(s[m][n], qa[m][0], kb[0], kb[1]);
        mma<T>(s[m][n], qa[m][1], kb[2], kb[3]);
      }
    }
  }
  // Scaled to log2 units, the mask added (next_k0: the warp's next tile, whose mask values the loads may start
  // fetching), keys outside a row's bound at -inf.
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int n = 0; n < Keys / 8; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) s[m][n][i] *= scale2;
    }
  }
  mask.add(s);
  mask.fetch(next_k0);
  if (view.partial) {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int bound = view.causal ? view.first + 16 * m + 8 * r : Keys;
        const int visible = bound < view.end ? bound : view.end;
#pragma unroll
        for (int n = 0; n < Keys / 8; ++n) {
          if (n * 8 + 2 * c >= visible) s[m][n][2 * r] = -INFINITY;
          if (n * 8 + 2 * c + 1 >= visible) s[m][n][2 * r + 1] = -INFINITY;
        }
      }
    }
  }
  // The online softmax of rows g and g + 8 of each m16 tile (the four lanes of a group share them).
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < Keys / 8; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) tile_max[i / 2] = fmaxf(tile_max[i / 2], s[m][n][i]);
    }
    float correction[2], base[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      const float new_max = fmaxf(w.row_max[m][r], tile_max[r]);
      base[r] = new_max == -INFINITY ? 0.0f : new_max;  // all -inf so far: every p is 0
      correction[r] = exp2_approx(w.row_max[m][r] - base[r]);
      w.row_max[m][r] = new_max;
    }
    float sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int n = 0; n < Keys / 8; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[m][n][i] = exp2_approx(s[m][n][i] - base[i / 2]);
        sum[i / 2] += s[m][n][i];
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) w.row_sum[m][r] = w.row_sum[m][r] * correction[r] + sum[r];
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      w.o[m][n][0] *= correction[0];
      w.o[m][n][1] *= correction[0];
      w.o[m][n][2] *= correction[1];
      w.o[m][n][3] *= correction[1];
    }
  }
  // o += p v: the scores' C fragments are the A fragments of p (16 keys = two 8-key slices); V's rows are keys.
#pragma unroll
  for (int kk = 0; kk < Keys / 16; ++kk) {
    uint32_t pa[MT][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      pa[m][0] = pack<T>(s[m][2 * kk][0], s[m][2 * kk][1]);
      pa[m][1] = pack<T>(s[m][2 * kk][2], s[m][2 * kk][3]);
      pa[m][2] = pack<T>(s[m][2 * kk + 1][0], s[m][2 * kk + 1][1]);
      pa[m][3] = pack<T>(s[m][2 * kk + 1][2], s[m][2 * kk + 1][3]);
    }
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      uint32_t vb[4];
      ldmatrix_x4<true>(vb, vs + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * ld + n * 16 + (lane / 16) * 8);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        mma<T>(w.o[m][2 * n], pa[m], vb[0], vb[1]);
        mma<T>(w.o[m][2 * n + 1], pa[m], vb[2], vb[3]);
      }
    }
  }
}

// Host side, shared by both kernels' entry points.
// Launches `kernel` over `grid` with `bytes` of dynamic shared memory (above 48 KiB a kernel must opt in: a host-side
// attribute, legal inside a graph capture).
template <typename Kernel>
inline cudaError_t launch_kernel(Kernel kernel, dim3 grid, size_t bytes, const AttentionArgs& a, cudaStream_t stream) {
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
      e != cudaSuccess)
    return e;
  kernel<<<grid, kThreads, bytes, stream>>>(a);
  return cudaGetLastError();
}

// The arguments' sizes checked: cudaErrorInvalidValue for negative ones or ones the grid cannot hold, else
// cudaSuccess; `*nothing` when there is no row to compute.
inline cudaError_t check_sizes(const AttentionArgs& a, bool* nothing) {
  *nothing = false;
  if (a.batch < 0 || a.heads < 0 || a.seq_q < 0 || a.seq_k < 0) return cudaErrorInvalidValue;
  if (a.batch == 0 || a.heads == 0 || a.seq_q == 0) return *nothing = true, cudaSuccess;
  if (a.batch * a.heads > 0x7fffffffLL || (a.seq_q + 15) / 16 > 65535) return cudaErrorInvalidValue;
  return cudaSuccess;
}

// 16-byte copies of q, k and v apply: every row starts 16-byte aligned (elements of `element_bytes`).
inline bool rows_aligned16(const AttentionArgs& a, int element_bytes) {
  auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
  bool vec = aligned(a.q) && aligned(a.k) && aligned(a.v);
  for (int64_t s : {a.q_batch, a.q_head, a.q_seq, a.k_batch, a.k_head, a.k_seq, a.v_batch, a.v_head, a.v_seq}) {
    vec = vec && s * element_bytes % 16 == 0;
  }
  return vec;
}

// The keys row `row` may see: [0, limit) (every key, or those a causal mask leaves).
__device__ __forceinline__ int64_t key_limit(const AttentionArgs& a, int64_t row) {
  if (!a.causal) return a.seq_k;
  const int64_t bound = row + a.diagonal;
  return bound < 0 ? 0 : bound < a.seq_k ? bound : a.seq_k;
}

// The warp's q rows (MT x 16 from `qs`, in shared memory) as A fragments.
template <int D, int MT, typename T>
__device__ __forceinline__ void load_q_fragments(WarpState<D, MT, true>& w, const T* qs) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      ldmatrix_x4<false>(w.qf[m][kk], qs + (m * 16 + lane % 16) * kLd<D> + kk * 16 + (lane / 16) * 8);
    }
  }
}

// The warp's rows of the output, o / sum (every key masked: the sum is 0, inf * 0 = NaN, as softmax gives): two
// neighbouring columns per store where the row allows.
template <typename T, int D, int MT, bool Q>
__device__ __forceinline__ void store_rows(const AttentionArgs& a, int64_t b, int64_t h, int64_t row0,
                                           const WarpState<D, MT, Q>& w) {
  const int lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t row = row0 + 16 * m + g + 8 * r;
      if (row >= a.seq_q) continue;
      T* out = static_cast<T*>(a.out) + b * a.o_batch + h * a.o_head + row * a.o_seq;
      const float inverse = 1.0f / w.row_sum[m][r];
      const bool pairs = reinterpret_cast<uintptr_t>(out) % 4 == 0;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        const float lo = w.o[m][n][2 * r] * inverse, hi = w.o[m][n][2 * r + 1] * inverse;
        if (pairs) {
          *reinterpret_cast<uint32_t*>(out + n * 8 + 2 * c) = pack<T>(lo, hi);
        } else {
          out[n * 8 + 2 * c] = cuda::from_float<T>(lo);
          out[n * 8 + 2 * c + 1] = cuda::from_float<T>(hi);
        }
      }
    }
  }
}

}  // namespace detail
}  // namespace cuda_attention
}  // namespace kforge

#endif  // KFORGE_ATTENTION_TILE_CUH_
