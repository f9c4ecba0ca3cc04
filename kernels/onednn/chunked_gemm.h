// A float32 product summed in util::gemm_chunks's chunks with the arithmetic of oneDNN's brgemm:avx512_core inner
// product (matmul.cc's inner path, one primitive per chunk), in one pass over the output: per output element each
// chunk's products are summed by a chain of fused multiply-adds from zero, in order of k, and the chunk's sum added
// to the element (the first chunk's stored), chunk after chunk. Those are the bits the primitives give (checked by
// tests/unit/kernels/test_onednn_matmul_pool.cpp against them), without their pass over the whole output block
// per chunk (BERT-base's 128 x 3072 block, beyond L2: 7 % of the model). That kernel sums a chunk of 16 q + r
// products (q >= 1, 0 < r < 16) as two chains added, which this does not: matmul.cc keeps such a K on the
// primitives. Internal to kernels/onednn.
#ifndef KFORGE_KERNELS_ONEDNN_CHUNKED_GEMM_H_
#define KFORGE_KERNELS_ONEDNN_CHUNKED_GEMM_H_

#include <cstddef>
#include <cstdint>

#include "kernel_util.h"

namespace kforge::kernels::onednn::chunked_gemm {

// Whether this build and CPU run it (x86-64 with AVX-512F).
bool available();

// Output columns per panel of the packed y.
constexpr int64_t kPanelCols = 32;

// Bytes of y packed for it: panels of kPanelCols columns (the last one padded with zeros), each k rows of
// kPanelCols floats.
size_t packed_bytes(int64_t k, int64_t n);

// Packs y (k x n, or n x k when `ty`) into `packed` (packed_bytes(k, n), 64-byte aligned).
void pack(const float* y, int64_t k, int64_t n, bool ty, float* packed);

// out[i][j] for rows [row_begin, row_end) and columns [col_begin, col_end) (col_begin a multiple of kPanelCols) of
// x (rows of k, contiguous) times the packed y; out's rows are n apart.
void run(const float* x, const float* packed, float* out, int64_t k, int64_t n, const util::GemmChunks& chunks,
         int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end);

}  // namespace kforge::kernels::onednn::chunked_gemm

#endif  // KFORGE_KERNELS_ONEDNN_CHUNKED_GEMM_H_
