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
