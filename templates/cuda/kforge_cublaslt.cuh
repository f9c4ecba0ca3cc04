// kforge cuBLASLt extern candidate for the multi-kernel GEMM dispatcher (header-only; link -lcublasLt).
//
// Row-major C[M,N] = op(A)[M,K] * op(B)[K,N] in bf16 or fp16 with fp32 accumulation (or all fp32; op: an
// optional transpose, A stored [K,M], B stored [N,K]), optionally with a cuBLASLt epilogue:
// kBias (CUBLASLT_EPILOGUE_BIAS) or kBiasGeluTanh (CUBLASLT_EPILOGUE_GELU_BIAS). cuBLASLt is column-major, so
// the row-major product is computed as its transpose: C^T (N x M) = B^T (N x K) * A^T (K x M), where each
// row-major matrix read as column-major already is its transpose; the bias then runs along cuBLASLt's rows
// (length N), i.e. one value per column of the row-major C, as a linear layer wants.
//
// Numerics: cuBLASLt documents its GELU epilogue only as "GELU"; it is the tanh approximation (the form
// XLA, Transformer Engine and torch's gelu(approximate='tanh') pair it with), not Paddle's default erf form
// (approximate=false): gelu_is_tanh_approximation says so, and CublasLtGemm runs kBiasGeluTanh through it and
// refuses kBiasGelu (erf: cublaslt_gemm below adds it as a kernel of its own). The two forms differ by at most
// 4.73e-4 (absolute, in exact arithmetic; largest at |x| = 2.70, where the output is 2.69 or -0.0094; the
// difference is even in x, below 2.8e-7 beyond |x| = 5.3; tests/unit/passes/test_gelu_forms.cpp). That is 0.48 of
// half a float16 ulp and 0.06 of half a bfloat16 ulp at the output 2.69 (and for every x >= 0 at most 0.82 /
// 0.10 of half an ulp of the output there): for positive pre-activations the forms round to the same 16-bit value
// or to neighbours. For negative ones the output is small (|gelu| <= 0.17) and the same absolute difference is
// many of its ulps (115 float16 / 14 bfloat16 half-ulps at x = -2.5, output -0.0155): relative to the tensor's
// scale (its values of order 1) it stays below half a float16 ulp at 1 (4.88e-4). kforge plans kBiasGeluTanh for
// float16 and bfloat16 GEMMs followed by Paddle's erf gelu (passes/fusion_gemm.cpp; docs/compile.md "The gelu's
// form"): the gelu then runs inside cuBLASLt's GEMM instead of as a second pass over C. float32 keeps erf, exactly.
//
// Batches: a Batch of count > 1 computes count such products in one call (cuBLASLt's strided batch): product i
// reads A + i * stride_a, B + i * stride_b and writes C + i * stride_c (elements); a stride of 0 reads one
// matrix for every product (a broadcast operand). An epilogue over a batch (one level) reads product i's bias at
// bias + i * stride_bias (CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE): sibling GEMMs packed into one product.
//
// TF32: set_tf32(true) lets float32 products run on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32, as torch's
// matmul.allow_tf32); off by default, where float32 products are computed in full float32. 16-bit element types
// ignore it (they always accumulate in float32 on tensor cores).
//
// One CublasLtGemm owns a cuBLASLt handle and a workspace and caches, per (M, N, K, batch, epilogue, transposes,
// TF32, pointer alignments), the matmul descriptor, the three layouts and the heuristic's algorithm of the
// requested rank (0: its first choice, which is what plain cuBLAS runs; the multi-kernel set also offers
// ranks 1..n-1 as candidates, since the first choice is not always the fastest), so a call for a known shape
// costs one map lookup plus cublasLtMatmul.
// Not thread-safe (the plan cache, and the bias pointer stored in a cached descriptor): use one instance per
// host thread, as generated code does (one per object, which runs one call at a time).
// cublaslt_gemm() below is the call generated code makes (with the epilogues cuBLASLt lacks or refuses added as
// kernels of their own), for float, __half or __nv_bfloat16 elements.
#ifndef KFORGE_CUBLASLT_CUH_
#define KFORGE_CUBLASLT_CUH_

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kforge_gemm.cuh"

namespace kforge {
namespace cuda_gemm {

// A parameter that takes its type from the others (a bias passed as nullptr must not stop T's deduction).
template <typename T>
struct TypeIdentity {
  using type = T;
};
template <typename T>
using NoDeduce = typename TypeIdentity<T>::type;

// Row strides (elements) of A as stored and of C, where they are not the dense ones (0: dense, K or M for A by its
// transpose, N for C): a product over every G-th row of a matrix (cublaslt_gemm_phased_n).
struct RowStrides {
  int64_t a = 0, c = 0;
};

class CublasLtGemm {
 public:
  static constexpr bool gelu_is_tanh_approximation = true;
  // How many of the heuristic's ranked algorithms a caller may ask for (algo_index < kMaxAlgos).
  static constexpr int kMaxAlgos = 8;

  // element_type: CUDA_R_16BF (bf16 A, B, C, bias; the default), CUDA_R_16F (fp16 likewise), both with fp32
  // accumulation, or CUDA_R_32F (fp32 everything, computed in full fp32: CUBLAS_COMPUTE_32F, no TF32). One
  // instance serves one element type. The workspace is allocated here, once, so that later calls allocate
  // nothing (a requirement of CUDA graph capture).
  explicit CublasLtGemm(size_t workspace_bytes = size_t(32) << 20, cudaDataType_t element_type = CUDA_R_16BF)
      : workspace_bytes_(workspace_bytes), element_type_(element_type) {
    if (element_type_ != CUDA_R_16BF && element_type_ != CUDA_R_16F && element_type_ != CUDA_R_32F) {
      status_ = CUBLAS_STATUS_NOT_SUPPORTED;
      return;
    }
    status_ = cublasLtCreate(&handle_);
    if (status_ == CUBLAS_STATUS_SUCCESS && workspace_bytes_ > 0 &&
        cudaMalloc(&workspace_, workspace_bytes_) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());  // run with no workspace: the heuristic then picks algorithms that need none
      workspace_ = nullptr;
      workspace_bytes_ = 0;
    }
  }
  ~CublasLtGemm() {
    for (auto& entry : plans_) destroy(entry.second);
    if (padded_ != nullptr) cudaFree(padded_);
    if (workspace_ != nullptr) cudaFree(workspace_);
    if (handle_ != nullptr) cublasLtDestroy(handle_);
  }
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  bool ok() const { return status_ == CUBLAS_STATUS_SUCCESS; }
  // TF32 tensor cores for float32 products (see the file comment); plans are cached per setting.
  void set_tf32(bool on) { tf32_ = on && element_type_ == CUDA_R_32F; }
  bool tf32() const { return tf32_; }
  // The status of the handle's creation (ok() is false) or of the last run() / can_run().
  cublasStatus_t last_status() const { return ok() ? last_ : status_; }

