// The fusion pass (passes/fusion.h): grouping decisions on hand-written programs compiled against the
// reference op set plus its fusion overlay (kernels/fusion.yaml), and the memory re-plan.
#include "fusion_test_util.h"
#include "passes/gemm.h"

using namespace kforge;
using namespace kforge::passes;

using namespace kforge::passes::fusion_test;

TEST_CASE("fusion: an elementwise chain with fan-in and fan-out is one group without intermediates") {
  LoweredProgram lp = env().compile(R"(
program: chain
inputs: [{name: x, dtype: float32, shape: [4, 8]}, {name: y, dtype: float32, shape: [4, 8]}]
ops:
  - {op: relu, in: [x], out: [a]}
  - {op: add, in: [a, y], out: [b]}
  - {op: tanh, in: [b], out: [c]}
  - {op: sigmoid, in: [b], out: [d]}
  - {op: multiply, in: [c, d], out: [out]}
outputs: [out]
)");
  const SymExpr before = lp.plan.workspace_bytes;
  CHECK(before != SymExpr(0));
  const FusionPlan plan = plan_fusion(lp);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2,3,4"});
  const FusedGroup& g = plan.groups[0];
  CHECK(g.kind == GroupKind::kElementwise);
  CHECK(g.numel == SymExpr(32));
  CHECK(g.outer == SymExpr(1));  // every input contiguous: one flat loop
  REQUIRE(g.stores.size() == 1);
  CHECK(lp.value(g.stores[0].value).name == "out");
  CHECK(g.internal_values.size() == 4);
  CHECK(g.inputs.size() == 2);  // x and y, each loaded once (b's fan-out reads the local twice)
  CHECK(g.label == "relu+add+tanh+sigmoid+multiply");
  check_invariants(lp, plan);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(lp.plan.workspace_bytes == SymExpr(0));  // the intermediates vanished
  CHECK(find_overlap(lp, {}).empty());
}

