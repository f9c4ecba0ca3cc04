// Lowering: kernel calls with arguments in kernel-param order, kernel dtypes, lists, constants, outputs and
// buffer aliasing.
#include "pass_test_util.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

LoweredProgram compile_ok(test::Env& env, const std::string& text) {
  std::optional<LoweredProgram> lp = env.compile_yaml(text);
  INFO(env.printed());
  REQUIRE(lp.has_value());
  return std::move(*lp);
}

const KernelCall& call_of(const LoweredProgram& lp, const std::string& kernel) {
  for (const KernelCall& c : lp.calls) {
    if (c.kernel == kernel) return c;
  }
  FAIL("no call of " << kernel);
  return lp.calls.at(0);
}

const KernelArg& arg_of(const KernelCall& c, const std::string& name) {
  for (const KernelArg& a : c.args) {
    if (a.name == name) return a;
  }
  FAIL("no argument " << name);
  return c.args.at(0);
}

std::vector<std::string> arg_names(const KernelCall& c) {
  std::vector<std::string> out;
  for (const KernelArg& a : c.args) out.push_back(a.name);
  return out;
}

}  // namespace

TEST_CASE("lower: the MLP becomes straight-line calls over named inputs and parameters") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: mlp
inputs:  [{name: x, dtype: float32, shape: [-1, 64]}]
params:  [{name: w0, dtype: float32, shape: [64, 128]}, {name: b0, dtype: float32, shape: [128]}]
ops:
  - {op: matmul, in: [x, w0], out: [h0]}
  - {op: add, in: [h0, b0], out: [h1]}
  - {op: relu, in: [h1], out: [y]}
outputs: [y]
)");
  CHECK(lp.name == "mlp");
  REQUIRE(lp.inputs.size() == 1);
  CHECK(lp.inputs[0].name == "x");
  CHECK(lp.inputs[0].declared_dims == std::vector<int64_t>{-1, 64});
  REQUIRE(lp.symbols.size() == 1);
  CHECK(lp.symbols[0].input == 0);
  CHECK(lp.symbols[0].axis == 0);
  REQUIRE(lp.parameters.size() == 2);
  CHECK(lp.parameters[0].name == "w0");
  REQUIRE(lp.calls.size() == 3);
  const KernelCall& mm = lp.calls[0];
  CHECK(mm.kernel == "matmul");
  CHECK(mm.pir_name == "pd_op.matmul");
  CHECK(mm.kernel_dtype == ir::DataType::kFloat32);
  CHECK(arg_names(mm) == std::vector<std::string>{"x", "y", "transpose_x", "transpose_y"});
  CHECK(mm.args[0].kind == ArgKind::kTensor);
  CHECK(mm.args[0].value == lp.inputs[0].value);
  CHECK(mm.args[1].value == lp.parameters[0].value);
  CHECK(mm.args[2].kind == ArgKind::kConstant);
  CHECK(constant_text(mm.args[2].constant) == "false");
  CHECK(lp.value(mm.outputs[0].values[0]).dims == SymShape{SymExpr::symbol(0), 128});
  REQUIRE(lp.outputs.size() == 1);
  CHECK(lp.outputs[0].name == "y");
  CHECK_FALSE(lp.outputs[0].copy);
  CHECK(lp.buffer_of(lp.outputs[0].value).kind == BufferKind::kOutput);
  CHECK(lp.value(lp.outputs[0].value).defined_by == 2);
}

TEST_CASE("lower: kernel param order, literal and subset params, kernel dtype rules") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: ids, dtype: int64, shape: [4]}, {name: x, dtype: float32, shape: [4]}]
params: [{name: emb, dtype: float32, shape: [10, 8]}]
ops:
  - {op: embedding, in: [ids, emb], out: [e], attrs: {padding_idx: 0}}
  - {op: cast, in: [x], out: [xi], attrs: {dtype: int32}}
  - {op: full_like, in: [x], out: [fl], attrs: {value: 2, dtype: float32}}
  - {op: add, in: [x, fl], out: [fl2]}
