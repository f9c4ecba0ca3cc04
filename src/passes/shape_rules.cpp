// Shape rules of the infer_meta functions that kernels/ops.yaml names, at generation time and over
// symbolic dims. Each mirrors the reference implementation in kernels/meta_*.cc (Paddle's rules), so
// that the dims kforge allocates are exactly the dims the kernels check against.
// The rules of the ops that only move data (reshape, concat, slice, ...) are in shape_rules_movement.cpp.
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_args.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

/// Runs a rule; the result is "" or the problem.
using Rule = std::function<std::string(OpContext&)>;

std::string unchanged(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string elementwise(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_TENSOR(y, 1);
  if (x->dtype != y->dtype) return dtype_conflict(a.name(0), x->dtype, a.name(1), y->dtype);
  auto dims = c.broadcast(x->dims, y->dims);
  if (!dims) return fmt::format("shapes {} and {} cannot be broadcast", dims_text(x->dims), dims_text(y->dims));
  c.set_result(0, x->dtype, *dims);
  return "";
}

std::string cast(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  auto dtype = c.dtype_value(a.name(1));
  if (!dtype || *dtype == DataType::kUndefined) return "cast to an undefined dtype";
  c.set_result(0, *dtype, x->dims);
  return "";
}

std::string where(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(cond, 0);
  REQUIRE_TENSOR(x, 1);
  REQUIRE_TENSOR(y, 2);
  if (cond->dims.size() != x->dims.size() || x->dims.size() != y->dims.size()) {
    return fmt::format("condition {}, x {} and y {} must have the same dims", dims_text(cond->dims), dims_text(x->dims),
                       dims_text(y->dims));
  }
  if (cond->dtype != DataType::kBool) return fmt::format("condition must be bool, got {}", ir::dtype_name(cond->dtype));
  if (x->dtype != y->dtype) return dtype_conflict(a.name(1), x->dtype, a.name(2), y->dtype);
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string create(OpContext& c) {
  Args a{c};
  auto shape = c.ints(a.name(0));
  if (!shape) return runtime_value(a, 0);
  for (const SymExpr& d : *shape) {
    if (auto v = d.constant(); v && *v < 0) return fmt::format("shape {} has a negative dim", dims_text(*shape));
  }
  c.set_result(0, c.dtype_value(a.name(1)).value_or(DataType::kFloat32), *shape);
  return "";
}

std::string create_like(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  DataType d = c.dtype_value(a.name(1)).value_or(DataType::kUndefined);
  c.set_result(0, d == DataType::kUndefined ? x->dtype : d, x->dims);
  return "";
}

std::string create_vec_shape(OpContext& c) {
  Args a{c};
  auto value = c.ints(a.name(0));
  if (!value) return runtime_value(a, 0);
  c.set_result(0, c.dtype_value(a.name(1)).value_or(DataType::kFloat32), {SymExpr(static_cast<int64_t>(value->size()))});
  return "";
}

std::string assign_value(OpContext& c) {
  Args a{c};
  REQUIRE_STATIC_INTS(shape, 0);
  for (int64_t d : shape) {
    if (d < 0) return fmt::format("shape {} has a negative dim", ints_text(shape));
  }
  SymShape dims(shape.begin(), shape.end());
  c.set_result(0, c.dtype_value(a.name(1)).value_or(DataType::kFloat32), dims);
  return "";
}

std::string shape_of(OpContext& c, DataType dtype) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  c.set_result(0, dtype, {SymExpr(static_cast<int64_t>(x->dims.size()))});
  return "";
}

std::string numel_rule(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  c.set_result(0, DataType::kInt64, {});
  return "";
}

std::string dropout(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  c.set_result(0, x->dtype, x->dims);
  if (c.result_count() > 1) c.set_result(1, DataType::kUInt8, x->dims);
  return "";
}

std::string matmul(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_TENSOR(y, 1);
  const bool tx = c.bool_value(a.name(2)).value_or(false), ty = c.bool_value(a.name(3)).value_or(false);
  if (x->dims.empty() || y->dims.empty()) {
    return fmt::format("x and y must have rank >= 1, got {} and {}", dims_text(x->dims), dims_text(y->dims));
  }
  if (x->dtype != y->dtype) return dtype_conflict(a.name(0), x->dtype, a.name(1), y->dtype);
  const bool x_vec = x->dims.size() == 1, y_vec = y->dims.size() == 1;
  const size_t xr = x->dims.size(), yr = y->dims.size();
  SymExpr xm = x_vec ? SymExpr(1) : x->dims[xr - 2], xk = x->dims[xr - 1];
  if (!x_vec && tx) std::swap(xm, xk);
  SymExpr yk = y_vec ? y->dims[0] : y->dims[yr - 2], yn = y_vec ? SymExpr(1) : y->dims[yr - 1];
  if (!y_vec && ty) std::swap(yk, yn);
  if (xk.is_constant() && yk.is_constant() && xk != yk) {
    return fmt::format("x {}{} and y {}{} have inner dims {} and {}", dims_text(x->dims), tx ? " (transposed)" : "",
                       dims_text(y->dims), ty ? " (transposed)" : "", xk.to_string(), yk.to_string());
  }
  // Paddle requires the contraction dims equal: two symbolic ones are taken equal where the target checks that at
  // run time (attention's p v over a cached length).
  if (xk != yk && !xk.is_constant() && !yk.is_constant()) static_cast<void>(c.take_equal(xk, yk));
  const SymShape xb(x->dims.begin(), x->dims.end() - (x_vec ? 1 : 2));
  const SymShape yb(y->dims.begin(), y->dims.end() - (y_vec ? 1 : 2));
  auto dims = c.broadcast(x_vec ? SymShape{} : xb, y_vec ? SymShape{} : yb);
  if (!dims) return fmt::format("batch dims of x {} and y {} cannot be broadcast", dims_text(x->dims), dims_text(y->dims));
  if (!x_vec) dims->push_back(xm);
  if (!y_vec) dims->push_back(yn);
  c.set_result(0, x->dtype, *dims);
  return "";
}

std::string embedding(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_TENSOR(w, 1);
  if (w->dims.size() != 2) return fmt::format("weight must be 2-D, got {}", dims_text(w->dims));
  if (x->dtype != DataType::kInt32 && x->dtype != DataType::kInt64) {
    return fmt::format("ids x must be int32 or int64, got {}", ir::dtype_name(x->dtype));
  }
  SymShape dims = x->dims;
  dims.push_back(w->dims[1]);
  c.set_result(0, w->dtype, dims);
  return "";
}

std::string softmax(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INT(axis, 1);
  const int64_t rank = x->dims.empty() ? 1 : static_cast<int64_t>(x->dims.size());
  int64_t ax = 0;
  if (!normalize_axis(axis, rank, &ax)) return bad_axis(axis, static_cast<int64_t>(x->dims.size()));
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string layer_norm(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INT(begin, 4);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t ax = 0;
  if (!normalize_axis(begin, rank, &ax)) {
    return fmt::format("begin_norm_axis {} is out of range for x {}", begin, dims_text(x->dims));
  }
  SymExpr right = 1;
  for (int64_t i = ax; i < rank; ++i) right *= x->dims[i];
  for (size_t i : {size_t{1}, size_t{2}}) {
    const ValueInfo* t = a.tensor(i);
    if (!t || t->is_vector) continue;
    const SymExpr n = sym_numel(t->dims);
    if (n.is_constant() && right.is_constant() && n != right) {
      return fmt::format("{} {} must have {} elements (the normalised dims of x {})", a.name(i), dims_text(t->dims),
                         right.to_string(), dims_text(x->dims));
    }
  }
  c.set_result(0, x->dtype, x->dims);
  const DataType stat = x->dtype == DataType::kFloat16 || x->dtype == DataType::kBFloat16 ? DataType::kFloat32 : x->dtype;
  // mean and variance keep the leading dims (Paddle 3.x): x [N, S, D] normalised over D gives [N, S].
  const SymShape lead(x->dims.begin(), x->dims.begin() + ax);
  for (size_t r = 1; r < c.result_count(); ++r) c.set_result(r, stat, lead);
  return "";
}

std::string sum(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(axis, 1);
  std::string why;
  auto dims = reduce_dims(x->dims, axis, c.bool_value(a.name(3)).value_or(false), &why);
  if (!dims) return why;
  DataType d = c.dtype_value(a.name(2)).value_or(DataType::kUndefined);
  if (d == DataType::kUndefined) d = x->dtype == DataType::kBool || x->dtype == DataType::kInt32 ? DataType::kInt64 : x->dtype;
  c.set_result(0, d, *dims);
  return "";
}

std::string reduce(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(axis, 1);
  std::string why;
  auto dims = reduce_dims(x->dims, axis, c.bool_value(a.name(2)).value_or(false), &why);
  if (!dims) return why;
  c.set_result(0, x->dtype, *dims);
  return "";
}

}  // namespace

std::string conv_rule(OpContext& c, bool depthwise);
std::string conv_transpose_rule(OpContext& c);
std::string batch_norm_rule(OpContext& c);
std::string pool2d_rule(OpContext& c);
std::string interpolate_rule(OpContext& c);

namespace {

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> kRules = {
      {"UnchangedInferMeta", unchanged},
      {"ElementwiseInferMeta", elementwise},
      {"CastInferMeta", cast},
      {"WhereInferMeta", where},
      {"CreateInferMeta", create},
      {"CreateLikeInferMeta", create_like},
      {"CreateVecShapeInferMeta", create_vec_shape},
      {"AssignValueInferMeta", assign_value},
      {"ShapeInferMeta", [](OpContext& c) { return shape_of(c, DataType::kInt32); }},
      {"Shape64InferMeta", [](OpContext& c) { return shape_of(c, DataType::kInt64); }},
      {"NumelInferMeta", numel_rule},
      {"DropoutInferMeta", dropout},
      {"MatmulInferMeta", matmul},
      {"EmbeddingInferMeta", embedding},
      {"SoftmaxInferMeta", softmax},
      {"LayerNormInferMeta", layer_norm},
      {"SumInferMeta", sum},
      {"ReduceIntArrayAxisInferMeta", reduce},
      {"ConvInferMeta", [](OpContext& c) { return conv_rule(c, false); }},
      {"DepthwiseConvInferMeta", [](OpContext& c) { return conv_rule(c, true); }},
      {"Conv2dTransposeInferMeta", conv_transpose_rule},
      {"BatchNormInferMeta", batch_norm_rule},
      {"Pool2DInferMeta", pool2d_rule},
      {"InterpolateInferMeta", interpolate_rule},
  };
  return kRules;
}

}  // namespace

