// Unit tests of the attention steps of kforge compile --target cuda (codegen/cuda_attention.h): the template context
// of a kAttention group's call, kforge::cuda_attention::attention<T, D, M> for 16-bit values and attention_float<D>
// for float32 ones (what the fusion pass groups is tests/unit/passes/test_fusion_attention.cpp's).
#include "../passes/fusion_test_util.h"
#include "codegen/cpp_text.h"
#include "codegen/cuda_attention.h"

namespace kforge::codegen {
namespace {

using namespace passes::fusion_test;

// MultiHeadAttention over x [2, 80, 2, 64] of `dtype`: q = x, k and v scales of x, a padding mask [2, 1, 1, 80].
std::string mha(const std::string& dtype) {
  return "program: mha\ninputs:\n  - {name: x, dtype: " + dtype +
         ", shape: [2, 80, 2, 64]}\n  - {name: mask, dtype: " + dtype +
         ", shape: [2, 1, 1, 80]}\nops:\n"
         "  - {op: scale, in: [x], out: [k], attrs: {scale: 0.5, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: scale, in: [x], out: [v], attrs: {scale: 2.0, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: transpose, in: [x], out: [qt], attrs: {perm: [0, 2, 1, 3]}}\n"
         "  - {op: transpose, in: [k], out: [kt], attrs: {perm: [0, 2, 1, 3]}}\n"
         "  - {op: transpose, in: [v], out: [vt], attrs: {perm: [0, 2, 1, 3]}}\n"
         "  - {op: scale, in: [qt], out: [qs], attrs: {scale: 0.125, bias: 0.0, bias_after_scale: true}}\n"
         "  - {op: matmul, in: [qs, kt], out: [s], attrs: {transpose_x: false, transpose_y: true}}\n"
         "  - {op: add, in: [s, mask], out: [sm]}\n"
         "  - {op: softmax, in: [sm], out: [p], attrs: {axis: -1}}\n"
         "  - {op: matmul, in: [p, vt], out: [o], attrs: {transpose_x: false, transpose_y: false}}\n"
         "  - {op: transpose, in: [o], out: [ot], attrs: {perm: [0, 2, 1, 3]}}\n"
         "outputs: [ot]\n";
}

const tmpl::Value& at(const tmpl::Value& v, const char* key) {
  const tmpl::Value* found = v.find(key);
  INFO(key);
  REQUIRE(found != nullptr);
  return *found;
}

// The step of the program's attention group (site number `site`), buffers spelled "(const T*)vN".
tmpl::Value attention_step(const passes::LoweredProgram& lp, const passes::FusionPlan& plan, int64_t site = -1) {
  for (const passes::FusedGroup& g : plan.groups) {
    if (g.kind != passes::GroupKind::kAttention) continue;
    return cuda_attention_step(
        lp, g, 4, site, "group 1",
        [](uint32_t v, const std::string& type, bool is_const) {
          return (is_const ? "(const " : "(") + type + "*)v" + std::to_string(v);
        },
        [](const passes::SymExpr& e) { return cpp_int_expr(e); });
  }
  FAIL("no attention group");
  return {};
}

}  // namespace

TEST_CASE("cuda attention step: float32 values call attention_float, float32 throughout") {
  passes::LoweredProgram lp = env().compile(mha("float32"));
  const passes::FusionPlan plan = passes::plan_fusion(lp, cuda_fusion_options());
  const tmpl::Value s = attention_step(lp, plan);
  CHECK(at(s, "float32").as_bool());
  CHECK(at(s, "type").as_string() == "float");
  CHECK(at(s, "mask_type").as_string() == "float");
  CHECK(at(s, "head_dim").as_int() == 64);
  CHECK(at(s, "launch").as_int() == 4);
  CHECK(at(s, "scale").as_string() == "0.125f");
  uint32_t x = passes::kNone;
  for (uint32_t v = 0; v < lp.values.size(); ++v) x = lp.value(v).name == "x" ? v : x;
  CHECK(at(s, "q").as_string() == "(const float*)v" + std::to_string(x));
  CHECK(at(s, "mask").as_string().rfind("(const float*)v", 0) == 0);
  // q read where the projection wrote it: [B, S, H, D], 128 per position, 64 per head.
  const tmpl::Value& strides = at(s, "strides");
  REQUIRE(strides.as_list().size() == 16);
  CHECK(strides.as_list()[0].as_string() == "10240");
  CHECK(strides.as_list()[1].as_string() == "64");
  CHECK(strides.as_list()[2].as_string() == "128");
  CHECK_FALSE(at(s, "causal").as_bool());
}

TEST_CASE("cuda attention step: 16-bit values run through their site (kernel or cuDNN)") {
  passes::LoweredProgram lp = env().compile(mha("float16"));
  const passes::FusionPlan plan = passes::plan_fusion(lp, cuda_fusion_options());
  const tmpl::Value s = attention_step(lp, plan, 3);
  CHECK_FALSE(at(s, "float32").as_bool());
  CHECK(at(s, "site").as_int() == 3);
  CHECK(at(s, "type").as_string() == "__half");
  CHECK(at(s, "mask_type").as_string() == "__half");
}

}  // namespace kforge::codegen
