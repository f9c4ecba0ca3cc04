// Unit tests of the convolution and pooling steps of kforge compile --target cuda (codegen/cuda_conv.h): the template
// context of each step, spelled from the form the CUDA target plan chose (passes/cuda_plan.h; what it chooses and
// refuses is tests/unit/passes/test_cuda_plan.cpp's).
#include <catch2/catch.hpp>

#include <sstream>

#include "codegen/cpp_text.h"
#include "codegen/cuda_conv.h"
#include "passes/cuda_plan.h"
#include "opdef/op_loader.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::codegen {
namespace {

// Sizes as plain expressions over the symbols (the program's size table is codegen/size_table.h's concern).
std::string conv_test_size(const passes::SymExpr& e) { return cpp_int_expr(e); }

/// Lowers a program YAML text against the ops of golden case compile-cuda-conv (kernels/ops.yaml's conv2d,
/// pool2d, batch_norm, ... and fusion.yaml's conv2d_fused), plans its fusion and its CUDA target plan as --target
/// cuda does.
struct ConvFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<passes::OpSet> ops;
  std::optional<passes::LoweredProgram> lowered;
  passes::FusionPlan plan;
  passes::CudaPlan target;

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
    target = passes::plan_cuda(*lowered, plan, 64 << 20);
  }

  /// The target plan's form of convolution group g, of the convolution call c, of the pool call c.
  const CudaConv& group_conv(uint32_t g) const {
    REQUIRE(target.group_conv(g) != nullptr);
    return *target.group_conv(g);
  }
  const CudaConv& conv(uint32_t c) const {
    REQUIRE(target.call_conv(c) != nullptr);
    return *target.call_conv(c);
  }
  const CudaPool& pool(uint32_t c) const {
    REQUIRE(target.pools.count(c) == 1);
    return target.pools.at(c);
  }
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

const CudaBufferExpr kCast = [](uint32_t v, const std::string& type, bool is_const) {
  return (is_const ? "(const " : "(") + type + "*)v" + std::to_string(v);
};
const CudaBufferExpr kPointer = [](uint32_t, const std::string&, bool) { return std::string("p"); };

TEST_CASE("cuda conv step: a convolution group's geometry and epilogue") {
  // The residual [1, 6, 5, 5] has not the dynamic batch's shape: it stays out of the group (an elementwise add).
  ConvFixture f(kBlock);
  const tmpl::Value step = cuda_conv_step(f.group_conv(0), 0, 3, "group 0", kCast, conv_test_size);
  CHECK(at(step, "geometry").as_string() == "{4, 6, 3, 3, 1, 1, 2, 2, 1, 1, 2, false}");
  CHECK(at(step, "shape").as_string() == "{static_cast<int>(s0), 9, 9, 5, 5}");
  CHECK(at(step, "launch").as_int() == 3);
  CHECK(at(step, "run").as_string() == "run");
  CHECK(at(step, "x").as_string() == "(const float*)v" + std::to_string(f.value("x")));
  const tmpl::Value& e = at(step, "epilogue");
  REQUIRE(e.is_map());
  CHECK(at(e, "activation").as_string() == "kforge::cuda_conv::Activation::kRelu6");
  CHECK(at(e, "mean").as_string() == "(const float*)v" + std::to_string(f.value("m")));
  CHECK(at(e, "residual").as_string() == "nullptr");
  CHECK(at(e, "epsilon").as_string() == "0.001f");
  CHECK(at(e, "after_residual").as_string() == "false");
}

TEST_CASE("cuda conv step: a float16 convolution group reads its folded filter and bias") {
  // kBlock as --precision float16 leaves it: activations, the filter, the bias and the residual 16-bit.
  std::string text = kBlock;
  for (const char* name : {"x", "w", "b", "r"}) {
    const std::string from = std::string("{name: ") + name + ", dtype: float32";
    text.replace(text.find(from), from.size(), std::string("{name: ") + name + ", dtype: float16");
  }
  ConvFixture f(text);
  const CudaConv& conv = f.group_conv(0);
  const tmpl::Value step = cuda_conv_step(conv, 0, 3, "group 0", kCast, conv_test_size, 0);
  CHECK(at(step, "geometry").as_string() ==
        "{4, 6, 3, 3, 1, 1, 2, 2, 1, 1, 2, false, false, false, false, 0.0f, kforge::cuda_conv::ElementType::kFloat16}");
  CHECK(at(step, "x").as_string() == "(const __half*)v" + std::to_string(f.value("x")));
  CHECK(at(step, "w").as_string() == "reinterpret_cast<__half*>(folded_.data() + 0)");
  const tmpl::Value& fold = at(step, "fold");
  CHECK(at(fold, "bias").as_string() == "(const __half*)v" + std::to_string(f.value("b")));
  CHECK(at(fold, "mean").as_string() == "(const float*)v" + std::to_string(f.value("m")));
  // 6 x 2 x 3 x 3 halves (216 bytes, 256 aligned) and 6 float biases (24, 64 aligned).
  CHECK(cuda_conv_fold_bytes(conv) == 256 + 64);
  CHECK(at(at(step, "epilogue"), "bias").as_string() == "reinterpret_cast<float*>(folded_.data() + 256)");
}

