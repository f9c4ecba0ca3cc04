// Multi-kernel variant planning (`kforge compile --multi-kernel-hints 64,256,4096`, docs/multi-kernel.md):
// which calls of a LoweredProgram get several kernel variants and a run-time dispatcher, and which variants.
//
//   - GEMM: float32 `matmul` calls whose y is a matrix and whose x is a matrix or (not transposed) a batch of
//     matrices (the batch folds into M). Variants: the kernel library's own matmul (the extern candidate,
//     rank 0), a plain i-p-j loop (rank 1), and one register-blocked GEMM per distinct tile configuration
//     chosen for the hints (MR x NR register tile, KC-deep packed panels; ranks 2, 3, ... by hint order).
//     Every variant sums each output element over k in increasing order from 0, so all of them give the
//     same bits as the reference kernel.
//   - Row reductions over the last axis: float32 `softmax` (axis -1 or rank-1). Variants: the library
//     kernel (rank 0), a single-pass row loop (one pass per statistic with the row kept hot, rank 1) and a
//     looped one that walks the row in chunks sized for the hints' row lengths (rank 2).
//   - --target cuda: every GEMM group of the fusion plan (FusedGroup kGemm: a matmul with its bias /
//     bias+gelu epilogue, a batch of products or one) is a site.
//     Every site first offers cuBLASLt: its heuristic's first choice (rank 0, the extern candidate, what runs
//     without hints), then the algorithms it ranks after it (kCublasLtRanks in all; "cublaslt_f16_alg3"), since
//     the first choice is not always the fastest (an H200's float16 BERT / GPT-2 GEMMs at M 8192: up to 0.81x
//     with another rank, bench/transformers/gemm_rank_bench.cu). A batch of products offers these alone.
//     float32 (kCudaGemmF32): cuBLASLt in full fp32 (or TF32 when the class is told so), then one SIMT tile of
//     templates/cuda/kforge_gemm.cuh per distinct tile chosen for the hints.
//     float16 / bfloat16 (kCudaGemm16): cuBLASLt in that type with fp32 compute, then one tensor-core
//     tile of templates/cuda/kforge_gemm_tc.cuh per distinct tile chosen for the hints. The
//     tensor-core kernel reads A and B untransposed and needs K and N multiples of 8: a site with a transpose,
//     or with a static K or N that is no multiple of 8, offers cuBLASLt alone. (Run-time reasons a tile cannot
//     serve a call, pointers not 16-byte aligned, are the generated dispatcher's: it sends such calls to
//     cuBLASLt, codegen/cuda_gemm.h.)
//     The site's epilogue and transposes (and for 16-bit sites its dtype) are part of its hash (site `config`),
//     so GEMMs of one shape but another epilogue never share cached picks.
//   - --target cuda: every row group of the fusion plan (FusedGroup kRow: softmax, layer_norm, row
//     reductions) is a site keyed by {rows, row length}. Variants: the launcher's own choice by row length
//     (rank 0, what runs without hints), then per hinted row length a team that holds the row in registers
//     (team x 4 vectors per thread, and 4x the team with one vector per thread: more threads per row for
//     few rows), and a team that loops over the row in memory (any length). A register variant runs only
//     rows up to its capacity (team x regs x the group's vector width; MultiKernel::Variant::applies). The
//     site config (group label, input and store types and accesses) is hashed: groups of another structure
//     never share picks; groups that differ only in constants do, which costs nothing (picks are speed only).
// The variant set hash is FNV-1a over the family, the names and the configurations, computed here and
// emitted as a constant, so the disk cache of one generated program never serves another set.
// Deterministic: same program and hints, same plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "passes/fusion.h"
#include "passes/lowered_program.h"