  // Whether cuBLASLt's heuristic offers an algorithm of rank algo_index (0 = its first choice, what plain
  // cuBLAS runs) for this shape and epilogue (builds and caches the plan; host work only). With pointers
  // (optional), for their alignment, as run() would use them.
  bool can_run(int M, int N, int K, Epilogue epilogue, const void* bias, int algo_index = 0,
               bool transpose_a = false, bool transpose_b = false, const void* A = nullptr, const void* B = nullptr,
               const void* C = nullptr, const Batch& batch = Batch{}, const RowStrides& rows = RowStrides{}) {
    if (!ok() || M <= 0 || N <= 0 || K <= 0 || algo_index < 0 || algo_index >= kMaxAlgos) return false;
    if (epilogue != Epilogue::kNone && bias == nullptr) return false;
    if (!valid(batch)) return false;
    const Plan* plan = plan_for(key_of(M, N, K, epilogue, algo_index, transpose_a, transpose_b, A, B, C, batch, rows));
    return plan != nullptr && plan->usable;
  }

  // C = op(A) op(B) (+ epilogue), row-major; op transposes when asked (A stored [K, M], B stored [N, K]).
  // T: float, __half or __nv_bfloat16, the instance's element type (else CUBLAS_STATUS_NOT_SUPPORTED).
  // Returns CUBLAS_STATUS_SUCCESS or the first failing status (CUBLAS_STATUS_NOT_SUPPORTED when the
  // heuristic has no algorithm of that rank for the shape).
  template <typename T>
  cublasStatus_t run(const T* A, const T* B, T* C, const NoDeduce<T>* bias, int M, int N, int K, Epilogue epilogue,
                     cudaStream_t stream, int algo_index = 0, bool transpose_a = false, bool transpose_b = false,
                     const Batch& batch = Batch{}, const RowStrides& rows = RowStrides{}) {
    if (element_type_ != data_type_of<T>()) return last_ = CUBLAS_STATUS_NOT_SUPPORTED;
    return run_untyped(A, B, C, bias, M, N, K, epilogue, stream, algo_index, transpose_a, transpose_b, batch, rows);
  }

  // The N to run a product with instead of its own, or 0 to run it as it is. cuBLASLt's Hopper kernels need N a
  // multiple of 16 bytes; for any other N (a vocabulary of 50257 logits) its heuristic has only alignment-1 Turing
  // kernels, several times slower (GPT-2's output projection at M 1024, K 768 on an H200: 840 us, against 111 us at
  // N 50264; 42 % of the prefill). A product large enough to be compute-bound then runs at the padded N over B
  // padded with zero rows (or columns) into padded_buffer(), and its rows are copied out (compact_rows).
  static int64_t padded_n(int M, int N, size_t element_bytes) {
    const int64_t per16 = int64_t(16 / element_bytes);
    if (N % per16 == 0 || M < 64 || int64_t(M) * N < (int64_t(1) << 18)) return 0;
    return (N + per16 - 1) / per16 * per16;
  }
  // The buffer padded products use (their B, then their C), grown to `bytes` outside a CUDA graph capture (the
  // generated code's prepare calls reserve it first); null when it cannot be.
  void* padded_buffer(size_t bytes, cudaStream_t stream) {
    if (bytes <= padded_bytes_) return padded_;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (stream != nullptr && cudaStreamIsCapturing(stream, &capturing) == cudaSuccess &&
        capturing != cudaStreamCaptureStatusNone)
      return nullptr;
    if (padded_ != nullptr) cudaFree(padded_);
    padded_ = nullptr;
    padded_bytes_ = 0;
    if (cudaMalloc(&padded_, bytes) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      padded_ = nullptr;
      return nullptr;
    }
    padded_bytes_ = bytes;
    return padded_;
  }

