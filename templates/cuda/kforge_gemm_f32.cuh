// kforge fp32 GEMM variants for the multi-kernel dispatcher (templates/runtime/kforge_multikernel.h): the
// SIMT kernels of kforge_gemm.cuh and cuBLASLt in full fp32 (no TF32), all called as
// cudaError_t(const GemmF32Args&); and the dispatcher pieces every CUDA GEMM site shares, whatever its element
// type (GemmMultiKernel<T>; configurations: cuda_timing::make_cuda_config). What `kforge compile --target cuda
// --multi-kernel-hints` output includes (kforge writes it beside the outputs); the tensor-core kernels of the
// 16-bit sites are kforge_gemm_tc.cuh, kept apart so that generated code does not compile kernels it never runs.
#ifndef KFORGE_GEMM_F32_CUH_
#define KFORGE_GEMM_F32_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kforge_cublaslt.cuh"
#include "kforge_cuda_timer.cuh"
#include "kforge_gemm.cuh"
#include "kforge_multikernel.h"

namespace kforge {
namespace cuda_gemm {

// ---------------------------------------------------------------------------------------------------------
// fp32 GEMM sites: the SIMT kernels (tiles per size hint) and cuBLASLt in full fp32 (no TF32) with the erf
// epilogue kforge needs (cublaslt_gemm_f32). `kforge compile --target cuda --multi-kernel-hints` emits one
// GemmF32MultiKernel per GEMM group: cuBLASLt (its heuristic's ranks 0..7) plus simt_f32<tile, epilogue,
// transposes> per tile the hints chose (src/passes/variants.cpp), with make_gemm_f32_config(site, timer, hash).
// ---------------------------------------------------------------------------------------------------------
constexpr const char* kGemmF32VariantsVersion = "kforge-gemm-f32-variants 2";

// A multi-kernel GEMM site over elements of type T (float, __half, __nv_bfloat16): variants take GemmArgs<T>.
template <typename T>
using GemmMultiKernel = mk::MultiKernel<cudaError_t(const GemmArgs<T>&)>;
using GemmF32Args = GemmArgs<float>;
using GemmF32MultiKernel = GemmMultiKernel<float>;

// A site's dispatch key: {M, N, K} for one product, {M, N, K, count, outer} for a batch of products.
template <typename T>
inline mk::ShapeKey gemm_shape_key(const GemmArgs<T>& a) {
  if (is_single_product(a.batch)) return mk::ShapeKey{a.M, a.N, a.K};
  return mk::ShapeKey{a.M, a.N, a.K, a.batch.count, a.batch.outer};
}

// lt must have been made with element type CUDA_R_32F. (The spelling generated float32 code calls.)
inline cudaError_t cublaslt_f32_then_epilogue(CublasLtGemm& lt, const GemmF32Args& a, int algo_index = 0) {
  return cublaslt_then_epilogue(lt, a, algo_index);
}

// One SIMT instantiation as a variant: the epilogue and transposes are the site's (generated code knows them);
// the arguments must agree (a mismatch is a caller bug: cudaErrorInvalidValue, never a wrong result). One product:
// a batch is cuBLASLt's alone.
template <class Tile, Epilogue E, bool TransA, bool TransB>
inline cudaError_t simt_f32(const GemmF32Args& a) {
  if (a.epilogue != E || a.transpose_a != TransA || a.transpose_b != TransB || !is_single_product(a.batch))
    return cudaErrorInvalidValue;
  return SimtGemm<Tile>::template run<E, TransA, TransB>(a.A, a.B, a.C, a.bias, a.M, a.N, a.K, a.stream);
}

template <class Tile>
inline std::string simt_name(int hint) {
  return "simt" + std::to_string(Tile::BM) + "x" + std::to_string(Tile::BN) + "x" + std::to_string(Tile::BK) + "_h" +
         std::to_string(hint);
}

// lt: a CUDA_R_32F CublasLtGemm, or null for a set of the SIMT kernels alone. (The benchmark's set: no
// transposes; generated code builds its own per site.)
inline std::vector<GemmF32MultiKernel::Variant> make_gemm_f32_variants(std::shared_ptr<CublasLtGemm> lt) {
  using Variant = GemmF32MultiKernel::Variant;
  std::vector<Variant> variants;
  if (lt) variants.push_back(Variant{"cublaslt_f32", [lt](const GemmF32Args& a) { return cublaslt_f32_then_epilogue(*lt, a); }, 0, {}});
  variants.push_back(Variant{simt_name<kSimtTileSmall>(64),
                             [](const GemmF32Args& a) {
                               return SimtGemm<kSimtTileSmall>::launch(a.A, a.B, a.C, a.bias, a.M, a.N, a.K,
                                                                       a.epilogue, a.stream);
                             },
                             1, {64, 0, 0}});
  variants.push_back(Variant{simt_name<kSimtTileLarge>(4096),
                             [](const GemmF32Args& a) {
                               return SimtGemm<kSimtTileLarge>::launch(a.A, a.B, a.C, a.bias, a.M, a.N, a.K,
                                                                       a.epilogue, a.stream);
                             },
                             2, {4096, 0, 0}});
  return variants;
}

// The variant-set hash of hand-built sets (generated code has kforge compute it): the kernels' version and
// every variant's name and rank, so that cached picks of other kernels or another set are ignored.
template <class Variant>
inline uint64_t gemm_variant_set_hash(const char* version, const std::vector<Variant>& variants) {
  uint64_t hash = mk::fnv1a64(version);
  for (const Variant& v : variants) hash = mk::fnv1a64(v.name + ":" + std::to_string(v.rank) + ";", hash);
  return hash;
}

// Generated code: the variant-set hash kforge computed at generation time.
inline GemmF32MultiKernel::Config make_gemm_f32_config(const std::string& site,
                                                       std::shared_ptr<cuda_timing::CudaEventTimer> timer,
                                                       uint64_t variant_set_hash) {
  return cuda_timing::make_cuda_config<GemmF32MultiKernel>(site, std::move(timer), variant_set_hash);
}

// Hand-built sets (benchmarks): a timer of its own on `stream`.
inline GemmF32MultiKernel::Config make_gemm_f32_config(const std::string& site, cudaStream_t stream,
                                                       const std::vector<GemmF32MultiKernel::Variant>& variants) {
  return make_gemm_f32_config(site, std::make_shared<cuda_timing::CudaEventTimer>(stream),
                              gemm_variant_set_hash(kGemmF32VariantsVersion, variants));
}

}  // namespace cuda_gemm
}  // namespace kforge

#endif  // KFORGE_GEMM_F32_CUH_
