#include "codegen/group_text.h"

namespace kforge::codegen {

std::string group_stmt_text(const passes::GroupStmt& stmt, expr::EmitTarget target,
                            const std::function<std::string(std::string_view)>& rename) {
  if (!stmt.expr || (stmt.kind != passes::StmtKind::kElement && stmt.kind != passes::StmtKind::kRowValue)) return "";
  expr::EmitNames names;
  if (rename) names.input = rename;
  return expr::emit(*stmt.expr->root, target, names);
}

ReductionText group_reduction_text(const passes::GroupStmt& stmt, expr::EmitTarget target, std::string_view acc,
                                   std::string_view element, std::string_view other, std::string_view count) {
  ReductionText out;
  if (stmt.kind != passes::StmtKind::kReduce || !stmt.reduction) return out;
  const expr::TypedReduction& r = *stmt.reduction;
  expr::EmitNames names;
  names.accumulator = std::string(acc);
  names.count = std::string(count);
  out.init = expr::emit(*r.init.root, target, names);
  names.input = [&](std::string_view n) { return std::string(n == r.input ? element : n); };
  out.combine = expr::emit(*r.combine.root, target, names);
  names.input = [&](std::string_view n) { return std::string(n == r.input ? other : n); };
  out.merge = expr::emit(*r.merge.root, target, names);
  if (r.finalize) out.finalize = expr::emit(*r.finalize->root, target, names);
  return out;
}

}  // namespace kforge::codegen