TEST_CASE("fusion: broadcasts are indexed, never materialised") {
  LoweredProgram lp = env().compile(R"(
program: bcast
inputs:
  - {name: x, dtype: float32, shape: [8, 32]}
  - {name: rowv, dtype: float32, shape: [8, 1]}
  - {name: a, dtype: float32, shape: [4, 1, 6]}
  - {name: b, dtype: float32, shape: [5, 1]}
params: [{name: bias, dtype: float32, shape: [32]}, {name: s, dtype: float32, shape: [1]}]
ops:
  - {op: add, in: [x, bias], out: [h0]}
  - {op: multiply, in: [h0, s], out: [h1]}
  - {op: subtract, in: [h1, rowv], out: [y0]}
  - {op: add, in: [a, b], out: [h3]}
  - {op: exp, in: [h3], out: [y1]}
outputs: [y0, y1]
)");
  const FusionPlan plan = plan_fusion(lp);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2", "3,4"});
  const FusedGroup& g = plan.groups[0];
  CHECK(g.outer == SymExpr(8));
  CHECK(g.inner == SymExpr(32));
  CHECK(input_for(lp, g, "x")->access == InputAccess::kContiguous);
  CHECK(input_for(lp, g, "bias")->access == InputAccess::kInner);
  CHECK(input_for(lp, g, "s")->access == InputAccess::kScalar);
  CHECK(input_for(lp, g, "rowv")->access == InputAccess::kOuter);
  const FusedGroup& g2 = plan.groups[1];
  CHECK(to_string(g2.shape) == "[4, 5, 6]");
  const GroupInput* a = input_for(lp, g2, "a");
  const GroupInput* b = input_for(lp, g2, "b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  // a [4, 1, 6]: strides 6, 0, 1; b [5, 1] (as [1, 5, 1]): 0, 1, 0.
  if (a->access == InputAccess::kStrided) CHECK(a->strides == std::vector<SymExpr>{6, 0, 1});
  if (b->access == InputAccess::kStrided) CHECK(b->strides == std::vector<SymExpr>{0, 1, 0});
  CHECK((a->access == InputAccess::kStrided || b->access == InputAccess::kStrided));
  check_invariants(lp, plan);
}

TEST_CASE("fusion: an expensive producer is never evaluated twice") {
  // Spelled-out softmax: exp's result is needed by the sum (pass 1) and by the division (pass 2), so they
  // cannot all be one row group; e is computed once, stored, and read by a second group (sum + divide).
  LoweredProgram lp = env().compile(R"(
program: sm
inputs: [{name: z, dtype: float32, shape: [6, 40]}]
ops:
  - {op: max, in: [z], out: [m], attrs: {axis: [-1], keepdim: true}}
  - {op: subtract, in: [z, m], out: [d]}
  - {op: exp, in: [d], out: [e]}
  - {op: sum, in: [e], out: [s], attrs: {axis: [-1], keepdim: true}}
  - {op: divide, in: [e, s], out: [p]}
outputs: [p]
)");
  const FusionPlan plan = plan_fusion(lp);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2", "3,4"});
  const FusedGroup& g = plan.groups[0];
  CHECK(g.kind == GroupKind::kRow);
  CHECK(g.num_passes == 2);
  REQUIRE(g.stores.size() == 1);
  CHECK(lp.value(g.stores[0].value).name == "e");
  CHECK(plan.groups[1].num_passes == 2);
  CHECK(input_for(lp, plan.groups[1], "e")->access == InputAccess::kContiguous);
  for (const GroupStmt& st : g.stmts) {
    if (lp.calls[st.call].op == "exp") CHECK(st.passes == std::vector<uint32_t>{1});
    if (lp.calls[st.call].op == "subtract") CHECK(st.passes == std::vector<uint32_t>{1});
    if (lp.calls[st.call].op == "max") CHECK(st.kind == StmtKind::kReduce);
  }
  check_invariants(lp, plan);
}

TEST_CASE("fusion: cheap producers may be evaluated in several row passes") {
  // mean -> subtract -> square -> mean -> rsqrt -> multiply: the subtraction is cheap, so it runs in the
  // variance pass and in the output pass; the whole normalisation is one row group of three passes.
  LoweredProgram lp = env().compile(R"(
program: norm
inputs: [{name: r, dtype: float32, shape: [3, 16]}]
ops:
  - {op: mean, in: [r], out: [rm], attrs: {axis: [-1], keepdim: true}}
  - {op: subtract, in: [r, rm], out: [rd]}
  - {op: multiply, in: [rd, rd], out: [rsq]}
  - {op: mean, in: [rsq], out: [rv], attrs: {axis: [-1], keepdim: true}}
  - {op: rsqrt, in: [rv], out: [rinv]}
  - {op: multiply, in: [rd, rinv], out: [rn]}
outputs: [rn]
)");
  const FusionPlan plan = plan_fusion(lp);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2,3,4,5"});
  const FusedGroup& g = plan.groups[0];
  CHECK(g.num_passes == 3);
  CHECK(g.stmts[1].passes == std::vector<uint32_t>{1, 2});  // rd
  CHECK(g.stmts[4].kind == StmtKind::kRowValue);          // rsqrt of a row value
  CHECK(g.stores.size() == 1);
  check_invariants(lp, plan);
}

TEST_CASE("fusion: no group breaks a dependency through an unfused op") {
  // b = a + matmul(a, w): putting relu and add in one group would run the add's group after the matmul that
  // reads a, which needs a first: they stay apart (no cycle).
  LoweredProgram lp = env().compile(R"(
program: cyc
inputs: [{name: x, dtype: float32, shape: [4, 4]}]
params: [{name: w, dtype: float32, shape: [4, 4]}]
ops:
  - {op: relu, in: [x], out: [a]}
  - {op: matmul, in: [a, w], out: [m], attrs: {transpose_x: false, transpose_y: false}}
  - {op: add, in: [a, m], out: [b]}
  - {op: tanh, in: [b], out: [c]}
outputs: [c]
)");
  const FusionPlan plan = plan_fusion(lp);
  CHECK(plan.call_group[0] == kNone);  // a lone elementwise op stays a kernel call
  REQUIRE(group_calls(plan) == std::vector<std::string>{"2,3"});
  check_invariants(lp, plan);
}

TEST_CASE("fusion: reductions take their elementwise consumers over the same rows") {
  LoweredProgram lp = env().compile(R"(
program: red
inputs: [{name: x, dtype: float32, shape: [3, 4, 8, 16]}]
ops:
  - {op: mean, in: [x], out: [xm], attrs: {axis: [2, 3], keepdim: false}}
  - {op: scale, in: [xm], out: [y], attrs: {scale: 3.0, bias: 1.0, bias_after_scale: true}}
outputs: [y]
)");
  const FusionPlan plan = plan_fusion(lp);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1"});
  const FusedGroup& g = plan.groups[0];
  CHECK(g.outer == SymExpr(12));
  CHECK(g.inner == SymExpr(128));
  REQUIRE(g.stmts.size() == 2);
  CHECK(g.stmts[0].kind == StmtKind::kReduce);
  CHECK(g.stmts[0].reduction->accumulator == expr::ScalarType::kFloat64);  // as the reference kernels
  CHECK(g.stmts[1].kind == StmtKind::kRowValue);
  REQUIRE(g.stores.size() == 1);
  CHECK(g.stores[0].per_row);
  CHECK(g.stmts[0].reduction->finalize.has_value());
}

TEST_CASE("fusion: softmax and layer_norm rows with prologue and epilogue") {
  LoweredProgram lp = env().compile(R"(
program: rows
inputs: [{name: x, dtype: float32, shape: [16, 100]}, {name: h, dtype: float32, shape: [2, 3, 64]},
         {name: r, dtype: float32, shape: [2, 3, 64]}]
params: [{name: g, dtype: float32, shape: [64]}, {name: b, dtype: float32, shape: [64]}]
ops:
  - {op: scale, in: [x], out: [xs], attrs: {scale: 2.0, bias: 0.0, bias_after_scale: true}}
  - {op: softmax, in: [xs], out: [p], attrs: {axis: -1}}
  - {op: add, in: [h, r], out: [hr]}
  - {op: layer_norm, in: [hr, g, b], out: [n, mu, var], attrs: {epsilon: 1.0e-5, begin_norm_axis: 2}}
  - {op: relu, in: [n], out: [y]}
outputs: [p, y, mu]
)");
  const FusionPlan plan = plan_fusion(lp);
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1", "2,3,4"});
  const FusedGroup& sm = plan.groups[0];
  CHECK(sm.kind == GroupKind::kRow);
  CHECK(sm.num_passes == 3);
  CHECK(sm.stmts[0].passes == std::vector<uint32_t>{0, 1, 2});  // the cheap scale, in every pass
  CHECK(sm.stmts[1].kind == StmtKind::kRowPattern);
  CHECK(sm.stmts[1].pattern == RowPatternKind::kSoftmax);
  const FusedGroup& ln = plan.groups[1];
  CHECK(ln.outer == SymExpr(6));
  CHECK(ln.inner == SymExpr(64));
  const GroupStmt& pattern = ln.stmts[1];
  CHECK(pattern.pattern == RowPatternKind::kLayerNorm);
  CHECK(pattern.epsilon == Approx(1e-5));
  REQUIRE(pattern.operands.size() == 3);
  CHECK(input_for(lp, ln, "g")->access == InputAccess::kInner);
  // Stored: y (element) and mu (per row); var is read by nobody, n only by the relu.
  REQUIRE(ln.stores.size() == 2);
  bool mean_per_row = false;
  for (const GroupStore& s : ln.stores) mean_per_row = mean_per_row || (lp.value(s.value).name == "mu" && s.per_row);
  CHECK(mean_per_row);
  check_invariants(lp, plan);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(find_overlap(lp, {}).empty());
}

TEST_CASE("fusion: the plan is deterministic and --no-fuse leaves the program as it was") {
  const std::string program = R"(
program: det
inputs: [{name: x, dtype: float32, shape: [-1, 48]}]
params: [{name: b, dtype: float32, shape: [48]}]
ops:
  - {op: add, in: [x, b], out: [h0]}
  - {op: silu, in: [h0], out: [h1]}
  - {op: softmax, in: [h1], out: [y], attrs: {axis: -1}}
outputs: [y]
)";
  LoweredProgram a = env().compile(program);
  LoweredProgram b = env().compile(program);
  const FusionPlan pa = plan_fusion(a), pb = plan_fusion(b);
  CHECK(dump_fusion(a, pa) == dump_fusion(b, pb));
  CHECK(fusion_dot(a, pa) == fusion_dot(b, pb));
  REQUIRE(group_calls(pa) == std::vector<std::string>{"0,1", "2"});  // silu is expensive: not in 3 passes
  CHECK(pa.groups[0].needs_int64);  // dynamic: int64 indexing
  CHECK(fusion_dot(a, pa).find("subgraph cluster_g1") != std::string::npos);

  FusionOptions off;
  off.enabled = false;
  const FusionPlan none = plan_fusion(a, off);
  CHECK(none.empty());
  const std::string before = a.dump();
  apply_fusion_to_memory_plan(a, none);
  CHECK(a.dump() == before);
  for (uint32_t g : none.call_group) CHECK(g == kNone);
}