// the data-movement ops (reshape, concat, slice, ...): shape_rules_movement.cpp
const std::map<std::string, std::string (*)(OpContext&)>& movement_shape_rules();

// --- issue 11's ops: the math/compare rules live in shape_rules_math.cpp, the data movement / nn rules in
// shape_rules_index.cpp ---
bool has_math_shape_rule(const std::string& func);
std::string run_math_shape_rule(const std::string& func, OpContext& ctx);
const std::map<std::string, std::string (*)(OpContext&)>& index_nn_shape_rules();
// issue 34's GraphNet ops: shape_rules_graphnet.cpp
const std::map<std::string, std::string (*)(OpContext&)>& graphnet_shape_rules();
// and the detection ops (deformable_conv, roi_align, ...): shape_rules_detection.cpp
const std::map<std::string, std::string (*)(OpContext&)>& detection_shape_rules();

bool has_shape_rule(const std::string& func) {
  return rules().contains(func) || movement_shape_rules().contains(func) || index_nn_shape_rules().contains(func) ||
         graphnet_shape_rules().contains(func) || detection_shape_rules().contains(func) || has_math_shape_rule(func);
}

std::string run_shape_rule(const std::string& func, OpContext& ctx) {
  auto it = rules().find(func);
  if (it != rules().end()) return it->second(ctx);
  auto movement = movement_shape_rules().find(func);
  if (movement != movement_shape_rules().end()) return movement->second(ctx);
  auto more = index_nn_shape_rules().find(func);
  if (more != index_nn_shape_rules().end()) return more->second(ctx);
  auto graphnet = graphnet_shape_rules().find(func);
  if (graphnet != graphnet_shape_rules().end()) return graphnet->second(ctx);
  auto detection = detection_shape_rules().find(func);
  if (detection != detection_shape_rules().end()) return detection->second(ctx);
  return has_math_shape_rule(func) ? run_math_shape_rule(func, ctx) : "unknown-rule";
}

}  // namespace kforge::passes::detail
