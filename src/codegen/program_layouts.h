// The CPU class of a program with two layout plans (--layout auto where passes::blocked_plan_pays: the program
// planned in NHWC and in NCHW8c, passes::CompiledProgram::isa_plan; docs/compile.md, "`--layout auto` on the CPU"):
// each plan's class in a namespace of its own inside NAME.cc, and the header's class, with the interface of one
// plan, making one of them when it is constructed.
#pragma once

#include <optional>
#include <string>

#include "codegen/program_context.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "template/environment.h"

namespace kforge::codegen {

/// One of the two plans: its lowered program and fusion plan, and its layout as --layout spells it.
struct LayoutPlanSource {
  const passes::LoweredProgram* program = nullptr;
  const passes::FusionPlan* fusion = nullptr;  // null or empty: no groups
  std::string layout;                          // "nhwc", "nchw8c"
};

/// The context of program/program.h.j2 and program/program_layouts.cc.j2 for two plans: `first`'s context
/// (`first_ctx`, built by the caller) with the keys of two plans (layout_plans, each plan's class declaration and
/// definitions rendered from its own context; both plans' kernels declared; the larger plan's counts). Returns
/// nullopt after reporting errors.
std::optional<tmpl::Value> build_layout_plans_context(const tmpl::Value& first_ctx, const LayoutPlanSource& first,
                                                      const LayoutPlanSource& second, const SourceManager& sources,
                                                      const ProgramCodegenOptions& options, tmpl::Environment& env);

}  // namespace kforge::codegen
