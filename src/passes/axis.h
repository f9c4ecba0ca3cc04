// Axis normalisation, the one definition that shape rules, fusion and the CUDA index maps share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "passes/sym_expr.h"

namespace kforge::passes {

/// `axis` in [-rank, rank) made non-negative; nullopt when out of range (a 0-D tensor has no axis).
constexpr std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return std::nullopt;
  return a;
}

/// The same into *out (left unchanged when out of range); false when out of range.
template <typename Index>
bool normalize_axis(int64_t axis, int64_t rank, Index* out) {
  const std::optional<int64_t> a = normalize_axis(axis, rank);
  if (a) *out = static_cast<Index>(*a);
  return a.has_value();
}

/// Where a slice's start or end `v` lands on an axis of size n, as Paddle's slice takes it (kernels/meta_manip.cc):
/// negative counts from the end, the result is clamped to [0, n]. A constant over a static n is exact; over a
/// dynamic n a constant is taken as within the axis (a huge end, Paddle's "to the end", is n). An expression of the
/// dims cannot be compared with 0 in general: one that is provably <= 0 (`-(L // 2)`) counts from the end, any other
/// is taken as >= 0 and clamped to n (`min(L - 1, L)` simplifies to `L - 1`). Where a run-time value breaks these
/// assumptions, the kernels' own shape check reports it. The one rule that shape inference and the CUDA index
/// kernels share.
inline SymExpr slice_bound(const SymExpr& n, const SymExpr& v, bool is_end) {
  const std::optional<int64_t> c = v.constant(), cn = n.constant();
  if (!c) return (-v).provably_non_negative() ? n + v : SymExpr::min(v, n);
  if (is_end && *c >= (int64_t{1} << 30)) return n;
  if (cn) return std::clamp<int64_t>(*c < 0 ? *c + *cn : *c, 0, *cn);
  return *c < 0 ? n + *c : SymExpr(*c);
}

}  // namespace kforge::passes
