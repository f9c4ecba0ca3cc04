// Dead-code removal and constant folding, on the program itself (checked through Program::dump()).
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/transforms.h"
#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

std::vector<std::string> op_names(const ir::Program& p) {
  std::vector<std::string> out;
  for (ir::OpId id : p.top_level_ops()) out.push_back(p.op(id).full_name());
  return out;
}

}  // namespace

TEST_CASE("dce: unused chains go, fetches, feeds and parameters stay") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}, {name: unused_in, dtype: float32, shape: [2]}]
params: [{name: w, dtype: float32, shape: [2]}]
ops:
  - {op: exp, in: [x], out: [dead1]}
  - {op: tanh, in: [dead1], out: [dead2]}
  - {op: relu, in: [x], out: [y]}
  - {op: sigmoid, in: [w], out: [dead3]}
outputs: [y]
)");
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  CHECK(eliminate_dead_code(p, env.ops()) == 3);
  CHECK(op_names(p) == std::vector<std::string>{"pd_op.data", "pd_op.data", "builtin.parameter", "pd_op.relu",
                                                "pd_op.fetch"});
  CHECK(p.check_structure().empty());
  CHECK(eliminate_dead_code(p, env.ops()) == 0);
}

TEST_CASE("dce: an in-place op stays while a later op reads what it overwrote") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: exp, in: [x], out: [a]}
  - {op: relu_, in: [a], out: [a2]}
  - {op: tanh, in: [a], out: [y]}
  - {op: exp, in: [x], out: [b]}
  - {op: relu_, in: [b], out: [b2]}
outputs: [y]
)");
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  CHECK(eliminate_dead_code(p, env.ops()) == 2);  // relu_(b) overwrites b, which nobody reads afterwards
  CHECK(op_names(p) == std::vector<std::string>{"pd_op.data", "pd_op.exp", "pd_op.relu_", "pd_op.tanh", "pd_op.fetch"});
}

TEST_CASE("dce: side effects keep an op unless it is in inference mode") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2]}]
ops:
  - {op: dropout, in: [x, ~], out: [d1, m1], attrs: {p: 0.5, is_test: false, mode: upscale_in_train, seed: 0, fix_seed: false}}
  - {op: dropout, in: [x, ~], out: [d2, m2], attrs: {p: 0.5, is_test: true, mode: upscale_in_train, seed: 0, fix_seed: false}}
outputs: [x]
)");
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  CHECK(eliminate_dead_code(p, env.ops()) == 1);
  REQUIRE(p.find_ops("pd_op.dropout").size() == 1);
  CHECK(p.op(p.find_ops("pd_op.dropout")[0]).attr("is_test")->bool_value == false);
}

TEST_CASE("fold: known mutable-attribute operands become attributes, and their producers die") {
  test::Env env;
  ir::Program p = env.read("p.txt", R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[-1,6],stop_gradient:[true]} : () -> builtin.tensor<-1x6xf32>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)3} : () -> builtin.tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:(Float)0.5,bias_after_scale:true,stop_gradient:[true]} : (builtin.tensor<-1x6xf32>, builtin.tensor<1xf32>) -> builtin.tensor<-1x6xf32>
    (%3) = "pd_op.full_int_array" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),stop_gradient:[true],value:[(Int64)-1,(Int64)2,(Int64)3]} : () -> builtin.tensor<3xi64>
    (%4) = "pd_op.reshape" (%2, %3) {stop_gradient:[true]} : (builtin.tensor<-1x6xf32>, builtin.tensor<3xi64>) -> builtin.tensor<-1x2x3xf32>
    (%5) = "pd_op.fetch" (%4) {col:(Int32)0,name:"out"} : (builtin.tensor<-1x2x3xf32>) -> builtin.tensor<-1x2x3xf32>
}
)");
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  std::optional<Analysis> a = analyze_program(p, env.ops(), env.diags());
  INFO(env.printed());
  REQUIRE(a);
  CHECK(fold_constants(p, env.ops(), *a) == 2);
  const ir::Op& scale = p.op(p.find_ops("pd_op.scale")[0]);
  CHECK_FALSE(scale.operands[1].valid());
  CHECK(*scale.attr("scale") == ir::Attribute::float32(3.0f));  // a float32 tensor gives a float32 Scalar
  const ir::Op& reshape = p.op(p.find_ops("pd_op.reshape")[0]);
  CHECK_FALSE(reshape.operands[1].valid());
  CHECK(*reshape.attr("shape") == ir::Attribute::int_array({-1, 2, 3}));
  CHECK(eliminate_dead_code(p, env.ops()) == 2);
  CHECK(op_names(p) == std::vector<std::string>{"pd_op.data", "pd_op.scale", "pd_op.reshape", "pd_op.fetch"});
  CHECK(p.check_structure().empty());
  // The folded program still verifies (null mutable operands take the attribute).
  CHECK(verify_program(p, env.ops(), env.diags()));
}