// ---- GEMM groups (FusionOptions::gemm_groups, --target cuda) ----------------------------------------------------

namespace {

FusionOptions gemm_options() {
  FusionOptions o;
  o.single_call_groups = true;  // as --target cuda sets them
  o.gemm_groups = true;
  o.half_floats = true;
  return o;
}

const FusedGroup* group_of_call(const FusionPlan& plan, uint32_t call) {
  return plan.call_group[call] == kNone ? nullptr : &plan.groups[plan.call_group[call]];
}

}  // namespace

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
  CHECK(gemm->gemm.epilogue == GemmEpilogue::kBiasGelu);
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

// ---- convolution groups (FusionOptions::conv_fused, the CPU with kernels/fusion.yaml) ----------------------------

namespace {

FusionOptions conv_options() {
  FusionOptions o;
  o.conv_fused = env().op("conv2d_fused");
  REQUIRE(o.conv_fused != nullptr);
  return o;
}

const KernelArg& fused_arg(const FusedGroup& g, std::string_view name) {
  const KernelArg* a = g.conv_call.arg(name);
  REQUIRE(a != nullptr);
  return *a;
}

const char* const kConvParams = R"(
params:
  - {name: w, dtype: float32, shape: [8, 8, 3, 3]}
  - {name: m, dtype: float32, shape: [8]}
  - {name: v, dtype: float32, shape: [8]}
  - {name: s, dtype: float32, shape: [8]}
  - {name: t, dtype: float32, shape: [8]}
  - {name: b, dtype: float32, shape: [1, 8, 1, 1]}
)";

