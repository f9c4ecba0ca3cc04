// Comparison of two tensors for tools/check-program and the end-to-end tests: shapes, dtypes and the
// largest absolute and relative element difference.
#pragma once

#include <string>

#include "kforge_runtime.h"

namespace kforge::interp {

struct Difference {
  bool comparable = true;   // same dtype and dims
  std::string why;          // when not comparable
  double max_abs = 0;
  double max_rel = 0;       // |a - b| / max(|b|, tiny)
  int64_t mismatches = 0;   // elements outside the tolerance (NaN matches NaN)
  bool agree() const { return comparable && mismatches == 0; }
};

/// Compares `actual` with `expected`: an element agrees when |a - e| <= atol + rtol * |e| (exactly equal
/// with the default zero tolerances; NaN agrees with NaN).
Difference compare_tensors(const kforge::Tensor& actual, const kforge::Tensor& expected, double atol = 0,
                           double rtol = 0);

}  // namespace kforge::interp
