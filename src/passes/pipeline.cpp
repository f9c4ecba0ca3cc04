#include "passes/pipeline.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "passes/gemm_siblings.h"
#include "passes/if_conversion.h"
#include "passes/isa_layouts.h"
#include "passes/memory_plan.h"
#include "passes/transforms.h"

namespace kforge::passes {

std::optional<LoweredProgram> compile_program(ir::Program& program, const OpSet& ops, DiagnosticEngine& diags,
                                              const PipelineOptions& options) {
  convert_ifs(program);       // both branches and a select: straight-line code
  canonicalize_ops(program);  // bool bitwise ops, swiglu with y: ops that fuse; depthwise_conv2d_transpose
  if (!verify_program(program, ops, diags, options.verify)) return std::nullopt;
  AnalysisOptions analysis_options = options.analysis;
  analysis_options.equal_broadcast_dims = analysis_options.equal_broadcast_dims || options.unify_broadcast_symbols;
  std::optional<Analysis> analysis = analyze_program(program, ops, diags, analysis_options);
  if (!analysis) return std::nullopt;
  // Until no broadcast of two symbols is left: unified dims can meet other symbols in later broadcasts. Each
  // round's aliases point at the owners of that round's symbols, so earlier aliases are resolved through them.
  for (size_t round = 0; options.unify_broadcast_symbols && round <= analysis->symbols.size(); ++round) {
    const std::map<InputDim, InputDim> found = broadcast_symbol_aliases(*analysis);
    if (found.empty()) break;
    for (auto& [dim, owner] : analysis_options.symbol_aliases) {
      if (auto moved = found.find(owner); moved != found.end()) owner = moved->second;
    }
    analysis_options.symbol_aliases.insert(found.begin(), found.end());
    analysis = analyze_program(program, ops, diags, analysis_options);
    if (!analysis) return std::nullopt;
  }
  bool changed = false;
  if (options.fold_constants) changed = fold_constants(program, ops, *analysis) > 0;
  if (options.eliminate_dead_code) changed = eliminate_dead_code(program, ops) > 0 || changed;
  if (changed) {
    analysis = analyze_program(program, ops, diags, analysis_options);
    if (!analysis) return std::nullopt;
  }
  apply_inferred_types(program, *analysis);
  if (options.layout != LayoutChoice::kNchw) {
    LayoutReport report = plan_layouts(program, ops, options.layout, options.layout_options);
    if (!report.empty()) {
      // The rewritten attributes and the inserted transposes are checked and normalised like the source's.
      if (!verify_program(program, ops, diags, options.verify)) return std::nullopt;
      analysis = analyze_program(program, ops, diags, analysis_options);
      if (!analysis) return std::nullopt;
      apply_inferred_types(program, *analysis);
    }
    if (options.layout_report != nullptr) *options.layout_report = std::move(report);
  }
  if (options.precision != ir::DataType::kFloat32 && ops.find("pd_op.cast") == nullptr) {
    diags.error(SourceLoc{}, fmt::format("--precision {} inserts pd_op.cast at the program's inputs and outputs, and "
                                         "the op set has no cast",
                                         ir::dtype_name(options.precision)));
    return std::nullopt;
  }
  PrecisionReport precision = plan_precision(program, options.precision, options.precision_float32_ops,
                                               options.precision_float32_interface);
  if (!precision.skipped.empty()) {
    const ir::Op& op = program.op(precision.skipped_at);
    diags.error(op.name_loc.valid() ? op.name_loc : op.loc,
                fmt::format("--precision {}: {}; the precision plan rewrites straight-line programs only",
                            ir::dtype_name(options.precision), precision.skipped));
    return std::nullopt;
  }
  if (!precision.empty()) {
    // The inserted casts and the new dtypes are checked, and every value's dtype inferred again.
    if (!verify_program(program, ops, diags, options.verify)) return std::nullopt;
    analysis = analyze_program(program, ops, diags, analysis_options);
    if (!analysis) return std::nullopt;
    apply_inferred_types(program, *analysis);
  }
  std::optional<LoweredProgram> lowered = lower_program(program, ops, *analysis, diags, options.lower);
  if (!lowered) return std::nullopt;
  for (ProgramParameter& p : lowered->parameters) {
    if (auto it = precision.stored.find(p.name); it != precision.stored.end()) p.stored_dtype = it->second;
  }
  if (options.precision_report != nullptr) *options.precision_report = std::move(precision);
  plan_memory(*lowered, options.alignment);
  return lowered;
}

namespace {

/// What the target and the choices make of the program passes' options.
PipelineOptions program_pass_options(const CompileTarget& target, const CompileChoices& choices) {
  PipelineOptions options;
  options.layout = choices.layout;
  options.layout_options.transposed_convolutions = target.layout_transposed_convolutions;
  options.unify_broadcast_symbols = target.unify_broadcast_symbols;
  options.lower.sizes_from_output_dims = target.sizes_from_output_dims;
  options.alignment = target.alignment;
  options.precision = choices.precision;
  options.precision_float32_interface = choices.float32_interface;
  if (target.float32_ops != nullptr) options.precision_float32_ops = target.float32_ops();
  return options;
}

}  // namespace

namespace {

/// The pipeline for one layout; `layout_report` gets what the layout plan did.
std::optional<CompiledProgram> run_one_layout(ir::Program& program, const OpSet& ops, const CompileTarget& target,
                                              const CompileChoices& choices, DiagnosticEngine& diags,
                                              LayoutReport& layout_report) {
  // verify -> analysis -> layout -> precision -> lower (and the memory plan of the lowered values).
  PipelineOptions options = program_pass_options(target, choices);
  options.layout_report = &layout_report;
  PrecisionReport precision_report;
  options.precision_report = &precision_report;
  std::optional<LoweredProgram> lowered = compile_program(program, ops, diags, options);
  if (!lowered) return std::nullopt;
  CompiledProgram out{std::move(*lowered), {}, {}, {}, {}, {}, {}, options.layout, nullptr};
  LoweredProgram& lp = out.lowered;
  if (choices.dump && options.layout != LayoutChoice::kNchw) out.dump += layout_report.dump(program);
  if (choices.dump && options.precision != ir::DataType::kFloat32) out.dump += precision_report.dump(program);

  // fusion
  FusionOptions fusion;
  fusion.enabled = choices.fuse;
  fusion.single_call_groups = target.single_call_groups;
  fusion.gemm_groups = target.gemm_groups;
  fusion.half_floats = target.half_floats;
  // conv (+ bias, batch norm, activation, residual) as one conv2d_fused call, when the op set has the library's.
  if (target.conv_groups) fusion.conv_fused = ops.library().find("conv2d_fused");
  fusion.absorb_transposes = target.absorb_transposes;
  fusion.attention_groups = target.attention_groups;
  fusion.keep_softmax_exps = target.backend == CompileBackend::kCpu;  // the CPU's fused loops (fused_cpu.cpp)
  out.fusion = plan_fusion(lp, fusion);

  // memory: sibling GEMMs (an attention layer's q, k, v projections) as one product, their outputs side by side
  // (issue 35); the groups' internal values leave the plan; a concat's inputs in their slices of its output (issue
  // 36). Strided slices take conv2d_fused calls, which --no-fuse does not make; --trace-hooks reads every value as
  // a dense tensor.
  if (target.pack_sibling_gemms && choices.fuse) pack_sibling_gemms(lp, out.fusion);
  apply_fusion_to_memory_plan(lp, out.fusion);
  std::vector<ConcatPlacement> placements;
  if (target.concat_in_place) {
    ConcatInPlaceOptions in_place;
    in_place.conv_fused = fusion.conv_fused;
    in_place.strided = choices.fuse && !choices.trace_hooks;
    placements = place_concat_inputs(lp, out.fusion, in_place);
  }
  // then a split's pieces as views of its input where they are contiguous slices of it (issue 36).
  std::vector<SplitView> split_views;
  if (target.split_views) split_views = make_split_views(lp, out.fusion.call_group);

  // multi-kernel: variants of kernel calls (fused calls are no kernel calls and get none), or of GEMM and row groups.
  const std::vector<int64_t> none;
  const std::vector<int64_t>& call_hints = target.kernel_call_variants ? choices.multi_kernel_hints : none;
  const std::vector<int64_t>& group_hints = target.kernel_call_variants ? none : choices.multi_kernel_hints;
  out.multi_kernel = plan_multi_kernels(lp, call_hints, out.fusion.call_group);
  out.gemm_variants = plan_cuda_gemm_variants(out.fusion, group_hints);
  out.row_variants = plan_cuda_row_variants(lp, out.fusion, group_hints);

  // target plan: what runs each convolution, pool, batch norm and GEMM (cuda_plan.h), with a scratch buffer of the
  // plan per cuDNN convolution (its workspace), live while it runs: shared with the other calls' scratches (and,
  // where the shapes are static, with the values dead there), and captured by a CUDA graph with the rest of the
  // workspace. What cannot run is an error at its op.
  if (target.cuda_plan) {
    out.cuda = plan_cuda(lp, out.fusion, choices.scratch_bytes, choices.cuda_graph);
    for (const CudaRefusal& refusal : out.cuda.refusals) diags.error(refusal.loc, refusal.message);
    if (!out.cuda.refusals.empty()) return std::nullopt;
  }

  if (choices.dump) out.dump += lp.dump() + dump_fusion(lp, out.fusion) + dump_placements(placements) +
                           dump_split_views(split_views);
  return out;
}

const char* layout_name(LayoutChoice layout) {
  switch (layout) {
    case LayoutChoice::kNchw: return "NCHW";
    case LayoutChoice::kNhwc: return "NHWC";
    case LayoutChoice::kNchw8c: return "NCHW8c";
  }
  return "";
}

}  // namespace

std::optional<CompiledProgram> run_pipeline(ir::Program& program, const OpSet& ops, const CompileTarget& target,
                                            const CompileChoices& choices, DiagnosticEngine& diags,
                                            DiagnosticEngine* second_plan_diags) {
  // --layout auto where the target has a layout per ISA (isa_layouts.h): the program is planned in both, on a copy
  // for the second. Not with --trace-hooks or --multi-kernel-hints (one plan to trace; the dispatchers are the
  // source's), nor where the first plan converted nothing.
  const bool second = second_plan_diags != nullptr && choices.layout_by_isa &&
                      target.isa_layout != LayoutChoice::kNchw && target.isa_layout != choices.layout &&
                      !choices.trace_hooks && choices.multi_kernel_hints.empty();
  std::optional<ir::Program> copy;
  if (second) copy = program;
  LayoutReport first_report;
  std::optional<CompiledProgram> out = run_one_layout(program, ops, target, choices, diags, first_report);
  if (!out || !second || first_report.empty()) return out;

  // The second plan reports to second_plan_diags: the first plan reported the program's problems; a second that
  // fails (or differs in its interface, or converts too little) leaves the first alone.
  CompileChoices blocked = choices;
  blocked.layout = target.isa_layout;
  DiagnosticEngine& quiet = *second_plan_diags;
  const size_t errors_before = quiet.error_count();
  LayoutReport blocked_report;
  std::optional<CompiledProgram> other = run_one_layout(*copy, ops, target, blocked, quiet, blocked_report);
  // One plan where the second does not compile, converts too little or differs in its interface: the output and
  // the dump are exactly those of the first layout alone.
  if (!other || quiet.error_count() != errors_before || !blocked_plan_pays(first_report, blocked_report) ||
      !interface_difference(out->lowered, other->lowered).empty()) {
    return out;
  }
  if (choices.dump) {
    const std::string second_name = layout_name(target.isa_layout);
    out->dump = "layout auto: " + std::string(layout_name(choices.layout)) + " and " + second_name + " (" +
                std::to_string(converted_convolutions(blocked_report)) + " of " +
                std::to_string(converted_convolutions(first_report)) +
                " convolutions), picked by the machine's ISA\n" + out->dump + "layout auto: the " + second_name +
                " plan\n" + other->dump;
  }
  out->isa_plan = std::make_unique<CompiledProgram>(std::move(*other));
  return out;
}

}  // namespace kforge::passes
