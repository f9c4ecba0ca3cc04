// What the shape rules of shape_rules.cpp and shape_rules_movement.cpp share: the rule's arguments by infer_meta
// param position (Args), the REQUIRE_* macros that fetch them or give up with the problem, and the text of dims
// and ints for messages. Internal to passes/; the other shape_rules_*.cpp files have their own argument helpers.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

inline std::string dims_text(const SymShape& s) { return to_string(s); }

inline std::string ints_text(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

/// Arguments of the rule by infer_meta param position.
struct Args {
  OpContext& c;
  const ValueInfo* tensor(size_t i) const { return c.tensor(c.param(i)); }
  std::vector<const ValueInfo*> tensors(size_t i) const { return c.tensors(c.param(i)); }
  const std::string& name(size_t i) const { return c.param(i); }
};

inline std::string runtime_value(const Args& a, size_t i) { return a.c.runtime_value(a.name(i)); }

#define REQUIRE_TENSOR(var, index)                                                                   \
  const ValueInfo* var = a.tensor(index);                                                            \
  if (!(var)) return fmt::format("input '{}' is required to infer the output shape", a.name(index)); \
  if ((var)->is_vector) return fmt::format("input '{}' must be a tensor, got a list", a.name(index));

#define REQUIRE_STATIC_INTS(var, index)                     \
  auto var##_opt = a.c.static_ints(a.name(index));          \
  if (!var##_opt) return runtime_value(a, index);           \
  const std::vector<int64_t>& var = *var##_opt;

// An int list that may hold expressions of the dims (the contents of a tensor computed from them).
#define REQUIRE_SYMBOLIC_INTS(var, index)          \
  auto var##_opt = a.c.ints(a.name(index));        \
  if (!var##_opt) return runtime_value(a, index);  \
  const std::vector<SymExpr>& var = *var##_opt;

#define REQUIRE_STATIC_INT(var, index)              \
  auto var##_opt = a.c.static_int(a.name(index));   \
  if (!var##_opt) return runtime_value(a, index);   \
  const int64_t var = *var##_opt;
}  // namespace kforge::passes::detail
