// Unit tests of the CUDA target plan (passes/cuda_plan.h): the form chosen for each convolution, pool and batch
// norm (the geometry read from a lowered call: padding algorithms, NHWC, groups, a dynamic batch; a convolution
// group's epilogue), mobilenet_v2's relu6 split, the cuDNN workspaces, and the located reasons a call cannot run.
#include <catch2/catch.hpp>

#include <limits>
#include <memory>
#include <sstream>

#include "opdef/op_loader.h"
#include "passes/cuda_plan.h"
#include "passes/fusion.h"
#include "passes/memory_plan.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::passes {
namespace {

/// Lowers a program YAML text against the ops of golden case compile-cuda-conv (kernels/ops.yaml's conv2d,
/// pool2d, batch_norm, matmul, ... and fusion.yaml's conv2d_fused), plans its fusion as --target cuda does, and
/// makes its CUDA target plan.
struct PlanFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<OpSet> ops;
  std::optional<LoweredProgram> lowered;
  FusionPlan fusion;
  CudaPlan plan;

  explicit PlanFixture(const std::string& program_text, int64_t scratch_bytes = 64 << 20) {
    opdef::OpLoader loader(sources, diags);
    const std::string dir = std::string(KFORGE_SOURCE_ROOT) + "/tests/golden/compile-cuda-conv/";
    loader.add_file(dir + "ops.yaml");
    loader.add_file(dir + "fusion.yaml");
    library = std::move(loader).finish();
    ops = std::make_unique<OpSet>(library, nullptr, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
    FusionOptions options;
    options.single_call_groups = true;
    options.gemm_groups = true;
    options.conv_fused = library.find("conv2d_fused");
    options.half_floats = true;  // as --target cuda: 16-bit values in groups
    fusion = plan_fusion(*lowered, options);
    apply_fusion_to_memory_plan(*lowered, fusion);
    plan = plan_cuda(*lowered, fusion, scratch_bytes);
  }

  /// The form of convolution group g, or of call c outside every group.
  const CudaConv& group_conv(uint32_t g) const {
    INFO(refusals());
    REQUIRE(g < fusion.groups.size());
    REQUIRE(fusion.groups[g].kind == GroupKind::kConv);
    REQUIRE(plan.group_conv(g) != nullptr);
    return *plan.group_conv(g);
  }
  const CudaConv& conv(uint32_t c) const {
    INFO(refusals());
    REQUIRE(plan.call_conv(c) != nullptr);
    return *plan.call_conv(c);
  }
  const CudaPool& pool(uint32_t c) const {
    INFO(refusals());
    REQUIRE(plan.pools.count(c) == 1);
    return plan.pools.at(c);
  }
  uint32_t value(const std::string& name) const {
    for (const LoweredValue& v : lowered->values) {
      if (v.name == name) return v.index;
    }
    FAIL("no value " << name);
    return kNone;
  }
  /// The refusals as the pipeline reports them: "LINE:COL: MESSAGE", one a line.
  std::string refusals() const {
    std::string out;
    for (const CudaRefusal& r : plan.refusals) {
      const LineCol lc = sources.line_col(r.loc);
      out += std::to_string(lc.line) + ":" + std::to_string(lc.col) + ": " + r.message + "\n";
    }
    return out;
  }
};

std::string conv_op(const std::string& in, const std::string& w, const std::string& out, const std::string& attrs,
                    const std::string& op = "conv2d") {
  return "  - op: " + op + "\n    in: [" + in + ", " + w + "]\n    out: [" + out + "]\n    attrs: {" + attrs + "}\n";
}

constexpr const char* kBlock = R"(program: block
inputs:  [{name: x, dtype: float32, shape: [-1, 4, 9, 9]}]
params:
  - {name: w, dtype: float32, shape: [6, 2, 3, 3]}
  - {name: b, dtype: float32, shape: [1, 6, 1, 1]}
  - {name: m, dtype: float32, shape: [6]}
  - {name: v, dtype: float32, shape: [6]}
  - {name: s, dtype: float32, shape: [6]}
  - {name: t, dtype: float32, shape: [6]}
  - {name: r, dtype: float32, shape: [1, 6, 5, 5]}
ops:
  - op: conv2d
    in: [x, w]
    out: [c]
    attrs: {strides: [2, 2], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 2, data_format: NCHW}
  - {op: add, in: [c, b], out: [cb]}
  - op: batch_norm
    in: [cb, m, v, s, t]
    out: [n, n_mean, n_var, n_saved_mean, n_saved_var, n_reserve]
    attrs: {is_test: true, momentum: 0.9, epsilon: 1.0e-3, data_format: NCHW, use_global_stats: false, trainable_statistics: false}
  - {op: relu6, in: [n], out: [a]}
  - {op: add, in: [a, r], out: [y]}
outputs: [y]
)";

