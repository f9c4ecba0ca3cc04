// The fusion pass (passes/fusion.h): grouping decisions on hand-written programs compiled against the
// reference op set plus its fusion overlay (kernels/fusion.yaml), and the memory re-plan: elementwise chains,
// broadcasts, row groups (softmax, layer_norm, reductions), and the transposes and expands a group reads or stores
// through. GEMM groups are test_fusion_gemm.cpp's, convolution groups test_fusion_conv.cpp's.
#include "fusion_test_util.h"

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

TEST_CASE("fusion: a producer read twice and taken from a full group joins once") {
  // b = tanh(exp(relu(x))) is one group; multiply(b, b) cannot take all of it (max_group_calls 3), so it takes b's
  // call alone, for its first operand. Its second operand names the same call, whose group_of still pointed at the
  // group it left: it used to be taken a second time, a group with a call twice (the statement emitted twice: a
  // redeclared local under --precision float16, activations_nonfinite).
  LoweredProgram lp = env().compile(R"(
program: twice
inputs: [{name: x, dtype: float32, shape: [4, 8]}]
ops:
  - {op: relu, in: [x], out: [a]}
  - {op: exp, in: [a], out: [a2]}
  - {op: tanh, in: [a2], out: [b]}
  - {op: multiply, in: [b, b], out: [out]}
outputs: [out]
)");
  FusionOptions options;
  options.max_group_calls = 3;
  const FusionPlan plan = plan_fusion(lp, options);
  CHECK(group_calls(plan) == std::vector<std::string>{"0,1", "2,3"});
  check_invariants(lp, plan);
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