outputs: [e, xi, fl2]
)");
  const KernelCall& emb = call_of(lp, "embedding");
  CHECK(arg_names(emb) == std::vector<std::string>{"x", "weight", "padding_idx"});  // `sparse` is not passed
  CHECK(emb.kernel_dtype == ir::DataType::kFloat32);                                 // data_type: weight
  CHECK(arg_of(emb, "padding_idx").constant.int_value == 0);
  const KernelCall& cast = call_of(lp, "cast");
  CHECK(cast.kernel_dtype == ir::DataType::kFloat32);  // data_type: x (the source dtype)
  CHECK(arg_of(cast, "dtype").constant.dtype == ir::DataType::kInt32);
  CHECK(lp.value(cast.outputs[0].values[0]).dtype == ir::DataType::kInt32);
  // full_like of a static x folds to a constant; add then reads it.
  const KernelCall& add = call_of(lp, "add");
  CHECK(lp.value(add.args[1].value).role == ValueRole::kConstant);
  REQUIRE(lp.constants.size() == 1);
  CHECK(lp.constants[0].splat);
  CHECK(lp.constants[0].dtype == ir::DataType::kFloat32);
  CHECK(lp.constants[0].float_at(3) == 2.0);
  CHECK(lp.constants[0].dims == std::vector<int64_t>{4});
  CHECK(add.kernel_dtype == ir::DataType::kFloat32);
}

TEST_CASE("lower: combine and split become tensor lists, not calls") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: a, dtype: float32, shape: [2, 3]}, {name: b, dtype: float32, shape: [2, 5]}]
ops:
  - {op: builtin.combine, in: [a, b], out: [l]}
  - {op: concat, in: [l], out: [c], attrs: {axis: 1}}
  - {op: split, in: [c], out: [parts], attrs: {sections: [4, 4], axis: 1}}
  - {op: builtin.split, in: [parts], out: [p0, p1]}
  - {op: relu, in: [p1], out: [y]}
outputs: [p0, y]
)");
  REQUIRE(lp.calls.size() == 3);
  const KernelCall& concat = lp.calls[0];
  CHECK(concat.args[0].kind == ArgKind::kTensorList);
  CHECK(concat.args[0].values == std::vector<uint32_t>{lp.inputs[0].value, lp.inputs[1].value});
  CHECK(constant_text(arg_of(concat, "axis").constant) == "1:int64");
  const KernelCall& split = lp.calls[1];
  REQUIRE(split.outputs.size() == 1);
  CHECK(split.outputs[0].is_list);
  REQUIRE(split.outputs[0].values.size() == 2);
  CHECK(lp.value(split.outputs[0].values[0]).name == "p0");
  CHECK(lp.value(split.outputs[0].values[1]).dims == SymShape{2, 4});
  CHECK(lp.calls[2].args[0].value == split.outputs[0].values[1]);
  CHECK(constant_text(arg_of(split, "sections").constant) == "[4, 4]");
}

TEST_CASE("lower: optional inputs, intermediate outputs, mutable attributes") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 8]}, {name: s, dtype: float32, shape: [1]}]
params: [{name: g, dtype: float32, shape: [8]}]
ops:
  - {op: layer_norm, in: [x, g, ~], out: [y, m, v], attrs: {epsilon: 1e-5, begin_norm_axis: 1}}
  - {op: scale, in: [y, s], out: [z]}
  - {op: full, out: [three], attrs: {shape: [1], value: 3, dtype: float32}}
  - {op: scale, in: [z, three], out: [w]}
outputs: [w]
)");
  const KernelCall& ln = call_of(lp, "layer_norm");
  CHECK(arg_of(ln, "scale").kind == ArgKind::kTensor);
  CHECK(arg_of(ln, "scale").optional);
  CHECK(arg_of(ln, "bias").kind == ArgKind::kAbsentTensor);
  CHECK(static_cast<float>(arg_of(ln, "epsilon").constant.float_value) == 1e-05f);
  REQUIRE(ln.outputs.size() == 3);
  CHECK(ln.outputs[1].values == std::vector<uint32_t>{kNone});  // unused intermediate: nullptr
  CHECK(ln.outputs[1].optional);
  REQUIRE(lp.calls.size() == 3);
  const KernelCall& runtime_scale = lp.calls[1];
  CHECK(arg_of(runtime_scale, "scale").kind == ArgKind::kTensorToAttr);
  CHECK(arg_of(runtime_scale, "scale").value == lp.inputs[1].value);
  const KernelCall& folded_scale = lp.calls[2];
  CHECK(arg_of(folded_scale, "scale").kind == ArgKind::kConstant);
  CHECK(constant_text(arg_of(folded_scale, "scale").constant) == "3.0:float32");
  CHECK(lp.constants.empty());  // `three` only fed an attribute
}

