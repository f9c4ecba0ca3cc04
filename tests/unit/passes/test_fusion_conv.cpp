// The fusion pass's convolution groups (passes/fusion.h, FusionOptions::conv_fused, the CPU with
// kernels/fusion.yaml): a conv with its bias, batch norm, residual and activation as one conv2d_fused call, and what
// a group leaves out.
#include "fusion_test_util.h"

using namespace kforge;
using namespace kforge::passes;

using namespace kforge::passes::fusion_test;

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