TEST_CASE("fold: a run-time mutable operand stays an operand") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 3]}, {name: s, dtype: float32, shape: [1]}]
ops:
  - {op: scale, in: [x, s], out: [y]}
outputs: [y]
)");
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  std::optional<Analysis> a = analyze_program(p, env.ops(), env.diags());
  REQUIRE(a);
  CHECK(fold_constants(p, env.ops(), *a) == 0);
  CHECK(p.op(p.find_ops("pd_op.scale")[0]).operands[1].valid());
}

TEST_CASE("canonicalize: bool bitwise ops become the logical ones; integer ones stay") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: a, dtype: bool, shape: [2]}, {name: b, dtype: bool, shape: [2]}, {name: i, dtype: int32, shape: [2]}]
ops:
  - {op: bitwise_and, in: [a, b], out: [x]}
  - {op: bitwise_or, in: [a, b], out: [y]}
  - {op: bitwise_not, in: [a], out: [z]}
  - {op: bitwise_and, in: [i, i], out: [w]}
outputs: [x, y, z, w]
)");
  CHECK(canonicalize_ops(p) == 3);
  CHECK(op_names(p) == std::vector<std::string>{"pd_op.data", "pd_op.data", "pd_op.data", "pd_op.logical_and",
                                                "pd_op.logical_or", "pd_op.logical_not", "pd_op.bitwise_and",
                                                "pd_op.fetch", "pd_op.fetch", "pd_op.fetch", "pd_op.fetch"});
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  CHECK(canonicalize_ops(p) == 0);
}

TEST_CASE("canonicalize: swiglu with y becomes silu and multiply; without y it stays") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 4]}, {name: y, dtype: float32, shape: [2, 4]}]
ops:
  - {op: swiglu, in: [x, y], out: [a]}
  - {op: swiglu, in: [x], out: [b]}
outputs: [a, b]
)");
  CHECK(canonicalize_ops(p) == 1);
  CHECK(op_names(p) == std::vector<std::string>{"pd_op.data", "pd_op.data", "pd_op.silu", "pd_op.multiply",
                                                "pd_op.swiglu", "pd_op.fetch", "pd_op.fetch"});
  CHECK(p.check_structure().empty());
  REQUIRE(verify_program(p, env.ops(), env.diags()));
}

TEST_CASE("canonicalize: depthwise_conv2d_transpose becomes conv2d_transpose, attributes kept") {
  test::Env env;
  ir::Program p = env.read("p.yaml", R"(program: t
inputs: [{name: x, dtype: float32, shape: [1, 4, 5, 5]}, {name: w, dtype: float32, shape: [4, 1, 4, 4]}]
ops:
  - {op: depthwise_conv2d_transpose, in: [x, w], out: [y], attrs: {strides: [2, 2], paddings: [1, 1], groups: 4}}
outputs: [y]
)");
  CHECK(canonicalize_ops(p) == 1);
  CHECK(op_names(p) == std::vector<std::string>{"pd_op.data", "pd_op.data", "pd_op.conv2d_transpose", "pd_op.fetch"});
  REQUIRE(verify_program(p, env.ops(), env.diags()));
  std::optional<Analysis> a = analyze_program(p, env.ops(), env.diags());
  REQUIRE(a);
  CHECK(canonicalize_ops(p) == 0);
}