  // The cuBLAS data type of an element type.
  template <typename T>
  static constexpr cudaDataType_t data_type_of() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>,
                  "cuBLASLt GEMMs take float, __half or __nv_bfloat16");
    if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
    if constexpr (std::is_same_v<T, __half>) return CUDA_R_16F;
    return CUDA_R_16BF;
  }

 private:
  // The plan cache key: the problem (with the batch and the TF32 setting), and the alignment (bytes, up to 256)
  // of A, B and C. cuBLASLt's heuristic assumes 256-byte aligned matrices unless told otherwise; a plan made for
  // the pointers' real alignment never runs an algorithm that needs more (buffers of a kforge workspace are
  // 64-byte aligned, a caller's tensor may be less). Then the row strides of A and C (RowStrides).
  using Key = std::tuple<int, int, int, int, int, int, int, int, int, int, int64_t, int64_t, int64_t, int64_t, bool,
                         int64_t, int64_t>;

  // A batch cuBLASLt can run: a positive count, no negative stride and a distinct output per product (stride_c
  // at least one matrix when count > 1).
  static bool valid(const Batch& b) {
    if (b.count < 1 || b.stride_a < 0 || b.stride_b < 0 || b.stride_c < 0 || b.stride_bias < 0) return false;
    return b.count == 1 || b.stride_c > 0;
  }

  static int alignment_of(const void* p) {
    if (p == nullptr) return 256;
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    int alignment = 1;
    while (alignment < 256 && (address & uintptr_t(alignment)) == 0) alignment *= 2;
    return alignment;
  }

  Key key_of(int M, int N, int K, Epilogue epilogue, int algo_index, bool transpose_a, bool transpose_b,
             const void* A, const void* B, const void* C, const Batch& batch, const RowStrides& rows) const {
    const bool one = batch.count == 1;  // the strides of a single product mean nothing: one plan for all
    return Key{M, N, K, int(epilogue), algo_index, (transpose_a ? 1 : 0) | (transpose_b ? 2 : 0), alignment_of(A),
               alignment_of(B), alignment_of(C), batch.count, one ? 0 : batch.stride_a, one ? 0 : batch.stride_b,
               one ? 0 : batch.stride_c, one || epilogue == Epilogue::kNone ? 0 : batch.stride_bias, tf32_,
               rows.a, rows.c};
  }

  cublasStatus_t run_untyped(const void* A, const void* B, void* C, const void* bias, int M, int N, int K,
                             Epilogue epilogue, cudaStream_t stream, int algo_index, bool transpose_a,
                             bool transpose_b, const Batch& batch, const RowStrides& rows) {
    if (!ok()) return status_;
    if (algo_index < 0 || algo_index >= kMaxAlgos || !valid(batch)) return last_ = CUBLAS_STATUS_INVALID_VALUE;
    Plan* plan = plan_for(key_of(M, N, K, epilogue, algo_index, transpose_a, transpose_b, A, B, C, batch, rows));
    if (plan == nullptr || !plan->usable) return last_ = CUBLAS_STATUS_NOT_SUPPORTED;
    if (epilogue != Epilogue::kNone) {
      // The bias pointer is a descriptor attribute; setting it is a host-side store (no device work).
      const void* bias_ptr = bias;
      const cublasStatus_t s = cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                              &bias_ptr, sizeof(bias_ptr));
      if (s != CUBLAS_STATUS_SUCCESS) return last_ = s;
    }
    const float alpha = 1.0f, beta = 0.0f;
    // "A" of the column-major problem is B, "B" is A (see the file comment).
    return last_ = cublasLtMatmul(handle_, plan->desc, &alpha, B, plan->layout_b, A, plan->layout_a, &beta, C,
                                  plan->layout_c, C, plan->layout_c, &plan->algo, workspace_, workspace_bytes_, stream);
  }

  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t layout_a = nullptr;  // A as stored, read column-major: K x M, ld K (transposed: M x K, ld M)
    cublasLtMatrixLayout_t layout_b = nullptr;  // B as stored, read column-major: N x K, ld N (transposed: K x N, ld K)
    cublasLtMatrixLayout_t layout_c = nullptr;  // C^T: N x M, ld N
    cublasLtMatmulAlgo_t algo{};
    bool usable = false;
  };

  static void destroy(Plan& p) {
    if (p.layout_a != nullptr) cublasLtMatrixLayoutDestroy(p.layout_a);
    if (p.layout_b != nullptr) cublasLtMatrixLayoutDestroy(p.layout_b);
    if (p.layout_c != nullptr) cublasLtMatrixLayoutDestroy(p.layout_c);
    if (p.desc != nullptr) cublasLtMatmulDescDestroy(p.desc);
    p = Plan{};
  }

  Plan* plan_for(const Key& key) {
    auto it = plans_.find(key);
    if (it != plans_.end()) return &it->second;
    Plan plan;
    last_ = CUBLAS_STATUS_SUCCESS;
    plan.usable = build(plan, key);
    if (!plan.usable) destroy(plan);
    return &plans_.emplace(key, plan).first->second;
  }

  bool build(Plan& p, const Key& key) {
    const auto [M, N, K, epilogue_int, algo_index, transposes, align_a, align_b, align_c, count, stride_a, stride_b,
                stride_c, stride_bias, tf32, row_stride_a, row_stride_c] = key;
    const Epilogue epilogue = static_cast<Epilogue>(epilogue_int);
    const bool transpose_a = (transposes & 1) != 0, transpose_b = (transposes & 2) != 0;
    const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (cublasLtMatmulDescCreate(&p.desc, compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
    // C^T = op(B)^T op(A)^T. Row-major B read column-major is B^T, so the column-major "A" operand (B) needs
    // no transpose when B is plain and a transpose when B is stored [N, K]; likewise for A.
    const cublasOperation_t op_lt_a = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_lt_b = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_lt_a, sizeof(op_lt_a));
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_lt_b, sizeof(op_lt_b));
    cublasLtEpilogue_t lt_epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (epilogue == Epilogue::kBias) lt_epilogue = CUBLASLT_EPILOGUE_BIAS;
    if (epilogue == Epilogue::kBiasGeluTanh) lt_epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    if (epilogue == Epilogue::kBiasGelu) return false;  // erf gelu: cuBLASLt has none (the file comment)
    if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &lt_epilogue, sizeof(lt_epilogue)) !=
        CUBLAS_STATUS_SUCCESS)
      return false;
    if (epilogue != Epilogue::kNone) {
      const cudaDataType_t bias_type = element_type_;
      if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                         sizeof(bias_type)) != CUBLAS_STATUS_SUCCESS)
        return false;
      const int64_t bias_batch_stride = stride_bias;  // product i adds bias + i * stride_bias
      if (count > 1 && cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                                                      &bias_batch_stride, sizeof(bias_batch_stride)) !=
                           CUBLAS_STATUS_SUCCESS)
        return false;
    }
    const uint64_t m = uint64_t(M), n = uint64_t(N), k = uint64_t(K);
    // Each layout describes the matrix as stored (rows x cols of its column-major reading, leading dim).
    const int64_t ld_a = row_stride_a != 0 ? row_stride_a : transpose_a ? int64_t(M) : int64_t(K);
    const int64_t ld_c = row_stride_c != 0 ? row_stride_c : int64_t(N);
    const cublasStatus_t a_status = transpose_a ? cublasLtMatrixLayoutCreate(&p.layout_a, element_type_, m, k, ld_a)
                                                : cublasLtMatrixLayoutCreate(&p.layout_a, element_type_, k, m, ld_a);
    if (a_status != CUBLAS_STATUS_SUCCESS) return false;
    const cublasStatus_t b_status = transpose_b ? cublasLtMatrixLayoutCreate(&p.layout_b, element_type_, k, n, int64_t(K))
                                                : cublasLtMatrixLayoutCreate(&p.layout_b, element_type_, n, k, int64_t(N));
    if (b_status != CUBLAS_STATUS_SUCCESS) return false;
    if (cublasLtMatrixLayoutCreate(&p.layout_c, element_type_, n, m, ld_c) != CUBLAS_STATUS_SUCCESS) return false;
    if (count > 1) {
      const int32_t batch_count = count;
      for (const auto& [layout, stride] : {std::pair<cublasLtMatrixLayout_t, int64_t>{p.layout_a, stride_a},
                                           {p.layout_b, stride_b}, {p.layout_c, stride_c}}) {
        if (cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch_count,
                                             sizeof(batch_count)) != CUBLAS_STATUS_SUCCESS ||
            cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                             sizeof(stride)) != CUBLAS_STATUS_SUCCESS)
          return false;
      }
    }

    cublasLtMatmulPreference_t preference = nullptr;
    if (cublasLtMatmulPreferenceCreate(&preference) != CUBLAS_STATUS_SUCCESS) return false;
    cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                         sizeof(workspace_bytes_));
    // The column-major problem's A is our B and its B is our A; C and D are both our C.
    const uint32_t alignments[4] = {uint32_t(align_b), uint32_t(align_a), uint32_t(align_c), uint32_t(align_c)};
    const cublasLtMatmulPreferenceAttributes_t alignment_attrs[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i)
      cublasLtMatmulPreferenceSetAttribute(preference, alignment_attrs[i], &alignments[i], sizeof(alignments[i]));
    cublasLtMatmulHeuristicResult_t results[kMaxAlgos] = {};
    int returned = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.layout_b, p.layout_a, p.layout_c,
                                                            p.layout_c, preference, algo_index + 1, results, &returned);
    cublasLtMatmulPreferenceDestroy(preference);
    if (s != CUBLAS_STATUS_SUCCESS) last_ = s;
    if (s != CUBLAS_STATUS_SUCCESS || returned <= algo_index) return false;
    p.algo = results[algo_index].algo;
    return true;
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasStatus_t status_ = CUBLAS_STATUS_NOT_INITIALIZED;
  cublasStatus_t last_ = CUBLAS_STATUS_SUCCESS;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  void* padded_ = nullptr;  // padded_buffer()
  size_t padded_bytes_ = 0;
  cudaDataType_t element_type_ = CUDA_R_16BF;
  bool tf32_ = false;
  std::map<Key, Plan> plans_;
};

