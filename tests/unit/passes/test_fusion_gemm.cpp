// The fusion pass's GEMM groups (passes/fusion.h, FusionOptions::gemm_groups, --target cuda): a matmul with its
// bias and activation epilogue, what a group leaves out, --no-fuse, the GEMM forms (passes/gemm.h) and 16-bit values.
#include "fusion_test_util.h"
#include "passes/gemm.h"

#include <fmt/format.h>

#include <tuple>

using namespace kforge;
using namespace kforge::passes;

using namespace kforge::passes::fusion_test;

// ---- GEMM groups (FusionOptions::gemm_groups, --target cuda) ----------------------------------------------------

TEST_CASE("fusion: a matmul takes its bias add and erf gelu into one GEMM group") {
  LoweredProgram lp = env().compile(R"(
program: mlp
inputs: [{name: x, dtype: float32, shape: [-1, 8, 64]}]
params:
  - {name: w1, dtype: float32, shape: [64, 128]}
  - {name: b1, dtype: float32, shape: [128]}
  - {name: w2t, dtype: float32, shape: [32, 128]}
  - {name: b2, dtype: float32, shape: [1, 32]}
ops:
  - {op: matmul, in: [x, w1], out: [h0]}
  - {op: add, in: [h0, b1], out: [h1]}
  - {op: gelu, in: [h1], out: [h2], attrs: {approximate: false}}
  - {op: matmul, in: [h2, w2t], out: [h3], attrs: {transpose_y: true}}
  - {op: add, in: [b2, h3], out: [h4]}
  - {op: gelu, in: [h4], out: [y], attrs: {approximate: true}}
outputs: [y]
)");
  const FusionPlan plan = plan_fusion(lp, gemm_options());
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2", "3,4", "5"});
  const FusedGroup& g0 = plan.groups[0];
  CHECK(g0.kind == GroupKind::kGemm);
  CHECK(g0.gemm.epilogue == GemmEpilogue::kBiasGelu);
  CHECK(g0.label == "matmul+add+gelu");
  CHECK(g0.gemm.m == SymExpr::symbol(0) * 8);  // the batch folds into M
  CHECK(g0.gemm.n == SymExpr(128));
  CHECK(g0.gemm.k == SymExpr(64));
  CHECK(lp.value(g0.gemm.bias).name == "b1");
  CHECK(g0.internal_values.size() == 2);  // h0 and h1 never reach memory
  REQUIRE(g0.stores.size() == 1);
  CHECK(g0.stores[0].value == g0.gemm.out);
  const FusedGroup& g1 = plan.groups[1];
  CHECK(g1.kind == GroupKind::kGemm);
  CHECK(g1.gemm.epilogue == GemmEpilogue::kBias);  // a [1, N] bias, first operand of the add
  CHECK(lp.value(g1.gemm.bias).name == "b2");
  CHECK(g1.gemm.transpose_y);
  CHECK(g1.gemm.n == SymExpr(32));
  CHECK(g1.gemm.k == SymExpr(128));
  // gelu(approximate=true) is not the kernels' erf gelu: an elementwise group of its own.
  CHECK(plan.groups[2].kind == GroupKind::kElementwise);
  CHECK(dump_fusion(lp, plan).find("group 0 gemm bias_gelu") != std::string::npos);
  CHECK(fusion_dot(lp, plan).find("(gemm bias, 8 * s0 x 32)") != std::string::npos);
  check_invariants(lp, plan);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(find_overlap(lp, {3}).empty());
  CHECK(find_overlap(lp, {1000}).empty());

  // The CPU (no gemm_groups) keeps its behaviour: the matmuls stay kernel calls, bias + gelu fuse.
  LoweredProgram cpu = env().compile(R"(
program: mlp
inputs: [{name: x, dtype: float32, shape: [4, 64]}]
params: [{name: w1, dtype: float32, shape: [64, 128]}, {name: b1, dtype: float32, shape: [128]}]
ops:
  - {op: matmul, in: [x, w1], out: [h0]}
  - {op: add, in: [h0, b1], out: [h1]}
  - {op: gelu, in: [h1], out: [y], attrs: {approximate: false}}
outputs: [y]
)");
  const FusionPlan cpu_plan = plan_fusion(cpu);
  REQUIRE(group_calls(cpu_plan) == std::vector<std::string>{"1,2"});
  CHECK(cpu_plan.groups[0].kind == GroupKind::kElementwise);
}

