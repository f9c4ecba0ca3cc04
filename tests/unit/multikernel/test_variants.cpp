// Variant planning (src/passes/variants.h): hint parsing, which calls get variants, determinism, set hashes.
#include <catch2/catch.hpp>

#include "../passes/pass_test_util.h"
#include "passes/variants.h"

using namespace kforge::passes;

namespace {

std::vector<int64_t> parse_ok(const std::string& text) {
  std::string error;
  size_t offset = 0;
  auto hints = parse_multi_kernel_hints(text, error, offset);
  INFO(error);
  REQUIRE(hints.has_value());
  return *hints;
}

std::pair<std::string, size_t> parse_error(const std::string& text) {
  std::string error;
  size_t offset = 99;
  REQUIRE_FALSE(parse_multi_kernel_hints(text, error, offset).has_value());
  return {error, offset};
}

// A CUDA GEMM site's cuBLASLt variants: the heuristic's ranks 0-7, each at its own rank ("cublaslt_f32#0",
// "cublaslt_f32_alg1#1", ...), then `tiles` (name#rank) after them.
std::vector<std::string> cublaslt_then(const std::string& lt, std::vector<std::string> tiles = {}) {
  std::vector<std::string> out;
  for (int algo = 0; algo < kCublasLtRanks; ++algo) {
    out.push_back(lt + (algo == 0 ? "" : "_alg" + std::to_string(algo)) + "#" + std::to_string(algo));
  }
  out.insert(out.end(), tiles.begin(), tiles.end());
  return out;
}

std::vector<std::string> variant_names(const MultiKernelSite& site) {
  std::vector<std::string> out;
  for (const KernelVariant& v : site.variants) out.push_back(v.name + "#" + std::to_string(v.rank));
  return out;
}

constexpr const char* kProgram = R"(program: t
inputs:  [{name: x, dtype: float32, shape: [-1, 64]}, {name: i, dtype: int64, shape: [4, 4]}]
params:  [{name: w, dtype: float32, shape: [64, 32]}, {name: wt, dtype: float32, shape: [16, 32]}]
ops:
  - {op: matmul, in: [x, w], out: [h]}
  - {op: softmax, in: [h], out: [p], attrs: {axis: -1}}
  - {op: softmax, in: [p], out: [q], attrs: {axis: 0}}
  - {op: matmul, in: [q, wt], out: [r], attrs: {transpose_y: true}}
  - {op: matmul, in: [i, i], out: [ii]}
outputs: [r, ii]
)";

}  // namespace

TEST_CASE("--multi-kernel-hints values are parsed and bad ones located") {
  CHECK(parse_ok("64,256,4096") == std::vector<int64_t>{64, 256, 4096});
  CHECK(parse_ok("7") == std::vector<int64_t>{7});
  CHECK(parse_error("64,,4096") == std::make_pair(std::string("empty size hint in --multi-kernel-hints (expected "
                                                              "positive integers such as 64,256,4096)"),
                                                  size_t{3}));
  CHECK(parse_error("64,abc").second == 3);
  CHECK(parse_error("64,abc").first == "size hint 'abc' is not an integer");
  CHECK(parse_error("64, 256").first == "size hint ' 256' is not an integer");
  CHECK(parse_error("0").first == "size hint '0' must be positive");
  CHECK(parse_error("-5").first == "size hint '-5' must be positive");
  CHECK(parse_error("1,99999999999999999999").first.find("too large") != std::string::npos);
  CHECK(parse_error("64,64").first == "size hint 64 is given twice");
  CHECK(parse_error("").second == 0);
  CHECK(parse_error("64,").second == 3);
}

