// --layout auto per ISA (passes/isa_layouts.h): the rule that decides whether the NCHW8c plan is emitted beside the
// NHWC plan, and run_pipeline making the second plan (CompiledProgram::isa_plan) only where the rule holds.
#include <sstream>

#include "pass_test_util.h"
#include "passes/isa_layouts.h"
#include "passes/pipeline.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

LayoutReport converted(std::initializer_list<const char*> names) {
  LayoutReport r;
  for (const char* n : names) r.converted.push_back({ir::OpId{}, n});
  return r;
}

test::Env& isa_env() {
  static test::Env e({"kernels/fusion.yaml"});
  return e;
}

const char* const kConv = "{strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                          "groups: 1, data_format: NCHW}";

// A stem convolution of a 3-channel image to `channels` channels, then three convolutions of `channels` channels.
std::string stack(int channels) {
  const std::string c = std::to_string(channels);
  return std::string(R"(program: stack
inputs: [{name: x, dtype: float32, shape: [1, 3, 8, 8]}]
params:
  - {name: w0, dtype: float32, shape: [)") + c + R"(, 3, 3, 3]}
  - {name: w1, dtype: float32, shape: [)" + c + ", " + c + R"(, 3, 3]}
  - {name: w2, dtype: float32, shape: [)" + c + ", " + c + R"(, 3, 3]}
  - {name: w3, dtype: float32, shape: [)" + c + ", " + c + R"(, 3, 3]}
ops:
  - {op: conv2d, in: [x, w0], out: [c0], attrs: )" + kConv + R"(}
  - {op: relu, in: [c0], out: [r0]}
  - {op: conv2d, in: [r0, w1], out: [c1], attrs: )" + kConv + R"(}
  - {op: relu, in: [c1], out: [r1]}
  - {op: conv2d, in: [r1, w2], out: [c2], attrs: )" + kConv + R"(}
  - {op: add, in: [c2, r0], out: [a2]}
  - {op: conv2d, in: [a2, w3], out: [y], attrs: )" + kConv + R"(}
outputs: [y]
)";
}

CompileTarget cpu_with_isa_layout() {
  CompileTarget t;
  t.name = "test-cpu";
  t.conv_groups = true;
  t.blocked_layout = true;
  t.isa_layout = LayoutChoice::kNchw8c;
  return t;
}

CompileChoices layout_auto() {
  CompileChoices c;
  c.layout = LayoutChoice::kNhwc;
  c.layout_by_isa = true;
  c.dump = true;
  return c;
}

CompiledProgram run(const std::string& yaml, const CompileTarget& target, const CompileChoices& choices) {
  ir::Program program = isa_env().read("t.yaml", yaml);
  std::ostringstream dropped;
  DiagnosticEngine second_plan_diags(isa_env().sources(), dropped);
  std::optional<CompiledProgram> compiled =
      run_pipeline(program, isa_env().ops(), target, choices, isa_env().diags(), &second_plan_diags);
  INFO(isa_env().diagnostics());
  REQUIRE(compiled.has_value());
  return std::move(*compiled);
}

}  // namespace

TEST_CASE("isa layouts: the blocked plan pays when it converts at least three quarters of the convolutions") {
  const LayoutReport four = converted({"pd_op.conv2d", "pd_op.relu", "pd_op.depthwise_conv2d", "pd_op.conv2d",
                                       "pd_op.conv2d_transpose", "pd_op.pool2d"});
  CHECK(converted_convolutions(four) == 4);
  CHECK(blocked_plan_pays(four, converted({"pd_op.conv2d", "pd_op.conv2d", "pd_op.depthwise_conv2d"})));
  CHECK(blocked_plan_pays(four, four));
  // Two of four (shufflenet_v2's blockless branches): NHWC alone.
  CHECK_FALSE(blocked_plan_pays(four, converted({"pd_op.conv2d", "pd_op.conv2d", "pd_op.relu", "pd_op.add"})));
  // No convolution converted: nothing to pick between, even when the first converted none.
  CHECK_FALSE(blocked_plan_pays(converted({}), converted({"pd_op.relu"})));
  CHECK_FALSE(blocked_plan_pays(four, converted({})));
}

TEST_CASE("isa layouts: --layout auto plans NCHW8c too where its channels make blocks") {
  const CompiledProgram compiled = run(stack(16), cpu_with_isa_layout(), layout_auto());
  CHECK(compiled.layout == LayoutChoice::kNhwc);
  REQUIRE(compiled.isa_plan != nullptr);
  CHECK(compiled.isa_plan->layout == LayoutChoice::kNchw8c);
  CHECK(compiled.isa_plan->isa_plan == nullptr);
  CHECK(interface_difference(compiled.lowered, compiled.isa_plan->lowered).empty());
  // Every convolution converts, the stem too (it reads the 3-channel image as it is and writes NCHW8c).
  CHECK(compiled.dump.find("layout auto: NHWC and NCHW8c (4 of 4 convolutions), picked by the machine's ISA\n") == 0);
  CHECK(compiled.dump.find("layout auto: the NCHW8c plan\nlayout: NCHW8c") != std::string::npos);
}

TEST_CASE("isa layouts: one plan where the channels make no blocks, with --trace-hooks, or without auto") {
  // 12 channels: no NCHW8c region, the class of --layout nhwc alone.
  const CompiledProgram blockless = run(stack(12), cpu_with_isa_layout(), layout_auto());
  CHECK(blockless.isa_plan == nullptr);
  CHECK(blockless.dump.find("layout auto") == std::string::npos);  // the dump of --layout nhwc
  CHECK(blockless.dump.find("layout: NHWC") == 0);

  CompileChoices traced = layout_auto();
  traced.trace_hooks = true;
  CHECK(run(stack(16), cpu_with_isa_layout(), traced).isa_plan == nullptr);

  CompileChoices nhwc = layout_auto();
  nhwc.layout_by_isa = false;  // --layout nhwc
  CHECK(run(stack(16), cpu_with_isa_layout(), nhwc).isa_plan == nullptr);

  CompileTarget no_isa_layout = cpu_with_isa_layout();
  no_isa_layout.isa_layout = LayoutChoice::kNchw;  // --target cuda
  const CompiledProgram cuda_like = run(stack(16), no_isa_layout, layout_auto());
  CHECK(cuda_like.isa_plan == nullptr);
  CHECK(cuda_like.dump.find("layout auto") == std::string::npos);
}
