// kforge cuBLASLt extern candidate for the multi-kernel GEMM dispatcher (header-only; link -lcublasLt).
//
// Row-major C[M,N] = A[M,K] * B[K,N] in bf16 with fp32 accumulation (or all fp32), optionally with a cuBLASLt epilogue:
// kBias (CUBLASLT_EPILOGUE_BIAS) or kBiasGelu (CUBLASLT_EPILOGUE_GELU_BIAS). cuBLASLt is column-major, so
// the row-major product is computed as its transpose: C^T (N x M) = B^T (N x K) * A^T (K x M), where each
// row-major matrix read as column-major already is its transpose; the bias then runs along cuBLASLt's rows
// (length N), i.e. one value per column of the row-major C, as a linear layer wants.
//
// Numerics: cuBLASLt documents its GELU epilogue only as "GELU"; it is the tanh approximation (the form
// XLA and Transformer Engine pair it with), not Paddle's default erf form (approximate=false). For bf16
// outputs the two differ by far less than one bf16 ulp on typical activations (the GPU check in
// bench/multikernel reports the measured difference), but a planner that must be bit-faithful to erf gelu
// should offer kBiasGelu from here only for gelu(approximate=true) ops. gelu_is_tanh_approximation says so.
//
// One CublasLtGemm owns a cuBLASLt handle and a workspace and caches, per (M, N, K, epilogue), the matmul
// descriptor, the three layouts and the heuristic's algorithm of the requested rank (0: its first choice, which
// is what plain cuBLAS runs; the multi-kernel set also offers ranks 1..n-1 as candidates, since the first
// choice is not always the fastest), so a call for a known shape costs one map lookup plus cublasLtMatmul.
// Not thread-safe (the plan cache, and the bias pointer stored in a cached descriptor): use one instance per
// host thread, as generated code does (one per stream).
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>

#include "kforge_gemm.cuh"

namespace kforge {
namespace cuda_gemm {

class CublasLtGemm {
 public:
  static constexpr bool gelu_is_tanh_approximation = true;
  // How many of the heuristic's ranked algorithms a caller may ask for (algo_index < kMaxAlgos).
  static constexpr int kMaxAlgos = 8;

  // element_type: CUDA_R_16BF (bf16 A, B, C, bias; the default) or CUDA_R_32F (fp32 everything, computed in
  // full fp32: CUBLAS_COMPUTE_32F, no TF32). One instance serves one element type.
  explicit CublasLtGemm(size_t workspace_bytes = size_t(32) << 20, cudaDataType_t element_type = CUDA_R_16BF)
      : workspace_bytes_(workspace_bytes), element_type_(element_type) {
    if (element_type_ != CUDA_R_16BF && element_type_ != CUDA_R_32F) {
      status_ = CUBLAS_STATUS_NOT_SUPPORTED;
      return;
    }
    status_ = cublasLtCreate(&handle_);
    if (status_ == CUBLAS_STATUS_SUCCESS && workspace_bytes_ > 0 &&
        cudaMalloc(&workspace_, workspace_bytes_) != cudaSuccess) {
      workspace_ = nullptr;
      workspace_bytes_ = 0;
    }
  }
  ~CublasLtGemm() {
    for (auto& entry : plans_) destroy(entry.second);
    if (workspace_ != nullptr) cudaFree(workspace_);
    if (handle_ != nullptr) cublasLtDestroy(handle_);
  }
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  bool ok() const { return status_ == CUBLAS_STATUS_SUCCESS; }

  // Whether cuBLASLt's heuristic offers an algorithm of rank algo_index (0 = its first choice, what plain
  // cuBLAS runs) for this shape and epilogue (builds and caches the plan).
  bool can_run(int M, int N, int K, Epilogue epilogue, const void* bias, int algo_index = 0) {
    if (!ok() || M <= 0 || N <= 0 || K <= 0 || algo_index < 0 || algo_index >= kMaxAlgos) return false;
    if (epilogue != Epilogue::kNone && bias == nullptr) return false;
    const Plan* plan = plan_for(M, N, K, epilogue, algo_index);
    return plan != nullptr && plan->usable;
  }