TEST_CASE("float32 matmuls and last-axis softmaxes get variants; the rest stays a kernel call") {
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(kProgram);
  INFO(env.printed());
  REQUIRE(lp.has_value());
  MultiKernelPlan none = plan_multi_kernels(*lp, {});
  CHECK(none.sites.empty());
  MultiKernelPlan plan = plan_multi_kernels(*lp, {64, 256, 4096});
  REQUIRE(plan.sites.size() == 3);
  CHECK(plan.sites[0].name == "mk_call_0_matmul");
  CHECK(plan.sites[0].family == SiteFamily::kGemm);
  CHECK(plan.sites[1].name == "mk_call_1_softmax");
  CHECK(plan.sites[1].family == SiteFamily::kRowSoftmax);
  CHECK(plan.sites[2].name == "mk_call_3_matmul");  // softmax over axis 0 and the int64 matmul are not planned
  CHECK(plan.site_for_call(2) == nullptr);
  CHECK(plan.site_for_call(4) == nullptr);
  std::vector<std::string> names;
  for (const KernelVariant& v : plan.sites[0].variants) names.push_back(v.name + "#" + std::to_string(v.rank));
  CHECK(names == std::vector<std::string>{"library#0", "gemm_plain#1", "gemm_mr4_nr16_kc128#2",
                                          "gemm_mr4_nr32_kc256#3", "gemm_mr8_nr32_kc256#4"});
  CHECK(plan.sites[0].variants[2].hint == std::vector<int64_t>{64, 0, 0});
  names.clear();
  for (const KernelVariant& v : plan.sites[1].variants) names.push_back(v.name);
  CHECK(names == std::vector<std::string>{"library", "row_single_pass", "row_looped_c64", "row_looped_c1024"});
  // Deterministic, and the hash follows the variant set.
  MultiKernelPlan again = plan_multi_kernels(*lp, {64, 256, 4096});
  CHECK(again.sites[0].set_hash == plan.sites[0].set_hash);
  CHECK(plan.sites[0].set_hash == plan.sites[2].set_hash);  // same family, same variants
  CHECK(plan.sites[0].set_hash != plan.sites[1].set_hash);
  MultiKernelPlan other = plan_multi_kernels(*lp, {64, 4096});
  CHECK(other.sites[0].set_hash != plan.sites[0].set_hash);
  CHECK(other.sites[0].variants.size() == 4);
}

TEST_CASE("hints that map to one tile make one variant") {
  CHECK(cpu_gemm_variant_for_hint(64).name == cpu_gemm_variant_for_hint(100).name);
  CHECK(cpu_gemm_variant_for_hint(16).name == "gemm_mr2_nr16_kc128");
  CHECK(cpu_gemm_variant_for_hint(4096).name == "gemm_mr8_nr32_kc256");
  CHECK(cpu_gemm_variant_for_hint(4096).config == "mr=8 nr=32 kc=256");
  CHECK(row_chunk_for_hint(128) == 64);
  CHECK(row_chunk_for_hint(4096) == 1024);
}

TEST_CASE("--target cuda: each GEMM group is a site of cuBLASLt's ranks and the SIMT tiles of the hints") {
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(kProgram);
  INFO(env.printed());
  REQUIRE(lp.has_value());
  FusionOptions options;
  options.single_call_groups = true;
  options.gemm_groups = true;
  const FusionPlan fusion = plan_fusion(*lp, options);  // the matmuls are GEMM groups (the int64 one is not)
  CHECK(plan_cuda_gemm_variants(fusion, {}).sites.empty());
  const MultiKernelPlan plan = plan_cuda_gemm_variants(fusion, {64, 256, 4096});
  REQUIRE(plan.sites.size() == 2);
  const MultiKernelSite& s0 = plan.sites[0];
  CHECK(s0.family == SiteFamily::kCudaGemmF32);
  CHECK(s0.name == "mk_call_0_matmul");
  CHECK(s0.call == 0);
  CHECK(fusion.groups.at(s0.group).kind == GroupKind::kGemm);
  CHECK(plan.site_for_group(s0.group) == &s0);
  CHECK(s0.config == "epilogue=none transpose_x=0 transpose_y=0");
  CHECK(plan.sites[1].config == "epilogue=none transpose_x=0 transpose_y=1");
  CHECK(variant_names(s0) == cublaslt_then("cublaslt_f32", {"simt32x64x16#8", "simt64x64x16#9", "simt128x128x8#10"}));
  for (int algo = 0; algo < kCublasLtRanks; ++algo) {
    CHECK(s0.variants[algo].kind == VariantKind::kCublasLt);
    CHECK(s0.variants[algo].algo == algo);
    CHECK(s0.variants[algo].hint.empty());
  }
  CHECK(s0.variants[0].config == "extern compute=32F");
  CHECK(s0.variants[3].config == "extern compute=32F algo=3");
  CHECK(s0.variants[10].hint == std::vector<int64_t>{4096, 0, 0});
  CHECK(s0.variants[10].config == "bm=128 bn=128 bk=8 tm=8 tn=8");
  // The site config is hashed: same variants, other transposes, other cache entries.
  CHECK(s0.set_hash != plan.sites[1].set_hash);
  CHECK(s0.set_hash == plan_cuda_gemm_variants(fusion, {64, 256, 4096}).sites[0].set_hash);
  CHECK(s0.set_hash != variant_set_hash(SiteFamily::kGemm, s0.variants, s0.config));
  // Hints that pick one tile make one variant; fewer hints, another set.
  const MultiKernelPlan small = plan_cuda_gemm_variants(fusion, {16, 100});
  REQUIRE(small.sites[0].variants.size() == kCublasLtRanks + 1);
  CHECK(small.sites[0].variants[kCublasLtRanks].name == "simt32x64x16");
  CHECK(small.sites[0].variants[kCublasLtRanks].hint == std::vector<int64_t>{16, 0, 0});
  CHECK(small.sites[0].set_hash != s0.set_hash);
}

