// The fused groups' part of the CUDA target plan (cuda_plan.h): which elementwise and row groups the generated
// kernels (codegen/cuda_kernels.h, templates/program/cuda/group_kernels.j2) cannot spell, each refused at its
// first call, so that codegen writes every group it is given.
#include <fmt/format.h>

#include <set>

#include "passes/cuda_plan.h"
#include "passes/variants.h"
#include "scalar_expr/scalar_type.h"

namespace kforge::passes {

namespace {

// A dtype the fused kernels store or compute in: CUDA's 16-bit floats, or a type that is its own compute type
// with a C++ spelling (codegen::cuda_scalar_type).
bool has_cuda_type(expr::ScalarType t) {
  if (t == expr::ScalarType::kFloat16 || t == expr::ScalarType::kBFloat16) return true;
  return t == expr::compute_type(t) && expr::cpp_scalar_name(t).has_value();
}

// Why the group's kernel cannot be written, each reason once, in the order the checks find them.
std::vector<std::string> group_reasons(const FusedGroup& g) {
  std::vector<std::string> why;
  auto add = [&](std::string reason) {
    if (std::find(why.begin(), why.end(), reason) == why.end()) why.push_back(std::move(reason));
  };
  auto type = [&](expr::ScalarType t) {
    if (!has_cuda_type(t)) add(fmt::format("dtype {} has no CUDA fused kernel yet", expr::cpp_type_name(t)));
  };
  const bool rows = g.kind == GroupKind::kRow;
  for (const GroupInput& in : g.inputs) {
    type(in.storage);
    type(in.type);
  }
  for (const GroupStmt& s : g.stmts) {
    type(s.type);
    if (s.reduction) type(s.reduction->accumulator);
    if (!rows && s.kind != StmtKind::kElement) add("an elementwise group holds a row statement");
    if (s.kind != StmtKind::kRowPattern) continue;
    if (s.pattern != RowPatternKind::kSoftmax && s.pattern != RowPatternKind::kLayerNorm) {
      add("this row pattern (rms_norm) has no CUDA kernel yet");
    } else if (s.type != expr::ScalarType::kFloat32 && s.type != expr::ScalarType::kFloat64) {
      add("a row pattern computes in float32 or float64 only");
    }
  }
  for (const GroupStore& st : g.stores) {
    type(st.storage);
    if (!st.strides.empty() && g.kind != GroupKind::kElementwise) {
      add("a row group stores no value at strided offsets (the fusion plan gives strided stores to elementwise "
          "groups only)");
    }
  }
  return why;
}

}  // namespace

void refuse_cuda_fused_groups(const LoweredProgram& p, const FusionPlan& fusion, std::vector<CudaRefusal>& refusals) {
  for (const FusedGroup& g : fusion.groups) {
    if (g.kind != GroupKind::kElementwise && g.kind != GroupKind::kRow) continue;
    const SourceLoc loc = g.calls.empty() ? SourceLoc{} : p.calls[g.calls.front()].loc;
    for (const std::string& why : group_reasons(g)) {
      refusals.push_back({loc, fmt::format("--target cuda: fused group {} ({}): {}", g.index, g.label, why)});
    }
  }
}

}  // namespace kforge::passes
