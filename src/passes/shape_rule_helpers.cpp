#include "passes/shape_rule_helpers.h"

#include <algorithm>

#include <fmt/format.h>

namespace kforge::passes::detail {

std::optional<SymShape> broadcast_shapes(const SymShape& x, const SymShape& y,
                                         std::vector<std::pair<SymExpr, SymExpr>>* taken_equal) {
  const size_t rank = std::max(x.size(), y.size());
  SymShape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const SymExpr a = i + x.size() >= rank ? x[i + x.size() - rank] : SymExpr(1);
    const SymExpr b = i + y.size() >= rank ? y[i + y.size() - rank] : SymExpr(1);
    const auto ca = a.constant(), cb = b.constant();
    if (a == b || (cb && *cb == 1)) {
      out[i] = a;
    } else if (ca && *ca == 1) {
      out[i] = b;
    } else if (ca && cb) {
      return std::nullopt;
    } else if (ca || cb) {
      out[i] = ca ? a : b;
    } else if (taken_equal != nullptr && !(a.is_symbol() && b.is_symbol())) {
      // Two plain symbols are left to broadcast_symbol_aliases (analysis.h), which makes them one symbol.
      out[i] = a;
      taken_equal->emplace_back(a, b);
    } else {
      out[i] = SymExpr::max(a, b);
    }
  }
  return out;
}

std::string bad_axis(int64_t axis, int64_t rank) { return fmt::format("axis {} is out of range for rank {}", axis, rank); }

std::string dtype_conflict(const std::string& what_a, ir::DataType a, const std::string& what_b, ir::DataType b) {
  return fmt::format("dtype conflict: {} is {}, {} is {}", what_a, ir::dtype_name(a), what_b, ir::dtype_name(b));
}

std::optional<SymShape> reduce_dims(const SymShape& x, const std::vector<int64_t>& axis, bool keepdim, std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> reduced(x.size(), axis.empty());
  for (int64_t ax : axis) {
    if (rank == 0 && (ax == 0 || ax == -1)) continue;
    int64_t d = 0;
    if (!normalize_axis(ax, rank, &d)) {
      *why = fmt::format("axis {} is out of range for rank {}", ax, rank);
      return std::nullopt;
    }
    reduced[d] = true;
  }
  SymShape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(x[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

}  // namespace kforge::passes::detail