// The name of a cuBLAS status, for messages (no libcublas needed, unlike cublasGetStatusName).
inline const char* cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

// A GEMM through cuBLASLt (lt made for T's element type): row-major C[M, N] = epilogue(op(A) op(B)), op a
// transpose where asked, T float, __half or __nv_bfloat16, always accumulated in fp32. cuBLASLt adds the bias
// itself (CUBLASLT_EPILOGUE_BIAS, in fp32 before it rounds C) when the bias pointer is 16-byte aligned (its
// epilogue has failed on less-aligned vectors, as Marian's and PyTorch's cuBLASLt paths note), else a separate
// in-place kernel adds it (bias_epilogue, with the gelu of either form). The gelu (cublaslt_epilogue_in_gemm):
//  * kBiasGeluTanh: inside the GEMM (CUBLASLT_EPILOGUE_GELU_BIAS) with the bias, in fp32 before C is rounded
//    once; where cuBLASLt has no GELU_BIAS plan for the shape, the bias in the GEMM and the tanh gelu after;
//  * kBiasGelu (erf): always the separate kernel after the GEMM (gelu_epilogue), cuBLASLt having no erf gelu.
//    (For 16-bit C its input is then rounded once, to C's type, before the gelu; the tensor-core kernels round
//    only their final result.)
// Either way the gelu runs exactly once. algo_index: the rank of cuBLASLt's heuristic algorithm (generated
// code: 0); a rank the heuristic does not offer for the shape runs rank 0 instead.
// Returns cudaSuccess, the CUDA error of a launch, or cudaErrorNotSupported when cuBLASLt fails
// (lt.last_status() says why). M or N == 0: nothing to do. K == 0: C = epilogue(0).
// 16 bytes of a row that starts H elements into 16-byte unit q of `in` (0 < H < P, P elements a unit): the last
// P - H elements of unit q and the first H of unit q + 1, put together in registers (H a constant: no local array).
template <typename T, int H>
__device__ __forceinline__ uint4 shifted_unit(const uint4* in, int64_t q) {
  constexpr int P = int(16 / sizeof(T));
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  union { uint4 v[2]; Bits e[2 * P]; } two;
  union { uint4 v; Bits e[P]; } one;
  two.v[0] = in[q];
  two.v[1] = in[q + 1];
#pragma unroll
  for (int k = 0; k < P; ++k) one.e[k] = two.e[H + k];
  return one.v;
}

template <typename T, int H = 1>
__device__ __forceinline__ uint4 shifted_unit(const uint4* in, int64_t q, int h) {
  if constexpr (H < int(16 / sizeof(T))) {
    return h == H ? shifted_unit<T, H>(in, q) : shifted_unit<T, H + 1>(in, q, h);
  } else {
    return in[q];  // not reached: 0 < h < P
  }
}

// Copies `rows` rows of n elements out of rows `ld` elements apart (a padded product's C: each row of `in` starts
// 16-byte aligned, ld a multiple of 16 bytes). A row of `out` starts anywhere (n is odd: 50257 logits), so each
// thread stores 16 aligned bytes of it, taken from two units of `in` (shifted_unit), and the few elements before
// the first aligned unit and after the last go one by one: 16-byte stores instead of 2-byte ones (a GPT-2 prefill's
// logits at batch 8 x 1024 tokens, 1.6 GB moved, were 0.9 ms at one element per thread).
template <typename T>
__global__ void compact_rows_kernel(T* __restrict__ out, const T* __restrict__ in, int64_t rows, int64_t n, int64_t ld) {
  static_assert(16 % sizeof(T) == 0 && sizeof(T) <= 8, "whole elements in 16 bytes");
  constexpr int P = int(16 / sizeof(T));
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    T* o = out + r * n;
    const T* i = in + r * ld;
    const int h = int((P - (reinterpret_cast<uintptr_t>(o) / sizeof(T)) % P) % P);  // o + h is 16-byte aligned
    const int64_t head = h < n ? h : n;
    // Units of o from h on; with a shift, unit q + 1 of i is read too, which must lie within the row.
    int64_t units = (n - head) / P;
    if (h > 0 && units > ld / P - 1) units = ld / P - 1;
    if (units < 0) units = 0;
    const auto* from = reinterpret_cast<const uint4*>(i);
    auto* to = reinterpret_cast<uint4*>(o + h);
    for (int64_t q = first; q < units; q += step) to[q] = h == 0 ? from[q] : shifted_unit<T>(from, q, h);
    for (int64_t c = first; c < head; c += step) o[c] = i[c];
    for (int64_t c = head + units * P + first; c < n; c += step) o[c] = i[c];
  }
}

