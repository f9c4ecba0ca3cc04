// The verifier: every kind of problem is a located diagnostic; attributes are normalised and defaulted.
#include "pass_test_util.h"

#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

struct Verified {
  bool ok = false;
  std::string diagnostics;
  std::optional<ir::Program> program;
};

Verified verify(const std::string& path, const std::string& text) {
  test::Env env;
  Verified v;
  v.program = env.read(path, text);
  v.ok = verify_program(*v.program, env.ops(), env.diags());
  v.diagnostics = env.diagnostics();
  return v;
}

const ir::Op& op_named(const ir::Program& p, const std::string& full) {
  const std::vector<ir::OpId> ops = p.find_ops(full);
  REQUIRE(ops.size() == 1);
  return p.op(ops[0]);
}

}  // namespace

TEST_CASE("verify: a correct program passes and gets its defaults") {
  Verified v = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 3]}]
ops:
  - {op: matmul, in: [x, x], out: [y], attrs: {transpose_y: true}}
  - {op: softmax, in: [y], out: [z], attrs: {axis: -1}}
outputs: [z]
)");
  INFO(v.diagnostics);
  CHECK(v.ok);
  CHECK(v.diagnostics.empty());
  const ir::Op& mm = op_named(*v.program, "pd_op.matmul");
  CHECK(*mm.attr("transpose_x") == ir::Attribute::boolean(false));  // the YAML default
  CHECK(*mm.attr("transpose_y") == ir::Attribute::boolean(true));
  // `axis: -1` was read as a guessed int64; softmax's `int axis` makes it an exact int32.
  CHECK(*op_named(*v.program, "pd_op.softmax").attr("axis") == ir::Attribute::int32(-1));
}

TEST_CASE("verify: defaults of every kind evaluate") {
  Verified v = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [1, 4, 8, 8]}, {name: w, dtype: float32, shape: [4, 4, 3, 3]}]
ops:
  - {op: conv2d, in: [x, w], out: [y]}
  - {op: full, out: [f], attrs: {shape: [2], value: 1.5}}
  - {op: layer_norm, in: [y], out: [n]}
outputs: [y, f, n]
)");
  INFO(v.diagnostics);
  REQUIRE(v.ok);
  const ir::Op& conv = op_named(*v.program, "pd_op.conv2d");
  CHECK(*conv.attr("strides") == ir::Attribute::array({ir::Attribute::int32(1), ir::Attribute::int32(1)}));
  CHECK(*conv.attr("padding_algorithm") == ir::Attribute::string("EXPLICIT"));
  CHECK(*conv.attr("groups") == ir::Attribute::int32(1));
  const ir::Op& full = op_named(*v.program, "pd_op.full");
  CHECK(*full.attr("dtype") == ir::Attribute::data_type(ir::DataType::kFloat32));  // DataType::FLOAT32
  CHECK(full.attr("place")->place.type == ir::AllocationType::kCpu);                 // CPUPlace()
  CHECK(*full.attr("shape") == ir::Attribute::int_array({2}));
  CHECK(*full.attr("value") == ir::Attribute::float64(1.5));  // Scalar(double)
  CHECK(*op_named(*v.program, "pd_op.layer_norm").attr("epsilon") == ir::Attribute::float32(1e-5f));
}

TEST_CASE("verify: unknown op, with did-you-mean, at the op name") {
  Verified v = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: rleu, in: [x], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(v.ok);
  CHECK(v.diagnostics ==
        "p.yaml:4:10: error: unknown op 'rleu'\n"
        "   - {op: rleu, in: [x], out: [y]}\n"
        "          ^\n"
        "kforge: note: did you mean 'relu'?\n"
        "1 error generated.\n");
}

TEST_CASE("verify: unknown PIR op in the text format") {
  Verified v = verify("p.txt", R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2],stop_gradient:[true]} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.sigmod" (%0) {stop_gradient:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.fetch" (%1) {col:(Int32)0,name:"out"} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
}
)");
  CHECK_FALSE(v.ok);
  CHECK_THAT(v.diagnostics, Catch::Contains("p.txt:3:12: error: unknown op 'pd_op.sigmod'"));
  CHECK_THAT(v.diagnostics, Catch::Contains("note: did you mean 'pd_op.sigmoid'?"));
}

TEST_CASE("verify: operand count and kind mismatches") {
  Verified many = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: relu, in: [x, x], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(many.ok);
  CHECK_THAT(many.diagnostics, Catch::Contains("p.yaml:4:24: error: 'relu' takes 1 operand (x), but 2 are given"));
  CHECK_THAT(many.diagnostics, Catch::Contains("note: 'relu' is defined here"));

  Verified few = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: add, in: [x], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(few.ok);
  CHECK_THAT(few.diagnostics, Catch::Contains("p.yaml:4:5: error: 'add' takes 2 operands (x, y), but 1 is given"));

  Verified kind = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: concat, in: [x], out: [y], attrs: {axis: 0}}
outputs: [y]
)");
  CHECK_FALSE(kind.ok);
  CHECK_THAT(kind.diagnostics,
             Catch::Contains("p.yaml:4:23: error: operand 'x' of 'concat' must be a list of tensors (a "
                             "builtin.combine result), got tensor<2xf32>"));

  Verified null_required = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: add, in: [x, ~], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(null_required.ok);
  CHECK_THAT(null_required.diagnostics, Catch::Contains("error: operand 'y' of 'add' is required, but none is given"));
}