TEST_CASE("fusion: a GEMM group leaves out what another op needs or may overwrite") {
  LoweredProgram lp = env().compile(R"(
program: guarded
inputs: [{name: x0, dtype: float32, shape: [16, 32]}]
params:
  - {name: w, dtype: float32, shape: [32, 32]}
  - {name: b, dtype: float32, shape: [32]}
  - {name: m2, dtype: float32, shape: [16, 32]}
ops:
  - {op: relu, in: [x0], out: [x]}
  - {op: matmul, in: [x, w], out: [h0]}
  - {op: add, in: [h0, b], out: [h1]}
  - {op: tanh, in: [h0], out: [t]}
  - {op: matmul, in: [x, w], out: [g0]}
  - {op: add, in: [g0, m2], out: [g1]}
  - {op: matmul, in: [x, w], out: [k0]}
  - {op: relu_, in: [x], out: [xr]}
  - {op: add, in: [k0, b], out: [k1]}
  - {op: matmul, in: [x0, w], out: [p0]}
  - {op: add, in: [p0, b], out: [p1]}
outputs: [h1, t, g1, xr, k1, p1]
)");
  const FusionPlan plan = plan_fusion(lp, gemm_options());
  // h0 has two readers (add and tanh): the matmul is a GEMM alone.
  REQUIRE(group_of_call(plan, 1) != nullptr);
  CHECK(group_of_call(plan, 1)->calls == std::vector<uint32_t>{1});
  CHECK(group_of_call(plan, 1)->gemm.epilogue == GemmEpilogue::kNone);
  // m2 [16, 32] is no bias along the last dim.
  CHECK(group_of_call(plan, 4)->calls == std::vector<uint32_t>{4});
  // relu_ writes x's buffer between the matmul and the add: the add would read x too late.
  CHECK(group_of_call(plan, 6)->calls == std::vector<uint32_t>{6});
  CHECK(plan.call_group[7] == kNone);  // an in-place twin stays a kernel call
  // Nothing in between: the bias joins.
  CHECK(group_of_call(plan, 9)->calls == std::vector<uint32_t>{9, 10});
  check_invariants(lp, plan);
}

TEST_CASE("fusion: --no-fuse with single-call groups makes every call its own group, every GEMM bare") {
  LoweredProgram lp = env().compile(R"(
program: bare
inputs: [{name: x, dtype: float32, shape: [4, 16]}]
params: [{name: w, dtype: float32, shape: [16, 8]}, {name: b, dtype: float32, shape: [8]}]
ops:
  - {op: matmul, in: [x, w], out: [h0]}
  - {op: add, in: [h0, b], out: [h1]}
  - {op: gelu, in: [h1], out: [h2]}
  - {op: softmax, in: [h2], out: [y], attrs: {axis: -1}}
outputs: [y]
)");
  FusionOptions options = gemm_options();
  options.enabled = false;
  const FusionPlan plan = plan_fusion(lp, options);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK(plan.groups[0].kind == GroupKind::kGemm);
  CHECK(plan.groups[0].gemm.epilogue == GemmEpilogue::kNone);
  CHECK(plan.groups[1].kind == GroupKind::kElementwise);
  CHECK(plan.groups[3].kind == GroupKind::kRow);
  check_invariants(lp, plan);
  // Without single_call_groups (the CPU) --no-fuse is still an empty plan.
  FusionOptions cpu;
  cpu.enabled = false;
  CHECK(plan_fusion(lp, cpu).empty());
}