// C[M, N] = op(A) op(B) at N_pad = CublasLtGemm::padded_n > N: B copied into `padded` with N_pad - N zero rows
// (stored [N, K]) or columns (stored [K, N]), the product written there after it, then compacted into C. No
// epilogue (the caller's bias_epilogue runs on C). cudaErrorNotSupported when cuBLASLt has no plan.
template <typename T>
inline cudaError_t cublaslt_gemm_padded_n(CublasLtGemm& lt, const T* A, const T* B, T* C, int M, int N, int K,
                                          int64_t n_pad, bool transpose_a, bool transpose_b, T* padded,
                                          cudaStream_t stream) {
  T* b_pad = padded;
  T* c_pad = padded + (n_pad * K + 127) / 128 * 128;
  const size_t t = sizeof(T);
  if (transpose_b) {  // [N, K] -> [N_pad, K]: the rows, then zero rows
    if (cudaError_t e = cudaMemcpyAsync(b_pad, B, size_t(N) * K * t, cudaMemcpyDeviceToDevice, stream); e != cudaSuccess)
      return e;
    if (cudaError_t e = cudaMemsetAsync(b_pad + int64_t(N) * K, 0, size_t(n_pad - N) * K * t, stream); e != cudaSuccess)
      return e;
  } else {  // [K, N] -> [K, N_pad]: each row, then zero columns
    if (cudaError_t e = cudaMemcpy2DAsync(b_pad, size_t(n_pad) * t, B, size_t(N) * t, size_t(N) * t, size_t(K),
                                          cudaMemcpyDeviceToDevice, stream);
        e != cudaSuccess)
      return e;
    if (cudaError_t e = cudaMemset2DAsync(b_pad + N, size_t(n_pad) * t, 0, size_t(n_pad - N) * t, size_t(K), stream);
        e != cudaSuccess)
      return e;
  }
  if (lt.run(A, b_pad, c_pad, nullptr, M, int(n_pad), K, Epilogue::kNone, stream, 0, transpose_a, transpose_b) !=
      CUBLAS_STATUS_SUCCESS)
    return cudaErrorNotSupported;
  const unsigned columns = unsigned(std::min<int64_t>((N / int64_t(16 / sizeof(T)) + 255) / 256 + 1, 64));
  const unsigned rows = unsigned(std::min<int64_t>(M, 65535));
  compact_rows_kernel<T><<<dim3(columns, rows), 256, 0, stream>>>(C, c_pad, M, N, n_pad);
  return cudaGetLastError();
}

// The phases of a row-major C[M, N] whose N is not a multiple of P = 16 / sizeof(T) elements: row r starts
// (r N) mod P elements past a 16-byte boundary (C itself aligned), which depends on r mod count only; phase j (rows
// j, j + count, ...) starts its 16-byte aligned part at column head(j).
template <typename T>
struct GemmPhases {
  static constexpr int64_t P = int64_t(16 / sizeof(T));
  int64_t n;
  int64_t count;  // P / gcd(N mod P, P): 1 when N is a multiple of P
  __host__ __device__ explicit GemmPhases(int64_t n_) : n(n_), count(P) {
    for (int64_t d = n_ % P; d != 0 && count % 2 == 0 && d % 2 == 0; d /= 2) count /= 2;
    if (n_ % P == 0) count = 1;
  }
  __host__ __device__ int64_t head(int64_t j) const { return (P - (j * n) % P) % P; }
  // The columns of phase j's product: from head(j) on, a multiple of P (cuBLASLt's Hopper kernels want the product's
  // N aligned too, not only its rows: with 50250 of 50257 columns they ran 3x slower than at the padded N).
  __host__ __device__ int64_t body(int64_t j) const { return (n - head(j)) / P * P; }
  // Whether the phases move fewer bytes than the padded product (CublasLtGemm::padded_n) for C[m, n] = A B^T over k:
  // each phase reads B once, count - 1 more reads of B's n k elements, where the padded product copies B (2 n k) and
  // C (2 m n) once more. H200, float16, n 50257 (8 phases), k 768 (bench/transformers/logits_bench.cu): m 8192
  // 1.06 ms against 1.57 ms, m 1024 0.27 against 0.24, m 128 0.23 against 0.10; so phases from m > 1920 here.
  bool move_less_than_padding(int64_t m, int64_t k) const { return (count - 3) * k < 2 * m; }
  __host__ __device__ int64_t rows(int64_t j, int64_t m) const { return j < m ? (m - j + count - 1) / count : 0; }
};

// The columns of each row outside its phase's product (GemmPhases: before head, after head + body; < P each side):
// C[r, c] = sum_k A[r, k] B[c, k], one warp a row, accumulated in float.
template <typename T>
__global__ void gemm_edge_columns_kernel(T* __restrict__ C, const T* __restrict__ A, const T* __restrict__ B,
                                         int64_t M, int64_t N, int64_t K) {
  const GemmPhases<T> phases(N);
  const int lane = int(threadIdx.x % 32);
  for (int64_t r = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; r < M;
       r += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t head = phases.head(r % phases.count), tail = head + phases.body(r % phases.count);
    for (int64_t e = 0; e < head + (N - tail); ++e) {  // the e-th edge column: before head, then from tail on
      const int64_t c = e < head ? e : tail + (e - head);
      float sum = 0.0f;
      for (int64_t k = lane; k < K; k += 32)
        sum += kforge::cuda::to_float(A[r * K + k]) * kforge::cuda::to_float(B[c * K + k]);
      for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      if (lane == 0) C[r * N + c] = kforge::cuda::from_float<T>(sum);
    }
  }
}