const char* const kConvAttrs =
    "{strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}";
const char* const kBnAttrs =
    "{is_test: true, momentum: 0.9, epsilon: 1.0e-3, data_format: NCHW, use_global_stats: false, "
    "trainable_statistics: false}";

}  // namespace

TEST_CASE("fusion: a conv takes its bias, batch norm, residual and activation into one conv2d_fused call") {
  LoweredProgram lp = env().compile(std::string(R"(
program: block
inputs: [{name: x, dtype: float32, shape: [2, 8, 6, 6]}]
)") + kConvParams + R"(
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )" + kConvAttrs + R"(}
  - {op: add, in: [c, b], out: [cb]}
  - {op: batch_norm, in: [cb, m, v, s, t], out: [n, n_m, n_v, n_sm, n_sv, n_r], attrs: )" + kBnAttrs + R"(}
  - {op: add, in: [x, n], out: [r]}
  - {op: relu, in: [r], out: [y]}
outputs: [y]
)");
  // Without the library's conv2d_fused (the default options) nothing of it fuses as a convolution.
  for (const FusedGroup& g : plan_fusion(lp).groups) CHECK(g.kind != GroupKind::kConv);
  const FusionPlan plan = plan_fusion(lp, conv_options());
  REQUIRE(group_calls(plan) == std::vector<std::string>{"0,1,2,3,4"});
  const FusedGroup& g = plan.groups[0];
  CHECK(g.kind == GroupKind::kConv);
  CHECK(g.label == "conv2d+add+batch_norm+add+relu");
  CHECK(g.conv_call.kernel == "conv2d_fused");
  CHECK(lp.value(fused_arg(g, "input").value).name == "x");
  CHECK(lp.value(fused_arg(g, "bias").value).name == "b");
  CHECK(lp.value(fused_arg(g, "shift").value).name == "t");
  CHECK(lp.value(fused_arg(g, "residual").value).name == "x");
  CHECK(fused_arg(g, "epsilon").constant.float_value == Approx(1e-3));
  CHECK(fused_arg(g, "activation").constant.string_value == "relu");
  CHECK(fused_arg(g, "activation_after_residual").constant.bool_value);
  CHECK(fused_arg(g, "strides").constant.ints == std::vector<int64_t>{1, 1});
  REQUIRE(g.stores.size() == 1);
  CHECK(lp.value(g.stores[0].value).name == "y");
  CHECK(g.internal_values.size() == 8);  // c, cb, n, the batch norm's four statistics, r
  CHECK(dump_fusion(lp, plan).find("group 0 conv") != std::string::npos);
  check_invariants(lp, plan);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(lp.plan.workspace_bytes == SymExpr(0));  // y is the output: nothing else reaches memory
  CHECK(find_overlap(lp, {}).empty());
}

