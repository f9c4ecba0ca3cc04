// Shape inference (infer_meta rules at generation time, symbolic dims) and constant propagation.
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

using test::Analyzed;  // pass_test_util.h
using test::analyze;
using test::analyze_ok;

std::string program(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return test::program_yaml(inputs, ops, outputs);
}

}  // namespace

TEST_CASE("shapes: elementwise broadcasting, static and symbolic") {
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [-1, 1, 5]}, {name: y, dtype: float32, shape: [4, 1]}, "
      "{name: z, dtype: float32, shape: [-1, 5]}]",
      "  - {op: add, in: [x, y], out: [a]}\n"
      "  - {op: multiply, in: [x, z], out: [b]}\n"
      "  - {op: maximum, in: [a, a], out: [c]}\n",
      "[a, b, c]"));
  CHECK(a.analysis->symbols.size() == 2);
  CHECK(a.analysis->symbols[0].name == "x.dims[0]");
  CHECK(a.analysis->symbols[1].input == 2);
  CHECK(a.shape("a") == "float32[s0, 4, 5]");
  CHECK(a.shape("b") == "float32[s0, s1, 5]");  // x's 1 broadcasts to z's dynamic dim
  CHECK(a.shape("c") == "float32[s0, 4, 5]");
}

// The dims `analysis` gives program p's value `name`, as text ("[s0, 5]").
std::string dims_of(const ir::Program& p, const Analysis& analysis, const std::string& name) {
  for (size_t i = 0; i < p.value_capacity(); ++i) {
    if (p.value(ir::ValueId{static_cast<uint32_t>(i)}).name == name) return to_string(analysis.values.at(i).dims);
  }
  return "no value";
}

TEST_CASE("shapes: dynamic dims that meet in a broadcast can share one symbol") {
  const std::string text = program(
      "[{name: x, dtype: float32, shape: [-1, 5]}, {name: y, dtype: float32, shape: [-1, 5]}, "
      "{name: z, dtype: float32, shape: [-1, -1]}, {name: w, dtype: float32, shape: [-1, 5]}]",
      "  - {op: add, in: [x, y], out: [a]}\n"
      "  - {op: multiply, in: [a, z], out: [b]}\n"
      "  - {op: add, in: [w, w], out: [c]}\n",
      "[a, b, c]");
  Analyzed a = analyze_ok(text);
  CHECK(a.shape("a") == "float32[max(s0, s1), 5]");
  CHECK(a.shape("b") == "float32[max(s2, max(s0, s1)), 5]");  // z.dims[1] must be 1 or 5
  CHECK(a.shape("c") == "float32[s4, 5]");
  // x, y and z's batches meet in one broadcast dim (a max of a max): y's and z's join x's; w's stays its own.
  const std::map<InputDim, InputDim> aliases = broadcast_symbol_aliases(*a.analysis);
  REQUIRE(aliases.size() == 2);
  CHECK(aliases.at(InputDim(1, 0)) == InputDim(0, 0));
  CHECK(aliases.at(InputDim(2, 0)) == InputDim(0, 0));

  test::Env env;
  std::optional<ir::Program> p = env.read("p.yaml", text);
  REQUIRE(verify_program(*p, env.ops(), env.diags()));
  AnalysisOptions options;
  options.symbol_aliases = aliases;
  std::optional<Analysis> unified = analyze_program(*p, env.ops(), env.diags(), options);
  INFO(env.diagnostics());
  REQUIRE(unified.has_value());
  CHECK(unified->symbols.size() == 3);  // x.dims[0], z.dims[1], w.dims[0]: y's and z's batches are x's
  CHECK(unified->symbols[1].name == "z.dims[1]");
  CHECK(broadcast_symbol_aliases(*unified).empty());
  auto shape = [&](const std::string& name) { return dims_of(*p, *unified, name); };
  CHECK(shape("a") == "[s0, 5]");
  CHECK(shape("b") == "[s0, 5]");
  CHECK(shape("c") == "[s2, 5]");
}