// Whether cublaslt_gemm_phased_n can compute C[M, N] = A B^T in place: B stored [N, K] (transpose_b), A plain, K a
// multiple of P (so that A + j K and B + head K stay 16-byte aligned), the three operands 16-byte aligned, and
// cuBLASLt has a plan for every phase (host work, cached; generated code asks before a CUDA graph capture).
template <typename T>
inline bool cublaslt_can_run_phased_n(CublasLtGemm& lt, const T* A, const T* B, T* C, int M, int N, int K,
                                      bool transpose_a, bool transpose_b) {
  const GemmPhases<T> phases(N);
  const auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
  if (transpose_a || !transpose_b || phases.count == 1 || K % phases.P != 0 || N <= 2 * phases.P) return false;
  if (!aligned(A) || !aligned(B) || !aligned(C)) return false;
  for (int64_t j = 0; j < phases.count; ++j) {
    const int64_t m = phases.rows(j, M), h = phases.head(j);
    if (m > 0 && !lt.can_run(int(m), int(phases.body(j)), K, Epilogue::kNone, nullptr, 0, false, true, A + j * K, B + h * K,
                             C + j * N + h, Batch{}, RowStrides{phases.count * K, phases.count * N}))
      return false;
  }
  return true;
}

// Whether cublaslt_gemm takes the phases: they can run, and move fewer bytes than the padded product
// (GemmPhases::move_less_than_padding).
template <typename T>
inline bool cublaslt_prefers_phased_n(CublasLtGemm& lt, const T* A, const T* B, T* C, int M, int N, int K,
                                      bool transpose_a, bool transpose_b) {
  return GemmPhases<T>(N).move_less_than_padding(M, K) &&
         cublaslt_can_run_phased_n(lt, A, B, C, M, N, K, transpose_a, transpose_b);
}

// C[M, N] = A B^T in place where N is not a multiple of P (a vocabulary of 50257 logits): one cuBLASLt product per
// phase (GemmPhases: every count-th row, row strides count K and count N, a multiple of P, over the phase's aligned
// columns), which cuBLASLt's Hopper kernels take, and the few columns outside them by gemm_edge_columns_kernel. Against cublaslt_gemm_padded_n no copy of B and no compaction of C (a GPT-2 prefill's
// logits at batch 8 x 1024 tokens: 1.6 GB moved). No epilogue. cudaErrorNotSupported when cuBLASLt fails.
template <typename T>
inline cudaError_t cublaslt_gemm_phased_n(CublasLtGemm& lt, const T* A, const T* B, T* C, int M, int N, int K,
                                          cudaStream_t stream) {
  const GemmPhases<T> phases(N);
  for (int64_t j = 0; j < phases.count; ++j) {
    const int64_t m = phases.rows(j, M), h = phases.head(j);
    if (m > 0 && lt.run(A + j * K, B + h * K, C + j * N + h, nullptr, int(m), int(phases.body(j)), K, Epilogue::kNone, stream,
                        0, false, true, Batch{}, RowStrides{phases.count * K, phases.count * N}) != CUBLAS_STATUS_SUCCESS)
      return cudaErrorNotSupported;
  }
  const unsigned blocks = unsigned(std::min<int64_t>((int64_t(M) + 7) / 8, 4096));
  gemm_edge_columns_kernel<T><<<blocks, 256, 0, stream>>>(C, A, B, M, N, K);
  return cudaGetLastError();
}

// The elements padded_buffer() must hold for a padded product (B, then C, each 256-byte aligned).
inline size_t cublaslt_padded_elements(int M, int K, int64_t n_pad) {
  return size_t((n_pad * K + 127) / 128 * 128) + size_t(M) * size_t(n_pad);
}

inline bool cublaslt_bias_in_gemm(Epilogue epilogue, const void* bias) {
  return epilogue != Epilogue::kNone && (reinterpret_cast<uintptr_t>(bias) & 15u) == 0;
}

// The part of `epilogue` cuBLASLt applies inside the GEMM (cublaslt_gemm): nothing for an unaligned bias (or
// aligned_bias false), the bias and the tanh gelu for kBiasGeluTanh where it has a GELU_BIAS plan for the
// problem (host work, cached: can_run), else the bias. cublaslt_epilogue_after adds the rest.
inline Epilogue cublaslt_epilogue_in_gemm(CublasLtGemm& lt, Epilogue epilogue, bool aligned_bias, int M, int N, int K,
                                          const void* bias, bool transpose_a, bool transpose_b, const void* A,
                                          const void* B, const void* C, const Batch& batch = Batch{}) {
  if (epilogue == Epilogue::kNone || !aligned_bias) return Epilogue::kNone;
  if (epilogue == Epilogue::kBiasGeluTanh &&
      lt.can_run(M, N, K, Epilogue::kBiasGeluTanh, bias, 0, transpose_a, transpose_b, A, B, C, batch))
    return Epilogue::kBiasGeluTanh;
  return Epilogue::kBias;
}

// What remains of `epilogue` on C [M, N] after cuBLASLt applied `in_gemm` (cublaslt_epilogue_in_gemm): all of it
// (bias_epilogue), the gelu of its form (gelu_epilogue), or nothing.
template <typename T>
inline cudaError_t cublaslt_epilogue_after(T* C, const T* bias, int M, int N, Epilogue epilogue, Epilogue in_gemm,
                                           cudaStream_t stream) {
  if (in_gemm == epilogue) return cudaSuccess;
  if (in_gemm == Epilogue::kNone) return bias_epilogue(C, bias, M, N, epilogue, stream);
  return gelu_epilogue(C, M, N, stream, epilogue);  // in_gemm kBias: kBiasGelu or kBiasGeluTanh's gelu
}