TEST_CASE("lower: shape arithmetic of a dynamic input becomes a symbolic attribute") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: x, dtype: float32, shape: [-1, 4, 6]}]
ops:
  - {op: shape64, in: [x], out: [sh]}
  - {op: slice, in: [sh], out: [b], attrs: {axes: [0], starts: [0], ends: [1], infer_flags: [1], decrease_axis: [0]}}
  - {op: full, out: [m1], attrs: {shape: [], value: -1, dtype: int64}}
  - {op: builtin.combine, in: [b, m1], out: [l]}
  - {op: reshape, in: [x, l], out: [r]}
outputs: [r]
)");
  REQUIRE(lp.calls.size() == 1);  // shape64 and slice are not called
  const KernelArg& shape = arg_of(lp.calls[0], "shape");
  CHECK(shape.kind == ArgKind::kSymbolic);
  CHECK(shape.symbolic == std::vector<SymExpr>{SymExpr::symbol(0), SymExpr(-1)});
  CHECK(lp.value(lp.outputs[0].value).dims == SymShape{SymExpr::symbol(0), 24});
}

TEST_CASE("lower: in-place twins and views share buffers") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 6]}]
ops:
  - {op: exp, in: [x], out: [a]}
  - {op: relu_, in: [a], out: [b]}
  - {op: reshape, in: [b], out: [c], attrs: {shape: [3, 4]}}
  - {op: tanh, in: [c], out: [y]}
  - {op: relu_, in: [x], out: [xr]}
  - {op: add, in: [xr, xr], out: [z]}
outputs: [y, z]
)");
  const KernelCall& relu_a = lp.calls[1];
  CHECK(relu_a.inplace_twin);
  CHECK(relu_a.kernel == "relu");
  const uint32_t a = relu_a.args[0].value, b = relu_a.outputs[0].values[0];
  CHECK(lp.value(a).buffer == lp.value(b).buffer);  // in place
  const uint32_t c = lp.calls[2].outputs[0].values[0];
  CHECK(lp.value(c).buffer == lp.value(b).buffer);  // view
  CHECK(lp.buffer_of(c).values.size() == 3);
  // An in-place op on a program input writes a buffer of its own: kforge never writes the caller's memory.
  const KernelCall& relu_x = lp.calls[4];
  CHECK(relu_x.args[0].value == lp.inputs[0].value);
  CHECK(lp.buffer_of(relu_x.outputs[0].values[0]).kind == BufferKind::kWorkspace);
}

TEST_CASE("lower: a view is not aliased when its source is written in place later") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 6]}]
ops:
  - {op: exp, in: [x], out: [a]}
  - {op: reshape, in: [a], out: [v], attrs: {shape: [12]}}
  - {op: relu_, in: [a], out: [a2]}
  - {op: add, in: [v, v], out: [y]}
  - {op: add, in: [a2, a2], out: [z]}
outputs: [y, z]
)");
  const uint32_t a = lp.calls[0].outputs[0].values[0];
  const uint32_t v = lp.calls[1].outputs[0].values[0];
  const uint32_t a2 = lp.calls[2].outputs[0].values[0];
  CHECK(lp.value(a).buffer != lp.value(v).buffer);
  CHECK(lp.value(a).buffer == lp.value(a2).buffer);
}

TEST_CASE("lower: outputs that are inputs, parameters or fetched twice are copied") {
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: t
inputs: [{name: x, dtype: float32, shape: [3]}]
params: [{name: w, dtype: float32, shape: [3]}]
ops:
  - {op: relu, in: [x], out: [y]}
outputs: [x, w, y, y]
)");
  REQUIRE(lp.outputs.size() == 4);
  CHECK(lp.outputs[0].copy);
  CHECK(lp.outputs[1].copy);
  CHECK_FALSE(lp.outputs[2].copy);
  CHECK(lp.outputs[3].copy);
  CHECK(lp.outputs[3].col == 3);
}

