// The GEMM form of a `matmul` call: which matmuls a generated GEMM (the CUDA backend's cuBLASLt call, SIMT or
// tensor-core kernel, templates/cuda/) can compute, as a row-major C[M, N] = op(x)[M, K] * op(y)[K, N].
//
// Supported (docs/compile.md, "--target cuda"):
//   - x, y and output of one dtype: float32, float16 or bfloat16. Every product accumulates in float32
//     (cuBLASLt with CUBLAS_COMPUTE_32F, TF32 only when the class is told so; the SIMT kernels for float32; the
//     tensor cores' fp32 accumulators for float16 / bfloat16); 16-bit outputs are rounded once, after the epilogue;
//   - y a matrix (rank 2), transposed or not, and x a matrix, transposed or not, or an untransposed batch of
//     matrices [..., S, K]: the batch dims fold into M (row-major memory of [B, S, K] is [B * S, K]), so the
//     GEMM is one product, not one per batch;
//   - otherwise a batch of products (`batched`: attention's scores q k^T and its context p v): x [..., M, K]
//     and y [..., K, N] (each transposed or not) whose batch dims, aligned from the right with the output's
//     and padded with 1s on the left, either equal the output's (one matrix per product) or are all 1 (one
//     matrix for every product: stride 0), computed as one strided-batched product; or, split into outer and
//     inner dims, do so in each part (two levels: one strided-batched product per outer index);
//   - transpose_x / transpose_y known at generation time.
// Everything else has a reason (`why`) that the caller turns into a located diagnostic: a vector operand,
// batch dims that broadcast only in part ([B, 1, S, D] against [B, H, S, D]), another dtype, operands of two
// dtypes.
#pragma once

#include <optional>
#include <string>

#include "passes/lowered_program.h"

namespace kforge::passes {

struct GemmForm {
  uint32_t x = kNone;    // LoweredValue indices
  uint32_t y = kNone;
  uint32_t out = kNone;
  ir::DataType dtype = ir::DataType::kFloat32;  // of x, y and out alike
  bool transpose_x = false;  // x is stored [K, M]
  bool transpose_y = false;  // y is stored [N, K]
  SymExpr m, n, k;           // M includes the folded batch dims (when not `batched`)
  // A batch of products: product (o, i), o < outer, i < batch, reads x + o * outer_stride_x + i * stride_x (and
  // y likewise) and writes out + o * outer_stride_out + i * stride_out (elements; a stride of 0 reads one matrix
  // for every product). outer is 1 unless the operands broadcast differently over the outer and the inner batch
  // dims ([B, 1, S, D] against [B, H, D, T]). Not batched: outer and batch are 1 and the strides are 0.
  bool batched = false;
  SymExpr batch = 1;
  SymExpr stride_x = 0, stride_y = 0, stride_out = 0;
  SymExpr outer = 1;
  SymExpr outer_stride_x = 0, outer_stride_y = 0, outer_stride_out = 0;
};

/// The form of `call` when it is a matmul a generated GEMM computes; nullopt otherwise, with `why` (when
/// given) set to a lowercase reason naming the operand and its shape ("y has rank 3 ([2, 16, 32]), but ...").
/// `bmm` is a matmul without transposes. A call whose op is neither gets "not a matmul".
std::optional<GemmForm> gemm_form(const LoweredProgram& program, const KernelCall& call,
                                  std::string* why = nullptr);

/// Whether a generated GEMM computes in `dtype` (float32, float16, bfloat16).
bool is_gemm_dtype(ir::DataType dtype);

}  // namespace kforge::passes