template <typename T>
inline cudaError_t cublaslt_gemm(CublasLtGemm& lt, const T* A, const T* B, T* C, const NoDeduce<T>* bias, int M,
                                 int N, int K, Epilogue epilogue, bool transpose_a, bool transpose_b,
                                 cudaStream_t stream, int algo_index = 0) {
  if (M < 0 || N < 0 || K < 0 || (epilogue != Epilogue::kNone && bias == nullptr)) return cudaErrorInvalidValue;
  if (M == 0 || N == 0) return cudaSuccess;
  if (K == 0) {
    if (cudaError_t e = cudaMemsetAsync(C, 0, size_t(M) * size_t(N) * sizeof(T), stream); e != cudaSuccess) return e;
    return bias_epilogue(C, bias, M, N, epilogue, stream);
  }
  // N not a multiple of 16 bytes: in place by phases of rows where that moves less, else at a padded N
  // (CublasLtGemm::padded_n); the bias after either.
  const int64_t n_pad = CublasLtGemm::padded_n(M, N, sizeof(T));
  if (n_pad > 0 && cublaslt_prefers_phased_n(lt, A, B, C, M, N, K, transpose_a, transpose_b)) {
    if (cudaError_t e = cublaslt_gemm_phased_n(lt, A, B, C, M, N, K, stream); e != cudaSuccess) return e;
    return bias_epilogue(C, bias, M, N, epilogue, stream);
  }
  T* padded = n_pad > 0 ? static_cast<T*>(lt.padded_buffer(cublaslt_padded_elements(M, K, n_pad) * sizeof(T), stream))
                        : nullptr;
  if (padded != nullptr && lt.can_run(M, int(n_pad), K, Epilogue::kNone, nullptr, 0, transpose_a, transpose_b,
                                      A, padded, padded)) {
    if (cudaError_t e = cublaslt_gemm_padded_n(lt, A, B, C, M, N, K, n_pad, transpose_a, transpose_b, padded, stream);
        e != cudaSuccess)
      return e;
    return bias_epilogue(C, bias, M, N, epilogue, stream);
  }
  const Epilogue in_gemm = cublaslt_epilogue_in_gemm(lt, epilogue, cublaslt_bias_in_gemm(epilogue, bias), M, N, K, bias,
                                                    transpose_a, transpose_b, A, B, C);
  {
    if (algo_index != 0 && !lt.can_run(M, N, K, in_gemm, bias, algo_index, transpose_a, transpose_b, A, B, C)) {
      algo_index = 0;
    }
    if (lt.run(A, B, C, bias, M, N, K, in_gemm, stream, algo_index, transpose_a, transpose_b) != CUBLAS_STATUS_SUCCESS)
      return cudaErrorNotSupported;
  }
  return cublaslt_epilogue_after(C, bias, M, N, epilogue, in_gemm, stream);
}

// Builds (and caches) the cuBLASLt plan that cublaslt_gemm would use for these arguments; host work only.
// Generated code calls it before a CUDA graph capture, so that the call inside the capture finds it ready.
template <typename T>
inline void cublaslt_gemm_prepare(CublasLtGemm& lt, const T* A, const T* B, T* C, const NoDeduce<T>* bias, int M,
                                  int N, int K, Epilogue epilogue, bool transpose_a, bool transpose_b) {
  if (M <= 0 || N <= 0 || K <= 0 || (epilogue != Epilogue::kNone && bias == nullptr)) return;
  const Epilogue in_gemm = cublaslt_epilogue_in_gemm(lt, epilogue, cublaslt_bias_in_gemm(epilogue, bias), M, N, K, bias,
                                                    transpose_a, transpose_b, A, B, C);
  static_cast<void>(lt.can_run(M, N, K, in_gemm, bias, 0, transpose_a, transpose_b, A, B, C));
  // The phases' plans, else the padded product's buffer and plan (cublaslt_gemm): nothing is allocated inside a
  // capture.
  if (const int64_t n_pad = CublasLtGemm::padded_n(M, N, sizeof(T));
      n_pad > 0 && !cublaslt_prefers_phased_n(lt, A, B, C, M, N, K, transpose_a, transpose_b)) {
    if (void* padded = lt.padded_buffer(cublaslt_padded_elements(M, K, n_pad) * sizeof(T), nullptr)) {
      static_cast<void>(lt.can_run(M, int(n_pad), K, Epilogue::kNone, nullptr, 0, transpose_a, transpose_b, A,
                                   padded, padded));
    }
  }
}

// A strided batch of products through cuBLASLt (lt made for T's element type): for i < batch.count, row-major
// C_i[M, N] = op(A_i) op(B_i) with X_i = X + i * stride_x (a stride of 0: one matrix for every i), accumulated
// in fp32. No epilogue. Returns as cublaslt_gemm. M, N or batch.count == 0: nothing to do; K == 0: C = 0.
template <typename T>
inline cudaError_t cublaslt_gemm_batched(CublasLtGemm& lt, const T* A, const T* B, T* C, int M, int N, int K,
                                         const Batch& batch, bool transpose_a, bool transpose_b, cudaStream_t stream,
                                         int algo_index = 0) {
  if (M < 0 || N < 0 || K < 0 || batch.count < 0 || batch.outer < 0) return cudaErrorInvalidValue;
  if (M == 0 || N == 0 || batch.count == 0 || batch.outer == 0) return cudaSuccess;
  for (int64_t o = 0; o < batch.outer; ++o) {
    const T* a = A + o * batch.outer_stride_a;
    const T* b = B + o * batch.outer_stride_b;
    T* c = C + o * batch.outer_stride_c;
    if (K == 0) {  // every output matrix is zero
      for (int i = 0; i < batch.count; ++i) {
        if (cudaError_t e = cudaMemsetAsync(c + int64_t(i) * batch.stride_c, 0, size_t(M) * size_t(N) * sizeof(T), stream);
            e != cudaSuccess)
          return e;
      }
      continue;
    }
    const int algo = lt.can_run(M, N, K, Epilogue::kNone, nullptr, algo_index, transpose_a, transpose_b, a, b, c, batch)
                         ? algo_index
                         : 0;  // a rank the heuristic does not offer for the shape: its first choice
    if (lt.run(a, b, c, nullptr, M, N, K, Epilogue::kNone, stream, algo, transpose_a, transpose_b, batch) !=
        CUBLAS_STATUS_SUCCESS)
      return cudaErrorNotSupported;
  }
  return cudaSuccess;
}

