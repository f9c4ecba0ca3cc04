// Axis normalisation, the one definition that shape rules, fusion and the CUDA index maps share.
#pragma once

#include <cstdint>
#include <optional>

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

}  // namespace kforge::passes
