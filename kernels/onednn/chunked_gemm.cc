// The chunked float32 product of chunked_gemm.h. A 6-row x 64-column tile keeps its 24 accumulators (AVX-512
// registers) for one chunk, then adds them to the output (in L1); the chunks of one k block (kBlockChunks, x's rows
// of that block in L2) run over a tile before the next tile, so the output is passed once per k block, not once per
// chunk. Only the order of work differs from the primitives', never an element's arithmetic: the same fused
// multiply-adds in the same order from a zeroed accumulator, and the same additions of the chunks' sums.
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
constexpr int kTileRows = 6;
constexpr int64_t kBlockChunks = 12;  // chunks per k block: 768 of x's k per pass over the output
constexpr int64_t kBlockRows = 256;   // rows per pass over a panel (x's block of rows stays in L2)

#if KFORGE_CHUNKED_GEMM_AVX512
// Rows [0, Rows) of a tile: chunks [h0, h1) of x's rows (lda apart) times one packed panel, added to out (ldc apart;
// the first chunk of all stored), the columns of `mask` only.
template <int Rows>
__attribute__((target("avx512f"))) void tile(const float* x, int64_t lda, const float* panel, float* out, int64_t ldc,
                                             const util::GemmChunks& chunks, int64_t h0, int64_t h1, uint64_t mask) {
  for (int64_t h = h0; h < h1; ++h) {
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
      float* o = out + r * ldc;
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) {
        const __mmask16 m = static_cast<__mmask16>(mask >> (16 * v));
        const __m512 sum = h == 0 ? acc[r][v] : _mm512_add_ps(_mm512_maskz_loadu_ps(m, o + 16 * v), acc[r][v]);
        _mm512_mask_storeu_ps(o + 16 * v, m, sum);
      }
    }
  }
}

using TileFn = void (*)(const float*, int64_t, const float*, float*, int64_t, const util::GemmChunks&, int64_t,
                        int64_t, uint64_t);
constexpr TileFn kTiles[kTileRows + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};
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
    for (int64_t h0 = 0; h0 < chunks.count; h0 += kBlockChunks) {
      const int64_t h1 = std::min(chunks.count, h0 + kBlockChunks);
      for (int64_t col0 = col_begin; col0 < col_end; col0 += kPanelCols) {
        const int64_t cols = std::min(kPanelCols, col_end - col0);
        const uint64_t mask = cols == 64 ? ~uint64_t{0} : (uint64_t{1} << cols) - 1;
        const float* panel = packed + (col0 / kPanelCols) * k * kPanelCols;
        for (int64_t i = i0; i < i1; i += kTileRows) {
          const int64_t rows = std::min<int64_t>(kTileRows, i1 - i);
          kTiles[rows](x + i * k, k, panel, out + i * n + col0, n, chunks, h0, h1, mask);
        }
      }
    }
  }
#else
  (void)x, (void)packed, (void)out, (void)k, (void)n, (void)chunks, (void)row_begin, (void)row_end, (void)col_begin,
      (void)col_end;
#endif
}

}  // namespace kforge::kernels::onednn::chunked_gemm
