// kforge bf16 GEMM variant sets for the multi-kernel dispatcher (templates/runtime/kforge_multikernel.h)
// (and, through kforge_gemm_f32.cuh, the fp32 ones), built by hand for the GPU benchmark
// (bench/multikernel/gemm_gpu_bench.cu): the tensor-core tile configurations of kforge_gemm_tc.cuh, one or two
// per size hint, plus several of cuBLASLt's ranked algorithms as extern candidates, all called as
// cudaError_t(const GemmBf16Args&). (Generated code plans its own sets: src/passes/variants.cpp.) Use: one
// dispatcher per GEMM site (and epilogue) with make_gemm_bf16_variants + make_gemm_bf16_config, then
// `dispatcher({M, N, K}, args)`.
#ifndef KFORGE_GEMM_VARIANTS_CUH_
#define KFORGE_GEMM_VARIANTS_CUH_

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
#include "kforge_gemm_tc.cuh"
#include "kforge_multikernel.h"

namespace kforge {
namespace cuda_gemm {

// Bumped whenever a kernel or tile configuration changes, so that cached picks of older kernels are ignored
// (it feeds the variant-set hash of the cache key).
constexpr const char* kGemmVariantsVersion = "kforge-gemm-bf16-variants 4";

using GemmBf16Args = GemmArgs<__nv_bfloat16>;  // no transposes here: the tiles read A and B as stored
using GemmBf16MultiKernel = GemmMultiKernel<__nv_bfloat16>;

// A tensor-core configuration as a variant of these sets. A shape it cannot serve (N or K not a multiple of 8,
// unaligned pointers) goes to the library path, so its time then equals cuBLASLt's and the tie rule picks
// cuBLASLt. (Generated sites instead refuse such calls, tensor_core<> in kforge_gemm_tc.cuh, and never pass
// them to the tiles.)
template <class Tile>
inline cudaError_t run_tensor_core(CublasLtGemm& lt, const GemmBf16Args& a) {
  if (!tensor_core_applies(a)) return cublaslt_then_epilogue(lt, a);
  return TensorCoreGemm<Tile>::launch(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.epilogue, a.stream);
}

// Every candidate of a set computes the set's epilogue: kBiasGelu (erf) in the tiles' epilogue, or by cuBLASLt
// then a separate erf gelu kernel ("cublaslt_then_gelu"); kBiasGeluTanh (tanh) in the tiles' epilogue or in
// cuBLASLt's GELU_BIAS epilogue ("cublaslt_gelu_bias_tanh"). A caller that accepts the tanh form (for Paddle's
// erf gelu: kforge_cublaslt.cuh's bound) asks for a kBiasGeluTanh set; the two forms never share a dispatcher,
// whose candidates must be interchangeable.
struct GemmVariantOptions {
  bool include_cublaslt = true;  // the extern candidate (cuBLASLt, plus a separate epilogue kernel where needed)
  // cuBLASLt candidates: its heuristic's algorithms of rank 0 .. cublaslt_algos-1 (rank 0 is plain cuBLAS;
  // the first choice is not always the fastest, e.g. at M = 3520 on an H100).
  int cublaslt_algos = 4;
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
    const std::string base = epilogue == Epilogue::kBiasGelu       ? "cublaslt_then_gelu"
                             : epilogue == Epilogue::kBiasGeluTanh ? "cublaslt_gelu_bias_tanh"
                                                                   : "cublaslt";
    const int algos = std::max(1, std::min(options.cublaslt_algos, CublasLtGemm::kMaxAlgos));
    for (int algo = 0; algo < algos; ++algo)
      variants.push_back(Variant{algo == 0 ? base : base + "_alg" + std::to_string(algo),
                                 [lt, algo](const GemmBf16Args& a) { return cublaslt_then_epilogue(*lt, a, algo); },
                                 algo == 0 ? 0 : 1, {}});
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

#endif  // KFORGE_GEMM_VARIANTS_CUH_
