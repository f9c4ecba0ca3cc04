// Unit tests of the CUDA target plan (passes/cuda_plan.h): the form chosen for each convolution, pool and batch
// norm (the geometry read from a lowered call: padding algorithms, NHWC, groups, a dynamic batch; a convolution
// group's epilogue), mobilenet_v2's relu6 split, the cuDNN workspaces, the fused groups whose kernels cannot be
// written, the compactions, and the located reasons a call cannot run. How every other call outside the groups runs
// (CudaRun) and the index-mapped ops' forms (CudaIndexMap) are test_cuda_plan_index.cpp's.
#include "cuda_plan_test_util.h"
#include "passes/memory_plan.h"

namespace kforge::passes {
namespace {

using test::conv_attrs;
using test::kLibraryOps;
using test::library_program;
using test::kConvBlock;
using test::lone_conv;
using test::PlanFixture;
using test::pool_attrs;
using test::pool_program;

TEST_CASE("cuda plan: a convolution group's geometry and epilogue") {
  // The residual [1, 6, 5, 5] has not the dynamic batch's shape: it stays out of the group (an elementwise add).
  PlanFixture f(kConvBlock);
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
  PlanFixture f(test::half_conv_block());
  const CudaConv& conv = f.group_conv(0);
  CHECK(conv.dtype == ir::DataType::kFloat16);
  CHECK(conv.foldable);  // the epilogue reads its bias as float32: the fold converts it

  PlanFixture g(test::half_conv_block(true));
  CHECK(g.plan.group_convs.empty());
  CHECK(g.plan.scratch_positions.empty());
  CHECK(g.refusals() == "12:5: --target cuda: conv2d (pd_op.conv2d) has no CUDA kernel: its epilogue operand m is "
                        "float16, not float32\n");
}

TEST_CASE("cuda plan: a lone convolution has no epilogue; NHWC reads the channels last") {
  PlanFixture f(test::nhwc_same_conv());
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
  // The dynamic convolution, then a SAME one of stride 1 of its output.
  std::string text = test::dynamic_conv();
  text.replace(text.find("outputs: [y]"), 12, R"(  - op: conv2d
    in: [y, w2]
    out: [z]
    attrs: {)" + conv_attrs("[1, 1]", "[0, 0]", "SAME", "[1, 1]", 1, "NCHW") + "}\noutputs: [z]");
  text.replace(text.find("params:  ["), 10, "params:  [{name: w2, dtype: float32, shape: [4, 8, 3, 3]}, ");
  PlanFixture f(text);
  const CudaConv& conv = f.conv(0);
  CHECK(conv.out_h.to_string() == "floor_div(s1 - 1, 2) + 1");
  // SAME with stride 1 pads k - 1 whatever the dims: (1, 1) for a 3 x 3 window.
  const CudaConv& same = f.conv(1);
  CHECK((same.pad_h == 1 && same.pad_w == 1 && same.out_h == conv.out_h && same.out_w == conv.out_w));
  CHECK(f.plan.scratch_positions == std::vector<uint32_t>{0, 1});
}

TEST_CASE("cuda plan: an asymmetric padding pads the input into the scratch first, or is the depthwise kernel's") {
  const std::string same_program = test::same_stride2_conv();
  SECTION("SAME padding of stride 2 over an even size: top 0, bottom 1") {
    PlanFixture f(same_program);
    const CudaConv& conv = f.conv(0);
    CHECK((conv.pad_h == 0 && conv.extra_bottom == 1 && conv.pad_w == 0 && conv.extra_right == 1));
    CHECK((conv.out_h == 3 && conv.out_w == 3));
    CHECK(conv.pads_input());
    // [1, 2, 7, 7] float32: 392 bytes, 512 with the alignment.
    CHECK(conv.padded_input_bytes() == 512);
  }
  SECTION("its scratch is the padded input's bytes more than the workspace, of any size") {
    PlanFixture f(same_program, 256);
    REQUIRE(f.plan.convs.size() == 1);
    CHECK(f.plan.scratch_positions == std::vector<uint32_t>{0});
    const Buffer* scratch = scratch_buffer(*f.lowered, 0);
    REQUIRE(scratch != nullptr);
    CHECK(scratch->size_bytes == 512 + 256);
    CHECK(f.plan.refusals.empty());
  }
  SECTION("no workspace at all (--cudnn-workspace-mib 0): the padded input alone") {
    PlanFixture f(same_program, 0);
    REQUIRE(f.plan.convs.size() == 1);
    const Buffer* scratch = scratch_buffer(*f.lowered, 0);
    REQUIRE(scratch != nullptr);
    CHECK(scratch->size_bytes == 512);
  }
  SECTION("explicit [top, bottom, left, right], the bottom smaller than the top") {
    PlanFixture f(test::explicit_asymmetric_conv());
    const CudaConv& conv = f.conv(0);
    CHECK((conv.pad_h == 2 && conv.extra_bottom == -2 && conv.pad_w == 1 && conv.extra_right == 1));
    CHECK((conv.out_h == 4 && conv.out_w == 4));
    // [s0, 2, 9, 9] float32: the scratch takes this expression of the batch more than the workspace.
    CHECK(conv.padded_input_bytes().to_string() == "256 * floor_div(648 * s0 + 255, 256)");
    CHECK(f.plan.refusals.empty());
  }
  SECTION("an NHWC depthwise convolution reads the top and left pads; no padded input, no cuDNN workspace") {
    PlanFixture f(test::depthwise_asymmetric_conv());
    const CudaConv& conv = f.conv(0);
    CHECK(conv.direct_depthwise());
    CHECK((conv.asymmetric() && !conv.pads_input()));
    CHECK(f.plan.scratch_positions.empty());
    CHECK(scratch_buffer(*f.lowered, 0) == nullptr);
  }
}

TEST_CASE("cuda plan: what the CUDA target cannot run yet is a refusal at the op") {
  SECTION("SAME padding of a stride over a dynamic spatial dim") {
    PlanFixture f(lone_conv("[1, 2, -1, 6]", "[4, 2, 3, 3]", conv_attrs("[2, 2]", "[0, 0]", "SAME", "[1, 1]", 1, "NCHW")));
    CHECK(f.plan.convs.empty());
    CHECK(f.refusals() == "5:5: --target cuda: conv2d (pd_op.conv2d) has no CUDA kernel: its SAME padding of stride 2 "
                          "depends on a spatial dim known only at run time\n");
  }
  SECTION("float64") {
    PlanFixture f(lone_conv("[1, 2, 6, 6]", "[4, 2, 3, 3]", conv_attrs("[1, 1]", "[1, 1]", "EXPLICIT", "[1, 1]", 1, "NCHW"),
                            "float64"));
    CHECK(f.plan.scratch_positions.empty());
    CHECK(f.refusals() == "5:5: --target cuda: conv2d (pd_op.conv2d) has no CUDA kernel: x is float64; the cuDNN "
                          "convolution takes float32, float16 or bfloat16\n");
  }
  SECTION("a pool over channels known only at run time") {
    PlanFixture f(pool_program("[1, -1, 6, 6]", pool_attrs("[2, 2]", "[2, 2]", "[0, 0]", false, true, "NCHW", "max",
                                                            false, false)));
    CHECK(f.plan.pools.empty());
    CHECK(f.refusals() ==
          "4:5: --target cuda: pool2d (pd_op.pool2d) has no CUDA kernel: its input and output must be 4-D with channels "
          "known at generation time\n");
  }
}

TEST_CASE("cuda plan: pools padded, in ceil mode, adaptive and global") {
  SECTION("max 3x3 stride 2 pad 1") {
    PlanFixture f(pool_program("[-1, 8, 16, 16]", pool_attrs("[3, 3]", "[2, 2]", "[1, 1]", false, true, "NCHW", "max", false, false)));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.is_max && pool.k_h == 3 && pool.pad_top == 1 && pool.out_h == 8 && pool.out_w == 8));
    CHECK(pool.batch.to_string() == "s0");
  }
  SECTION("average, ceil mode, not exclusive, NHWC") {
    PlanFixture f(pool_program("[1, 5, 5, 2]", pool_attrs("[2, 2]", "[2, 2]", "[0, 0]", true, false, "NHWC", "avg", false, false)));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.nhwc && !pool.is_max && !pool.exclusive && pool.c == 2 && pool.out_h == 3 && pool.out_w == 3));
  }
  SECTION("adaptive to 2x3: the kernel size is the output size, no padding") {
    PlanFixture f(pool_program("[2, 3, 7, 8]", pool_attrs("[2, 3]", "[1, 1]", "[1, 1]", false, true, "NCHW", "avg", false, true)));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.adaptive && pool.pad_top == 0 && pool.pad_left == 0 && pool.out_h == 2 && pool.out_w == 3));
  }
  SECTION("global over dynamic spatial dims: the adaptive pool to 1 x 1") {
    PlanFixture f(pool_program("[2, 3, -1, -1]", pool_attrs("[1, 1]", "[1, 1]", "[0, 0]", false, true, "NCHW", "avg", true, false)));
    const CudaPool& pool = f.pool(0);
    CHECK((pool.adaptive && pool.k_h == 1 && pool.k_w == 1 && pool.out_h == 1 && pool.out_w == 1));
    CHECK((pool.h.to_string() == "s0" && pool.w.to_string() == "s1"));
  }
  SECTION("max 3x3 stride 2 over a dynamic height: the output height is an expression") {
    PlanFixture f(pool_program("[1, 4, -1, 10]", pool_attrs("[3, 3]", "[2, 2]", "[1, 1]", true, true, "NCHW", "max", false, false)));
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

TEST_CASE("cuda plan: output dims equal through the broadcasts' equalities agree, or are checked at run time") {
  // A detector's FPN: the stride-4 map's h, floor_div(s0 - 1, 2) + 1 after one stride-2 conv of an input of s0
  // rows... here spelled small: h1 = floor_div(s0 - 1, 2) + 1, its stride-2 conv h2 = floor_div(h1 - 1, 2) + 1, h2
  // upsampled x2 and added to h1: taken equal, h1 stands for 2 * h2.
  const SymExpr s0 = SymExpr::symbol(0);
  const SymExpr h1 = SymExpr::floor_div(s0 - 1, 2) + 1;
  const SymExpr h2 = SymExpr::floor_div(h1 - 1, 2) + 1;
  LoweredProgram p;
  std::vector<std::pair<SymExpr, SymExpr>> checked;
  CHECK(output_dims_agree(p, h1, h1, &checked));
  CHECK_FALSE(output_dims_agree(p, 2 * h2, h1, &checked));  // no equalities: different sizes
  p.dim_equalities.push_back({SourceLoc{}, "pd_op.add", 2 * h2, h1});
  CHECK(output_dims_agree(p, 2 * h2, h1, &checked));  // the geometry's h1 stands for 2 * h2
  CHECK(checked.empty());
  // Equal only through an equality that no rewrite of whole dims shows: checked when the program runs.
  const SymExpr h3 = SymExpr::floor_div(h2 - 1, 2) + 1;
  CHECK(output_dims_agree(p, h3, h2 + 7, &checked));
  REQUIRE(checked.size() == 1);
  CHECK(checked[0].first == h3);
  CHECK(checked[0].second == h2 + 7);
  // A known difference never agrees.
  CHECK_FALSE(output_dims_agree(p, h3 + 1, h3, &checked));
  CHECK_FALSE(output_dims_agree(p, SymExpr(4), SymExpr(5), &checked));
  CHECK(checked.size() == 1);
}

TEST_CASE("cuda plan: a fused group whose kernel cannot be written is refused at its first call") {
  SECTION("float32 groups are written") {
    PlanFixture f(R"(program: act
inputs:  [{name: x, dtype: float32, shape: [4, 16]}, {name: b, dtype: float32, shape: [16]}]
ops:
  - {op: add, in: [x, b], out: [h]}
  - {op: relu, in: [h], out: [y]}
outputs: [y]
)");
    CHECK(f.plan.refusals.empty());
  }
  SECTION("a row pattern with no CUDA kernel, or computing in an integer type") {
    PlanFixture f(R"(program: sm
inputs:  [{name: x, dtype: float32, shape: [4, 64]}]
ops:
  - {op: softmax, in: [x], out: [y], attrs: {axis: -1}}
outputs: [y]
)", 0, {"tests/golden/compile-cuda-fused/ops.yaml"});
    CHECK(f.plan.refusals.empty());
    REQUIRE(f.fusion.groups.size() == 1);
    FusedGroup& g = f.fusion.groups[0];
    REQUIRE(g.kind == GroupKind::kRow);
    for (GroupStmt& s : g.stmts) {
      if (s.kind == StmtKind::kRowPattern) s.pattern = RowPatternKind::kRmsNorm;
    }
    std::vector<CudaRefusal> refusals;
    refuse_cuda_fused_groups(*f.lowered, f.fusion, refusals);
    REQUIRE(refusals.size() == 1);
    CHECK(f.sources.line_col(refusals[0].loc).line == 4);
    CHECK(refusals[0].message == "--target cuda: fused group 0 (softmax): this row pattern (rms_norm) has no CUDA "
                                 "kernel yet");
    for (GroupStmt& s : g.stmts) {
      if (s.kind == StmtKind::kRowPattern) {
        s.pattern = RowPatternKind::kSoftmax;
        s.type = expr::ScalarType::kInt64;
      }
    }
    refusals.clear();
    refuse_cuda_fused_groups(*f.lowered, f.fusion, refusals);
    REQUIRE(refusals.size() == 1);
    CHECK(refusals[0].message == "--target cuda: fused group 0 (softmax): a row pattern computes in float32 or "
                                 "float64 only");
  }
}

TEST_CASE("cuda plan: the compactions' forms; a size from data the target cannot bind is refused at the op") {
  const std::string inputs = "{name: x, dtype: float32, shape: [-1, 4]}, {name: m, dtype: bool, shape: [-1, 4]}";
  SECTION("nonzero, masked_select and unique along an axis have their forms") {
    PlanFixture f(library_program(inputs,
                                  "  - {op: nonzero, in: [m], out: [n]}\n"
                                  "  - {op: masked_select, in: [x, m], out: [s]}\n"
                                  "  - {op: unique, in: [x], out: [u, ui, uinv, uc], attrs: {return_index: true, "
                                  "return_inverse: true, return_counts: true, axis: [1], dtype: int32, is_sorted: true}}\n",
                                  "n, s, u, ui, uinv, uc"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    REQUIRE(f.plan.refusals.empty());
    REQUIRE(f.plan.compactions.size() == 3);
    const CudaCompaction& nonzero = f.plan.compactions.at(0);
    CHECK(nonzero.x == f.value("m"));
    CHECK(nonzero.mask == kNone);
    CHECK(nonzero.out == f.value("n"));
    CHECK(!nonzero.unique);
    REQUIRE(nonzero.symbol < f.lowered->symbols.size());
    CHECK(f.lowered->symbols[nonzero.symbol].call == 0);
    const CudaCompaction& masked = f.plan.compactions.at(1);
    CHECK(masked.x == f.value("x"));
    CHECK(masked.mask == f.value("m"));
    CHECK(masked.out == f.value("s"));
    const CudaCompaction& unique = f.plan.compactions.at(2);
    CHECK(unique.unique);
    CHECK(unique.out == f.value("u"));
    CHECK(unique.indices == f.value("ui"));
    CHECK(unique.counts == f.value("uc"));
    CHECK(unique.index_dtype == ir::DataType::kInt32);
    CHECK(unique.along_axis);
    CHECK(unique.inner.constant() == std::optional<int64_t>(1));
    CHECK(!unique.outer.is_constant());  // x's dynamic first dim
  }
  SECTION("generate_proposals and distribute_fpn_proposals have their forms (kforge_proposals.cuh)") {
    const std::string det_inputs =
        "{name: sc, dtype: float32, shape: [2, 3, 8, 10]}, {name: d, dtype: float32, shape: [2, 12, 8, 10]}, "
        "{name: im, dtype: float32, shape: [2, 2]}, {name: an, dtype: float32, shape: [240, 4]}, "
        "{name: b, dtype: float64, shape: [-1, 4]}, {name: bn, dtype: int64, shape: [2]}";
    PlanFixture f(library_program(det_inputs,
                                  "  - {op: generate_proposals, in: [sc, d, im, an, an], out: [r, p], attrs: "
                                  "{pre_nms_top_n: 100, post_nms_top_n: 30, nms_thresh: 0.7, min_size: 2.0, eta: 0.5, "
                                  "pixel_offset: false}}\n"
                                  "  - {op: distribute_fpn_proposals, in: [b, bn], out: [levels, nums, restore], "
                                  "attrs: {min_level: 2, max_level: 3, refer_level: 4, refer_scale: 224, "
                                  "pixel_offset: true}}\n",
                                  "r, p, restore"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    REQUIRE(f.plan.refusals.empty());
    REQUIRE(f.plan.compactions.size() == 2);
    const CudaCompaction& gp = f.plan.compactions.at(0);
    CHECK(gp.proposals);
    CHECK(gp.operands == std::vector<uint32_t>{f.value("sc"), f.value("d"), f.value("im"), f.value("an"),
                                               f.value("an")});
    CHECK(gp.out == f.value("r"));
    CHECK(gp.probs == f.value("p"));
    CHECK(gp.rois_num == kNone);
    CHECK(gp.pre_nms_top_n == 100);
    CHECK(gp.post_nms_top_n == 30);
    CHECK(gp.nms_thresh == Approx(0.7));
    CHECK(gp.eta == 0.5);
    CHECK_FALSE(gp.pixel_offset);
    CHECK(gp.places == SymExpr(80));
    REQUIRE(gp.symbol < f.lowered->symbols.size());
    CHECK(f.lowered->symbols[gp.symbol].call == 0);
    const CudaCompaction& fpn = f.plan.compactions.at(1);
    CHECK(fpn.fpn);
    CHECK(fpn.x == f.value("b"));
    CHECK(fpn.mask == f.value("bn"));
    REQUIRE(fpn.level_rois.size() == 2);
    REQUIRE(fpn.level_symbols.size() == 2);
    CHECK(fpn.level_symbols[0] != kNone);
    CHECK(fpn.level_symbols[1] != kNone);
    CHECK(fpn.symbol == kNone);  // restore_index has fpn_rois' rows (b's), no count of its own
    CHECK(fpn.out == f.value("restore"));
    CHECK(f.lowered->values[fpn.out].dims == SymShape{f.lowered->values[f.value("b")].dims[0], SymExpr(1)});
    CHECK(fpn.min_level == 2);
    CHECK(fpn.refer_scale == 224);
    CHECK(fpn.pixel_offset);
  }
  SECTION("with --cuda-graph every size from data is refused at the op that finds it") {
    PlanFixture f(library_program(inputs,
                                  "  - {op: nonzero, in: [m], out: [n]}\n"
                                  "  - {op: masked_select, in: [x, m], out: [s]}\n",
                                  "n, s"),
                  64 << 20, kLibraryOps, true);
    CHECK(f.plan.compactions.empty());
    CHECK(f.refusals() ==
          "4:5: 'pd_op.nonzero': the number of nonzero elements depends on the data: run() copies it back to the host "
          "in the middle of the run to size what comes after, and a CUDA graph (--cuda-graph) replays the sizes it "
          "was captured with; compile without --cuda-graph (the launches then run one by one)\n"
          "5:5: 'pd_op.masked_select': the number of selected elements depends on the data: run() copies it back to "
          "the host in the middle of the run to size what comes after, and a CUDA graph (--cuda-graph) replays the "
          "sizes it was captured with; compile without --cuda-graph (the launches then run one by one)\n");
  }
}

}  // namespace
}  // namespace kforge::passes