TEST_CASE("cuda conv step: a lone convolution has no epilogue") {
  ConvFixture f(std::string(R"(program: lone
inputs:  [{name: x, dtype: float32, shape: [2, 7, 7, 3]}]
params:  [{name: w, dtype: float32, shape: [5, 3, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [2, 2], groups: 1, "
                              "data_format: NHWC") +
                "outputs: [y]\n");
  const tmpl::Value step = cuda_conv_step(f.conv(0), 1, 0, "call 0", kPointer, conv_test_size);
  CHECK(at(step, "epilogue").is_bool());
  CHECK(at(step, "fold").is_bool());  // no fold_offset given
}

TEST_CASE("cuda conv step: dynamic spatial dims are expressions of the shape, not of the geometry") {
  ConvFixture f(std::string(R"(program: dynamic
inputs:  [{name: x, dtype: float32, shape: [-1, 3, -1, -1]}]
params:  [{name: w, dtype: float32, shape: [8, 3, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, "
                              "data_format: NCHW") +
                "outputs: [y]\n");
  const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
  CHECK(at(step, "geometry").as_string() == "{3, 8, 3, 3, 1, 1, 2, 2, 1, 1, 1, false}");
  CHECK(at(step, "shape").as_string() ==
        "{static_cast<int>(s0), static_cast<int>(s1), static_cast<int>(s2), "
        "static_cast<int>(kforge_floor_div(s1 - 1, 2) + 1), static_cast<int>(kforge_floor_div(s2 - 1, 2) + 1)}");
}

TEST_CASE("cuda conv step: a padded input is convolved with no padding; a direct depthwise one reads its pads") {
  SECTION("SAME padding of stride 2 over an even size: top 0, bottom 1") {
    ConvFixture f(std::string(R"(program: same
inputs:  [{name: x, dtype: float32, shape: [1, 2, 6, 6]}]
params:  [{name: w, dtype: float32, shape: [4, 2, 3, 3]}]
ops:
)") + conv_op("x", "w", "y", "strides: [2, 2], paddings: [0, 0], padding_algorithm: SAME, dilations: [1, 1], groups: 1, "
                                "data_format: NCHW") +
                  "outputs: [y]\n");
    const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
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
    const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
    CHECK(at(step, "padding").as_string() == "{2, 0, 1, 2}");
  }
  SECTION("an NHWC depthwise convolution reads the top and left pads") {
    ConvFixture f(std::string(R"(program: depthwise
inputs:  [{name: x, dtype: float32, shape: [1, 5, 6, 4]}]
params:  [{name: w, dtype: float32, shape: [4, 1, 2, 2]}]
ops:
)") + conv_op("x", "w", "y", "strides: [1, 1], paddings: [0, 1, 1, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                                "groups: 4, data_format: NHWC") +
                  "outputs: [y]\n");
    const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
    CHECK(at(step, "run").as_string() == "run_direct_depthwise");
    CHECK(at(step, "geometry").as_string().rfind("{4, 4, 2, 2, 0, 1, 1, 1, 1, 1, 4, true", 0) == 0);
    CHECK(at(step, "padding").is_bool());
  }
}

std::string pool_program(const std::string& dims, const std::string& attrs) {
  return "program: pool\ninputs:  [{name: x, dtype: float32, shape: " + dims +
         "}]\nops:\n  - op: pool2d\n    in: [x]\n    out: [y]\n    attrs: {" + attrs + "}\noutputs: [y]\n";
}

TEST_CASE("cuda pool step: the geometry's literals, or expressions over the symbols") {
  SECTION("max 3x3 stride 2 pad 1") {
    ConvFixture f(pool_program("[-1, 8, 16, 16]",
                               "kernel_size: [3, 3], strides: [2, 2], paddings: [1, 1], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const tmpl::Value step = cuda_pool_step(f.pool(0), 0, 1, "call 0",
                                            [](uint32_t, const std::string& t, bool) { return t; }, conv_test_size);
    CHECK(at(step, "geometry").as_string() == "{8, 16, 16, 8, 8, 3, 3, 2, 2, 1, 1, false, true, true, false}");
    CHECK(at(step, "type").as_string() == "float");
    CHECK(at(step, "batch").as_string() == "s0");
  }
  SECTION("global over dynamic spatial dims") {
    ConvFixture f(pool_program("[2, 3, -1, -1]",
                               "kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], ceil_mode: false, exclusive: true, "
                               "data_format: NCHW, pooling_type: avg, global_pooling: true, adaptive: false, "
                               "padding_algorithm: EXPLICIT"));
    const tmpl::Value step = cuda_pool_step(f.pool(0), 0, 0, "call 0", kPointer, conv_test_size);
    CHECK(at(step, "geometry").as_string() ==
          "{3, static_cast<int>(s0), static_cast<int>(s1), 1, 1, 1, 1, 1, 1, 0, 0, false, false, true, true}");
  }
}

TEST_CASE("cuda conv activations: the plan's activations as the header's enumerators") {
  CHECK(cuda_conv_activation(passes::ConvActivation::kNone) == "kforge::cuda_conv::Activation::kNone");
  CHECK(cuda_conv_activation(passes::ConvActivation::kSwish) == "kforge::cuda_conv::Activation::kSwish");
  CHECK(cuda_conv_activation(passes::ConvActivation::kGeluTanh) == "kforge::cuda_conv::Activation::kGeluTanh");
}
}  // namespace
}  // namespace kforge::codegen
