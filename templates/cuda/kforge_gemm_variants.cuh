// kforge bf16 GEMM variant sets for the multi-kernel dispatcher (templates/runtime/kforge_multikernel.h)
// (and, through kforge_gemm_f32.cuh, the fp32 ones):
// the tensor-core tile configurations of kforge_gemm.cuh, one or two per size hint, plus cuBLASLt as the
// extern candidate, all called as cudaError_t(const GemmBf16Args&). Generated code builds one dispatcher per
// GEMM site (and epilogue) with make_gemm_bf16_variants + make_gemm_bf16_config and calls
// `dispatcher({M, N, K}, args)`.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kforge_cublaslt.cuh"
#include "kforge_cuda_timer.cuh"
#include "kforge_gemm.cuh"
#include "kforge_gemm_f32.cuh"
#include "kforge_multikernel.h"

namespace kforge {
namespace cuda_gemm {

// Bumped whenever a kernel or tile configuration changes, so that cached picks of older kernels are ignored
// (it feeds the variant-set hash of the cache key).
constexpr const char* kGemmVariantsVersion = "kforge-gemm-bf16-variants 2";

struct GemmBf16Args {
  const __nv_bfloat16* A;     // [M, K] row-major
  const __nv_bfloat16* B;     // [K, N] row-major
  __nv_bfloat16* C;           // [M, N] row-major, written (never read)
  const __nv_bfloat16* bias;  // [N], or null when epilogue == kNone
  int M, N, K;
  Epilogue epilogue;
  cudaStream_t stream;
};
using GemmBf16MultiKernel = mk::MultiKernel<cudaError_t(const GemmBf16Args&)>;

// The library path with Paddle's exact semantics: cuBLASLt GEMM (with its exact BIAS epilogue where that is
// all that is asked), then erf gelu as a separate kernel. algo_index: the rank of cuBLASLt's heuristic
// algorithm; a rank the heuristic does not offer for the shape runs its first choice (rank 0) instead.
inline cudaError_t cublaslt_then_epilogue(CublasLtGemm& lt, const GemmBf16Args& a, int algo_index = 0) {
  const Epilogue in_gemm = a.epilogue == Epilogue::kBiasGelu ? Epilogue::kNone : a.epilogue;
  if (algo_index != 0 && !lt.can_run(a.M, a.N, a.K, in_gemm, a.bias, algo_index)) algo_index = 0;
  if (lt.run(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, in_gemm, a.stream, algo_index) != CUBLAS_STATUS_SUCCESS)
    return cudaErrorUnknown;
  if (a.epilogue == Epilogue::kBiasGelu) return bias_gelu_bf16(a.C, a.bias, a.M, a.N, a.stream);
  return cudaSuccess;
}

// A tensor-core configuration as a variant. A shape it cannot serve (N or K not a multiple of 8, unaligned
// pointers) goes to the library path, so its time then equals cuBLASLt's and the tie rule picks cuBLASLt.
template <class Tile>
inline cudaError_t run_tensor_core(CublasLtGemm& lt, const GemmBf16Args& a) {
  if (!TensorCoreGemm<Tile>::can_run(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.epilogue)) return cublaslt_then_epilogue(lt, a);
  return TensorCoreGemm<Tile>::launch(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.epilogue, a.stream);
}

struct GemmVariantOptions {
  bool include_cublaslt = true;  // the extern candidate (cuBLASLt, plus the separate erf epilogue if any)
  // cuBLASLt candidates: its heuristic's algorithms of rank 0 .. cublaslt_algos-1 (rank 0 is plain cuBLAS;
  // the first choice is not always the fastest, e.g. at M = 3520 on an H100).
  int cublaslt_algos = 4;
  // Also offer cuBLASLt's fused GELU_BIAS epilogue, which computes the tanh approximation of gelu: only for
  // gelu(approximate=true), or when the caller accepts the (sub-ulp for bf16) difference.
  bool allow_tanh_gelu = false;
};

template <class Tile>
inline std::string tile_name(int hint) {
  return "tc" + std::to_string(Tile::BM) + "x" + std::to_string(Tile::BN) + "x" + std::to_string(Tile::BK) + "s" +
         std::to_string(Tile::STAGES) + "_h" + std::to_string(hint);
}

// Ranks (lower = simpler, wins ties within the margin): plain cuBLAS (the library's first choice) first, its
// other ranked algorithms next, then our tiles by size.
inline std::vector<GemmBf16MultiKernel::Variant> make_gemm_bf16_variants(std::shared_ptr<CublasLtGemm> lt,
                                                                        Epilogue epilogue,
                                                                        GemmVariantOptions options = {}) {
  using Variant = GemmBf16MultiKernel::Variant;
  std::vector<Variant> variants;
  if (options.include_cublaslt) {
    const std::string base = epilogue == Epilogue::kBiasGelu ? "cublaslt_then_gelu" : "cublaslt";
    const int algos = std::max(1, std::min(options.cublaslt_algos, CublasLtGemm::kMaxAlgos));
    for (int algo = 0; algo < algos; ++algo)
      variants.push_back(Variant{algo == 0 ? base : base + "_alg" + std::to_string(algo),
                                 [lt, algo](const GemmBf16Args& a) { return cublaslt_then_epilogue(*lt, a, algo); },
                                 algo == 0 ? 0 : 1, {}});
    if (epilogue == Epilogue::kBiasGelu && options.allow_tanh_gelu)
      for (int algo = 0; algo < algos; ++algo)
        variants.push_back(Variant{"cublaslt_gelu_bias_tanh" + (algo == 0 ? std::string() : "_alg" + std::to_string(algo)),
                                   [lt, algo](const GemmBf16Args& a) {
                                     const int use = algo != 0 && !lt->can_run(a.M, a.N, a.K, Epilogue::kBiasGelu,
                                                                               a.bias, algo)
                                                         ? 0
                                                         : algo;
                                     return lt->run(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, Epilogue::kBiasGelu,
                                                    a.stream, use) == CUBLAS_STATUS_SUCCESS
                                                ? cudaSuccess
                                                : cudaErrorUnknown;
                                   },
                                   1, {}});
  }
  variants.push_back(Variant{tile_name<kTileForHint64>(64),
                             [lt](const GemmBf16Args& a) { return run_tensor_core<kTileForHint64>(*lt, a); }, 2,
                             {64, 0, 0}});
  variants.push_back(Variant{tile_name<kTileForHint256>(256),
                             [lt](const GemmBf16Args& a) { return run_tensor_core<kTileForHint256>(*lt, a); }, 3,
                             {256, 0, 0}});
  variants.push_back(Variant{tile_name<kTileForHint4096>(4096),
                             [lt](const GemmBf16Args& a) { return run_tensor_core<kTileForHint4096>(*lt, a); }, 4,
                             {4096, 0, 0}});
  variants.push_back(Variant{tile_name<kTileForHint4096Wide>(4096),
                             [lt](const GemmBf16Args& a) { return run_tensor_core<kTileForHint4096Wide>(*lt, a); },
                             5, {4096, 0, 0}});
  return variants;
}

// Dispatcher configuration for a bf16 site: event timer on `stream`, a variant-set hash that changes with
// kGemmVariantsVersion, the CUDA benchmark settings (cuda_timing::set_cuda_bench_options).
inline GemmBf16MultiKernel::Config make_gemm_bf16_config(const std::string& site, cudaStream_t stream,
                                                         const std::vector<GemmBf16MultiKernel::Variant>& variants) {
  return cuda_timing::make_cuda_config<GemmBf16MultiKernel>(site, std::make_shared<cuda_timing::CudaEventTimer>(stream),
                                                            gemm_variant_set_hash(kGemmVariantsVersion, variants));
}

}  // namespace cuda_gemm
}  // namespace kforge
