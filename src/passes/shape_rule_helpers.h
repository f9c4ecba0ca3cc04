// What several files of shape rules (shape_rules*.cpp) share: numpy broadcasting over symbolic dims, axis
// normalisation (passes/axis.h) and the dtype-conflict message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "passes/axis.h"
#include "program/dtype.h"
#include "passes/sym_expr.h"

namespace kforge::passes::detail {

/// Right-aligned numpy broadcasting over symbolic dims (as kernels/kernel_util.h broadcast_dims): a dim of 1
/// takes the other; a symbolic dim against a static one is the static one (it must equal it or be 1); two
/// different symbolic dims give their max (one of them is 1 or they are equal). nullopt for two static dims that
/// differ and are not 1.
/// With `taken_equal` (AnalysisOptions::equal_broadcast_dims), two symbolic dims that are not both plain symbols
/// give x's dim instead of their max, and the pair is appended there: the caller records that they must be equal.
std::optional<SymShape> broadcast_shapes(const SymShape& x, const SymShape& y,
                                         std::vector<std::pair<SymExpr, SymExpr>>* taken_equal = nullptr);

/// Paddle's reduce shape rule over symbolic dims: `axis` empty reduces every dim; reduced dims become 1 with keepdim
/// and disappear without it. nullopt (and the reason in *why) for an axis out of range.
std::optional<SymShape> reduce_dims(const SymShape& x, const std::vector<int64_t>& axis, bool keepdim, std::string* why);

/// "axis AXIS is out of range for rank RANK".
std::string bad_axis(int64_t axis, int64_t rank);

/// "dtype conflict: WHAT_A is A, WHAT_B is B".
std::string dtype_conflict(const std::string& what_a, ir::DataType a, const std::string& what_b, ir::DataType b);

}  // namespace kforge::passes::detail