  // Returns CUBLAS_STATUS_SUCCESS or the first failing status (CUBLAS_STATUS_NOT_SUPPORTED when the
  // heuristic has no algorithm of that rank for the shape).
  cublasStatus_t run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, const __nv_bfloat16* bias,
                     int M, int N, int K, Epilogue epilogue, cudaStream_t stream, int algo_index = 0) {
    if (element_type_ != CUDA_R_16BF) return CUBLAS_STATUS_NOT_SUPPORTED;
    return run_untyped(A, B, C, bias, M, N, K, epilogue, stream, algo_index);
  }
  cublasStatus_t run(const float* A, const float* B, float* C, const float* bias, int M, int N, int K,
                     Epilogue epilogue, cudaStream_t stream, int algo_index = 0) {
    if (element_type_ != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    return run_untyped(A, B, C, bias, M, N, K, epilogue, stream, algo_index);
  }

 private:
  cublasStatus_t run_untyped(const void* A, const void* B, void* C, const void* bias, int M, int N, int K,
                             Epilogue epilogue, cudaStream_t stream, int algo_index) {
    if (!ok()) return status_;
    if (algo_index < 0 || algo_index >= kMaxAlgos) return CUBLAS_STATUS_INVALID_VALUE;
    Plan* plan = plan_for(M, N, K, epilogue, algo_index);
    if (plan == nullptr || !plan->usable) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (epilogue != Epilogue::kNone) {
      // The bias pointer is a descriptor attribute; setting it is a host-side store (no device work).
      const void* bias_ptr = bias;
      const cublasStatus_t s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                              &bias_ptr, sizeof(bias_ptr));
      if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    const float alpha = 1.0f, beta = 0.0f;
    // "A" of the column-major problem is B, "B" is A (see the file comment).
    return cublasLtMatmul(handle_, plan->desc, &alpha, B, plan->layout_b, A, plan->layout_a, &beta, C,
                          plan->layout_c, C, plan->layout_c, &plan->algo, workspace_, workspace_bytes_, stream);
  }

 private:
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layout_a = nullptr;  // A^T: K x M, ld K
    cublasLtMatrixLayout_t layout_b = nullptr;  // B^T: N x K, ld N
    cublasLtMatrixLayout_t layout_c = nullptr;  // C^T: N x M, ld N
    cublasLtMatmulAlgo_t algo{};
    bool usable = false;
  };
  using Key = std::tuple<int, int, int, int, int>;

  static void destroy(Plan& p) {
    if (p.layout_a != nullptr) cublasLtMatrixLayoutDestroy(p.layout_a);
    if (p.layout_b != nullptr) cublasLtMatrixLayoutDestroy(p.layout_b);
    if (p.layout_c != nullptr) cublasLtMatrixLayoutDestroy(p.layout_c);
    if (p.desc != nullptr) cublasLtMatmulDescDestroy(p.desc);
    p = Plan{};
  }

  Plan* plan_for(int M, int N, int K, Epilogue epilogue, int algo_index) {
    const Key key{M, N, K, int(epilogue), algo_index};
    auto it = plans_.find(key);
    if (it != plans_.end()) return &it->second;
    Plan plan;
    plan.usable = build(plan, M, N, K, epilogue, algo_index);
    if (!plan.usable) destroy(plan);
    return &plans_.emplace(key, plan).first->second;
  }

  bool build(Plan& p, int M, int N, int K, Epilogue epilogue, int algo_index) {
    if (cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
    const cublasOperation_t no_transpose = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &no_transpose, sizeof(no_transpose));
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_transpose, sizeof(no_transpose));
    cublasLtEpilogue_t lt_epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (epilogue == Epilogue::kBias) lt_epilogue = CUBLASLT_EPILOGUE_BIAS;
    if (epilogue == Epilogue::kBiasGelu) lt_epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &lt_epilogue, sizeof(lt_epilogue)) !=
        CUBLAS_STATUS_SUCCESS)
      return false;
    if (epilogue != Epilogue::kNone) {
      const cudaDataType_t bias_type = element_type_;
      if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                         sizeof(bias_type)) != CUBLAS_STATUS_SUCCESS)
        return false;
    }
    if (cublasLtMatrixLayoutCreate(&p.layout_a, element_type_, K, M, K) != CUBLAS_STATUS_SUCCESS) return false;
    if (cublasLtMatrixLayoutCreate(&p.layout_b, element_type_, N, K, N) != CUBLAS_STATUS_SUCCESS) return false;
    if (cublasLtMatrixLayoutCreate(&p.layout_c, element_type_, N, M, N) != CUBLAS_STATUS_SUCCESS) return false;

    cublasLtMatmulPreference_t preference = nullptr;
    if (cublasLtMatmulPreferenceCreate(&preference) != CUBLAS_STATUS_SUCCESS) return false;
    cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                         sizeof(workspace_bytes_));
    cublasLtMatmulHeuristicResult_t results[kMaxAlgos] = {};
    int returned = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.layout_b, p.layout_a, p.layout_c,
                                                            p.layout_c, preference, algo_index + 1, results, &returned);
    cublasLtMatmulPreferenceDestroy(preference);
    if (s != CUBLAS_STATUS_SUCCESS || returned <= algo_index) return false;
    p.algo = results[algo_index].algo;
    return true;
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasStatus_t status_ = CUBLAS_STATUS_NOT_INITIALIZED;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  cudaDataType_t element_type_ = CUDA_R_16BF;
  std::map<Key, Plan> plans_;
};

}  // namespace cuda_gemm
}  // namespace kforge