TEST_CASE("lower: an op without a kernel is an error at its location") {
  test::Env env;
  // A library whose op invokes another: no kernel of its own.
  const uint32_t file = env.sources().add_buffer("extra.yaml", R"(- op : relu2
  args : (Tensor x)
  output : Tensor(out)
  invoke : relu(x)
)");
  (void)file;
  SourceManager& sources = env.sources();
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  opdef::OpLoader loader(sources, diags);
  loader.add_file(test::source_path("kernels/ops.yaml"));
  loader.add_buffer(file);
  const opdef::OpLibrary library = std::move(loader).finish();
  REQUIRE_FALSE(diags.has_errors());
  OpSet ops(library, nullptr, diags);
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [3]}]
ops:
  - {op: relu2, in: [x], out: [y], attrs: {}}
outputs: [y]
)");
  // Give the result a declared type: relu2 names no infer_meta.
  p.value(p.op(p.top_level_ops()[1]).results[0]).type = ir::Type::tensor(ir::DataType::kFloat32, {3});
  CHECK_FALSE(compile_program(p, ops, diags).has_value());
  diags.print_summary();
  CHECK_THAT(out.str(), Catch::Contains("p.yaml:4:10: error: 'relu2' has no kernel: its definition invokes another op"));
  CHECK_THAT(out.str(), Catch::Contains("extra.yaml:1:8: note: 'relu2' is defined here"));
  CHECK_THAT(out.str(), Catch::Contains("1 error generated."));  // no follow-on errors
}

TEST_CASE("lower: the dump is deterministic") {
  const char* text = R"(program: t
inputs: [{name: x, dtype: float32, shape: [-1, 8]}]
params: [{name: w, dtype: float32, shape: [8, 8]}]
ops:
  - {op: matmul, in: [x, w], out: [a]}
  - {op: gelu, in: [a], out: [b]}
  - {op: matmul, in: [b, w], out: [c]}
  - {op: add, in: [c, a], out: [y]}
outputs: [y]
)";
  test::Env e1, e2;
  std::optional<LoweredProgram> l1 = e1.compile_yaml(text);
  std::optional<LoweredProgram> l2 = e2.compile_yaml(text);
  REQUIRE(l1);
  REQUIRE(l2);
  CHECK(l1->dump() == l2->dump());
  CHECK_THAT(l1->dump(), Catch::Contains("call 1 gelu (pd_op.gelu) dtype float32: x=v2, approximate=false -> out=v3: "
                                         "float32[s0, 8]"));
}

TEST_CASE("lower: an op whose count only a shape reads still runs (its count binds the dims)") {
  // Only the shape of level 2's rois is read, as a full_with_tensor's shape: nothing reads the op's elements, but
  // the count it finds sizes the output, so the call stays (it was left out, its symbol bound by no call).
  test::Env env;
  LoweredProgram lp = compile_ok(env, R"(program: counts
inputs:  [{name: b, dtype: float32, shape: [40, 4]}, {name: bn, dtype: int32, shape: [2]},
          {name: v, dtype: float32, shape: [1]}]
ops:
  - {op: distribute_fpn_proposals, in: [b, bn], out: [levels, nums, restore], attrs: {min_level: 2, max_level: 3, refer_level: 4, refer_scale: 224, pixel_offset: true}}
  - {op: builtin.split, in: [levels], out: [l2, l3]}
  - {op: shape64, in: [l2], out: [s]}
  - {op: full_with_tensor, in: [v, s], out: [y], attrs: {dtype: float32}}
outputs: [y]
)");
  const KernelCall& fpn = call_of(lp, "distribute_fpn_proposals");
  bool bound = false;
  for (const Symbol& s : lp.symbols) {
    if (s.is_input_dim()) continue;
    CHECK(s.call < lp.calls.size());
    bound = bound || &lp.calls.at(s.call) == &fpn;
  }
  CHECK(bound);
}
