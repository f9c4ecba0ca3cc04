// The chunked float32 product of chunked_gemm.h. A 4-row x 32-column tile keeps, in AVX-512 registers, one chunk's
// 8 accumulators and the 8 running sums the chunks are added to, through the whole K: each output element is
// written once. (6 x 64 tiles adding each chunk's sums to the output in L1, in blocks of 12 chunks, measured 1-3 %
// slower on BERT-base's shapes, 5 % faster on 8400 x 256 x 256; BENCHMARKS.md.) Only the order of work differs
// from the primitives', never an element's arithmetic: the same fused multiply-adds in the same order from a zeroed
// accumulator, and the same additions of the chunks' sums.
#include "onednn/chunked_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KFORGE_CHUNKED_GEMM_AVX512 1
#endif

namespace kforge::kernels::onednn::chunked_gemm {

namespace {

constexpr int kVectors = kPanelCols / 16;  // zmm registers per tile row
constexpr int kTileRows = 4;               // 16 accumulators and 16 running sums
constexpr int64_t kBlockRows = 256;        // rows per pass over a panel

#if KFORGE_CHUNKED_GEMM_AVX512
// Rows [0, Rows) of a tile: every chunk of x's rows (lda apart) times one packed panel into out (ldc apart), the
// columns of `mask` only. Each chunk sums into accumulators of its own, added to the running sums (registers too).
template <int Rows>
__attribute__((target("avx512f"))) void tile(const float* x, int64_t lda, const float* panel, float* out, int64_t ldc,
                                             const util::GemmChunks& chunks, uint64_t mask) {
  __m512 sum[Rows][kVectors];
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) sum[r][v] = _mm512_setzero_ps();  // replaced by the first chunk's sums
  }
  for (int64_t h = 0; h < chunks.count; ++h) {
    __m512 acc[Rows][kVectors];
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_ps();
    }
    const float* b = panel + chunks.begin(h) * kPanelCols;
    const float* a = x + chunks.begin(h);
    const int64_t len = chunks.length(h);
    for (int64_t p = 0; p < len; ++p) {
      __m512 bv[kVectors];
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) bv[v] = _mm512_loadu_ps(b + p * kPanelCols + 16 * v);
#pragma GCC unroll 8
      for (int r = 0; r < Rows; ++r) {
        const __m512 av = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 4
        for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) sum[r][v] = h == 0 ? acc[r][v] : _mm512_add_ps(sum[r][v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      _mm512_mask_storeu_ps(out + r * ldc + 16 * v, static_cast<__mmask16>(mask >> (16 * v)), sum[r][v]);
    }
  }
}

using TileFn = void (*)(const float*, int64_t, const float*, float*, int64_t, const util::GemmChunks&, uint64_t);
constexpr TileFn kTiles[kTileRows + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>};
#endif

}  // namespace

bool available() {
#if KFORGE_CHUNKED_GEMM_AVX512
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
#else
  return false;
#endif
}

size_t packed_bytes(int64_t k, int64_t n) {
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
  return static_cast<size_t>(panels * k * kPanelCols) * sizeof(float);
}

void pack(const float* y, int64_t k, int64_t n, bool ty, float* packed) {
  const int64_t panels = (n + kPanelCols - 1) / kPanelCols;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t col0 = p * kPanelCols, cols = std::min(kPanelCols, n - col0);
    for (int64_t kk = 0; kk < k; ++kk) {
      float* to = packed + (p * k + kk) * kPanelCols;
      for (int64_t j = 0; j < cols; ++j) to[j] = ty ? y[(col0 + j) * k + kk] : y[kk * n + col0 + j];
      std::fill(to + cols, to + kPanelCols, 0.f);
    }
  }
}

void run(const float* x, const float* packed, float* out, int64_t k, int64_t n, const util::GemmChunks& chunks,
         int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end) {
#if KFORGE_CHUNKED_GEMM_AVX512
  for (int64_t i0 = row_begin; i0 < row_end; i0 += kBlockRows) {
    const int64_t i1 = std::min(row_end, i0 + kBlockRows);
    for (int64_t col0 = col_begin; col0 < col_end; col0 += kPanelCols) {
      const int64_t cols = std::min(kPanelCols, col_end - col0);
      const uint64_t mask = (uint64_t{1} << cols) - 1;  // cols <= 32
      const float* panel = packed + (col0 / kPanelCols) * k * kPanelCols;
      for (int64_t i = i0; i < i1; i += kTileRows) {
        const int64_t rows = std::min<int64_t>(kTileRows, i1 - i);
        kTiles[rows](x + i * k, k, panel, out + i * n + col0, n, chunks, mask);
      }
    }
  }
#else
  (void)x, (void)packed, (void)out, (void)k, (void)n, (void)chunks, (void)row_begin, (void)row_end, (void)col_begin,
      (void)col_end;
#endif
}

}  // namespace kforge::kernels::onednn::chunked_gemm