TEST_CASE("--target cuda: a 16-bit GEMM group is a site of cuBLASLt and the tensor-core tiles of the hints") {
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(R"(program: t16
inputs:  [{name: x, dtype: bfloat16, shape: [-1, 64]}, {name: h, dtype: float16, shape: [16, 64]}]
params:
  - {name: w, dtype: bfloat16, shape: [64, 32]}
  - {name: wt, dtype: bfloat16, shape: [16, 32]}
  - {name: wh, dtype: float16, shape: [64, 36]}
ops:
  - {op: matmul, in: [x, w], out: [y1]}
  - {op: matmul, in: [y1, wt], out: [y2], attrs: {transpose_y: true}}
  - {op: matmul, in: [h, wh], out: [y3]}
  - {op: matmul, in: [h, wh], out: [y4]}
outputs: [y2, y3, y4]
)");
  INFO(env.printed());
  REQUIRE(lp.has_value());
  FusionOptions options;
  options.single_call_groups = true;
  options.gemm_groups = true;
  options.half_floats = true;
  const FusionPlan fusion = plan_fusion(*lp, options);
  const MultiKernelPlan plan = plan_cuda_gemm_variants(fusion, {64, 256, 4096});
  REQUIRE(plan.sites.size() == 4);
  // bf16 matmul: cuBLASLt's ranks, then one tensor-core tile per hint.
  const MultiKernelSite& s0 = plan.sites[0];
  CHECK(s0.family == SiteFamily::kCudaGemm16);
  CHECK(s0.name == "mk_call_0_matmul");
  CHECK(s0.config == "dtype=bfloat16 epilogue=none transpose_x=0 transpose_y=0");
  CHECK(variant_names(s0) ==
        cublaslt_then("cublaslt_bf16", {"tc64x32x64s6#8", "tc64x128x32s4#9", "tc128x128x32s4#10"}));
  CHECK(s0.variants[0].kind == VariantKind::kCublasLt);
  CHECK(s0.variants[0].hint.empty());
  CHECK(s0.variants[7].config == "extern type=16BF compute=32F algo=7");
  CHECK(s0.variants[8].kind == VariantKind::kCudaTensorCore);
  CHECK(s0.variants[8].hint == std::vector<int64_t>{64, 0, 0});
  CHECK(s0.variants[10].config == "bm=128 bn=128 bk=32 warps=2x2 stages=4");
  // The tensor-core kernel reads A and B as stored: a transposed site is cuBLASLt's alone.
  const MultiKernelSite& s1 = plan.sites[1];
  CHECK(s1.config == "dtype=bfloat16 epilogue=none transpose_x=0 transpose_y=1");
  CHECK(variant_names(s1) == cublaslt_then("cublaslt_bf16"));
  // float16, N = 36 (no multiple of 8): cuBLASLt alone, with the fp16 name.
  const MultiKernelSite& s2 = plan.sites[2];
  CHECK(s2.config == "dtype=float16 epilogue=none transpose_x=0 transpose_y=0");
  CHECK(variant_names(s2) == cublaslt_then("cublaslt_f16"));
  // The 16-bit family has its own version string in the hash: the same variants and site under the fp32 family
  // hash differently; the plan is deterministic.
  CHECK(s0.set_hash != variant_set_hash(SiteFamily::kCudaGemmF32, s0.variants, s0.config));
  CHECK(s2.set_hash == plan_cuda_gemm_variants(fusion, {64, 256, 4096}).sites[2].set_hash);
  CHECK(s2.set_hash == plan.sites[3].set_hash);  // the same float16 GEMM twice: one set
  // Hints that pick one tile make one variant.
  const MultiKernelPlan small = plan_cuda_gemm_variants(fusion, {16, 100, 2000});
  CHECK(variant_names(small.sites[0]) == cublaslt_then("cublaslt_bf16", {"tc64x32x64s6#8", "tc128x128x32s4#9"}));
  CHECK(small.sites[0].variants[8].hint == std::vector<int64_t>{16, 0, 0});
}

