// Unit tests of the convolution and pooling steps of kforge compile --target cuda (codegen/cuda_conv.h): the template
// context of each step, spelled from the form the CUDA target plan chose (passes/cuda_plan.h; what it chooses and
// refuses is tests/unit/passes/test_cuda_plan.cpp's).
#include "../passes/cuda_plan_test_util.h"
#include "codegen/cpp_text.h"
#include "codegen/cuda_conv.h"

namespace kforge::codegen {
namespace {

using passes::test::PlanFixture;

// Sizes as plain expressions over the symbols (the program's size table is codegen/size_table.h's concern).
std::string conv_test_size(const passes::SymExpr& e) { return cpp_int_expr(e); }

const tmpl::Value& at(const tmpl::Value& v, const char* key) {
  const tmpl::Value* found = v.find(key);
  INFO(key);
  REQUIRE(found != nullptr);
  return *found;
}

const CudaBufferExpr kCast = [](uint32_t v, const std::string& type, bool is_const) {
  return (is_const ? "(const " : "(") + type + "*)v" + std::to_string(v);
};
const CudaBufferExpr kPointer = [](uint32_t, const std::string&, bool) { return std::string("p"); };

TEST_CASE("cuda conv step: a convolution group's geometry and epilogue") {
  // The residual [1, 6, 5, 5] has not the dynamic batch's shape: it stays out of the group (an elementwise add).
  PlanFixture f(passes::test::kConvBlock);
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
  PlanFixture f(passes::test::half_conv_block());
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
  PlanFixture f(passes::test::nhwc_same_conv());
  const tmpl::Value step = cuda_conv_step(f.conv(0), 1, 0, "call 0", kPointer, conv_test_size);
  CHECK(at(step, "epilogue").is_bool());
  CHECK(at(step, "fold").is_bool());  // no fold_offset given
}

TEST_CASE("cuda conv step: dynamic spatial dims are expressions of the shape, not of the geometry") {
  PlanFixture f(passes::test::dynamic_conv());
  const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
  CHECK(at(step, "geometry").as_string() == "{3, 8, 3, 3, 1, 1, 2, 2, 1, 1, 1, false}");
  CHECK(at(step, "shape").as_string() ==
        "{static_cast<int>(s0), static_cast<int>(s1), static_cast<int>(s2), "
        "static_cast<int>(kforge_floor_div(s1 - 1, 2) + 1), static_cast<int>(kforge_floor_div(s2 - 1, 2) + 1)}");
}

TEST_CASE("cuda conv step: a padded input is convolved with no padding; a direct depthwise one reads its pads") {
  SECTION("SAME padding of stride 2 over an even size: top 0, bottom 1") {
    PlanFixture f(passes::test::same_stride2_conv());
    const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
    // cuDNN convolves the padded input with no padding of its own.
    CHECK(at(step, "geometry").as_string() == "{2, 4, 3, 3, 0, 0, 2, 2, 1, 1, 1, false}");
    CHECK(at(step, "padding").as_string() == "{0, 1, 0, 1}");
  }
  SECTION("explicit [top, bottom, left, right], the bottom smaller than the top") {
    PlanFixture f(passes::test::explicit_asymmetric_conv());
    const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
    CHECK(at(step, "padding").as_string() == "{2, 0, 1, 2}");
  }
  SECTION("an NHWC depthwise convolution reads the top and left pads") {
    PlanFixture f(passes::test::depthwise_asymmetric_conv());
    const tmpl::Value step = cuda_conv_step(f.conv(0), 0, 0, "call 0", kPointer, conv_test_size);
    CHECK(at(step, "run").as_string() == "run_direct_depthwise");
    CHECK(at(step, "geometry").as_string().rfind("{4, 4, 2, 2, 0, 1, 1, 1, 1, 1, 4, true", 0) == 0);
    CHECK(at(step, "padding").is_bool());
  }
}

TEST_CASE("cuda pool step: the geometry's literals, or expressions over the symbols") {
  SECTION("max 3x3 stride 2 pad 1") {
    PlanFixture f(passes::test::pool_program(
        "[-1, 8, 16, 16]", passes::test::pool_attrs("[3, 3]", "[2, 2]", "[1, 1]", false, true, "NCHW", "max", false, false)));
    const tmpl::Value step = cuda_pool_step(f.pool(0), 0, 1, "call 0",
                                            [](uint32_t, const std::string& t, bool) { return t; }, conv_test_size);
    CHECK(at(step, "geometry").as_string() == "{8, 16, 16, 8, 8, 3, 3, 2, 2, 1, 1, false, true, true, false}");
    CHECK(at(step, "type").as_string() == "float");
    CHECK(at(step, "batch").as_string() == "s0");
  }
  SECTION("global over dynamic spatial dims") {
    PlanFixture f(passes::test::pool_program(
        "[2, 3, -1, -1]", passes::test::pool_attrs("[1, 1]", "[1, 1]", "[0, 0]", false, true, "NCHW", "avg", true, false)));
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