TEST_CASE("shapes: with equal_broadcast_dims, an expression and a dim it meets in a broadcast are taken as equal") {
  const std::string text = program(
      "[{name: x, dtype: float32, shape: [-1, 4]}, {name: w, dtype: float32, shape: [-1, 4]}]",
      "  - {op: builtin.combine, in: [x, x], out: [l]}\n"
      "  - {op: concat, in: [l], out: [z], attrs: {axis: 0}}\n"
      "  - {op: add, in: [z, w], out: [c]}\n"
      "  - {op: add, in: [w, w], out: [d]}\n",
      "[c, d]");
  CHECK(analyze_ok(text).shape("c") == "float32[max(2 * s0, s1), 4]");  // the default: Paddle's broadcast
  test::Env env;
  std::optional<ir::Program> p = env.read("p.yaml", text);
  REQUIRE(verify_program(*p, env.ops(), env.diags()));
  AnalysisOptions options;
  options.equal_broadcast_dims = true;
  std::optional<Analysis> a = analyze_program(*p, env.ops(), env.diags(), options);
  INFO(env.diagnostics());
  REQUIRE(a.has_value());
  REQUIRE(a->dim_equalities.size() == 1);
  CHECK(a->dim_equalities[0].op == "pd_op.add");
  CHECK(a->dim_equalities[0].a.to_string() == "2 * s0");
  CHECK(a->dim_equalities[0].b.to_string() == "s1");
  auto shape = [&](const std::string& name) { return dims_of(*p, *a, name); };
  // Every dim s1 becomes 2 * s0, w's own and what is computed from it: the generated code checks the pair first.
  CHECK(shape("c") == "[2 * s0, 4]");
  CHECK(shape("w") == "[2 * s0, 4]");
  CHECK(shape("d") == "[2 * s0, 4]");
}

TEST_CASE("shapes: dtype and broadcast conflicts are errors at the op") {
  Analyzed a = analyze("p.yaml", program("[{name: x, dtype: float32, shape: [3]}, {name: y, dtype: int64, shape: [3]}]",
                                         "  - {op: add, in: [x, y], out: [z]}\n", "[z]"));
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("p.yaml:4:5: error: 'add': dtype conflict: x is float32, y is int64"));
  Analyzed b = analyze("p.yaml", program("[{name: x, dtype: float32, shape: [3]}, {name: y, dtype: float32, shape: [4]}]",
                                         "  - {op: add, in: [x, y], out: [z]}\n", "[z]"));
  CHECK_THAT(b.diagnostics, Catch::Contains("error: 'add': shapes [3] and [4] cannot be broadcast"));
}

TEST_CASE("shapes: declared result types are cross-checked") {
  Analyzed a = analyze("p.txt", R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2,3],stop_gradient:[true]} : () -> builtin.tensor<2x3xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2x3xf32>) -> builtin.tensor<3x2xf32>
    (%2) = "pd_op.exp" (%0) {} : (builtin.tensor<2x3xf32>) -> builtin.tensor<2x3xf64>
    (%3) = "pd_op.tanh" (%0) {} : (builtin.tensor<2x3xf32>) -> builtin.tensor<-1x3xf32>
}
)");
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("p.txt:3:5: error: result 'out' of 'pd_op.relu' is declared as "
                                            "tensor<3x2xf32>, but its inputs give float32[2, 3]: dim 0 differs"));
  CHECK_THAT(a.diagnostics, Catch::Contains("p.txt:4:5: error: result 'out' of 'pd_op.exp' is declared as "
                                            "tensor<2x3xf64>, but its inputs give float32[2, 3]: dtype conflict"));
  CHECK_THAT(a.diagnostics, Catch::Contains("2 errors generated."));  // -1 against a static 2 is fine
}

TEST_CASE("shapes: matmul, transpose, reshape, flatten, squeeze, unsqueeze") {
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [-1, 3, 10]}, {name: w, dtype: float32, shape: [20, 10]}]",
      "  - {op: matmul, in: [x, w], out: [m], attrs: {transpose_y: true}}\n"
      "  - {op: transpose, in: [m], out: [t], attrs: {perm: [1, 0, 2]}}\n"
      "  - {op: reshape, in: [x], out: [r], attrs: {shape: [-1, 30]}}\n"
      "  - {op: reshape, in: [x], out: [r0], attrs: {shape: [0, 0, 2, 5]}}\n"
      "  - {op: flatten, in: [x], out: [f], attrs: {start_axis: 1, stop_axis: -1}}\n"
      "  - {op: unsqueeze, in: [x], out: [u], attrs: {axis: [0, 3]}}\n"
      "  - {op: squeeze, in: [u], out: [s], attrs: {axis: [0]}}\n"
      "  - {op: matmul, in: [w, w], out: [v], attrs: {transpose_x: true}}\n",
      "[m, t, r, r0, f, s, v]"));
  CHECK(a.shape("m") == "float32[s0, 3, 20]");
  CHECK(a.shape("t") == "float32[3, s0, 20]");
  CHECK(a.shape("r") == "float32[s0, 30]");
  CHECK(a.shape("r0") == "float32[s0, 3, 2, 5]");
  CHECK(a.shape("f") == "float32[s0, 30]");
  CHECK(a.shape("u") == "float32[1, s0, 3, 1, 10]");
  CHECK(a.shape("s") == "float32[s0, 3, 1, 10]");
  CHECK(a.shape("v") == "float32[10, 10]");
}

