// The text of a fused group's statements in C++ (the CPU fused loops, codegen/fused_cpu.h) or CUDA
// (codegen/cuda_kernels.h): the fusion plan (passes/fusion.h) describes each statement as a typed expression,
// and the backends spell it here, through the expression language's emitter (scalar_expr/expr_emit.h), so that
// passes/ writes no C++.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "scalar_expr/expr_emit.h"
#include "passes/fusion.h"

namespace kforge::codegen {

/// The right-hand side of a kElement / kRowValue statement (its expression with names as in the group;
/// `rename` maps a local or input name to other text when set), or "" for other kinds.
std::string group_stmt_text(const passes::GroupStmt& stmt, expr::EmitTarget target,
                            const std::function<std::string(std::string_view)>& rename = {});

/// Text of the reduction parts of a kReduce statement: init, combine (acc with `element`), merge (acc with
/// `other`), finalize (acc, n) — "" when absent.
struct ReductionText {
  std::string init, combine, merge, finalize;
};
ReductionText group_reduction_text(const passes::GroupStmt& stmt, expr::EmitTarget target, std::string_view acc,
                                   std::string_view element, std::string_view other, std::string_view count);

}  // namespace kforge::codegen
