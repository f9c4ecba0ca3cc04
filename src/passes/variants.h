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
// The variant set hash is FNV-1a over the family, the names and the configurations, computed here and
// emitted as a constant, so the disk cache of one generated program never serves another set.
// Deterministic: same program and hints, same plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::passes {

enum class VariantKind : uint8_t {
  kLibrary,      // the kernel library's function for the op (docs/calling-convention.md)
  kGemmPlain,    // plain i-p-j loop
  kGemmBlocked,  // packed, register-blocked: mr x nr tile, kc-deep panels
  kRowSinglePass,
  kRowLooped,    // chunk elements at a time
};

struct KernelVariant {
  std::string name;         // unique within the site, identifier-like: "gemm_mr4_nr16_kc128"
  VariantKind kind = VariantKind::kLibrary;
  int rank = 0;             // simplicity: lower wins ties (kforge::mk::BenchmarkOptions::tie_margin)
  std::vector<int64_t> hint;  // the shape key it is tuned for (0 = any); empty: none
  int mr = 0, nr = 0, kc = 0;  // kGemmBlocked
  int chunk = 0;               // kRowLooped
  std::string config;          // "mr=4 nr=16 kc=128": what the hash covers besides the name
};

enum class SiteFamily : uint8_t { kGemm, kRowSoftmax };

struct MultiKernelSite {
  uint32_t call = 0;          // index in LoweredProgram::calls
  SiteFamily family = SiteFamily::kGemm;
  std::string name;           // the dispatcher's name: "mk_call_3_matmul"
  std::vector<KernelVariant> variants;
  uint64_t set_hash = 0;
};

struct MultiKernelPlan {
  std::vector<int64_t> hints;
  std::vector<MultiKernelSite> sites;  // in call order
  const MultiKernelSite* site_for_call(uint32_t call) const;
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

/// The plan for `program` (no sites when `hints` is empty). `call_group` (FusionPlan::call_group; may be empty)
/// marks calls fused into a group: they are no kernel calls and get no variants.
MultiKernelPlan plan_multi_kernels(const LoweredProgram& program, const std::vector<int64_t>& hints,
                                   const std::vector<uint32_t>& call_group = {});

/// FNV-1a 64 over the family and each variant's name and config (kforge::mk::fnv1a64, same constants).
uint64_t variant_set_hash(SiteFamily family, const std::vector<KernelVariant>& variants);

}  // namespace kforge::passes
