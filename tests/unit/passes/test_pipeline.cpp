// The pipeline (passes/pipeline.h): run_pipeline runs the passes in the order the compile command ran them by hand,
// and each fact of a CompileTarget reaches the pass that asks it.
#include "pass_test_util.h"
#include "passes/memory_plan.h"
#include "passes/pipeline.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

test::Env& pipeline_env() {
  static test::Env e({"kernels/fusion.yaml"});
  return e;
}

// Two convolutions (the second with a relu) concatenated along the channels, and a matmul after them.
const char* const kConcatBlock = R"(
program: block
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}]
params:
  - {name: w1, dtype: float32, shape: [8, 4, 1, 1]}
  - {name: w2, dtype: float32, shape: [8, 4, 1, 1]}
  - {name: wm, dtype: float32, shape: [6, 6]}
ops:
  - {op: conv2d, in: [x, w1], out: [c1], attrs: {strides: [1, 1], paddings: [0, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}}
  - {op: relu, in: [c1], out: [b1]}
  - {op: conv2d, in: [x, w2], out: [b2], attrs: {strides: [1, 1], paddings: [0, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}}
  - {op: builtin.combine, in: [b1, b2], out: [pieces]}
  - {op: concat, in: [pieces], out: [cat], attrs: {axis: 1}}
  - {op: matmul, in: [cat, wm], out: [y], attrs: {transpose_x: false, transpose_y: false}}
outputs: [y]
)";

CompileTarget cpu_like() {
  CompileTarget t;
  t.name = "test-cpu";
  t.conv_groups = true;
  t.concat_in_place = true;
  t.kernel_call_variants = true;
  return t;
}

std::optional<CompiledProgram> run(const CompileTarget& target, const CompileChoices& choices) {
  ir::Program program = pipeline_env().read("t.yaml", kConcatBlock);
  std::optional<CompiledProgram> compiled = run_pipeline(program, pipeline_env().ops(), target, choices,
                                                         pipeline_env().diags());
  INFO(pipeline_env().diagnostics());
  REQUIRE(compiled.has_value());
  return compiled;
}

}  // namespace

TEST_CASE("pipeline: run_pipeline is the passes in the compile command's order") {
  const CompileTarget target = cpu_like();
  CompileChoices choices;
  choices.layout = LayoutChoice::kNhwc;
  choices.dump = true;
  const std::optional<CompiledProgram> compiled = run(target, choices);

  // By hand, as src/driver/compile_command.cpp ran them before the pipeline owned the order.
  ir::Program program = pipeline_env().read("t.yaml", kConcatBlock);
  PipelineOptions options;
  options.layout = LayoutChoice::kNhwc;
  LayoutReport layout;
  options.layout_report = &layout;
  std::optional<LoweredProgram> lp = pipeline_env().compile(program, options);
  REQUIRE(lp.has_value());
  FusionOptions fusion_options;
  fusion_options.conv_fused = pipeline_env().ops().library().find("conv2d_fused");
  REQUIRE(fusion_options.conv_fused != nullptr);
  FusionPlan fusion = plan_fusion(*lp, fusion_options);
  apply_fusion_to_memory_plan(*lp, fusion);
  ConcatInPlaceOptions in_place;
  in_place.conv_fused = fusion_options.conv_fused;
  const std::vector<ConcatPlacement> placements = place_concat_inputs(*lp, fusion, in_place);
  REQUIRE_FALSE(placements.empty());
  CHECK(compiled->dump == layout.dump(program) + lp->dump() + dump_fusion(*lp, fusion) + dump_placements(placements));
  CHECK(compiled->multi_kernel.sites.empty());  // no hints
}

TEST_CASE("pipeline: --multi-kernel-hints go to kernel calls or to GEMM groups, as the target says") {
  CompileChoices choices;
  choices.multi_kernel_hints = {64, 4096};
  const std::optional<CompiledProgram> cpu = run(cpu_like(), choices);
  CHECK_FALSE(cpu->multi_kernel.sites.empty());
  CHECK(cpu->gemm_variants.sites.empty());

  CompileTarget gemm = cpu_like();
  gemm.gemm_groups = true;
  gemm.kernel_call_variants = false;
  const std::optional<CompiledProgram> groups = run(gemm, choices);
  CHECK(groups->multi_kernel.sites.empty());
  CHECK_FALSE(groups->gemm_variants.sites.empty());
}

TEST_CASE("pipeline: the CUDA target plan gives each cuDNN convolution a scratch buffer of the chosen size") {
  CompileTarget target = cpu_like();
  CompileChoices choices;
  choices.scratch_bytes = 1 << 20;
  const std::optional<CompiledProgram> without = run(target, choices);
  CHECK(scratch_buffer(without->lowered, without->fusion.groups.at(0).position) == nullptr);
  CHECK(without->cuda.group_convs.empty());

  target.cuda_plan = true;
  // As --target cuda: the concat an index map into a buffer of its own, the matmul a GEMM group (the plan refuses a
  // concat written in place and a matmul no kernel runs).
  target.concat_in_place = false;
  target.gemm_groups = true;
  const std::optional<CompiledProgram> compiled = run(target, choices);
  REQUIRE(compiled->cuda.group_conv(0) != nullptr);
  CHECK(compiled->cuda.refusals.empty());
  const Buffer* scratch = scratch_buffer(compiled->lowered, compiled->fusion.groups.at(0).position);
  REQUIRE(scratch != nullptr);
  CHECK(scratch->size_bytes.constant() == std::optional<int64_t>(1 << 20));
}