TEST_CASE("shapes: reshape to an impossible shape is an error") {
  Analyzed a = analyze("p.yaml", program("[{name: x, dtype: float32, shape: [2, 3]}]",
                                         "  - {op: reshape, in: [x], out: [r], attrs: {shape: [4, -1]}}\n", "[r]"));
  CHECK_THAT(a.diagnostics, Catch::Contains("error: 'reshape': cannot reshape x [2, 3] (6 elements) to [4, -1]"));
}

TEST_CASE("shapes: concat, stack, split through builtin ops") {
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [2, 3]}, {name: y, dtype: float32, shape: [2, 5]}]",
      "  - {op: builtin.combine, in: [x, y], out: [l]}\n"
      "  - {op: concat, in: [l], out: [c], attrs: {axis: 1}}\n"
      "  - {op: builtin.combine, in: [x, x], out: [l2]}\n"
      "  - {op: stack, in: [l2], out: [s], attrs: {axis: 1}}\n"
      "  - {op: split, in: [c], out: [parts], attrs: {sections: [2, -1], axis: 1}}\n"
      "  - {op: builtin.split, in: [parts], out: [p0, p1]}\n"
      "  - {op: split_with_num, in: [c], out: [halves], attrs: {num: 2, axis: 0}}\n"
      "  - {op: builtin.split, in: [halves], out: [h0, h1]}\n",
      "[s, p0, p1, h1]"));
  CHECK(a.shape("c") == "float32[2, 8]");
  CHECK(a.shape("s") == "float32[2, 2, 3]");
  CHECK(a.shape("parts") == "[[2, 2], [2, 6]]");
  CHECK(a.shape("p0") == "float32[2, 2]");
  CHECK(a.shape("p1") == "float32[2, 6]");
  CHECK(a.shape("h1") == "float32[1, 8]");
}

TEST_CASE("shapes: reductions, softmax, layer_norm, embedding, cast, where, expand, slice") {
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [-1, 4, 6]}, {name: ids, dtype: int64, shape: [-1, 7]}, "
      "{name: emb, dtype: float32, shape: [100, 16]}, {name: c, dtype: bool, shape: [-1, 4, 6]}]",
      "  - {op: sum, in: [x], out: [s1], attrs: {axis: [1], keepdim: true}}\n"
      "  - {op: mean, in: [x], out: [s2], attrs: {axis: [-1]}}\n"
      "  - {op: max, in: [x], out: [s3]}\n"
      "  - {op: sum, in: [ids], out: [s4]}\n"
      "  - {op: softmax, in: [x], out: [sm], attrs: {axis: -1}}\n"
      "  - {op: layer_norm, in: [x, ~, ~], out: [ln, lm, lv], attrs: {begin_norm_axis: 2}}\n"
      "  - {op: embedding, in: [ids, emb], out: [e]}\n"
      "  - {op: cast, in: [x], out: [xi], attrs: {dtype: int32}}\n"
      "  - {op: where, in: [c, x, x], out: [w]}\n"
      "  - {op: expand, in: [s1], out: [ex], attrs: {shape: [-1, 4, 6]}}\n"
      "  - {op: slice, in: [x], out: [sl], attrs: {axes: [1, 2], starts: [1, -2], ends: [100, 6], infer_flags: [1, 1], "
      "decrease_axis: []}}\n"
      "  - {op: slice, in: [x], out: [sl2], attrs: {axes: [1], starts: [2], ends: [3], infer_flags: [1], "
      "decrease_axis: [1]}}\n"
      "  - {op: strided_slice, in: [x], out: [ss], attrs: {axes: [2], starts: [0], ends: [6], strides: [4]}}\n",
      "[s1, s2, s3, s4, sm, ln, e, xi, w, ex, sl, sl2, ss]"));
  CHECK(a.shape("s1") == "float32[s0, 1, 6]");
  CHECK(a.shape("s2") == "float32[s0, 4]");
  CHECK(a.shape("s3") == "float32[]");  // no axis: reduce everything
  CHECK(a.shape("s4") == "int64[]");
  CHECK(a.shape("sm") == "float32[s0, 4, 6]");
  CHECK(a.shape("ln") == "float32[s0, 4, 6]");
  CHECK(a.shape("lm") == "float32[s0, 4]");  // Paddle 3.x: the leading dims, not flattened
  CHECK(a.shape("e") == "float32[s1, 7, 16]");
  CHECK(a.shape("xi") == "int32[s0, 4, 6]");
  CHECK(a.shape("w") == "float32[s0, 4, 6]");
  CHECK(a.shape("ex") == "float32[s0, 4, 6]");
  CHECK(a.shape("sl") == "float32[s0, 3, 2]");
  CHECK(a.shape("sl2") == "float32[s0, 6]");
  CHECK(a.shape("ss") == "float32[s0, 4, 2]");
}