TEST_CASE("verify: attribute type mismatch names the expected type") {
  Verified v = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 2]}]
ops:
  - {op: matmul, in: [x, x], out: [y], attrs: {transpose_x: 3}}
outputs: [y]
)");
  CHECK_FALSE(v.ok);
  CHECK_THAT(v.diagnostics, Catch::Contains("p.yaml:4:61: error: attribute 'transpose_x' of 'matmul' has the wrong "
                                            "type: expected a bool, got int64 3"));
  CHECK_THAT(v.diagnostics, Catch::Contains("note: 'transpose_x' is declared as 'bool' here"));
}

TEST_CASE("verify: a missing attribute without default is an error; unknown attributes warn") {
  Verified missing = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 2]}]
ops:
  - {op: softmax, in: [x], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(missing.ok);
  CHECK_THAT(missing.diagnostics,
             Catch::Contains("p.yaml:4:5: error: 'softmax' is missing the attribute 'axis' (int), which has no default"));

  Verified unknown = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 2]}]
ops:
  - {op: matmul, in: [x, x], out: [y], attrs: {transpose: true}}
outputs: [y]
)");
  CHECK(unknown.ok);
  CHECK_THAT(unknown.diagnostics,
             Catch::Contains("p.yaml:4:48: warning: unknown attribute 'transpose' of 'matmul' is ignored"));
  CHECK_THAT(unknown.diagnostics, Catch::Contains("note: did you mean 'transpose_x'?"));
  CHECK_THAT(unknown.diagnostics, Catch::Contains("1 warning generated."));
}

TEST_CASE("verify: Paddle's bookkeeping attributes are not unknown") {
  Verified v = verify("p.txt", R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2],stop_gradient:[true]} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {stop_gradient:[true],persistable:[false],op_callstack:["a"]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.fetch" (%1) {col:(Int32)0,name:"out",persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
}
)");
  INFO(v.diagnostics);
  CHECK(v.ok);
  CHECK(v.diagnostics.empty());
}

TEST_CASE("verify: a use before definition is located at the operand") {
  // The readers reject forward references; programs built by passes are checked by the verifier.
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: relu, in: [x], out: [a]}
  - {op: exp, in: [x], out: [b]}
outputs: [b]
)");
  const std::vector<ir::OpId> ops = p.top_level_ops();
  const ir::OpId relu = ops[1], exp = ops[2];
  p.set_operand(relu, 0, p.op(exp).results[0]);  // relu now reads exp's result, defined after it
  CHECK_FALSE(verify_program(p, env.ops(), env.diags()));
  const std::string d = env.diagnostics();
  CHECK_THAT(d, Catch::Contains("p.yaml:4:21: error: operand 0 of 'relu' uses value 'b' before its definition"));
  CHECK_THAT(d, Catch::Contains("note: it is defined here"));
}

TEST_CASE("verify: result count must match for Paddle programs") {
  Verified v = verify("p.txt", R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2],stop_gradient:[true]} : () -> builtin.tensor<2xf32>
    (%1, %2) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>, builtin.tensor<2xf32>
}
)");
  CHECK_FALSE(v.ok);
  CHECK_THAT(v.diagnostics, Catch::Contains("p.txt:3:5: error: 'pd_op.relu' has 1 result (out), but 2 are given"));
}

TEST_CASE("verify: mutable attributes as operands or as attributes") {
  // reshape's `shape` is a PIR operand (op_compat: tensor_name); a YAML program may give it as an attribute.
  Verified attr = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 3]}]
ops:
  - {op: reshape, in: [x], out: [y], attrs: {shape: [3, 2]}}
outputs: [y]
)");
  INFO(attr.diagnostics);
  REQUIRE(attr.ok);
  const ir::Op& r = op_named(*attr.program, "pd_op.reshape");
  CHECK(r.operands.size() == 2);  // padded with a null operand
  CHECK_FALSE(r.operands[1].valid());
  CHECK(*r.attr("shape") == ir::Attribute::int_array({3, 2}));

  Verified neither = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 3]}]
ops:
  - {op: reshape, in: [x], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(neither.ok);
  CHECK_THAT(neither.diagnostics, Catch::Contains("error: 'reshape' is missing the attribute 'shape' (IntArray)"));
}

TEST_CASE("verify: builtin ops are checked structurally") {
  Verified v = verify("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: builtin.combine, in: [x, x], out: [l]}
  - {op: concat, in: [l], out: [y], attrs: {axis: 0}}
  - {op: builtin.split, in: [x], out: [a, b]}
outputs: [y]
)");
  CHECK_FALSE(v.ok);
  CHECK_THAT(v.diagnostics,
             Catch::Contains("p.yaml:6:30: error: the operand of 'builtin.split' must be a list of tensors, got tensor<2xf32>"));
}

TEST_CASE("verify: kernel-dialect programs are refused at the op") {
  Verified v = verify("p.txt", R"P({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2],stop_gradient:[true]} : () -> builtin.tensor<2xf32>
    (%1) = "relu(phi_kernel)" (%0) {kernel_key:<backend:CPU|layout:NCHW|dtype:float32>,kernel_name:"relu",op_name:"pd_op.relu",stop_gradient:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
}
)P");
  CHECK_FALSE(v.ok);
  CHECK_THAT(v.diagnostics, Catch::Contains("is a kernel-dialect op"));
}
