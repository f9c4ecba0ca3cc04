#include "codegen/program_layouts.h"

#include <algorithm>
#include <set>
#include <utility>

namespace kforge::codegen {

namespace {

using tmpl::List;
using tmpl::Value;

/// A plan's class declaration and definitions, rendered from its own context.
bool render_plan(tmpl::Environment& env, const Value& ctx, std::string& declaration, std::string& definitions) {
  const tmpl::Template* decl = env.load("program/program_class.h.j2");
  const tmpl::Template* defs = env.load("program/program_plan.cc.j2");
  return decl != nullptr && defs != nullptr && env.render(*decl, ctx, declaration) && env.render(*defs, ctx, definitions);
}

/// The entries of `a` and then those of `b` whose `name` `a` lacks, sorted by name when `sorted`.
Value merge_by_name(const Value& a, const Value& b, bool sorted) {
  List merged = a.as_list();
  std::set<std::string> names;
  for (const Value& v : merged) names.insert(v.find("name")->as_string());
  for (const Value& v : b.as_list()) {
    if (names.insert(v.find("name")->as_string()).second) merged.push_back(v);
  }
  if (sorted) {
    std::stable_sort(merged.begin(), merged.end(), [](const Value& x, const Value& y) {
      return x.find("name")->as_string() < y.find("name")->as_string();
    });
  }
  return Value(std::move(merged));
}

int64_t constant_or_zero(const passes::SymExpr& e) { return e.constant().value_or(0); }

}  // namespace

std::optional<Value> build_layout_plans_context(const Value& first_ctx, const LayoutPlanSource& first,
                                                const LayoutPlanSource& second, const SourceManager& sources,
                                                const ProgramCodegenOptions& options, tmpl::Environment& env) {
  ProgramCodegenOptions second_options = options;
  second_options.fusion = second.fusion != nullptr && !second.fusion->empty() ? second.fusion : nullptr;
  second_options.multi_kernel = nullptr;  // the pipeline makes two plans only without --multi-kernel-hints
  std::optional<Value> second_ctx = build_program_context(*second.program, sources, second_options, env.diags());
  if (!second_ctx) return std::nullopt;
  second_ctx->set("runtime_version", *first_ctx.find("runtime_version"));

  Value ctx = first_ctx;
  List plans;
  for (const auto& [plan, plan_ctx] : {std::pair<const LayoutPlanSource*, const Value*>{&first, &first_ctx},
                                       std::pair<const LayoutPlanSource*, const Value*>{&second, &*second_ctx}}) {
    std::string declaration, definitions;
    if (!render_plan(env, *plan_ctx, declaration, definitions)) return std::nullopt;
    Value p = Value::map();
    p.set("layout", plan->layout);
    p.set("format", plan->layout == "nchw8c" ? "NCHW8c" : plan->layout == "nhwc" ? "NHWC" : plan->layout);
    p.set("namespace", plan->layout + "_plan");
    p.set("member", plan->layout + "_");
    p.set("declaration", std::move(declaration));
    p.set("definitions", std::move(definitions));
    plans.push_back(std::move(p));
  }
  ctx.set("layout_plans", Value(std::move(plans)));

  // The prologue declares what either plan calls and includes what either needs.
  ctx.set("kernel_decls", merge_by_name(*first_ctx.find("kernel_decls"), *second_ctx->find("kernel_decls"), true));
  ctx.set("meta_decls", merge_by_name(*first_ctx.find("meta_decls"), *second_ctx->find("meta_decls"), false));
  ctx.set("runtime_math", first_ctx.find("runtime_math")->as_bool() || second_ctx->find("runtime_math")->as_bool());
  if (first_ctx.find("fused_groups")->as_list().empty()) ctx.set("fused_groups", *second_ctx->find("fused_groups"));

  // The header's counts: the larger plan's.
  ctx.set("num_calls", static_cast<int64_t>(std::max(first.program->calls.size(), second.program->calls.size())));
  if (first_ctx.find("is_static")->as_bool()) {
    const int64_t bytes = std::max(constant_or_zero(first.program->plan.workspace_bytes),
                                   constant_or_zero(second.program->plan.workspace_bytes));
    const int64_t unshared = std::max(constant_or_zero(first.program->plan.unshared_bytes),
                                      constant_or_zero(second.program->plan.unshared_bytes));
    ctx.set("workspace_bytes", std::to_string(bytes));
    ctx.set("unshared_bytes", std::to_string(unshared));
  }
  // What the header's run() passes on: its parameters' names.
  List run_args;
  for (const Value& i : first_ctx.find("inputs")->as_list()) run_args.push_back(*i.find("ident"));
  for (const Value& o : first_ctx.find("outputs")->as_list()) run_args.push_back(*o.find("ident"));
  ctx.set("run_args", Value(std::move(run_args)));
  return ctx;
}

}  // namespace kforge::codegen
