// The GEMM form of a `matmul` call: which matmuls a generated GEMM (the CUDA backend's cuBLASLt call, SIMT or
// tensor-core kernel, templates/cuda/) can compute, as a row-major C[M, N] = op(x)[M, K] * op(y)[K, N].
//
// Supported (docs/compile.md, "--target cuda"):
//   - x, y and output of one dtype: float32, float16 or bfloat16. Every product accumulates in float32
//     (cuBLASLt with CUBLAS_COMPUTE_32F, no TF32; the SIMT kernels for float32; the tensor cores' fp32
//     accumulators for float16 / bfloat16); 16-bit outputs are rounded once, after the epilogue;
//   - y a matrix (rank 2), transposed or not;
//   - x a matrix, transposed or not, or an untransposed batch of matrices [..., S, K]: the batch dims fold
//     into M (row-major memory of [B, S, K] is [B * S, K]), so the GEMM is one call, not one per batch;
//   - transpose_x / transpose_y known at generation time.
// Everything else has a reason (`why`) that the caller turns into a located diagnostic: a batched or vector
// y, a vector x, a transposed batch (its rows are not contiguous in M), another dtype, operands of two dtypes.
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
  SymExpr m, n, k;           // M includes the folded batch dims
};

/// The form of `call` when it is a matmul a generated GEMM computes; nullopt otherwise, with `why` (when
/// given) set to a lowercase reason naming the operand and its shape ("y has rank 3 ([2, 16, 32]), but ...").
/// A call whose op is not `matmul` gets "not a matmul".
std::optional<GemmForm> gemm_form(const LoweredProgram& program, const KernelCall& call,
                                  std::string* why = nullptr);

/// Whether a generated GEMM computes in `dtype` (float32, float16, bfloat16).
bool is_gemm_dtype(ir::DataType dtype);

}  // namespace kforge::passes