TEST_CASE("fusion: a bias reshaped from a parameter between the conv and its add joins the group") {
  // Paddle's Conv2D with a bias: conv2d, reshape(bias, [1, C, 1, 1]), add. The reshape writes a buffer of its own
  // (its input is a parameter) after the conv: the group reads it at its position, after that write.
  LoweredProgram lp = env().compile(std::string(R"(
program: bias_reshape
inputs: [{name: x, dtype: float32, shape: [-1, 8, 6, 6]}]
)") + kConvParams + R"(
  - {name: c8, dtype: float32, shape: [8]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )" + kConvAttrs + R"(}
  - {op: reshape, in: [c8], out: [c8r], attrs: {shape: [1, 8, 1, 1]}}
  - {op: add, in: [c, c8r], out: [cb]}
  - {op: batch_norm, in: [cb, m, v, s, t], out: [n, n_m, n_v, n_sm, n_sv, n_r], attrs: )" + kBnAttrs + R"(}
  - {op: relu, in: [n], out: [y]}
outputs: [y]
)");
  const FusionPlan plan = plan_fusion(lp, conv_options());
  REQUIRE(plan.groups.size() == 1);
  const FusedGroup& g = plan.groups[0];
  CHECK(g.kind == GroupKind::kConv);
  CHECK(g.calls == std::vector<uint32_t>{0, 2, 3, 4});
  CHECK(plan.call_group[1] == kNone);  // the reshape stays a call, before the group
  CHECK(fused_arg(g, "bias").value == lp.calls[1].outputs[0].values[0]);
  check_invariants(lp, plan);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(find_overlap(lp, {}).empty());
}

TEST_CASE("fusion: a bias reshaped twice joins the group; a write to it after its add stops the group there") {
  // In NHWC the layout plan reshapes Paddle's [1, C, 1, 1] bias once more: two reshapes, the second a view of the
  // first, so their buffer holds two values (squeezenet1_0's convolutions). `between`: ops after the add.
  auto compile = [](const std::string& between, const std::string& outputs) {
    return env().compile(std::string(R"(
program: bias_reshape_twice
inputs: [{name: x, dtype: float32, shape: [1, 8, 6, 6]}]
)") + kConvParams + R"(
  - {name: c8, dtype: float32, shape: [8]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )" + kConvAttrs + R"(}
  - {op: reshape, in: [c8], out: [c8a], attrs: {shape: [1, 8, 1, 1]}}
  - {op: reshape, in: [c8a], out: [c8r], attrs: {shape: [1, 8, 1, 1]}}
  - {op: add, in: [c, c8r], out: [cb]}
)" + between + R"(
  - {op: relu, in: [cb], out: [y]}
outputs: )" + outputs + "\n");
  };
  LoweredProgram lp = compile("", "[y]");
  REQUIRE(lp.value(lp.calls[1].outputs[0].values[0]).buffer == lp.value(lp.calls[2].outputs[0].values[0]).buffer);
  const FusionPlan plan = plan_fusion(lp, conv_options());
  REQUIRE(plan.groups.size() == 1);
  const FusedGroup& g = plan.groups[0];
  CHECK(g.calls == std::vector<uint32_t>{0, 3, 4});
  CHECK(fused_arg(g, "bias").value == lp.calls[2].outputs[0].values[0]);
  CHECK(fused_arg(g, "activation").constant.string_value == "relu");
  check_invariants(lp, plan);

  // relu_ overwrites the bias after the add read it: the group ends at the add (it runs there, before the write).
  LoweredProgram later = compile("  - {op: relu_, in: [c8r], out: [c8x]}", "[y, c8x]");
  const FusionPlan stopped = plan_fusion(later, conv_options());
  const FusedGroup* conv = group_of_call(stopped, 0);
  REQUIRE(conv != nullptr);
  CHECK(conv->calls == std::vector<uint32_t>{0, 3});
  CHECK(fused_arg(*conv, "activation").constant.string_value.empty());
  check_invariants(later, stopped);
}

TEST_CASE("fusion: a residual computed between a conv and its add goes to the later conv's group only") {
  // resnet's downsampling block: conv2 + bn2, then the shortcut's conv + bn, then add + relu. The shortcut's
  // batch norm writes the residual after conv2: conv2's group stops at bn2 and the shortcut's group takes the add.
  LoweredProgram lp = env().compile(std::string(R"(
program: downsample
inputs: [{name: x, dtype: float32, shape: [1, 8, 6, 6]}]
)") + kConvParams + R"(
ops:
  - {op: conv2d, in: [x, w], out: [c2], attrs: )" + kConvAttrs + R"(}
  - {op: batch_norm, in: [c2, m, v, s, t], out: [n2, n2_m, n2_v, n2_sm, n2_sv, n2_r], attrs: )" + kBnAttrs + R"(}
  - {op: conv2d, in: [x, w], out: [cd], attrs: )" + kConvAttrs + R"(}
  - {op: batch_norm, in: [cd, m, v, s, t], out: [nd, nd_m, nd_v, nd_sm, nd_sv, nd_r], attrs: )" + kBnAttrs + R"(}
  - {op: add, in: [n2, nd], out: [r]}
  - {op: relu, in: [r], out: [y]}
outputs: [y]
)");
  const FusionPlan plan = plan_fusion(lp, conv_options());
  REQUIRE(plan.groups.size() == 2);
  CHECK(plan.groups[0].calls == std::vector<uint32_t>{0, 1});
  CHECK(plan.groups[1].calls == std::vector<uint32_t>{2, 3, 4, 5});
  check_invariants(lp, plan);
}

TEST_CASE("fusion: what a conv group leaves out") {
  LoweredProgram lp = env().compile(std::string(R"(
program: apart
inputs: [{name: x, dtype: float32, shape: [1, 8, 6, 6]}, {name: z, dtype: float32, shape: [1, 1, 6, 6]}]
)") + kConvParams + R"(
ops:
  - {op: conv2d, in: [x, w], out: [c0], attrs: )" + kConvAttrs + R"(}
  - {op: relu, in: [c0], out: [r0]}
  - {op: tanh, in: [c0], out: [t0]}
  - {op: conv2d, in: [x, w], out: [c1], attrs: )" + kConvAttrs + R"(}
  - op: batch_norm
    in: [c1, m, v, s, t]
    out: [n1, n1_m, n1_v, n1_sm, n1_sv, n1_r]
    attrs: {is_test: false, momentum: 0.9, epsilon: 1.0e-5, data_format: NCHW, use_global_stats: false, trainable_statistics: false}
  - {op: conv2d, in: [x, w], out: [c2], attrs: )" + kConvAttrs + R"(}
  - {op: add, in: [c2, z], out: [a2]}
  - {op: exp, in: [x], out: [e]}
  - {op: conv2d, in: [e, w], out: [c3], attrs: )" + kConvAttrs + R"(}
  - {op: relu_, in: [e], out: [e2]}
  - {op: sigmoid, in: [c3], out: [y3]}
  - {op: conv2d, in: [x, w], out: [c4], attrs: )" + kConvAttrs + R"(}
  - {op: gelu, in: [c4], out: [y4], attrs: {approximate: false}}
outputs: [r0, t0, n1, n1_m, a2, e2, y3, y4]
)");
  const FusionPlan plan = plan_fusion(lp, conv_options());
  auto kind_of = [&](uint32_t call) -> std::string {
    if (plan.call_group[call] == kNone) return "call";
    return plan.groups[plan.call_group[call]].kind == GroupKind::kConv ? "conv" : "loop";
  };
  CHECK(kind_of(0) == "call");  // c0 has two readers
  CHECK(kind_of(3) == "call");  // a batch norm with batch statistics (and a fetched mean_out) is no inference one
  CHECK(kind_of(5) == "call");  // z [1, 1, 6, 6] broadcasts: neither a per-channel bias nor a residual
  CHECK(kind_of(8) == "call");  // relu_ writes e's buffer before the sigmoid: the group would read e too late
  REQUIRE(kind_of(11) == "conv");  // gelu joins
  CHECK(group_of_call(plan, 11)->calls == std::vector<uint32_t>{11, 12});
  CHECK(fused_arg(*group_of_call(plan, 11), "activation").constant.string_value == "gelu");
  check_invariants(lp, plan);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(find_overlap(lp, {}).empty());
}

// ---- Absorbed transposes (FusionOptions::absorb_transposes, --target cuda) -------------------------------------

namespace {

FusionOptions absorbing_options() {
  FusionOptions o = gemm_options();  // single_call_groups and half_floats, as --target cuda
  o.absorb_transposes = true;
  return o;
}

std::vector<SymExpr> sym_list(std::initializer_list<int64_t> values) {
  return std::vector<SymExpr>(values.begin(), values.end());
}

}  // namespace

TEST_CASE("fusion: a transpose is read through into the group after it and stored through from the group before") {
  LoweredProgram lp = env().compile(R"(
program: absorbed
inputs: [{name: x, dtype: float32, shape: [2, 3, 4]}, {name: b, dtype: float32, shape: [3]}]
ops:
  - {op: transpose, in: [x], out: [xt], attrs: {perm: [0, 2, 1]}}
  - {op: add, in: [xt, b], out: [s]}
  - {op: relu, in: [s], out: [r]}
  - {op: transpose, in: [r], out: [y], attrs: {perm: [2, 0, 1]}}
outputs: [y]
)");
  const FusionPlan plan = plan_fusion(lp, absorbing_options());
  REQUIRE(plan.groups.size() == 1);
  const FusedGroup& g = plan.groups[0];
  CHECK(g.calls == std::vector<uint32_t>{1, 2});
  CHECK(g.absorbed == std::vector<uint32_t>{0, 3});
  CHECK(plan.call_group[0] == 0);
  CHECK(plan.call_group[3] == 0);
  CHECK(g.label == "transpose+add+relu+transpose");
  CHECK(g.position == 2);  // where the group ran before: the second transpose's output is written there
  // x [2, 3, 4] read as xt [2, 4, 3]: xt's dim 1 is x's dim 2 (stride 1), its dim 2 is x's dim 1 (stride 4).
  const GroupInput* x = input_for(lp, g, "x");
  REQUIRE(x != nullptr);
  CHECK(x->access == InputAccess::kStrided);
  CHECK(x->strides == sym_list({12, 1, 4}));
  CHECK(input_for(lp, g, "b")->access == InputAccess::kInner);
  // r [2, 4, 3] stored as y [3, 2, 4] (strides 8, 4, 1): r's dim 2 is y's dim 0, dim 0 is y's dim 1, dim 1 y's 2.
  REQUIRE(g.stores.size() == 1);
  CHECK(lp.value(g.stores[0].value).name == "y");
  CHECK(g.stores[0].strides == sym_list({4, 1, 8}));
  // Neither transpose's other side is stored: xt and r have no buffer.
  for (const char* internal : {"xt", "r"}) {
    INFO(internal);
    CHECK(std::any_of(g.internal_values.begin(), g.internal_values.end(),
                      [&](uint32_t v) { return lp.value(v).name == internal; }));
  }
  check_invariants(lp, plan);
  CHECK(dump_fusion(lp, plan).find("calls 1,2 absorbs 0,3 stores") != std::string::npos);
  apply_fusion_to_memory_plan(lp, plan);
  CHECK(lp.plan.workspace_bytes == SymExpr(0));  // x, b and y are the caller's; nothing in between is stored
  CHECK(find_overlap(lp, {}).empty());

  // Off (the CPU): the transposes stay kernel calls.
  FusionOptions off = absorbing_options();
  off.absorb_transposes = false;
  const FusionPlan kept = plan_fusion(lp, off);
  CHECK(kept.call_group[0] == kNone);
  CHECK(kept.call_group[3] == kNone);
}

TEST_CASE("fusion: a transpose stays a call where absorbing it would change what is read or stored") {
  LoweredProgram lp = env().compile(R"(
program: kept
inputs: [{name: x, dtype: float32, shape: [2, 3]}, {name: z, dtype: float32, shape: [3, 2]}]
ops:
  - {op: transpose, in: [x], out: [t0], attrs: {perm: [1, 0]}}
  - {op: relu, in: [t0], out: [r0]}
  - {op: tanh, in: [t0], out: [u0]}
  - {op: transpose, in: [x], out: [t1], attrs: {perm: [1, 0]}}
  - {op: exp, in: [t1], out: [e1]}
  - {op: transpose, in: [z], out: [t2], attrs: {perm: [1, 0]}}
  - {op: exp, in: [t2], out: [e2]}
  - {op: sigmoid, in: [z], out: [s3]}
  - {op: transpose, in: [s3], out: [t3], attrs: {perm: [1, 0]}}
  - {op: abs, in: [z], out: [a4]}
  - {op: transpose, in: [a4], out: [t4], attrs: {perm: [1, 0]}}
outputs: [r0, u0, t1, e1, e2, s3, t3, t4]
)");
  const FusionPlan plan = plan_fusion(lp, absorbing_options());
  check_invariants(lp, plan);
  REQUIRE(plan.call_group[1] != plan.call_group[2]);  // relu and tanh: each a group of its own
  CHECK(plan.call_group[0] == kNone);  // t0 is read by two groups
  CHECK(plan.call_group[3] == kNone);  // t1 is a program output
  CHECK(plan.call_group[5] != kNone);  // t2 only feeds exp: read through
  CHECK(plan.call_group[8] == kNone);  // s3 is a program output: it is stored anyway
  CHECK(plan.call_group[10] != kNone); // a4 only feeds the transpose (t4 is an output: stored through into it)
  const FusedGroup& g4 = plan.groups[plan.call_group[10]];
  CHECK(lp.value(g4.stores[0].value).name == "t4");
}

TEST_CASE("fusion: an expand read only by one group is read through at stride 0 along its broadcast dims") {
  LoweredProgram lp = env().compile(R"(
program: expanded
inputs: [{name: x, dtype: float32, shape: [3, 1]}, {name: y, dtype: float32, shape: [2, 3, 4]}]
ops:
  - {op: expand, in: [x], out: [xe], attrs: {shape: [2, 3, 4]}}
  - {op: multiply, in: [xe, y], out: [m]}
  - {op: expand, in: [x], out: [xf], attrs: {shape: [2, 3, 4]}}
outputs: [m, xf]
)");
  const FusionPlan plan = plan_fusion(lp, absorbing_options());
  REQUIRE(plan.groups.size() == 1);
  const FusedGroup& g = plan.groups[0];
  CHECK(g.absorbed == std::vector<uint32_t>{0});
  CHECK(g.label == "expand+multiply");
  const GroupInput* x = input_for(lp, g, "x");
  REQUIRE(x != nullptr);
  CHECK(x->access == InputAccess::kStrided);
  CHECK(x->strides == sym_list({0, 1, 0}));
  CHECK(plan.call_group[2] == kNone);  // xf is a program output
  check_invariants(lp, plan);
}
