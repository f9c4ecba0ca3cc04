// Shape rules of the math, comparison, creation and scan ops' infer_meta functions (CompareInferMeta,
// ArangeInferMeta, TopKInferMeta, ...), at generation time and over symbolic dims. Each mirrors
// kernels/meta_math.cc, so that the dims kforge allocates are the dims the kernels check against.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

/// Runs a rule; the result is "" or the problem.
using Rule = std::function<std::string(OpContext&)>;

std::string runtime_value(OpContext& c, size_t i) { return c.runtime_value(c.param(i)); }

#define MATH_TENSOR(var, index)                                                                           \
  const ValueInfo* var = c.tensor(c.param(index));                                                        \
  if (!(var)) return fmt::format("input '{}' is required to infer the output shape", c.param(index));     \
  if ((var)->is_vector) return fmt::format("input '{}' must be a tensor, got a list", c.param(index));

#define MATH_STATIC_INT(var, index)                    \
  auto var##_opt = c.static_int(c.param(index));       \
  if (!var##_opt) return runtime_value(c, index);      \
  const int64_t var = *var##_opt;

/// normalize_axis, where a 0-D tensor also accepts 0 and -1 (as the reductions of kernels/meta_math.cc).
bool normalize_axis_0d(int64_t axis, int64_t rank, int64_t* out) {
  if (rank == 0) {
    *out = 0;
    return axis == 0 || axis == -1;
  }
  return normalize_axis(axis, rank, out);
}

std::string bad_axis(int64_t axis, const SymShape& dims) {
  return fmt::format("axis {} is out of range for {}", axis, to_string(dims));
}

/// Binary ops of one operand dtype with broadcasting, results of `dtype` (the input's when kUndefined).
std::string broadcast_rule(OpContext& c, DataType dtype) {
  MATH_TENSOR(x, 0);
  MATH_TENSOR(y, 1);
  if (x->dtype != y->dtype) return dtype_conflict(c.param(0), x->dtype, c.param(1), y->dtype);
  auto dims = c.broadcast(x->dims, y->dims);
  if (!dims) return fmt::format("shapes {} and {} cannot be broadcast", to_string(x->dims), to_string(y->dims));
  c.set_result(0, dtype == DataType::kUndefined ? x->dtype : dtype, *dims);
  return "";
}

std::string real_and_imag(OpContext& c) {
  MATH_TENSOR(x, 0);
  const DataType d = x->dtype == DataType::kComplex64    ? DataType::kFloat32
                     : x->dtype == DataType::kComplex128 ? DataType::kFloat64
                                                         : x->dtype;
  c.set_result(0, d, x->dims);
  return "";
}

/// fft_r2c: x's dims, the last of axes n / 2 + 1 when onesided (floor_div over a symbolic n); complex64 of float32,
/// complex128 of float64.
std::string fft_r2c(OpContext& c) {
  MATH_TENSOR(x, 0);
  if (x->dtype != DataType::kFloat32 && x->dtype != DataType::kFloat64) {
    return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  }
  const std::optional<std::string> norm = c.string_value("normalization");
  if (norm && *norm != "backward" && *norm != "forward" && *norm != "ortho" && !norm->empty()) {
    return fmt::format("normalization must be backward, forward or ortho, got '{}'", *norm);
  }
  const std::optional<std::vector<int64_t>> axes = c.static_ints("axes");
  if (!axes) return "axes must be a constant";
  if (axes->empty()) return "axes must not be empty";
  const auto rank = static_cast<int64_t>(x->dims.size());
  std::vector<int64_t> seen;
  for (int64_t a : *axes) {
    int64_t n = 0;
    if (!normalize_axis(a, rank, &n)) return bad_axis(a, x->dims);
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) return fmt::format("axis {} is repeated in axes", a);
    seen.push_back(n);
  }
  SymShape dims = x->dims;
  if (c.bool_value("onesided").value_or(true)) {
    SymExpr& last = dims[static_cast<size_t>(seen.back())];
    last = SymExpr::floor_div(last, SymExpr(2)) + SymExpr(1);
  }
  c.set_result(0, x->dtype == DataType::kFloat32 ? DataType::kComplex64 : DataType::kComplex128, dims);
  return "";
}

std::string logical_not(OpContext& c) {
  MATH_TENSOR(x, 0);
  c.set_result(0, DataType::kBool, x->dims);
  return "";
}