TEST_CASE("gemm form: the matmuls a generated GEMM computes, and why the others are not") {
  LoweredProgram lp = env().compile(R"(
program: forms
inputs:
  - {name: x, dtype: float32, shape: [2, 8, 16]}
  - {name: xt, dtype: float32, shape: [16, 8]}
  - {name: bt, dtype: float32, shape: [2, 16, 8]}
  - {name: v, dtype: float32, shape: [16]}
  - {name: d, dtype: float64, shape: [8, 16]}
  - {name: xb, dtype: float32, shape: [2, 1, 8, 16]}
  - {name: x2, dtype: float32, shape: [8, 16]}
  - {name: x3, dtype: float32, shape: [2, 1, 3, 8, 16]}
params:
  - {name: w, dtype: float32, shape: [16, 12]}
  - {name: wb, dtype: float32, shape: [2, 16, 12]}
  - {name: w64, dtype: float64, shape: [16, 4]}
  - {name: wm, dtype: float32, shape: [2, 3, 16, 12]}
  - {name: w3, dtype: float32, shape: [2, 3, 1, 16, 12]}
ops:
  - {op: matmul, in: [x, w], out: [a]}
  - {op: matmul, in: [xt, w], out: [b], attrs: {transpose_x: true}}
  - {op: matmul, in: [x, wb], out: [c]}
  - {op: matmul, in: [bt, w], out: [e], attrs: {transpose_x: true}}
  - {op: matmul, in: [v, w], out: [f]}
  - {op: matmul, in: [d, w64], out: [h]}
  - {op: relu, in: [a], out: [g]}
  - {op: matmul, in: [xb, wm], out: [m]}
  - {op: matmul, in: [x2, wb], out: [n]}
  - {op: matmul, in: [x3, w3], out: [o]}
outputs: [b, c, e, f, g, h, m, n, o]
)");
  std::string why;
  std::optional<GemmForm> a = gemm_form(lp, lp.calls[0], &why);
  REQUIRE(a.has_value());
  CHECK(a->m == SymExpr(16));
  CHECK(a->n == SymExpr(12));
  CHECK(a->k == SymExpr(16));
  std::optional<GemmForm> b = gemm_form(lp, lp.calls[1], &why);
  REQUIRE(b.has_value());
  CHECK(b->transpose_x);
  CHECK(b->m == SymExpr(8));
  CHECK_FALSE(b->batched);
  // A batched y: a batch of 2 products, each operand one matrix per product.
  std::optional<GemmForm> c = gemm_form(lp, lp.calls[2], &why);
  REQUIRE(c.has_value());
  CHECK(c->batched);
  CHECK(c->batch == SymExpr(2));
  CHECK((c->m == SymExpr(8) && c->n == SymExpr(12) && c->k == SymExpr(16)));
  CHECK((c->stride_x == SymExpr(128) && c->stride_y == SymExpr(192) && c->stride_out == SymExpr(96)));
  // A transposed batch of x over a matrix y: y is read for every product (stride 0).
  std::optional<GemmForm> e = gemm_form(lp, lp.calls[3], &why);
  REQUIRE(e.has_value());
  CHECK((e->batched && e->transpose_x && e->m == SymExpr(8) && e->k == SymExpr(16)));
  CHECK((e->stride_x == SymExpr(128) && e->stride_y == SymExpr(0) && e->stride_out == SymExpr(96)));
  // A matrix x over a batched y: x broadcast.
  std::optional<GemmForm> n = gemm_form(lp, lp.calls[8], &why);
  REQUIRE(n.has_value());
  CHECK((n->batched && n->batch == SymExpr(2) && n->stride_x == SymExpr(0) && n->stride_y == SymExpr(192)));
  // Batch dims that broadcast differently over two runs: two levels, an outer batch of 2 over batches of 3.
  std::optional<GemmForm> m = gemm_form(lp, lp.calls[7], &why);
  REQUIRE(m.has_value());
  CHECK((m->outer == SymExpr(2) && m->batch == SymExpr(3)));
  CHECK((m->stride_x == SymExpr(0) && m->outer_stride_x == SymExpr(128)));
  CHECK((m->stride_y == SymExpr(192) && m->outer_stride_y == SymExpr(576)));
  CHECK((m->stride_out == SymExpr(96) && m->outer_stride_out == SymExpr(288)));
  CHECK((c->outer == SymExpr(1) && c->outer_stride_x == SymExpr(0)));
  // Three runs have no two-level form.
  CHECK_FALSE(gemm_form(lp, lp.calls[9], &why).has_value());
  CHECK(why.find("the batch dims of x ([2, 1, 3, 8, 16]) and y ([2, 3, 1, 16, 12]) broadcast against the output's "
                 "([2, 3, 3, 8, 12]) in more than two runs") == 0);
  CHECK_FALSE(gemm_form(lp, lp.calls[4], &why).has_value());
  CHECK(why.find("x has rank 1 ([16])") == 0);
  CHECK_FALSE(gemm_form(lp, lp.calls[5], &why).has_value());
  CHECK(why == "x is float64; the CUDA GEMM computes float32, float16 or bfloat16 only");
  CHECK_FALSE(gemm_form(lp, lp.calls[6], &why).has_value());
  CHECK(why == "not a matmul");
}