// A strided batch of products with an epilogue (one level: batch.outer 1): C_i = epilogue(op(A_i) op(B_i)), product
// i's bias at bias + i * batch.stride_bias. The bias is added by cuBLASLt where every product's bias is 16-byte
// aligned (as cublaslt_gemm), else by bias_epilogue per product; the gelu as cublaslt_gemm's (the tanh form in
// the GEMM where it can be, else per product after it). Returns as cublaslt_gemm.
template <typename T>
inline cudaError_t cublaslt_gemm_batched(CublasLtGemm& lt, const T* A, const T* B, T* C, const NoDeduce<T>* bias,
                                         int M, int N, int K, Epilogue epilogue, const Batch& batch, bool transpose_a,
                                         bool transpose_b, cudaStream_t stream, int algo_index = 0) {
  if (epilogue == Epilogue::kNone)
    return cublaslt_gemm_batched(lt, A, B, C, M, N, K, batch, transpose_a, transpose_b, stream, algo_index);
  if (bias == nullptr || batch.outer != 1) return cudaErrorInvalidValue;
  const bool aligned_bias = cublaslt_bias_in_gemm(epilogue, bias) && (batch.stride_bias * sizeof(T)) % 16 == 0;
  const Epilogue in_gemm =
      M > 0 && N > 0 && K > 0 && batch.count > 0
          ? cublaslt_epilogue_in_gemm(lt, epilogue, aligned_bias, M, N, K, bias, transpose_a, transpose_b, A, B, C, batch)
          : Epilogue::kNone;
  if (in_gemm != Epilogue::kNone &&
      !lt.can_run(M, N, K, in_gemm, bias, algo_index, transpose_a, transpose_b, A, B, C, batch))
    algo_index = 0;  // a rank the heuristic does not offer for the shape: its first choice
  if (cudaError_t e = in_gemm != Epilogue::kNone
                          ? (lt.run(A, B, C, bias, M, N, K, in_gemm, stream, algo_index, transpose_a, transpose_b,
                                    batch) == CUBLAS_STATUS_SUCCESS
                                 ? cudaSuccess
                                 : cudaErrorNotSupported)
                          : cublaslt_gemm_batched(lt, A, B, C, M, N, K, batch, transpose_a, transpose_b, stream,
                                                  algo_index);
      e != cudaSuccess)
    return e;
  for (int i = 0; i < batch.count; ++i) {
    const cudaError_t e = cublaslt_epilogue_after(C + i * batch.stride_c, bias + i * batch.stride_bias, M, N, epilogue,
                                                  in_gemm, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// Builds (and caches) the plan cublaslt_gemm_batched would use; host work only (before a CUDA graph capture).
template <typename T>
inline void cublaslt_gemm_batched_prepare(CublasLtGemm& lt, const T* A, const T* B, T* C, int M, int N, int K,
                                          const Batch& batch, bool transpose_a, bool transpose_b) {
  if (M <= 0 || N <= 0 || K <= 0 || batch.count <= 0) return;
  for (int64_t o = 0; o < batch.outer; ++o) {  // the plans of every alignment the outer offsets give
    static_cast<void>(lt.can_run(M, N, K, Epilogue::kNone, nullptr, 0, transpose_a, transpose_b,
                                 A + o * batch.outer_stride_a, B + o * batch.outer_stride_b, C + o * batch.outer_stride_c,
                                 batch));
  }
}

// The plan of cublaslt_gemm_batched with an epilogue; host work only.
template <typename T>
inline void cublaslt_gemm_batched_prepare(CublasLtGemm& lt, const T* A, const T* B, T* C, const NoDeduce<T>* bias,
                                          int M, int N, int K, Epilogue epilogue, const Batch& batch, bool transpose_a,
                                          bool transpose_b) {
  if (M <= 0 || N <= 0 || K <= 0 || batch.count <= 0 || bias == nullptr) return;
  const bool aligned_bias = cublaslt_bias_in_gemm(epilogue, bias) && (batch.stride_bias * sizeof(T)) % 16 == 0;
  const Epilogue in_gemm =
      cublaslt_epilogue_in_gemm(lt, epilogue, aligned_bias, M, N, K, bias, transpose_a, transpose_b, A, B, C, batch);
  static_cast<void>(lt.can_run(M, N, K, in_gemm, bias, 0, transpose_a, transpose_b, A, B, C, batch));
}

// The float spellings generated float32 code calls (they predate the 16-bit GEMMs).
inline cudaError_t cublaslt_gemm_f32(CublasLtGemm& lt, const float* A, const float* B, float* C, const float* bias,
                                     int M, int N, int K, Epilogue epilogue, bool transpose_a, bool transpose_b,
                                     cudaStream_t stream) {
  return cublaslt_gemm(lt, A, B, C, bias, M, N, K, epilogue, transpose_a, transpose_b, stream);
}
inline void cublaslt_gemm_f32_prepare(CublasLtGemm& lt, const float* A, const float* B, float* C, const float* bias,
                                      int M, int N, int K, Epilogue epilogue, bool transpose_a, bool transpose_b) {
  cublaslt_gemm_prepare(lt, A, B, C, bias, M, N, K, epilogue, transpose_a, transpose_b);
}

// cuBLASLt (algorithm algo_index, see cublaslt_gemm) as a variant of a multi-kernel GEMM site; a site over a batch
// of products passes it on (cublaslt_gemm_batched).
template <typename T>
inline cudaError_t cublaslt_then_epilogue(CublasLtGemm& lt, const GemmArgs<T>& a, int algo_index = 0) {
  if (!is_single_product(a.batch)) {
    return cublaslt_gemm_batched(lt, a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.epilogue, a.batch, a.transpose_a,
                                 a.transpose_b, a.stream, algo_index);
  }
  return cublaslt_gemm(lt, a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.epilogue, a.transpose_a, a.transpose_b, a.stream,
                       algo_index);
}

}  // namespace cuda_gemm
}  // namespace kforge

#endif  // KFORGE_CUBLASLT_CUH_
