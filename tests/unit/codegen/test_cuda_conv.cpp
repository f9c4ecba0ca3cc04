// Unit tests of the convolution and pooling sites of kforge compile --target cuda (codegen/cuda_conv.h): the
// geometry read from a lowered call (padding algorithms, NHWC, groups, a dynamic batch), a convolution group's
// epilogue, the reasons a call cannot run, and the template context of each step.
#include <catch2/catch.hpp>

#include <sstream>

#include "codegen/cpp_text.h"
#include "codegen/cuda_conv.h"
#include "opdef/op_loader.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::codegen {
namespace {

// Sizes as plain expressions over the symbols (the program's size table is codegen/size_table.h's concern).
std::string conv_test_size(const passes::SymExpr& e) { return cpp_int_expr(e); }

/// Lowers a program YAML text against the ops of golden case compile-cuda-conv (kernels/ops.yaml's conv2d,
/// pool2d, batch_norm, ... and fusion.yaml's conv2d_fused) and plans its fusion as --target cuda does.
struct ConvFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<passes::OpSet> ops;
  std::optional<passes::LoweredProgram> lowered;
  passes::FusionPlan plan;

  explicit ConvFixture(const std::string& program_text) {
    opdef::OpLoader loader(sources, diags);
    const std::string dir = std::string(KFORGE_SOURCE_ROOT) + "/tests/golden/compile-cuda-conv/";
    loader.add_file(dir + "ops.yaml");
    loader.add_file(dir + "fusion.yaml");
    library = std::move(loader).finish();
    ops = std::make_unique<passes::OpSet>(library, nullptr, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = passes::compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
    passes::FusionOptions fusion;
    fusion.single_call_groups = true;
    fusion.gemm_groups = true;
    fusion.conv_fused = library.find("conv2d_fused");
    fusion.half_floats = true;  // as --target cuda: 16-bit values in groups
    plan = passes::plan_fusion(*lowered, fusion);
    passes::apply_fusion_to_memory_plan(*lowered, plan);
  }

  /// The call the CUDA backend runs for group g (its conv2d_fused) or call c outside every group.
  const passes::KernelCall& group_call(size_t g) const {
    REQUIRE(g < plan.groups.size());
    REQUIRE(plan.groups[g].kind == passes::GroupKind::kConv);
    return plan.groups[g].conv_call;
  }
  const passes::KernelCall& call(size_t c) const { return lowered->calls.at(c); }
  uint32_t value(const std::string& name) const {
    for (const passes::LoweredValue& v : lowered->values) {
      if (v.name == name) return v.index;
    }
    FAIL("no value " << name);
    return passes::kNone;
  }
};

const tmpl::Value& at(const tmpl::Value& v, const char* key) {
  const tmpl::Value* found = v.find(key);
  INFO(key);
  REQUIRE(found != nullptr);
  return *found;
}

std::string conv_op(const std::string& in, const std::string& w, const std::string& out, const std::string& attrs) {
  return "  - op: conv2d\n    in: [" + in + ", " + w + "]\n    out: [" + out + "]\n    attrs: {" + attrs + "}\n";
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

TEST_CASE("cuda conv site: a convolution group's geometry and epilogue") {
  // The residual [1, 6, 5, 5] has not the dynamic batch's shape: it stays out of the group (an elementwise add).
  ConvFixture f(kBlock);
  REQUIRE(f.plan.groups.size() == 2);
  std::string why;
  const std::optional<CudaConvSite> site = cuda_conv_site(*f.lowered, f.group_call(0), &why);
  INFO(why);
  REQUIRE(site);
  CHECK(site->batch.to_string() == "s0");
  CHECK((site->c == 4 && site->h == 9 && site->w == 9 && site->k == 6 && site->r == 3 && site->s == 3));
  CHECK((site->pad_h == 1 && site->pad_w == 1 && site->stride_h == 2 && site->stride_w == 2 && site->groups == 2));
  CHECK((site->out_h == 5 && site->out_w == 5));
  CHECK_FALSE(site->nhwc);
  CHECK(site->input == f.value("x"));
  CHECK(site->filter == f.value("w"));
  CHECK(site->bias == f.value("b"));
  CHECK(site->mean == f.value("m"));
  CHECK(site->variance == f.value("v"));
  CHECK(site->scale == f.value("s"));
  CHECK(site->shift == f.value("t"));
  CHECK(site->residual == passes::kNone);
  CHECK(site->activation == "relu6");
  CHECK(site->epsilon == Approx(1e-3));
  CHECK(site->has_epilogue());

  const CudaBufferExpr buffer = [](uint32_t v, const std::string& type, bool is_const) {
    return (is_const ? "(const " : "(") + type + "*)v" + std::to_string(v);
  };
  const tmpl::Value step = cuda_conv_step(*site, 0, 3, "group 0", buffer, conv_test_size);
  CHECK(at(step, "geometry").as_string() == "{4, 6, 3, 3, 1, 1, 2, 2, 1, 1, 2, false}");
  CHECK(at(step, "shape").as_string() == "{static_cast<int>(s0), 9, 9, 5, 5}");
  CHECK(at(step, "launch").as_int() == 3);
  CHECK(at(step, "x").as_string() == "(const float*)v" + std::to_string(f.value("x")));
  const tmpl::Value& e = at(step, "epilogue");
  REQUIRE(e.is_map());
  CHECK(at(e, "activation").as_string() == "kforge::cuda_conv::Activation::kRelu6");
  CHECK(at(e, "residual").as_string() == "nullptr");
  CHECK(at(e, "epsilon").as_string() == "0.001f");
  CHECK(at(e, "after_residual").as_string() == "false");
}

TEST_CASE("cuda conv site: a float16 convolution group folds its bias; its batch-norm vectors are float32") {
  // kBlock as --precision float16 leaves it: activations, the filter, the bias and the residual 16-bit.
  std::string text = kBlock;
  for (const char* name : {"x", "w", "b", "r"}) {
    const std::string from = std::string("{name: ") + name + ", dtype: float32";
    text.replace(text.find(from), from.size(), std::string("{name: ") + name + ", dtype: float16");
  }
  ConvFixture f(text);
  std::string why;
  const std::optional<CudaConvSite> site = cuda_conv_site(*f.lowered, f.group_call(0), &why);
  INFO(why);
  REQUIRE(site);
  CHECK(site->dtype == ir::DataType::kFloat16);
  CHECK(site->foldable);  // the epilogue reads its bias as float32: the fold converts it
  const CudaBufferExpr buffer = [](uint32_t v, const std::string& type, bool is_const) {
    return (is_const ? "(const " : "(") + type + "*)v" + std::to_string(v);
  };
  const tmpl::Value step = cuda_conv_step(*site, 0, 3, "group 0", buffer, conv_test_size, 0);
  CHECK(at(step, "geometry").as_string() ==
        "{4, 6, 3, 3, 1, 1, 2, 2, 1, 1, 2, false, false, false, false, 0.0f, kforge::cuda_conv::ElementType::kFloat16}");
  CHECK(at(step, "x").as_string() == "(const __half*)v" + std::to_string(f.value("x")));
  CHECK(at(step, "w").as_string() == "reinterpret_cast<__half*>(folded_.data() + 0)");
  const tmpl::Value& fold = at(step, "fold");
  CHECK(at(fold, "bias").as_string() == "(const __half*)v" + std::to_string(f.value("b")));
  CHECK(at(fold, "mean").as_string() == "(const float*)v" + std::to_string(f.value("m")));
  // 6 x 2 x 3 x 3 halves (216 bytes, 256 aligned) and 6 float biases (24, 64 aligned).
  CHECK(cuda_conv_fold_bytes(*site) == 256 + 64);
  CHECK(at(at(step, "epilogue"), "bias").as_string() == "reinterpret_cast<float*>(folded_.data() + 256)");

  // A float16 batch-norm vector is not what the epilogue reads: a reason, not a site.
  std::string half_stats = text;
  const std::string m = "{name: m, dtype: float32";
  half_stats.replace(half_stats.find(m), m.size(), "{name: m, dtype: float16");
  ConvFixture g(half_stats);
  CHECK_FALSE(cuda_conv_site(*g.lowered, g.group_call(0), &why));
  CHECK(why == "its epilogue operand m is float16, not float32");
}

TEST_CASE("cuda conv site: a lone convolution has no epilogue; NHWC reads the channels last") {
  ConvFixture f(std::string(R"(program: lone
inputs:  [{name: x, dtype: float32, shape: [2, 7, 7, 3]}]
params:  [{name: w, dtype: float32, shape: [5, 3, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [2, 2], groups: 1, "
                              "data_format: NHWC") +
                "outputs: [y]\n");
  REQUIRE(f.plan.groups.empty());
  std::string why;
  const std::optional<CudaConvSite> site = cuda_conv_site(*f.lowered, f.call(0), &why);
  INFO(why);
  REQUIRE(site);
  CHECK(site->nhwc);
  CHECK((site->c == 3 && site->h == 7 && site->w == 7 && site->k == 5));
  // SAME: out = ceil(7 / 2) = 4, pads (4 - 1) * 2 + 3 - 7 = 2 split 1 / 1; dilations become 1 as in Paddle.
  CHECK((site->pad_h == 1 && site->pad_w == 1 && site->dilation_h == 1 && site->out_h == 4 && site->out_w == 4));
  CHECK(site->batch.to_string() == "2");
  CHECK_FALSE(site->has_epilogue());
  const tmpl::Value step = cuda_conv_step(*site, 1, 0, "call 0", [](uint32_t, const std::string&, bool) { return "p"; },
                                           conv_test_size);
  CHECK(at(step, "epilogue").is_bool());
}

TEST_CASE("cuda conv site: dynamic spatial dims are expressions of the shape, not of the geometry") {
  ConvFixture f(std::string(R"(program: dynamic
inputs:  [{name: x, dtype: float32, shape: [-1, 3, -1, -1]}]
params:  [{name: w, dtype: float32, shape: [8, 3, 3, 3]}, {name: w2, dtype: float32, shape: [4, 8, 3, 3]}]
ops:
)") + conv_op("x", "w", "c", "strides: [2, 2], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, "
                              "data_format: NCHW") +
                conv_op("c", "w2", "y", "strides: [1, 1], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], "
                                        "groups: 1, data_format: NCHW") +
                "outputs: [y]\n");
  std::string why;
  const std::optional<CudaConvSite> conv = cuda_conv_site(*f.lowered, f.call(0), &why);
  INFO(why);
  REQUIRE(conv);
  CHECK(conv->out_h.to_string() == "floor_div(s1 - 1, 2) + 1");
  const auto name = [](uint32_t, const std::string&, bool) { return std::string("p"); };
  const tmpl::Value step = cuda_conv_step(*conv, 0, 0, "call 0", name, conv_test_size);
  CHECK(at(step, "geometry").as_string() == "{3, 8, 3, 3, 1, 1, 2, 2, 1, 1, 1, false}");
  CHECK(at(step, "shape").as_string() ==
        "{static_cast<int>(s0), static_cast<int>(s1), static_cast<int>(s2), "
        "static_cast<int>(kforge_floor_div(s1 - 1, 2) + 1), static_cast<int>(kforge_floor_div(s2 - 1, 2) + 1)}");
  // SAME with stride 1 pads k - 1 whatever the dims: (1, 1) for a 3 x 3 window.
  const std::optional<CudaConvSite> same = cuda_conv_site(*f.lowered, f.call(1), &why);
  INFO(why);
  REQUIRE(same);
  CHECK((same->pad_h == 1 && same->pad_w == 1 && same->out_h == conv->out_h && same->out_w == conv->out_w));
}

TEST_CASE("cuda conv site: an asymmetric padding pads the input into the scratch first, or is the depthwise kernel's") {
  SECTION("SAME padding of stride 2 over an even size: top 0, bottom 1") {
    ConvFixture f(std::string(R"(program: same
inputs:  [{name: x, dtype: float32, shape: [1, 2, 6, 6]}]
params:  [{name: w, dtype: float32, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], groups: 1, "
                                "data_format: NCHW") +
                  "outputs: [y]\n");
    std::string why;
    const std::optional<CudaConvSite> site = cuda_conv_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK((site->pad_h == 0 && site->extra_bottom == 1 && site->pad_w == 0 && site->extra_right == 1));
    CHECK((site->out_h == 3 && site->out_w == 3));
    CHECK(site->pads_input());
    // [1, 2, 7, 7] float32: 392 bytes, 512 with the alignment.
    CHECK(site->padded_input_bytes() == 512);
    const auto name = [](uint32_t, const std::string&, bool) { return std::string("p"); };
    const tmpl::Value step = cuda_conv_step(*site, 0, 0, "call 0", name, conv_test_size);
    // cuDNN convolves the padded input with no padding of its own.
    CHECK(at(step, "geometry").as_string() == "{2, 4, 3, 3, 0, 0, 2, 2, 1, 1, 1, false}");
    CHECK(at(step, "padding").as_string() == "{0, 1, 0, 1}");
  }
  SECTION("explicit [top, bottom, left, right], the bottom smaller than the top") {
    ConvFixture f(std::string(R"(program: explicit
inputs:  [{name: x, dtype: float32, shape: [-1, 2, 7, 6]}]
params:  [{name: w, dtype: float32, shape: [3, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [2, 0, 1, 2], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                "groups: 1, data_format: NCHW") +
                  "outputs: [y]\n");
    std::string why;
    const std::optional<CudaConvSite> site = cuda_conv_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK((site->pad_h == 2 && site->extra_bottom == -2 && site->pad_w == 1 && site->extra_right == 1));
    CHECK((site->out_h == 4 && site->out_w == 4));
    // [s0, 2, 9, 9] float32.
    CHECK(site->padded_input_bytes().to_string() == "256 * floor_div(648 * s0 + 255, 256)");
    const auto name = [](uint32_t, const std::string&, bool) { return std::string("p"); };
    const tmpl::Value step = cuda_conv_step(*site, 0, 0, "call 0", name, conv_test_size);
    CHECK(at(step, "padding").as_string() == "{2, 0, 1, 2}");
  }
  SECTION("an NHWC depthwise convolution reads the top and left pads; no padded input") {
    ConvFixture f(std::string(R"(program: depthwise
inputs:  [{name: x, dtype: float32, shape: [1, 5, 6, 4]}]
params:  [{name: w, dtype: float32, shape: [4, 1, 2, 2]}]
ops:
)") + conv_op("x", "w", "y", "strides: [1, 1], paddings: [0, 1, 1, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                "groups: 4, data_format: NHWC") +
                  "outputs: [y]\n");
    std::string why;
    const std::optional<CudaConvSite> site = cuda_conv_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK(site->direct_depthwise());
    CHECK((site->asymmetric() && !site->pads_input()));
    const auto name = [](uint32_t, const std::string&, bool) { return std::string("p"); };
    const tmpl::Value step = cuda_conv_step(*site, 0, 0, "call 0", name, conv_test_size);
    CHECK(at(step, "geometry").as_string().rfind("{4, 4, 2, 2, 0, 1, 1, 1, 1, 1, 4, true", 0) == 0);
    CHECK(at(step, "padding").is_bool());
  }
}

TEST_CASE("cuda conv site: what the CUDA backend cannot run yet is a reason") {
  SECTION("SAME padding of a stride over a dynamic spatial dim") {
    ConvFixture f(std::string(R"(program: same_dynamic
inputs:  [{name: x, dtype: float32, shape: [1, 2, -1, 6]}]
params:  [{name: w, dtype: float32, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], groups: 1, "
                                "data_format: NCHW") +
                  "outputs: [y]\n");
    std::string why;
    CHECK_FALSE(cuda_conv_site(*f.lowered, f.call(0), &why));
    CHECK(why == "its SAME padding of stride 2 depends on a spatial dim known only at run time");
  }
  SECTION("float64") {
    ConvFixture f(std::string(R"(program: f64
inputs:  [{name: x, dtype: float64, shape: [1, 2, 6, 6]}]
params:  [{name: w, dtype: float64, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, "
                                "data_format: NCHW") +
                  "outputs: [y]\n");
    std::string why;
    CHECK_FALSE(cuda_conv_site(*f.lowered, f.call(0), &why));
    CHECK(why == "x is float64; the cuDNN convolution takes float32, float16 or bfloat16");
  }
}

std::string pool_program(const std::string& dims, const std::string& attrs) {
  return "program: pool\ninputs:  [{name: x, dtype: float32, shape: " + dims +
         "}]\nops:\n  - op: pool2d\n    in: [x]\n    out: [y]\n    attrs: {" + attrs + "}\noutputs: [y]\n";
}

TEST_CASE("cuda pool site: padded max, ceil mode, adaptive and global pools") {
  std::string why;
  SECTION("max 3x3 stride 2 pad 1") {
    ConvFixture f(pool_program("[-1, 8, 16, 16]",
                               "kernel_size: [3, 3], strides: [2, 2], paddings: [1, 1], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const std::optional<CudaPoolSite> site = cuda_pool_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK((site->is_max && site->k_h == 3 && site->pad_top == 1 && site->out_h == 8 && site->out_w == 8));
    const tmpl::Value step = cuda_pool_step(*site, 0, 1, "call 0", [](uint32_t, const std::string& t, bool) { return t; },
                                            conv_test_size);
    CHECK(at(step, "geometry").as_string() == "{8, 16, 16, 8, 8, 3, 3, 2, 2, 1, 1, false, true, true, false}");
    CHECK(at(step, "type").as_string() == "float");
    CHECK(at(step, "batch").as_string() == "s0");
  }
  SECTION("average, ceil mode, not exclusive, NHWC") {
    ConvFixture f(pool_program("[1, 5, 5, 2]",
                               "kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], ceil_mode: true, exclusive: false, "
                               "data_format: NHWC, pooling_type: avg, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const std::optional<CudaPoolSite> site = cuda_pool_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK((site->nhwc && !site->is_max && !site->exclusive && site->c == 2 && site->out_h == 3 && site->out_w == 3));
  }
  SECTION("adaptive to 2x3: the kernel size is the output size, no padding") {
    ConvFixture f(pool_program("[2, 3, 7, 8]",
                               "kernel_size: [2, 3], strides: [1, 1], paddings: [1, 1], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: avg, global_pooling: false, adaptive: true, "
                               "padding_algorithm: EXPLICIT"));
    const std::optional<CudaPoolSite> site = cuda_pool_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK((site->adaptive && site->pad_top == 0 && site->pad_left == 0 && site->out_h == 2 && site->out_w == 3));
  }
  SECTION("global") {
    ConvFixture f(pool_program("[2, 3, 7, 8]",
                               "kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: max, global_pooling: true, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const std::optional<CudaPoolSite> site = cuda_pool_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    // The adaptive pool to 1 x 1: one window over the whole map.
    CHECK((site->adaptive && site->k_h == 1 && site->k_w == 1 && site->out_h == 1 && site->out_w == 1));
  }
  SECTION("global over dynamic spatial dims") {
    ConvFixture f(pool_program("[2, 3, -1, -1]",
                               "kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: avg, global_pooling: true, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const std::optional<CudaPoolSite> site = cuda_pool_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK((site->adaptive && site->h.to_string() == "s0" && site->w.to_string() == "s1" && site->out_h == 1));
    const tmpl::Value step = cuda_pool_step(*site, 0, 0, "call 0", [](uint32_t, const std::string&, bool) { return "p"; },
                                            conv_test_size);
    CHECK(at(step, "geometry").as_string() ==
          "{3, static_cast<int>(s0), static_cast<int>(s1), 1, 1, 1, 1, 1, 1, 0, 0, false, false, true, true}");
  }
  SECTION("max 3x3 stride 2 over a dynamic height: the output height is an expression") {
    ConvFixture f(pool_program("[1, 4, -1, 10]",
                               "kernel_size: [3, 3], strides: [2, 2], paddings: [1, 1], ceil_mode: true, exclusive: true, "
                               "data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const std::optional<CudaPoolSite> site = cuda_pool_site(*f.lowered, f.call(0), &why);
    INFO(why);
    REQUIRE(site);
    CHECK(site->out_h.to_string() == "floor_div(s0, 2) + 1");
    CHECK(site->out_w == 6);
  }
}

TEST_CASE("cuda conv activations: conv2d_fused's names as the header's enumerators") {
  CHECK(cuda_conv_activation("") == std::optional<std::string>("kforge::cuda_conv::Activation::kNone"));
  CHECK(cuda_conv_activation("silu") == std::optional<std::string>("kforge::cuda_conv::Activation::kSwish"));
  CHECK(cuda_conv_activation("gelu_tanh") == std::optional<std::string>("kforge::cuda_conv::Activation::kGeluTanh"));
  CHECK_FALSE(cuda_conv_activation("mish"));
}


TEST_CASE("cuda conv site: the convolutions cuDNN runs get a scratch position; direct depthwise ones none") {
  SECTION("a convolution group runs at its position") {
    ConvFixture f(kBlock);
    REQUIRE(f.plan.groups.size() == 2);
    CHECK(cudnn_scratch_positions(*f.lowered, f.plan) == std::vector<uint32_t>{f.plan.groups[0].position});
  }
  SECTION("lone NHWC convolutions: the depthwise one is kforge_depthwise.cuh's kernel") {
    ConvFixture f(std::string(R"(program: pair
inputs:  [{name: x, dtype: float32, shape: [2, 7, 7, 3]}]
params:  [{name: w, dtype: float32, shape: [4, 3, 3, 3]}, {name: d, dtype: float32, shape: [4, 1, 3, 3]}]
ops:
)") + conv_op("x", "w", "c", "strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                "groups: 1, data_format: NHWC") +
                  conv_op("c", "d", "y", "strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                         "groups: 4, data_format: NHWC") +
                  "outputs: [y]\n");
    REQUIRE(f.plan.groups.empty());
    std::string why;
    const std::optional<CudaConvSite> depthwise = cuda_conv_site(*f.lowered, f.call(1), &why);
    INFO(why);
    REQUIRE(depthwise);
    CHECK(depthwise->direct_depthwise());
    CHECK(cudnn_scratch_positions(*f.lowered, f.plan) == std::vector<uint32_t>{0});
  }
}
}  // namespace
}  // namespace kforge::codegen