TEST_CASE("--target cuda: a batch of products is a site of cuBLASLt's ranks alone") {
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(R"(program: bmm
inputs:  [{name: x, dtype: float16, shape: [2, 8, 16]}, {name: y, dtype: float16, shape: [2, 12, 16]}]
ops:
  - {op: matmul, in: [x, y], out: [s], attrs: {transpose_y: true}}
outputs: [s]
)");
  INFO(env.printed());
  REQUIRE(lp.has_value());
  FusionOptions options;
  options.single_call_groups = true;
  options.gemm_groups = true;
  options.half_floats = true;
  const FusionPlan fusion = plan_fusion(*lp, options);
  const MultiKernelPlan plan = plan_cuda_gemm_variants(fusion, {64, 256, 4096});
  REQUIRE(plan.sites.size() == 1);
  const MultiKernelSite& s = plan.sites[0];
  CHECK(fusion.groups.at(s.group).gemm.batched);
  CHECK(s.config == "dtype=float16 epilogue=none transpose_x=0 transpose_y=1 batched=1");
  CHECK(variant_names(s) == cublaslt_then("cublaslt_f16"));  // the tiles compute one product
}

TEST_CASE("tensor-core tiles per hint") {
  CHECK(cuda_tensor_core_variant_for_hint(1).name == "tc64x32x64s6");
  CHECK(cuda_tensor_core_variant_for_hint(128).name == "tc64x32x64s6");
  CHECK(cuda_tensor_core_variant_for_hint(129).name == "tc64x128x32s4");
  CHECK(cuda_tensor_core_variant_for_hint(1024).config == "bm=64 bn=128 bk=32 warps=2x2 stages=4");
  CHECK(cuda_tensor_core_variant_for_hint(1025).name == "tc128x128x32s4");
  const KernelVariant v = cuda_tensor_core_variant_for_hint(4096);
  CHECK(v.kind == VariantKind::kCudaTensorCore);
  CHECK(std::vector<int>{v.bm, v.bn, v.bk, v.warps_m, v.warps_n, v.stages} == std::vector<int>{128, 128, 32, 2, 2, 4});
}

TEST_CASE("SIMT tiles per hint") {
  CHECK(cuda_simt_variant_for_hint(1).name == "simt32x64x16");
  CHECK(cuda_simt_variant_for_hint(128).name == "simt32x64x16");
  CHECK(cuda_simt_variant_for_hint(129).name == "simt64x64x16");
  CHECK(cuda_simt_variant_for_hint(1024).config == "bm=64 bn=64 bk=16 tm=4 tn=4");
  CHECK(cuda_simt_variant_for_hint(1025).name == "simt128x128x8");
  CHECK(cuda_simt_variant_for_hint(4096).kind == VariantKind::kCudaSimt);
}

TEST_CASE("--target cuda: a row group whose launcher takes shape parameters keeps the launcher's choice") {
  // GPT's residual add + layer norm reads a broadcast (strided) input over [B, S, 768], B and S dynamic: its launcher
  // takes the dims as parameters, which the row variants' arguments do not carry.
  test::Env env({"kernels/fusion.yaml"});
  std::optional<LoweredProgram> lp = env.compile_yaml(R"(program: rows
inputs:  [{name: x, dtype: float32, shape: [-1, -1, 64]}]
ops:
  - {op: softmax, in: [x], out: [p], attrs: {axis: -1}}
outputs: [p]
)");
  INFO(env.printed());
  REQUIRE(lp.has_value());
  FusionOptions options;
  options.single_call_groups = true;
  FusionPlan fusion = plan_fusion(*lp, options);
  REQUIRE(fusion.groups.size() == 1);
  FusedGroup& g = fusion.groups[0];
  REQUIRE(g.kind == GroupKind::kRow);
  REQUIRE(g.inputs.size() == 1);
  CHECK(has_dynamic_strides(g));  // S is dynamic
  CHECK(plan_cuda_row_variants(*lp, fusion, {64, 256, 4096}).sites.size() == 1);  // no strided input: a site
  g.inputs[0].access = InputAccess::kStrided;  // as a broadcast input would be
  g.inputs[0].strides = g.shape;
  CHECK(plan_cuda_row_variants(*lp, fusion, {64, 256, 4096}).sites.empty());
}