TEST_CASE("gemm form: float16 and bfloat16 matmuls, and operands of two dtypes") {
  LoweredProgram lp = env().compile(R"(
program: half_forms
inputs:
  - {name: x, dtype: bfloat16, shape: [4, 8, 16]}
  - {name: h, dtype: float16, shape: [16, 8]}
params:
  - {name: w, dtype: bfloat16, shape: [16, 12]}
  - {name: wh, dtype: float16, shape: [16, 4]}
ops:
  - {op: matmul, in: [x, w], out: [a]}
  - {op: matmul, in: [h, wh], out: [b], attrs: {transpose_x: true}}
outputs: [a, b]
)");
  std::string why;
  std::optional<GemmForm> a = gemm_form(lp, lp.calls[0], &why);
  REQUIRE(a.has_value());
  CHECK(a->dtype == ir::DataType::kBFloat16);
  CHECK(a->m == SymExpr(32));
  std::optional<GemmForm> b = gemm_form(lp, lp.calls[1], &why);
  REQUIRE(b.has_value());
  CHECK(b->dtype == ir::DataType::kFloat16);
  CHECK(b->transpose_x);
  // The verifier refuses a matmul of two dtypes before any pass runs; the GEMM form still says why, should a
  // program's declared types disagree (no kernel may read memory as the wrong type).
  lp.values[lp.calls[0].arg("y")->value].dtype = ir::DataType::kFloat32;
  CHECK_FALSE(gemm_form(lp, lp.calls[0], &why).has_value());
  CHECK(why == "y is float32 but x is bfloat16; the CUDA GEMM needs x, y and the output in one dtype");
  lp.values[lp.calls[1].outputs[0].values[0]].dtype = ir::DataType::kBFloat16;
  CHECK_FALSE(gemm_form(lp, lp.calls[1], &why).has_value());
  CHECK(why == "the output is bfloat16 but x is float16; the CUDA GEMM needs x, y and the output in one dtype");
}