TEST_CASE("shapes: conv2d, depthwise, transpose conv, pool2d, batch_norm_, nearest_interp") {
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [-1, 3, 32, 32]}, {name: w, dtype: float32, shape: [8, 3, 3, 3]}, "
      "{name: dw, dtype: float32, shape: [8, 1, 3, 3]}, {name: tw, dtype: float32, shape: [8, 4, 2, 2]}, "
      "{name: m, dtype: float32, shape: [8]}, {name: d, dtype: float32, shape: [-1, 3, -1, 20]}]",
      "  - {op: conv2d, in: [x, w], out: [c1], attrs: {strides: [2, 2], paddings: [1, 1]}}\n"
      "  - {op: conv2d, in: [x, w], out: [c2], attrs: {padding_algorithm: SAME, strides: [2, 2]}}\n"
      "  - {op: depthwise_conv2d, in: [c1, dw], out: [c3], attrs: {groups: 8, paddings: [1, 1]}}\n"
      "  - {op: conv2d_transpose, in: [c1, tw], out: [t1], attrs: {strides: [2, 2]}}\n"
      "  - {op: pool2d, in: [c1], out: [p1], attrs: {kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], "
      "ceil_mode: false, exclusive: true, data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
      "padding_algorithm: EXPLICIT}}\n"
      "  - {op: pool2d, in: [c1], out: [p2], attrs: {kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], "
      "ceil_mode: false, exclusive: true, data_format: NCHW, pooling_type: avg, global_pooling: false, adaptive: true, "
      "padding_algorithm: EXPLICIT}}\n"
      "  - {op: batch_norm_, in: [c1, m, m, m, m], out: [bn, mo, vo, sm, sv, rs], attrs: {is_test: true, momentum: 0.9, "
      "epsilon: 1e-5, data_format: NCHW, use_global_stats: false, trainable_statistics: false}}\n"
      "  - {op: nearest_interp, in: [c1, ~, ~, ~], out: [up], attrs: {scale: [2.0, 2.0], interp_method: nearest}}\n"
      "  - {op: conv2d, in: [d, w], out: [c4], attrs: {strides: [2, 2], paddings: [1, 1]}}\n",
      "[c1, c2, c3, t1, p1, p2, bn, up, c4]"));
  CHECK(a.shape("c1") == "float32[s0, 8, 16, 16]");
  CHECK(a.shape("c2") == "float32[s0, 8, 16, 16]");
  CHECK(a.shape("c3") == "float32[s0, 8, 16, 16]");
  CHECK(a.shape("t1") == "float32[s0, 4, 32, 32]");
  CHECK(a.shape("p1") == "float32[s0, 8, 8, 8]");
  CHECK(a.shape("p2") == "float32[s0, 8, 1, 1]");
  CHECK(a.shape("bn") == "float32[s0, 8, 16, 16]");
  CHECK(a.shape("mo") == "float32[8]");
  CHECK(a.shape("rs") == "uint8[0]");
  CHECK(a.shape("up") == "float32[s0, 8, 32, 32]");
  // A dynamic height goes through the conv formula symbolically.
  CHECK(a.shape("c4") == "float32[s1, 8, floor_div(s2 - 1, 2) + 1, 10]");
}