TEST_CASE("cuda plan: a convolution group's geometry and epilogue") {
  // The residual [1, 6, 5, 5] has not the dynamic batch's shape: it stays out of the group (an elementwise add).
  PlanFixture f(kBlock);
  REQUIRE(f.fusion.groups.size() == 2);
  const CudaConv& conv = f.group_conv(0);
  CHECK(conv.batch.to_string() == "s0");
  CHECK((conv.c == 4 && conv.h == 9 && conv.w == 9 && conv.k == 6 && conv.r == 3 && conv.s == 3));
  CHECK((conv.pad_h == 1 && conv.pad_w == 1 && conv.stride_h == 2 && conv.stride_w == 2 && conv.groups == 2));
  CHECK((conv.out_h == 5 && conv.out_w == 5));
  CHECK_FALSE(conv.nhwc);
  CHECK(conv.input == f.value("x"));
  CHECK(conv.filter == f.value("w"));
  CHECK(conv.bias == f.value("b"));
  CHECK(conv.mean == f.value("m"));
  CHECK(conv.variance == f.value("v"));
  CHECK(conv.scale == f.value("s"));
  CHECK(conv.shift == f.value("t"));
  CHECK(conv.residual == kNone);
  CHECK(conv.activation == ConvActivation::kRelu6);
  CHECK_FALSE(conv.relu6_as_relu);  // nothing reads its output as a direct depthwise convolution
  CHECK(conv.epsilon == Approx(1e-3));
  CHECK(conv.has_epilogue());
  CHECK(conv.foldable);  // its batch norm of parameters is folded into the filter
  CHECK(f.plan.refusals.empty());
  // cuDNN runs it: its workspace is a scratch buffer of the plan at the group's position.
  CHECK(f.plan.scratch_positions == std::vector<uint32_t>{f.fusion.groups[0].position});
  const Buffer* scratch = scratch_buffer(*f.lowered, f.fusion.groups[0].position);
  REQUIRE(scratch != nullptr);
  CHECK(scratch->size_bytes.constant() == std::optional<int64_t>(64 << 20));
}

TEST_CASE("cuda plan: a float16 convolution group folds its bias; a float16 batch-norm vector is refused") {
  // kBlock as --precision float16 leaves it: activations, the filter, the bias and the residual 16-bit.
  std::string text = kBlock;
  for (const char* name : {"x", "w", "b", "r"}) {
    const std::string from = std::string("{name: ") + name + ", dtype: float32";
    text.replace(text.find(from), from.size(), std::string("{name: ") + name + ", dtype: float16");
  }
  PlanFixture f(text);
  const CudaConv& conv = f.group_conv(0);
  CHECK(conv.dtype == ir::DataType::kFloat16);
  CHECK(conv.foldable);  // the epilogue reads its bias as float32: the fold converts it

  std::string half_stats = text;
  const std::string m = "{name: m, dtype: float32";
  half_stats.replace(half_stats.find(m), m.size(), "{name: m, dtype: float16");
  PlanFixture g(half_stats);
  CHECK(g.plan.group_convs.empty());
  CHECK(g.plan.scratch_positions.empty());
  CHECK(g.refusals() == "12:5: --target cuda: conv2d (pd_op.conv2d) has no CUDA kernel: its epilogue operand m is "
                        "float16, not float32\n");
}

