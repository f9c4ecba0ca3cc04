// Attention groups of the fusion pass (FusionOptions::attention_groups, --target cuda; passes/fusion_attention.cpp):
// which softmax(scale * q k^T + mask) v patterns become one kAttention group, with what strides, and which stay
// unfused.
#include "fusion_test_util.h"

using namespace kforge;
using namespace kforge::passes;
using namespace kforge::passes::fusion_test;

namespace {

FusionOptions attention_options() { return cuda_fusion_options(); }

// Paddle's MultiHeadAttention over x [2, 80, 2, D] of `dtype` (batch 2, length 80, 2 heads): q = x, k and v scales
// of x, a padding mask [2, 1, 1, 80], `extra_ops` after the pattern, `outputs` fetched. (Static dims: the unit tests'
// analysis does not take broadcast dims as equal, as --target cuda's does; the golden compile-cuda-attention has
// dynamic ones.)
std::string mha(const std::string& dtype, int head_dim, const std::string& extra_ops = "",
                const std::string& outputs = "[ot]") {
  const std::string d = std::to_string(head_dim);
  return "program: mha\ninputs:\n  - {name: x, dtype: " + dtype + ", shape: [2, 80, 2, " + d +
         "]}\n  - {name: mask, dtype: " + dtype +
         ", shape: [2, 1, 1, 80]}\nops:\n"
         "  - {op: scale, in: [x], out: [k], attrs: {scale: 0.5, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: scale, in: [x], out: [v], attrs: {scale: 2.0, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: transpose, in: [x], out: [qt], attrs: {perm: [0, 2, 1, 3]}}\n"
         "  - {op: transpose, in: [k], out: [kt], attrs: {perm: [0, 2, 1, 3]}}\n"
         "  - {op: transpose, in: [v], out: [vt], attrs: {perm: [0, 2, 1, 3]}}\n"
         "  - {op: scale, in: [qt], out: [qs], attrs: {scale: 0.125, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: matmul, in: [qs, kt], out: [s], attrs: {transpose_x: false, transpose_y: true}}\n"
         "  - {op: scale, in: [s], out: [s2], attrs: {scale: 0.5, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: add, in: [s2, mask], out: [sm]}\n"
         "  - {op: softmax, in: [sm], out: [p], attrs: {axis: -1}}\n"
         "  - {op: matmul, in: [p, vt], out: [o], attrs: {transpose_x: false, transpose_y: false}}\n"
         "  - {op: transpose, in: [o], out: [ot], attrs: {perm: [0, 2, 1, 3]}}\n" +
         extra_ops + "outputs: " + outputs + "\n";
}

const FusedGroup* attention_group(const FusionPlan& plan) {
  for (const FusedGroup& g : plan.groups) {
    if (g.kind == GroupKind::kAttention) return &g;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("attention: Paddle's MultiHeadAttention over float16 is one group reading q, k, v and the mask by strides") {
  LoweredProgram lp = env().compile(mha("float16", 64));
  const FusionPlan plan = plan_fusion(lp, attention_options());
  check_invariants(lp, plan);
  const FusedGroup* g = attention_group(plan);
  REQUIRE(g != nullptr);
  // The three transposes in, both scales, both matmuls, the add, the softmax and the transpose out.
  CHECK(g->label == "transpose+transpose+transpose+scale+matmul+scale+add+softmax+matmul+transpose");
  const AttentionGroup& a = g->attention;
  CHECK(a.head_dim == 64);
  CHECK(a.scale == 0.0625);  // 0.125 on q times 0.5 on the scores
  CHECK(a.dtype == ir::DataType::kFloat16);
  CHECK(lp.value(a.q.value).name == "x");
  CHECK(lp.value(a.k.value).name == "k");
  CHECK(lp.value(a.v.value).name == "v");
  CHECK(lp.value(a.out.value).name == "ot");
  CHECK(lp.value(a.mask).name == "mask");
  // [B, S, 2, 64] read as [B, H, S, D]: 128 elements per position, 64 per head.
  for (const AttentionOperand* o : {&a.q, &a.k, &a.v, &a.out}) {
    CHECK(o->seq_stride == SymExpr(128));
    CHECK(o->head_stride == SymExpr(64));
  }
  CHECK(a.q.batch_stride == SymExpr(80 * 128));
  CHECK((a.batch == SymExpr(2) && a.heads == SymExpr(2) && a.seq_q == SymExpr(80) && a.seq_k == SymExpr(80)));
  // The mask [B, 1, 1, S]: one row per batch, broadcast over heads and queries.
  CHECK(a.mask_head_stride == SymExpr(0));
  CHECK(a.mask_row_stride == SymExpr(0));
  CHECK(a.mask_col_stride == SymExpr(1));
  CHECK(a.mask_batch_stride == SymExpr(80));
  // Nothing between the inputs and the output has a buffer.
  for (const char* name : {"qt", "kt", "vt", "qs", "s", "s2", "sm", "p", "o"}) {
    bool internal = false;
    for (uint32_t v : g->internal_values) internal |= lp.value(v).name == name;
    CHECK(internal);
  }
}

TEST_CASE("attention: bfloat16 fuses; head dims the kernel has no instance for, shared values do not") {
  SECTION("bfloat16, head dim 128") {
    LoweredProgram lp = env().compile(mha("bfloat16", 128));
    const FusionPlan plan = plan_fusion(lp, attention_options());
    const FusedGroup* g = attention_group(plan);
    REQUIRE(g != nullptr);
    CHECK(g->attention.head_dim == 128);
  }
  SECTION("head dim 16") {
    LoweredProgram lp = env().compile(mha("float16", 16));
    CHECK(attention_group(plan_fusion(lp, attention_options())) == nullptr);
  }
  SECTION("the probabilities are a program output") {
    LoweredProgram lp = env().compile(mha("float16", 64, "", "[ot, p]"));
    CHECK(attention_group(plan_fusion(lp, attention_options())) == nullptr);
  }
  SECTION("the option is off (the CPU target)") {
    LoweredProgram lp = env().compile(mha("float16", 64));
    FusionOptions o = attention_options();
    o.attention_groups = false;
    CHECK(attention_group(plan_fusion(lp, o)) == nullptr);
  }
  SECTION("a transposed k read by another op stays a kernel; the group reads it as [B, H, S, D]") {
    LoweredProgram lp =
        env().compile(mha("float16", 64, "  - {op: relu, in: [kt], out: [r]}\n", "[ot, r]"));
    const FusionPlan plan = plan_fusion(lp, attention_options());
    check_invariants(lp, plan);
    const FusedGroup* g = attention_group(plan);
    REQUIRE(g != nullptr);
    CHECK(lp.value(g->attention.k.value).name == "kt");
    CHECK(g->attention.k.seq_stride == SymExpr(64));
    CHECK(g->attention.k.head_stride == SymExpr(80 * 64));
  }
}

namespace {

// mha's pattern with the mask a decoder builds: triu(full([L, L], fill), diagonal), L the length (80).
std::string causal_mha(const std::string& fill, int diagonal, const std::string& dtype = "float16") {
  std::string yaml = mha(dtype, 64);
  const std::string input = "\n  - {name: mask, dtype: " + dtype + ", shape: [2, 1, 1, 80]}";
  yaml.erase(yaml.find(input), input.size());
  const std::string ops = "ops:\n";
  yaml.insert(yaml.find(ops) + ops.size(),
              "  - {op: full, out: [f], attrs: {shape: [80, 80], value: " + fill + ", dtype: " + dtype + "}}\n"
              "  - {op: triu, in: [f], out: [mask], attrs: {diagonal: " + std::to_string(diagonal) + "}}\n");
  return yaml;
}

}  // namespace

TEST_CASE("attention: a causal mask (triu of -inf) is applied by position, not read") {
  LoweredProgram lp = env().compile(causal_mha("-.inf", 1));
  const FusionPlan plan = plan_fusion(lp, attention_options());
  check_invariants(lp, plan);
  const FusedGroup* g = attention_group(plan);
  REQUIRE(g != nullptr);
  CHECK(g->attention.causal);
  CHECK(g->attention.causal_diagonal == 1);
  CHECK(g->attention.mask == kNone);
  for (const GroupInput& in : g->inputs) CHECK(lp.value(in.value).name != "mask");
  SECTION("another diagonal") {
    LoweredProgram lp2 = env().compile(causal_mha("-.inf", 3));
    const FusionPlan plan2 = plan_fusion(lp2, attention_options());
    const FusedGroup* g2 = attention_group(plan2);
    REQUIRE(g2 != nullptr);
    CHECK(g2->attention.causal_diagonal == 3);
  }
  SECTION("a triu of a finite value is an additive mask like any other") {
    LoweredProgram lp2 = env().compile(causal_mha("-10000.0", 1));
    const FusionPlan plan2 = plan_fusion(lp2, attention_options());
    const FusedGroup* g2 = attention_group(plan2);
    REQUIRE(g2 != nullptr);
    CHECK_FALSE(g2->attention.causal);
    CHECK(lp2.value(g2->attention.mask).name == "mask");
  }
}

namespace {

// mha over a length of `length` (80 replaced).
std::string mha_of_length(const std::string& dtype, int length) {
  std::string yaml = mha(dtype, 64);
  for (size_t at = yaml.find(", 80"); at != std::string::npos; at = yaml.find(", 80", at)) {
    yaml.replace(at, 4, ", " + std::to_string(length));
  }
  return yaml;
}

}  // namespace

TEST_CASE("attention: float32 fuses where its kernel pays (kforge_attention_f32.cuh), long static lengths do not") {
  SECTION("the same group as float16's, float32 throughout") {
    LoweredProgram lp = env().compile(mha("float32", 64));
    const FusionPlan plan = plan_fusion(lp, attention_options());
    check_invariants(lp, plan);
    const FusedGroup* g = attention_group(plan);
    REQUIRE(g != nullptr);
    CHECK(g->label == "transpose+transpose+transpose+scale+matmul+scale+add+softmax+matmul+transpose");
    const AttentionGroup& a = g->attention;
    CHECK(a.dtype == ir::DataType::kFloat32);
    CHECK(a.scale == 0.0625);
    CHECK(lp.value(a.mask).name == "mask");
    CHECK(a.q.seq_stride == SymExpr(128));
    for (const GroupInput& in : g->inputs) CHECK(in.storage == expr::ScalarType::kFloat32);
    REQUIRE(g->stores.size() == 1);
    CHECK(g->stores[0].dtype == ir::DataType::kFloat32);
  }
  SECTION("head dims: multiples of 4 up to 128 (16-bit: 32, 64, 128 only)") {
    for (int d : {4, 16, 32, 48, 128}) {
      LoweredProgram lp = env().compile(mha("float32", d));
      const FusionPlan plan = plan_fusion(lp, attention_options());
      const FusedGroup* g = attention_group(plan);
      REQUIRE(g != nullptr);
      CHECK(g->attention.head_dim == d);
    }
    for (int d : {6, 136}) {
      LoweredProgram lp = env().compile(mha("float32", d));
      CHECK(attention_group(plan_fusion(lp, attention_options())) == nullptr);
    }
  }
  SECTION("a causal mask") {
    LoweredProgram lp = env().compile(causal_mha("-.inf", 1, "float32"));
    const FusionPlan plan = plan_fusion(lp, attention_options());
    const FusedGroup* g = attention_group(plan);
    REQUIRE(g != nullptr);
    CHECK(g->attention.causal);
    CHECK(g->attention.mask == kNone);
  }
  SECTION("4096 keys fuse, 4097 stay batched products and a softmax (cuBLASLt may win there)") {
    LoweredProgram fused = env().compile(mha_of_length("float32", 4096));
    CHECK(attention_group(plan_fusion(fused, attention_options())) != nullptr);
    LoweredProgram unfused = env().compile(mha_of_length("float32", 4097));
    CHECK(attention_group(plan_fusion(unfused, attention_options())) == nullptr);
    LoweredProgram half = env().compile(mha_of_length("float16", 4097));
    CHECK(attention_group(plan_fusion(half, attention_options())) != nullptr);
  }
  SECTION("float64 stays unfused") {
    LoweredProgram lp = env().compile(mha("float64", 64));
    CHECK(attention_group(plan_fusion(lp, attention_options())) == nullptr);
  }
}