TEST_CASE("--target cuda: each row group is a site of the launcher's choice and register / looped teams") {
  test::Env env({"kernels/fusion.yaml"});
  std::optional<LoweredProgram> lp = env.compile_yaml(R"(program: rows
inputs:  [{name: x, dtype: float32, shape: [-1, 64]}]
params:  [{name: g, dtype: float32, shape: [64]}, {name: b, dtype: float32, shape: [64]}]
ops:
  - {op: relu, in: [x], out: [r]}
  - {op: softmax, in: [r], out: [p], attrs: {axis: -1}}
  - {op: layer_norm, in: [p, g, b], out: [y, mu, var], attrs: {epsilon: 1.0e-5, begin_norm_axis: 1}}
  - {op: scale, in: [y], out: [z], attrs: {scale: 2.0, bias: 0.0, bias_after_scale: true}}
outputs: [z, mu]
)");
  INFO(env.printed());
  REQUIRE(lp.has_value());
  FusionOptions options;
  options.single_call_groups = true;
  const FusionPlan fusion = plan_fusion(*lp, options);
  CHECK(plan_cuda_row_variants(*lp, fusion, {}).sites.empty());
  const MultiKernelPlan plan = plan_cuda_row_variants(*lp, fusion, {64, 256, 4096});
  size_t row_groups = 0;
  for (const FusedGroup& g : fusion.groups) row_groups += g.kind == GroupKind::kRow ? 1 : 0;
  REQUIRE(row_groups >= 2);
  REQUIRE(plan.sites.size() == row_groups);  // every row group, no elementwise group
  const MultiKernelSite& s0 = plan.sites[0];
  CHECK(s0.family == SiteFamily::kCudaRow);
  CHECK(fusion.groups.at(s0.group).kind == GroupKind::kRow);
  CHECK(s0.name == "mk_group_" + std::to_string(s0.group) + "_relu_softmax");
  CHECK(plan.site_for_group(s0.group) == &s0);
  CHECK(s0.config == "label=relu+softmax inputs=float32:0, stores=float32:element,");
  std::vector<std::string> names;
  for (const KernelVariant& v : s0.variants) names.push_back(v.name + "#" + std::to_string(v.rank));
  CHECK(names == std::vector<std::string>{"row_auto#0", "row_regs_t32_c4#1", "row_regs_t32_c1#2", "row_looped_t256#3",
                                          "row_regs_t128_c1#4", "row_regs_t256_c4#5", "row_regs_t1024_c1#6"});
  CHECK(s0.variants[0].kind == VariantKind::kCudaRowAuto);
  CHECK(s0.variants[0].hint.empty());
  CHECK(s0.variants[5].hint == std::vector<int64_t>{0, 4096});
  CHECK(s0.variants[5].team == 256);
  CHECK(s0.variants[5].regs == 4);
  CHECK(s0.variants[3].kind == VariantKind::kCudaRowLooped);
  CHECK(s0.variants[3].regs == 0);
  // Another group structure, another set hash (and never the GEMM family's).
  const MultiKernelSite& s1 = plan.sites[1];
  CHECK(s1.config.find("label=layer_norm") == 0);
  INFO(s1.config);
  CHECK(s1.config.find("stores=float32:row,float32:element,") != std::string::npos);
  CHECK(s0.set_hash != s1.set_hash);
  CHECK(s0.set_hash != variant_set_hash(SiteFamily::kCudaGemmF32, s0.variants, s0.config));
  CHECK(s0.set_hash == plan_cuda_row_variants(*lp, fusion, {64, 256, 4096}).sites[0].set_hash);
}

TEST_CASE("row variants per hinted row length") {
  auto names = [](int64_t hint) {
    std::string out;
    for (const KernelVariant& v : cuda_row_variants_for_hint(hint)) out += v.name + " ";
    return out;
  };
  CHECK(names(1) == "row_regs_t32_c4 row_regs_t32_c1 row_looped_t256 ");
  CHECK(names(512) == "row_regs_t32_c4 row_regs_t128_c1 row_looped_t256 ");
  CHECK(names(513) == "row_regs_t128_c4 row_regs_t256_c1 row_looped_t256 ");
  CHECK(names(4097) == "row_regs_t512_c4 row_looped_t256 ");   // one vector per thread no longer fits 1024 threads
  CHECK(names(16384) == "row_regs_t1024_c4 row_looped_t1024 ");
  CHECK(names(16385) == "row_looped_t1024 ");                  // beyond the registers of 1024 threads
  CHECK(cuda_row_variants_for_hint(4096)[0].config == "team=256 regs=4");
}