TEST_CASE("cuda plan: a lone convolution has no epilogue; NHWC reads the channels last") {
  PlanFixture f(std::string(R"(program: lone
inputs:  [{name: x, dtype: float32, shape: [2, 7, 7, 3]}]
params:  [{name: w, dtype: float32, shape: [5, 3, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [2, 2], groups: 1, "
                              "data_format: NHWC") +
                "outputs: [y]\n");
  REQUIRE(f.fusion.groups.empty());
  const CudaConv& conv = f.conv(0);
  CHECK(conv.nhwc);
  CHECK((conv.c == 3 && conv.h == 7 && conv.w == 7 && conv.k == 5));
  // SAME: out = ceil(7 / 2) = 4, pads (4 - 1) * 2 + 3 - 7 = 2 split 1 / 1; dilations become 1 as in Paddle.
  CHECK((conv.pad_h == 1 && conv.pad_w == 1 && conv.dilation_h == 1 && conv.out_h == 4 && conv.out_w == 4));
  CHECK(conv.batch.to_string() == "2");
  CHECK_FALSE(conv.has_epilogue());
  // An NHWC convolution of several input channels per group reads its filter reordered to KRSC once bound.
  CHECK((conv.foldable && conv.krsc_filter && !conv.tap_major_filter));
}

TEST_CASE("cuda plan: dynamic spatial dims are expressions of the shape, not of the geometry") {
  PlanFixture f(std::string(R"(program: dynamic
inputs:  [{name: x, dtype: float32, shape: [-1, 3, -1, -1]}]
params:  [{name: w, dtype: float32, shape: [8, 3, 3, 3]}, {name: w2, dtype: float32, shape: [4, 8, 3, 3]}]
ops:
)") + conv_op("x", "w", "c", "strides: [2, 2], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, "
                              "data_format: NCHW") +
                conv_op("c", "w2", "y", "strides: [1, 1], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], "
                                        "groups: 1, data_format: NCHW") +
                "outputs: [y]\n");
  const CudaConv& conv = f.conv(0);
  CHECK(conv.out_h.to_string() == "floor_div(s1 - 1, 2) + 1");
  // SAME with stride 1 pads k - 1 whatever the dims: (1, 1) for a 3 x 3 window.
  const CudaConv& same = f.conv(1);
  CHECK((same.pad_h == 1 && same.pad_w == 1 && same.out_h == conv.out_h && same.out_w == conv.out_w));
  CHECK(f.plan.scratch_positions == std::vector<uint32_t>{0, 1});
}

TEST_CASE("cuda plan: an asymmetric padding pads the input into the scratch first, or is the depthwise kernel's") {
  const std::string same_program = std::string(R"(program: same
inputs:  [{name: x, dtype: float32, shape: [1, 2, 6, 6]}]
params:  [{name: w, dtype: float32, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], groups: 1, "
                              "data_format: NCHW") +
                                   "outputs: [y]\n";
  SECTION("SAME padding of stride 2 over an even size: top 0, bottom 1") {
    PlanFixture f(same_program);
    const CudaConv& conv = f.conv(0);
    CHECK((conv.pad_h == 0 && conv.extra_bottom == 1 && conv.pad_w == 0 && conv.extra_right == 1));
    CHECK((conv.out_h == 3 && conv.out_w == 3));
    CHECK(conv.pads_input());
    // [1, 2, 7, 7] float32: 392 bytes, 512 with the alignment.
    CHECK(conv.padded_input_bytes() == 512);
  }
  SECTION("the padded input does not fit the workspace: refused at the op, with the sizes") {
    PlanFixture f(same_program, 256);
    CHECK(f.plan.convs.empty());
    CHECK(f.plan.scratch_positions == std::vector<uint32_t>{0});  // the workspace it would have padded into
    CHECK(f.refusals() == "5:5: --target cuda: conv2d (pd_op.conv2d) pads its input for its asymmetric padding (top "
                          "0, bottom 1, left 0, right 1) into its cuDNN workspace, and the padded input takes 512 "
                          "bytes of its 256: raise --cudnn-workspace-mib\n");
  }
  SECTION("no workspace at all (--cudnn-workspace-mib 0)") {
    PlanFixture f(same_program, 0);
    CHECK(f.plan.convs.empty());
    CHECK(f.refusals() == "5:5: --target cuda: conv2d (pd_op.conv2d) pads its input for its asymmetric padding (top "
                          "0, bottom 1, left 0, right 1) into its cuDNN workspace, which --cudnn-workspace-mib 0 "
                          "leaves out\n");
  }
  SECTION("explicit [top, bottom, left, right], the bottom smaller than the top") {
    PlanFixture f(std::string(R"(program: explicit
inputs:  [{name: x, dtype: float32, shape: [-1, 2, 7, 6]}]
params:  [{name: w, dtype: float32, shape: [3, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [2, 0, 1, 2], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                "groups: 1, data_format: NCHW") +
                  "outputs: [y]\n");
    const CudaConv& conv = f.conv(0);
    CHECK((conv.pad_h == 2 && conv.extra_bottom == -2 && conv.pad_w == 1 && conv.extra_right == 1));
    CHECK((conv.out_h == 4 && conv.out_w == 4));
    // [s0, 2, 9, 9] float32; known only at run time, so the generated code checks that it fits.
    CHECK(conv.padded_input_bytes().to_string() == "256 * floor_div(648 * s0 + 255, 256)");
    CHECK(f.plan.refusals.empty());
  }
  SECTION("an NHWC depthwise convolution reads the top and left pads; no padded input, no cuDNN workspace") {
    PlanFixture f(std::string(R"(program: depthwise
inputs:  [{name: x, dtype: float32, shape: [1, 5, 6, 4]}]
params:  [{name: w, dtype: float32, shape: [4, 1, 2, 2]}]
ops:
)") + conv_op("x", "w", "y", "strides: [1, 1], paddings: [0, 1, 1, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                "groups: 4, data_format: NHWC") +
                  "outputs: [y]\n");
    const CudaConv& conv = f.conv(0);
    CHECK(conv.direct_depthwise());
    CHECK((conv.asymmetric() && !conv.pads_input()));
    CHECK(f.plan.scratch_positions.empty());
    CHECK(scratch_buffer(*f.lowered, 0) == nullptr);
  }
}

TEST_CASE("cuda plan: what the CUDA target cannot run yet is a refusal at the op") {
  SECTION("SAME padding of a stride over a dynamic spatial dim") {
    PlanFixture f(std::string(R"(program: same_dynamic
inputs:  [{name: x, dtype: float32, shape: [1, 2, -1, 6]}]
params:  [{name: w, dtype: float32, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], groups: 1, "
                                "data_format: NCHW") +
                  "outputs: [y]\n");
    CHECK(f.plan.convs.empty());
    CHECK(f.refusals() == "5:5: --target cuda: conv2d (pd_op.conv2d) has no CUDA kernel: its SAME padding of stride 2 "
                          "depends on a spatial dim known only at run time\n");
  }
  SECTION("float64") {
    PlanFixture f(std::string(R"(program: f64
inputs:  [{name: x, dtype: float64, shape: [1, 2, 6, 6]}]
params:  [{name: w, dtype: float64, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, "
                                "data_format: NCHW") +
                  "outputs: [y]\n");
    CHECK(f.plan.scratch_positions.empty());
    CHECK(f.refusals() == "5:5: --target cuda: conv2d (pd_op.conv2d) has no CUDA kernel: x is float64; the cuDNN "
                          "convolution takes float32, float16 or bfloat16\n");
  }
  SECTION("a pool over channels known only at run time") {
    PlanFixture f(R"(program: pool
inputs:  [{name: x, dtype: float32, shape: [1, -1, 6, 6]}]
ops:
  - op: pool2d
    in: [x]
    out: [y]
    attrs: {kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], ceil_mode: false, exclusive: true, data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, padding_algorithm: EXPLICIT}
outputs: [y]
)");
    CHECK(f.plan.pools.empty());
    CHECK(f.refusals() ==
          "4:5: --target cuda: pool2d (pd_op.pool2d) has no CUDA kernel: its input and output must be 4-D with channels "
          "known at generation time\n");
  }
}

std::string pool_program(const std::string& dims, const std::string& attrs) {
  return "program: pool\ninputs:  [{name: x, dtype: float32, shape: " + dims +
         "}]\nops:\n  - op: pool2d\n    in: [x]\n    out: [y]\n    attrs: {" + attrs + "}\noutputs: [y]\n";
}

TEST_CASE("cuda plan: pools padded, in ceil mode, adaptive and global") {
  SECTION("max 3x3 stride 2 pad 1") {
    PlanFixture f(pool_program("[-1, 8, 16, 16]",
                               "kernel_size: [3, 3], strides: [2, 2], paddings: [1, 1], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.is_max && pool.k_h == 3 && pool.pad_top == 1 && pool.out_h == 8 && pool.out_w == 8));
    CHECK(pool.batch.to_string() == "s0");
  }
  SECTION("average, ceil mode, not exclusive, NHWC") {
    PlanFixture f(pool_program("[1, 5, 5, 2]",
                               "kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], ceil_mode: true, exclusive: false, "
                               "data_format: NHWC, pooling_type: avg, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.nhwc && !pool.is_max && !pool.exclusive && pool.c == 2 && pool.out_h == 3 && pool.out_w == 3));
  }
  SECTION("adaptive to 2x3: the kernel size is the output size, no padding") {
    PlanFixture f(pool_program("[2, 3, 7, 8]",
                               "kernel_size: [2, 3], strides: [1, 1], paddings: [1, 1], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: avg, global_pooling: false, adaptive: true, "
                               "padding_algorithm: EXPLICIT"));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.adaptive && pool.pad_top == 0 && pool.pad_left == 0 && pool.out_h == 2 && pool.out_w == 3));
  }
  SECTION("global over dynamic spatial dims: the adaptive pool to 1 x 1") {
    PlanFixture f(pool_program("[2, 3, -1, -1]",
                               "kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: avg, global_pooling: true, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.adaptive && pool.k_h == 1 && pool.k_w == 1 && pool.out_h == 1 && pool.out_w == 1));
    CHECK((pool.h.to_string() == "s0" && pool.w.to_string() == "s1"));
  }
  SECTION("max 3x3 stride 2 over a dynamic height: the output height is an expression") {
    PlanFixture f(pool_program("[1, 4, -1, 10]",
                               "kernel_size: [3, 3], strides: [2, 2], paddings: [1, 1], ceil_mode: true, exclusive: true, "
                               "data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const CudaPool& pool = f.pool(0);
    CHECK(pool.out_h.to_string() == "floor_div(s0, 2) + 1");
    CHECK(pool.out_w == 6);
  }
}

std::string batch_norm_program(bool is_test, const std::string& outputs) {
  return std::string(R"(program: norm
inputs:  [{name: x, dtype: float32, shape: [-1, 3, 4, 4]}]
params:
  - {name: m, dtype: float32, shape: [3]}
  - {name: v, dtype: float32, shape: [3]}
  - {name: s, dtype: float32, shape: [3]}
  - {name: t, dtype: float32, shape: [3]}
ops:
  - op: batch_norm
    in: [x, m, v, s, t]
    out: [n, n_mean, n_var, n_saved_mean, n_saved_var, n_reserve]
    attrs: {is_test: )") +
         (is_test ? "true" : "false") +
         ", momentum: 0.9, epsilon: 1.0e-3, data_format: NCHW, use_global_stats: false, trainable_statistics: false}\n"
         "outputs: [" +
         outputs + "]\n";
}

TEST_CASE("cuda plan: a lone inference batch norm is the epilogue alone; training or a read statistic is refused") {
  SECTION("inference") {
    PlanFixture f(batch_norm_program(true, "n"));
    REQUIRE(f.plan.batch_norms.size() == 1);
    const CudaBatchNorm& norm = f.plan.batch_norms.begin()->second;
    CHECK((norm.x == f.value("x") && norm.out == f.value("n") && norm.mean == f.value("m") && norm.c == 3));
    CHECK((norm.batch.to_string() == "s0" && norm.spatial == 16 && !norm.nhwc));
    CHECK(norm.epsilon == Approx(1e-3));
  }
  SECTION("training") {
    PlanFixture f(batch_norm_program(false, "n"));
    CHECK(f.plan.batch_norms.empty());
    CHECK(f.refusals() == "9:5: --target cuda: batch_norm (pd_op.batch_norm) has no CUDA kernel: it is a training "
                          "batch norm (batch statistics); only inference (is_test or use_global_stats) runs\n");
  }
  SECTION("a statistic it does not compute is a program output") {
    PlanFixture f(batch_norm_program(true, "n, n_mean"));
    CHECK(f.plan.batch_norms.empty());
    CHECK(f.refusals() == "9:5: --target cuda: batch_norm (pd_op.batch_norm) has no CUDA kernel: its output mean_out "
                          "is read, and the CUDA batch norm computes out alone\n");
  }
}

constexpr const char* kMobileNetBlock = R"(program: mobilenet
inputs:  [{name: x, dtype: float32, shape: [1, 8, 8, 4]}]
params:  [{name: w, dtype: float32, shape: [8, 4, 1, 1]}, {name: d, dtype: float32, shape: [8, 1, 3, 3]}]
ops:
  - op: conv2d
    in: [x, w]
    out: [c]
    attrs: {strides: [1, 1], paddings: [0, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NHWC}
  - {op: relu6, in: [c], out: [a]}
  - op: depthwise_conv2d
    in: [a, d]
    out: [e]
    attrs: {strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 8, data_format: NHWC}
  - {op: relu, in: [e], out: [y]}
outputs: [OUTPUTS]
)";

std::string mobilenet_block(const std::string& outputs) {
  std::string text = kMobileNetBlock;
  text.replace(text.find("OUTPUTS"), 7, outputs);
  return text;
}

TEST_CASE("cuda plan: mobilenet_v2's relu6 split moves the clamp into the depthwise convolution that alone reads it") {
  SECTION("the depthwise convolution is the only reader") {
    PlanFixture f(mobilenet_block("y"));
    REQUIRE(f.fusion.groups.size() == 2);
    const CudaConv& producer = f.group_conv(0);
    const CudaConv& depthwise = f.group_conv(1);
    CHECK(depthwise.direct_depthwise());
    CHECK(producer.activation == ConvActivation::kRelu);
    CHECK(producer.relu6_as_relu);
    CHECK(producer.input_max == 0);
    CHECK(depthwise.input_max == 6);
    // Only the pointwise convolution runs cuDNN.
    CHECK(f.plan.scratch_positions == std::vector<uint32_t>{f.fusion.groups[0].position});
  }
  SECTION("the relu6 output is also a program output: no split") {
    PlanFixture f(mobilenet_block("y, a"));
    REQUIRE(f.fusion.groups.size() == 2);
    CHECK(f.group_conv(0).activation == ConvActivation::kRelu6);
    CHECK_FALSE(f.group_conv(0).relu6_as_relu);
    CHECK(f.group_conv(1).input_max == 0);
  }
}

TEST_CASE("cuda plan: a matmul outside every GEMM group says why; a GEMM's dims must fit an int") {
  SECTION("rank-1 y") {
    PlanFixture f(R"(program: vector
inputs:  [{name: x, dtype: float32, shape: [4, 16]}, {name: u, dtype: float32, shape: [16]}]
ops:
  - {op: matmul, in: [x, u], out: [y], attrs: {transpose_x: false, transpose_y: false}}
outputs: [y]
)");
    REQUIRE(f.plan.no_gemm.count(0) == 1);
    CHECK(f.plan.no_gemm.at(0).find("y has rank 1") == 0);
    CHECK(f.plan.refusals.empty());  // the backend tries a batched kernel
  }
  SECTION("M beyond int") {
    PlanFixture f(R"(program: huge
inputs:  [{name: x, dtype: float32, shape: [3000000000, 16]}]
params:  [{name: w, dtype: float32, shape: [16, 8]}]
ops:
  - {op: matmul, in: [x, w], out: [y], attrs: {transpose_x: false, transpose_y: false}}
outputs: [y]
)");
    REQUIRE(f.fusion.groups.size() == 1);
    REQUIRE(f.fusion.groups[0].kind == GroupKind::kGemm);
    CHECK(f.refusals() == "5:5: --target cuda: the GEMM's M = 3000000000 exceeds the int range of the CUDA GEMM "
                          "kernels\n");
  }
}

TEST_CASE("cuda plan: conv2d_fused's activations") {
  CHECK(conv_activation("") == ConvActivation::kNone);
  CHECK(conv_activation("silu") == ConvActivation::kSwish);
  CHECK(conv_activation("swish") == ConvActivation::kSwish);
  CHECK(conv_activation("gelu_tanh") == ConvActivation::kGeluTanh);
  CHECK_FALSE(conv_activation("mish"));
}

}  // namespace
}  // namespace kforge::passes