std::string masked_fill(OpContext& c) {
  MATH_TENSOR(x, 0);
  MATH_TENSOR(mask, 1);
  MATH_TENSOR(value, 2);
  if (mask->dtype != DataType::kBool) return fmt::format("mask must be bool, got {}", ir::dtype_name(mask->dtype));
  if (x->dtype != value->dtype) return dtype_conflict(c.param(0), x->dtype, c.param(2), value->dtype);
  if (auto n = sym_numel(value->dims).constant(); n && *n != 1) {
    return fmt::format("value must have one element, got {}", to_string(value->dims));
  }
  auto dims = c.broadcast(x->dims, mask->dims);
  if (!dims) return fmt::format("shapes {} and {} cannot be broadcast", to_string(x->dims), to_string(mask->dims));
  c.set_result(0, x->dtype, *dims);
  return "";
}

std::string swiglu(OpContext& c) {
  MATH_TENSOR(x, 0);
  if (x->dims.empty()) return "x must have rank >= 1";
  SymShape dims = x->dims;
  if (const ValueInfo* y = c.tensor(c.param(1))) {
    if (x->dtype != y->dtype) return dtype_conflict(c.param(0), x->dtype, c.param(1), y->dtype);
    if (y->dims.size() != x->dims.size()) {
      return fmt::format("x {} and y {} must have the same dims", to_string(x->dims), to_string(y->dims));
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      auto a = x->dims[i].constant(), b = y->dims[i].constant();
      if (a && b && *a != *b) return fmt::format("x {} and y {} must have the same dims", to_string(x->dims), to_string(y->dims));
    }
  } else if (auto last = dims.back().constant()) {
    if (*last % 2 != 0) return fmt::format("without y, the last dim of x {} must be even", to_string(x->dims));
    dims.back() = *last / 2;
  } else {
    dims.back() = SymExpr::floor_div(dims.back(), 2);  // the kernel checks evenness at run time
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

/// full_with_tensor and uniform: (shape, dtype).
std::string shape_and_dtype(OpContext& c, DataType fallback) {
  auto shape = c.ints(c.param(0));
  if (!shape) return runtime_value(c, 0);
  for (const SymExpr& d : *shape) {
    if (auto v = d.constant(); v && *v < 0) return fmt::format("shape {} has a negative dim", to_string(*shape));
  }
  c.set_result(0, c.dtype_value(c.param(1)).value_or(fallback), *shape);
  return "";
}

/// randint: (low, high, shape, dtype); int64 by default.
std::string randint_rule(OpContext& c) {
  const std::optional<int64_t> low = c.static_int(c.param(0)), high = c.static_int(c.param(1));
  if (low && high && *low >= *high) return fmt::format("low ({}) must be less than high ({})", *low, *high);
  auto shape = c.ints(c.param(2));
  if (!shape) return runtime_value(c, 2);
  for (const SymExpr& d : *shape) {
    if (auto v = d.constant(); v && *v < 0) return fmt::format("shape {} has a negative dim", to_string(*shape));
  }
  const DataType dtype = c.dtype_value(c.param(3)).value_or(DataType::kInt64);
  if (dtype != DataType::kInt32 && dtype != DataType::kInt64) {
    return fmt::format("dtype must be int32 or int64, got {}", ir::dtype_name(dtype));
  }
  c.set_result(0, dtype, *shape);
  return "";
}

/// A Scalar argument of arange: an operand (its known contents) or an attribute (hand-written programs).
struct ScalarArg {
  bool floating = false;
  std::optional<double> value;    // known, as a number
  std::optional<SymExpr> integer;  // integral (possibly symbolic) contents
};

ScalarArg scalar_arg(OpContext& c, const std::string& name) {
  ScalarArg s;
  if (const ValueInfo* t = c.tensor(name); t && !t->is_vector) {
    s.floating = ir::is_floating(t->dtype);
    if (!t->data || t->data->numel() != 1) return s;
    if (s.floating) {
      if (t->data->is_static()) s.value = t->data->float_at(0);
    } else {
      s.integer = t->data->int_at(0);
      if (auto k = s.integer->constant()) s.value = static_cast<double>(*k);
    }
    return s;
  }
  if (const ir::Attribute* a = c.attribute(name)) {
    s.floating = a->is_floating() || (a->kind == ir::AttrKind::kScalar && ir::is_floating(a->dtype));
    s.value = c.float_value(name);
    if (!s.floating) s.integer = c.int_value(name);
  }
  return s;
}

std::string arange(OpContext& c) {
  const ScalarArg start = scalar_arg(c, c.param(0)), end = scalar_arg(c, c.param(1)), step = scalar_arg(c, c.param(2));
  const DataType dtype = c.dtype_value(c.param(3)).value_or(DataType::kFloat64);
  const bool floating = start.floating || end.floating || step.floating;
  if (!step.value) return runtime_value(c, 2);
  if (*step.value == 0) return "step must not be 0";
  if (start.value && end.value) {
    // Paddle's GetSize, in double when a Scalar is floating, else in int64 (exact for the values that fit).
    const double s = *start.value, e = *end.value, st = *step.value;
    if (!std::isfinite(s) || !std::isfinite(e) || !std::isfinite(st)) return "start, end and step must be finite";
    if ((s < e && st < 0) || (s > e && st > 0)) return fmt::format("step {} points away from end {} (start {})", st, e, s);
    int64_t size = 0;
    if (floating || !start.integer || !end.integer || !step.integer) {
      const double n = std::ceil(std::fabs((e - s) / st));
      if (!(n < 9.0e15)) return fmt::format("arange({}, {}, {}) has too many elements", s, e, st);
      size = static_cast<int64_t>(n);
    } else {
      const int64_t si = *start.integer->constant(), ei = *end.integer->constant(), sti = *step.integer->constant();
      const uint64_t span = si < ei ? static_cast<uint64_t>(ei) - static_cast<uint64_t>(si)
                                    : static_cast<uint64_t>(si) - static_cast<uint64_t>(ei);
      const uint64_t magnitude = sti < 0 ? 0 - static_cast<uint64_t>(sti) : static_cast<uint64_t>(sti);
      size = static_cast<int64_t>(span / magnitude + (span % magnitude != 0 ? 1 : 0));
    }
    c.set_result(0, dtype, {SymExpr(size)});
    return "";
  }
  // An integer range whose start or end is an expression of the dims (`arange(x.shape[1])`, `arange(n - 1, 2 * n)`):
  // ceil((end - start) / step) for a constant step. The program is taken to count in the step's direction (Paddle
  // refuses the other); the arange kernel checks its size against these dims at run time.
  if (!floating && start.integer && end.integer && step.integer) {
    const int64_t st = static_cast<int64_t>(*step.value);
    const SymExpr size = st > 0 ? SymExpr::ceil_div(*end.integer - *start.integer, st)
                                : SymExpr::ceil_div(*start.integer - *end.integer, -st);
    c.set_result(0, dtype, {size});
    return "";
  }
  return runtime_value(c, !start.integer ? 0 : !end.integer ? 1 : 2);
}

std::string one_hot(OpContext& c) {
  MATH_TENSOR(x, 0);
  MATH_STATIC_INT(depth, 1);
  if (x->dtype != DataType::kInt32 && x->dtype != DataType::kInt64) {
    return fmt::format("x must be int32 or int64, got {}", ir::dtype_name(x->dtype));
  }
  if (depth < 0) return fmt::format("num_classes must not be negative, got {}", depth);
  SymShape dims = x->dims;
  dims.push_back(depth);
  c.set_result(0, DataType::kFloat32, dims);
  return "";
}

std::string cumsum(OpContext& c) {
  MATH_TENSOR(x, 0);
  if (c.bool_value(c.param(2)).value_or(false)) {
    c.set_result(0, x->dtype, {sym_numel(x->dims)});
    return "";
  }
  MATH_STATIC_INT(axis, 1);
  int64_t a = 0;
  if (!normalize_axis_0d(axis, static_cast<int64_t>(x->dims.size()), &a)) return bad_axis(axis, x->dims);
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string reduce_base(OpContext& c) {
  MATH_TENSOR(x, 0);
  auto axis = c.static_ints(c.param(1));
  if (!axis) return runtime_value(c, 1);
  const bool keepdim = c.bool_value(c.param(2)).value_or(false);
  const bool all = c.bool_value(c.param(3)).value_or(false) || axis->empty();
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  std::vector<bool> reduced(x->dims.size(), all);
  if (!all) {
    for (int64_t ax : *axis) {
      int64_t d = 0;
      if (!normalize_axis_0d(ax, rank, &d)) return bad_axis(ax, x->dims);
      if (rank > 0) reduced[static_cast<size_t>(d)] = true;
    }
  }
  SymShape dims;
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (!reduced[i]) {
      dims.push_back(x->dims[i]);
    } else if (keepdim) {
      dims.push_back(1);
    }
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string arg_min_max(OpContext& c) {
  MATH_TENSOR(x, 0);
  const bool keepdims = c.bool_value(c.param(2)).value_or(false);
  const bool flatten = c.bool_value(c.param(3)).value_or(false);
  const DataType dtype = c.dtype_value(c.param(4)).value_or(DataType::kInt64);
  if (dtype != DataType::kInt32 && dtype != DataType::kInt64) {
    return fmt::format("dtype must be int32 or int64, got {}", ir::dtype_name(dtype));
  }
  SymShape dims;
  if (flatten) {
    if (keepdims) dims.assign(x->dims.size(), SymExpr(1));
    c.set_result(0, dtype, dims);
    return "";
  }
  MATH_STATIC_INT(axis, 1);
  int64_t a = 0;
  if (!normalize_axis_0d(axis, static_cast<int64_t>(x->dims.size()), &a)) return bad_axis(axis, x->dims);
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (static_cast<int64_t>(i) != a) {
      dims.push_back(x->dims[i]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  c.set_result(0, dtype, dims);
  return "";
}

std::string topk(OpContext& c) {
  MATH_TENSOR(x, 0);
  MATH_STATIC_INT(k, 1);
  const int64_t axis = c.static_int(c.param(2)).value_or(-1);
  int64_t a = 0;
  if (!normalize_axis_0d(axis, static_cast<int64_t>(x->dims.size()), &a)) return bad_axis(axis, x->dims);
  SymShape dims = x->dims;
  const std::optional<int64_t> n = dims.empty() ? std::optional<int64_t>(1) : dims[static_cast<size_t>(a)].constant();
  if (k < 1 || (n && k > *n)) {
    return fmt::format("k {} must be in [1, {}] (x {}, axis {})", k, n ? std::to_string(*n) : "the dim", to_string(x->dims), axis);
  }
  if (!dims.empty()) dims[static_cast<size_t>(a)] = k;
  c.set_result(0, x->dtype, dims);
  if (c.result_count() > 1) c.set_result(1, DataType::kInt64, dims);
  return "";
}

std::string argsort(OpContext& c) {
  MATH_TENSOR(x, 0);
  MATH_STATIC_INT(axis, 1);
  int64_t a = 0;
  if (!normalize_axis_0d(axis, static_cast<int64_t>(x->dims.size()), &a)) return bad_axis(axis, x->dims);
  c.set_result(0, x->dtype, x->dims);
  if (c.result_count() > 1) c.set_result(1, DataType::kInt64, x->dims);
  return "";
}

std::string unchanged_check_axis(OpContext& c) {
  MATH_TENSOR(x, 0);
  MATH_STATIC_INT(axis, 1);
  int64_t a = 0;
  if (!normalize_axis_0d(axis, static_cast<int64_t>(x->dims.size()), &a)) return bad_axis(axis, x->dims);
  c.set_result(0, x->dtype, x->dims);
  return "";
}

const std::map<std::string, Rule>& math_rules() {
  static const std::map<std::string, Rule> kRules = {
      {"RealAndImagInferMeta", real_and_imag},
      {"FFTR2CInferMeta", fft_r2c},
      {"CompareInferMeta", [](OpContext& c) { return broadcast_rule(c, DataType::kBool); }},
      {"LogicalBinaryInferMeta", [](OpContext& c) { return broadcast_rule(c, DataType::kBool); }},
      {"LogicalNotInferMeta", logical_not},
      {"MaskedFillInferMeta", masked_fill},
      {"SwiGLUInferMeta", swiglu},
      {"FullWithTensorInferMeta", [](OpContext& c) { return shape_and_dtype(c, DataType::kFloat32); }},
      {"UniformRandomInferMeta", [](OpContext& c) { return shape_and_dtype(c, DataType::kFloat32); }},
      {"RandintInferMeta", randint_rule},
      {"ArangeInferMeta", arange},
      {"OneHotInferMeta", one_hot},
      {"CumScalarAxisInferMeta", cumsum},
      {"ReduceIntArrayAxisInferMetaBase", reduce_base},
      {"ArgMinMaxInferMeta", arg_min_max},
      {"TopKInferMeta", topk},
      {"ArgsortInferMeta", argsort},
      {"UnchangedInferMetaCheckAxis", unchanged_check_axis},
  };
  return kRules;
}

}  // namespace

bool has_math_shape_rule(const std::string& func) { return math_rules().contains(func); }

std::string run_math_shape_rule(const std::string& func, OpContext& ctx) {
  auto it = math_rules().find(func);
  if (it == math_rules().end()) return "unknown-rule";
  return it->second(ctx);
}

}  // namespace kforge::passes::detail