namespace kforge::passes {

enum class VariantKind : uint8_t {
  kLibrary,      // the kernel library's function for the op (docs/calling-convention.md)
  kGemmPlain,    // plain i-p-j loop
  kGemmBlocked,  // packed, register-blocked: mr x nr tile, kc-deep panels
  kRowSinglePass,
  kRowLooped,    // chunk elements at a time
  kCublasLt,     // --target cuda: cuBLASLt in the site's dtype, fp32 compute (CUBLAS_COMPUTE_32F, no TF32)
  kCudaSimt,     // --target cuda: kforge::cuda_gemm::SimtGemm<SimtTile<bm, bn, bk, tm, tn>> (float32)
  kCudaTensorCore,  // --target cuda: kforge::cuda_gemm::TensorCoreGemm<TensorCoreTile<bm, bn, bk, warps_m,
                    // warps_n, stages>> (float16 / bfloat16)
  kCudaRowAuto,       // --target cuda row group: the launcher's choice by row length (no hints' behaviour)
  kCudaRowRegisters,  // --target cuda row group: `team` threads per row, `regs` vectors each in registers
  kCudaRowLooped,     // --target cuda row group: `team` threads per row, every pass loops over memory
};

struct KernelVariant {
  std::string name;         // unique within the site, identifier-like: "gemm_mr4_nr16_kc128"
  VariantKind kind = VariantKind::kLibrary;
  int rank = 0;             // simplicity: lower wins ties (kforge::mk::BenchmarkOptions::tie_margin)
  std::vector<int64_t> hint;  // the shape key it is tuned for (0 = any); empty: none
  int mr = 0, nr = 0, kc = 0;  // kGemmBlocked
  int chunk = 0;               // kRowLooped
  int bm = 0, bn = 0, bk = 0, tm = 0, tn = 0;  // kCudaSimt: CTA tile bm x bn, bk deep; tm x tn per thread
  int warps_m = 0, warps_n = 0, stages = 0;    // kCudaTensorCore (with bm, bn, bk): warp grid, pipeline depth
  int team = 0, regs = 0;      // kCudaRowRegisters / kCudaRowLooped (regs = 0): threads per row, vectors each
  int algo = 0;                // kCublasLt: the rank of cuBLASLt's heuristic algorithm (0: its first choice)
  std::string config;          // "mr=4 nr=16 kc=128": what the hash covers besides the name
};

enum class SiteFamily : uint8_t { kGemm, kRowSoftmax, kCudaGemmF32, kCudaGemm16, kCudaRow };

struct MultiKernelSite {
  uint32_t call = 0;          // index in LoweredProgram::calls (kCudaGemm*: the group's matmul)
  uint32_t group = kNone;     // kCudaGemm* / kCudaRow: the group (FusionPlan::groups index)
  SiteFamily family = SiteFamily::kGemm;
  std::string name;           // the dispatcher's name: "mk_call_3_matmul", "mk_call_0_matmul_bias_gelu"
  std::string config;         // kCudaGemmF32: "epilogue=bias_gelu transpose_x=0 transpose_y=1" (hashed);
                              // kCudaGemm16: "dtype=bfloat16 epilogue=... transpose_x=0 transpose_y=0"
  std::vector<KernelVariant> variants;
  uint64_t set_hash = 0;
};

struct MultiKernelPlan {
  std::vector<int64_t> hints;
  std::vector<MultiKernelSite> sites;  // in call order
  const MultiKernelSite* site_for_call(uint32_t call) const;
  const MultiKernelSite* site_for_group(uint32_t group) const;
};

/// Parses "64,256,4096": positive integers up to 2^31, comma-separated, no empties. On error returns
/// nullopt and sets `error` (lowercase message) and `error_offset` (the offset of the bad item in `text`).
std::optional<std::vector<int64_t>> parse_multi_kernel_hints(std::string_view text, std::string& error,
                                                             size_t& error_offset);

/// The CPU GEMM register tile for a size hint (M): small M gets short, wide tiles and short panels; large M
/// taller tiles and deeper panels.
KernelVariant cpu_gemm_variant_for_hint(int64_t hint);
/// The chunk of the looped row reduction for a hinted row length.
int row_chunk_for_hint(int64_t hint);
/// The fp32 SIMT tile (one of kforge_gemm.cuh's kSimtTileSmall / Medium / Large) for a size hint (M).
KernelVariant cuda_simt_variant_for_hint(int64_t hint);

/// The tensor-core tile (one of kforge_gemm_tc.cuh's kTileForHint64 / 256 / 4096) for a size hint (M).
KernelVariant cuda_tensor_core_variant_for_hint(int64_t hint);

/// The --target cuda row variants planned for a hinted row length (elements): the register team sized for it
/// (team x 4 vectors of 4 floats hold rows up to 16 x team; none beyond 16384), the same capacity with one
/// vector per thread (4x the team; none beyond 4096), and the looped team. Named "row_regs_t<team>_c<regs>" /
/// "row_looped_t<team>".
std::vector<KernelVariant> cuda_row_variants_for_hint(int64_t hint);

/// Bumped whenever the CUDA GEMM kernels or the cuBLASLt call change (templates/cuda/kforge_gemm.cuh,
/// kforge_cublaslt.cuh): it feeds every kCudaGemmF32 set hash, so picks cached for older kernels are ignored.
/// (2: the separate bias / gelu kernel after cuBLASLt became one template over the element type, with 16-byte
/// vectors.)
/// (3: cuBLASLt's ranked algorithms as variants, batches of products as sites.)
inline constexpr const char* kCudaGemmF32Version = "kforge-cuda-gemm-f32 3";
/// Likewise for the 16-bit sites (kCudaGemm16: kforge_gemm_tc.cuh, kforge_cublaslt.cuh).
inline constexpr const char* kCudaGemm16Version = "kforge-cuda-gemm-16 2";
/// How many of cuBLASLt's ranked algorithms a CUDA GEMM site offers (kforge_cublaslt.cuh's kMaxAlgos).
inline constexpr int kCublasLtRanks = 8;

/// The plan for `program` (no sites when `hints` is empty). `call_group` (FusionPlan::call_group; may be empty)
/// marks calls fused into a group: they are no kernel calls and get no variants.
MultiKernelPlan plan_multi_kernels(const LoweredProgram& program, const std::vector<int64_t>& hints,
                                   const std::vector<uint32_t>& call_group = {});

/// --target cuda: one site per kGemm group of `fusion` (no sites when `hints` is empty): kCudaGemmF32 for
/// float32 groups, kCudaGemm16 for float16 / bfloat16 ones.
MultiKernelPlan plan_cuda_gemm_variants(const FusionPlan& fusion,
                                        const std::vector<int64_t>& hints);

/// Bumped whenever the generated row kernels or their launch shapes change (codegen/cuda_kernels.cpp): it
/// feeds every kCudaRow set hash.
inline constexpr const char* kCudaRowVersion = "kforge-cuda-row 1";

/// --target cuda: one kCudaRow site per kRow group of `fusion` (no sites when `hints` is empty).
MultiKernelPlan plan_cuda_row_variants(const LoweredProgram& program, const FusionPlan& fusion,
                                       const std::vector<int64_t>& hints);

/// FNV-1a 64 over the family, the site config (when not empty) and each variant's name and config
/// (kforge::mk::fnv1a64, same constants).
uint64_t variant_set_hash(SiteFamily family, const std::vector<KernelVariant>& variants,
                          std::string_view site_config = {});

}  // namespace kforge::passes
