// If-conversion (src/passes/if_conversion.h): a pd_op.if becomes both branches and a select per result; an if whose
// branch has an effect (an in-place op) stays, and the lowering refuses it at the if.
#include <string>

#include "pass_test_util.h"
#include "passes/if_conversion.h"

namespace kforge::passes {
namespace {

// docs_if_op_program_draft2024's if, with an output, and `then` / `else` bodies chosen by the test.
std::string program(const std::string& then_body, const std::string& else_body, const std::string& yields) {
  return R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"i",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[1],stop_gradient:[true]} : () -> pd_op.tensor<1xf32>
    (%1) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"a",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[1],stop_gradient:[true]} : () -> pd_op.tensor<1xf32>
    (%2) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[],stop_gradient:[true],value:(Float)3} : () -> pd_op.tensor<f32>
    (%3) = "pd_op.greater_equal" (%0, %2) {stop_gradient:[true]} : (pd_op.tensor<1xf32>, pd_op.tensor<f32>) -> pd_op.tensor<1xb>
    (%4) = pd_op.if (%3) {stop_gradient:[true]} -> pd_op.tensor<1xf32>
    {
)" + then_body + R"(
        () = "cf.yield" ()" + yields.substr(0, yields.find(',')) + R"() {} : (pd_op.tensor<1xf32>) ->
    } else {
)" + else_body + R"(
        () = "cf.yield" ()" + yields.substr(yields.find(',') + 1) + R"() {} : (pd_op.tensor<1xf32>) ->
    }
    (%8) = "pd_op.fetch" (%4) {col:(Int32)0,name:"out",persistable:[true],stop_gradient:[false]} : (pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>
})";
}

const char* const kAdd =
    R"(        (%5) = "pd_op.add" (%1, %1) {stop_gradient:[true]} : (pd_op.tensor<1xf32>, pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>)";
const char* const kSubtract =
    R"(        (%6) = "pd_op.subtract" (%1, %1) {stop_gradient:[true]} : (pd_op.tensor<1xf32>, pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>)";
const char* const kReluInPlace =
    R"(        (%6) = "pd_op.relu_" (%1) {stop_gradient:[true]} : (pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>)";

size_t count_ops(const LoweredProgram& l, const std::string& op) {
  size_t n = 0;
  for (const KernelCall& c : l.calls) n += c.op == op;
  return n;
}

}  // namespace

TEST_CASE("if conversion: both branches are hoisted and the result selected by the broadcast condition") {
  test::Env env;
  ir::Program p = env.read("t.pir", program(kAdd, kSubtract, "%5,%6"));
  CHECK(convert_ifs(p) == 1);
  CHECK(p.check_structure().empty());
  CHECK(p.find_ops("pd_op.if").empty());
  CHECK(p.find_ops("pd_op.add").size() == 1);
  CHECK(p.find_ops("pd_op.subtract").size() == 1);
  REQUIRE(p.find_ops("pd_op.where").size() == 1);
  const ir::Op& where = p.op(p.find_ops("pd_op.where")[0]);
  // where(logical_or(full_like(then, false), cond), then, else)
  const ir::Op& mask = p.op(p.defining_op(where.operands[0]));
  CHECK(mask.full_name() == "pd_op.logical_or");
  CHECK(p.op(p.defining_op(mask.operands[0])).full_name() == "pd_op.full_like");
  CHECK(p.op(p.defining_op(where.operands[1])).full_name() == "pd_op.add");
  CHECK(p.op(p.defining_op(where.operands[2])).full_name() == "pd_op.subtract");
  std::optional<LoweredProgram> l = env.compile(p);
  INFO(env.printed());
  REQUIRE(l);
  CHECK(count_ops(*l, "where") == 1);
}

TEST_CASE("if conversion: a value both branches yield needs no select") {
  test::Env env;
  ir::Program p = env.read("t.pir", program(kAdd, "", "%1,%1"));
  CHECK(convert_ifs(p) == 1);
  CHECK(p.find_ops("pd_op.where").empty());
  std::optional<LoweredProgram> l = env.compile(p);
  REQUIRE(l);
  CHECK(count_ops(*l, "add") == 0);  // hoisted, then dead: the output is `a` itself
}

TEST_CASE("if conversion: a branch with an in-place op stays an if, refused at the if by the lowering") {
  test::Env env;
  ir::Program p = env.read("t.pir", program(kAdd, kReluInPlace, "%5,%6"));
  CHECK(convert_ifs(p) == 0);
  CHECK(p.find_ops("pd_op.if").size() == 1);
  CHECK_FALSE(env.compile(p).has_value());
  CHECK_THAT(env.printed(), Catch::Contains("t.pir:6:12: error: control flow ('pd_op.if') is not supported"));
}

}  // namespace kforge::passes