TEST_CASE("constants: full, full_int_array, assign_value_, arithmetic") {
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [2, 3]}]",
      "  - {op: full, out: [f], attrs: {shape: [2, 3], value: 2.5, dtype: float32}}\n"
      "  - {op: full_int_array, out: [fi], attrs: {value: [4, 5], dtype: int64}}\n"
      "  - {op: assign_value_, in: [x], out: [av], attrs: {shape: [2], dtype: int32, values: [7, 9]}}\n"
      "  - {op: scale, in: [fi], out: [sc], attrs: {scale: 2, bias: 1}}\n"
      "  - {op: add, in: [fi, sc], out: [sum]}\n"
      "  - {op: multiply, in: [f, f], out: [sq]}\n"
      "  - {op: cast, in: [sum], out: [sf], attrs: {dtype: float32}}\n",
      "[x, f, av, sum, sq, sf]"));
  const ValueInfo& f = a.info("f");
  REQUIRE(f.data);
  CHECK(f.data->splat);
  CHECK(f.data->float_at(5) == 2.5);
  const ValueInfo& av = a.info("av");
  REQUIRE(av.data);
  CHECK(av.data->int_at(1) == SymExpr(9));
  const ValueInfo& sum = a.info("sum");
  REQUIRE(sum.data);
  CHECK(sum.data->ints == std::vector<SymExpr>{SymExpr(13), SymExpr(16)});  // [4, 5] + [9, 11]
  const ValueInfo& sq = a.info("sq");
  REQUIRE(sq.data);
  CHECK(sq.data->splat);
  CHECK(sq.data->float_at(0) == 6.25);
  const ValueInfo& sf = a.info("sf");
  REQUIRE(sf.data);
  CHECK(sf.data->floats == std::vector<double>{13.0, 16.0});
  CHECK_FALSE(a.info("x").data.has_value());
}

TEST_CASE("constants: shape arithmetic of a dynamic input stays symbolic") {
  // Paddle's dynamic-batch pattern: reshape(x, [shape64(x)[0], -1]) through slice and combine.
  Analyzed a = analyze_ok(program(
      "[{name: x, dtype: float32, shape: [-1, 4, 6]}]",
      "  - {op: shape64, in: [x], out: [sh]}\n"
      "  - {op: slice, in: [sh], out: [b], attrs: {axes: [0], starts: [0], ends: [1], infer_flags: [1], "
      "decrease_axis: [0]}}\n"
      "  - {op: full, out: [m1], attrs: {shape: [], value: -1, dtype: int64}}\n"
      "  - {op: scale, in: [b], out: [b2], attrs: {scale: 2, bias: 0}}\n"
      "  - {op: builtin.combine, in: [b2, m1], out: [l]}\n"
      "  - {op: reshape, in: [x, l], out: [r]}\n",
      "[r]"));
  const ValueInfo& sh = a.info("sh");
  REQUIRE(sh.data);
  CHECK(sh.data->ints == std::vector<SymExpr>{SymExpr::symbol(0), SymExpr(4), SymExpr(6)});
  CHECK(a.shape("b") == "int64[]");
  CHECK(a.info("b2").data->int_at(0) == SymExpr::symbol(0) * 2);
  CHECK(a.shape("r") == "float32[2 * s0, 12]");
}

TEST_CASE("shapes: an output shape from a run-time tensor is an error at the op") {
  Analyzed a = analyze("p.yaml", program("[{name: x, dtype: float32, shape: [2, 3]}, {name: s, dtype: int64, shape: [2]}]",
                                         "  - {op: reshape, in: [x, s], out: [r]}\n", "[r]"));
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("p.yaml:4:5: error: 'reshape': the output shape depends on the run-time "
                                            "value of 'shape'"));
}

TEST_CASE("shapes: apply_inferred_types fills undeclared YAML results") {
  test::Env env;
  ir::Program p = env.read("p.yaml", program("[{name: x, dtype: float32, shape: [-1, 3]}]",
                                             "  - {op: relu, in: [x], out: [y]}\n", "[y]"));
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  std::optional<Analysis> a = analyze_program(p, env.ops(), env.diags());
  REQUIRE(a);
  const ir::ValueId y = p.op(p.top_level_ops()[1]).results[0];
  CHECK(p.type_of(y).is_none());
  CHECK(apply_inferred_types(p, *a) >= 1);
  CHECK(p.type_of(y) == ir::Type::tensor(ir::DataType::kFloat32, {-1, 3}));
  CHECK(apply_inferred_types(p, *a) == 0);  // idempotent
}