TEST_CASE("fusion: a 16-bit GEMM's erf gelu takes the tanh form, cuBLASLt's GELU_BIAS; float32 keeps erf") {
  // One program per dtype: matmul + bias + gelu(approximate=false). float32 keeps Paddle's erf gelu (kBiasGelu);
  // float16 and bfloat16 take kBiasGeluTanh (within 4.73e-4 of erf: test_gelu_forms.cpp), which cuBLASLt
  // computes inside the GEMM instead of a second pass over the output.
  for (const auto& [dtype, expected, name] :
       {std::tuple{"float32", GemmEpilogue::kBiasGelu, "bias_gelu"},
        std::tuple{"float16", GemmEpilogue::kBiasGeluTanh, "bias_gelu_tanh"},
        std::tuple{"bfloat16", GemmEpilogue::kBiasGeluTanh, "bias_gelu_tanh"}}) {
    INFO(dtype);
    LoweredProgram lp = env().compile(fmt::format(R"(
program: ffn
inputs: [{{name: x, dtype: {0}, shape: [-1, 64]}}]
params: [{{name: w, dtype: {0}, shape: [64, 256]}}, {{name: b, dtype: {0}, shape: [256]}}]
ops:
  - {{op: matmul, in: [x, w], out: [h0]}}
  - {{op: add, in: [h0, b], out: [h1]}}
  - {{op: gelu, in: [h1], out: [y], attrs: {{approximate: false}}}}
outputs: [y]
)", dtype));
    const FusionPlan plan = plan_fusion(lp, gemm_options());
    REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2"});
    CHECK(plan.groups[0].kind == GroupKind::kGemm);
    CHECK(plan.groups[0].gemm.epilogue == expected);
    CHECK(plan.groups[0].has_expensive);
    CHECK(dump_fusion(lp, plan).find(std::string("group 0 gemm ") + name + " ") != std::string::npos);
    check_invariants(lp, plan);
  }
}

TEST_CASE("fusion: float16 / bfloat16 values fuse where the target converts them (half_floats)") {
  LoweredProgram lp = env().compile(R"(
program: bf16_block
inputs: [{name: x, dtype: bfloat16, shape: [8, 64]}]
params:
  - {name: w, dtype: bfloat16, shape: [64, 32]}
  - {name: b, dtype: bfloat16, shape: [32]}
  - {name: g, dtype: float32, shape: [32]}
  - {name: beta, dtype: bfloat16, shape: [32]}
  - {name: wf, dtype: float32, shape: [64, 32]}
  - {name: bf, dtype: float32, shape: [32]}
ops:
  - {op: matmul, in: [x, w], out: [h0]}
  - {op: add, in: [h0, b], out: [h1]}
  - {op: gelu, in: [h1], out: [h2], attrs: {approximate: false}}
  - {op: layer_norm, in: [h2, g, beta], out: [y, mu, var], attrs: {epsilon: 1.0e-5, begin_norm_axis: 1}}
  - {op: softmax, in: [y], out: [p], attrs: {axis: -1}}
  - {op: cast, in: [x], out: [xf], attrs: {dtype: float32}}
  - {op: matmul, in: [xf, wf], out: [f0]}
  - {op: add, in: [f0, bf], out: [f1]}
outputs: [p, mu, f1]
)");
  const FusionPlan plan = plan_fusion(lp, gemm_options());
  INFO(dump_fusion(lp, plan));
  // bf16 matmul + bias + gelu is one GEMM group; layer_norm (float32 scale, bfloat16 bias, float32 mean) a row
  // group, the softmax after it another (a row pattern reads no other's output in its group); the cast a
  // group; the float32 matmul and its bias another GEMM group.
  const FusedGroup* gemm = group_of_call(plan, 0);
  REQUIRE(gemm != nullptr);
  CHECK(gemm->kind == GroupKind::kGemm);
  CHECK(gemm->calls == std::vector<uint32_t>{0, 1, 2});
  CHECK(gemm->gemm.dtype == ir::DataType::kBFloat16);
  CHECK(gemm->gemm.epilogue == GemmEpilogue::kBiasGeluTanh);  // 16-bit: the tanh form (see the test below)
  REQUIRE(gemm->stores.size() == 1);
  CHECK(gemm->stores[0].storage == expr::ScalarType::kBFloat16);
  for (const GroupInput& in : gemm->inputs) {
    CHECK(in.storage == expr::ScalarType::kBFloat16);
    CHECK(in.type == expr::ScalarType::kFloat32);
  }
  const FusedGroup* rows = group_of_call(plan, 3);
  REQUIRE(rows != nullptr);
  CHECK(rows->kind == GroupKind::kRow);
  CHECK(rows->calls == std::vector<uint32_t>{3});
  REQUIRE(group_of_call(plan, 4) != nullptr);
  CHECK(group_of_call(plan, 4)->kind == GroupKind::kRow);
  CHECK(group_of_call(plan, 4)->stores.at(0).storage == expr::ScalarType::kBFloat16);
  const GroupInput* gamma = input_for(lp, *rows, "g");
  REQUIRE(gamma != nullptr);
  CHECK(gamma->storage == expr::ScalarType::kFloat32);
  CHECK(input_for(lp, *rows, "h2")->storage == expr::ScalarType::kBFloat16);
  bool mean_stored = false;
  for (const GroupStore& st : rows->stores) {
    if (lp.value(st.value).name == "mu") {
      mean_stored = true;
      CHECK(st.storage == expr::ScalarType::kFloat32);
      CHECK(st.per_row);
    } else {
      CHECK(st.storage == expr::ScalarType::kBFloat16);
    }
  }
  CHECK(mean_stored);
  const FusedGroup* cast = group_of_call(plan, 5);
  REQUIRE(cast != nullptr);
  CHECK(cast->inputs.at(0).storage == expr::ScalarType::kBFloat16);
  CHECK(cast->stores.at(0).storage == expr::ScalarType::kFloat32);
  const FusedGroup* f32 = group_of_call(plan, 6);
  REQUIRE(f32 != nullptr);
  CHECK(f32->calls == std::vector<uint32_t>{6, 7});
  CHECK(f32->gemm.dtype == ir::DataType::kFloat32);
  CHECK(f32->stores.at(0).storage == expr::ScalarType::kFloat32);
  check_invariants(lp, plan);

  // Without half_floats (the CPU: its fused loops have no 16-bit type) no 16-bit value is in a group.
  FusionOptions cpu = gemm_options();
  cpu.half_floats = false;
  const FusionPlan cpu_plan = plan_fusion(lp, cpu);
  for (uint32_t c : {1u, 2u, 3u, 4u, 5u}) CHECK(cpu_plan.call_group[c] == kNone);
  CHECK(plan_fusion(lp).empty());
}
