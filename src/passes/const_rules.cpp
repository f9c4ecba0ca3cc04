// Constant propagation: the contents of values known at generation time (see analysis.h). Runs per op after
// its shape rule, so result dtypes and dims are already set.
#include <cmath>
#include <functional>

#include "passes/op_context.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

bool uses_floats(DataType d) { return ir::is_floating(d) || ir::is_complex(d); }

/// Rounds a value to what the dtype can hold (float32 precision, integer truncation).
double round_float(DataType d, double v) {
  if (d == DataType::kFloat32 || d == DataType::kFloat16 || d == DataType::kBFloat16) return static_cast<float>(v);
  return v;
}

int64_t wrap_int(DataType d, int64_t v) {
  switch (d) {
    case DataType::kBool: return v != 0 ? 1 : 0;
    case DataType::kInt8: return static_cast<int8_t>(v);
    case DataType::kUInt8: return static_cast<uint8_t>(v);
    case DataType::kInt16: return static_cast<int16_t>(v);
    case DataType::kInt32: return static_cast<int32_t>(v);
    default: return v;
  }
}

std::optional<std::vector<int64_t>> result_static_dims(OpContext& c, size_t i = 0) {
  ValueInfo* info = c.result_info(i);
  if (!info || !info->known || info->is_vector) return std::nullopt;
  return static_dims(info->dims);
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

void set_data(OpContext& c, KnownData data, size_t i = 0) {
  ValueInfo* info = c.result_info(i);
  if (info) info->data = std::move(data);
}

/// A floating value converted to the integer (or bool) dtype `to` as the kernels' cast does: truncated toward zero;
/// bool is `v != 0` (NaN is true). A value outside `to`'s range, or NaN for an integer, has no portable result
/// (the CPU kernel gives the type's minimum, CUDA saturates): nullopt, so the op is left to run time.
std::optional<int64_t> float_to_int(DataType to, double v) {
  if (to == DataType::kBool) return v != 0 ? 1 : 0;
  double lo = -9223372036854775808.0, hi = 9223372036854775808.0;  // int64: [-2^63, 2^63)
  switch (to) {
    case DataType::kInt8: lo = -128, hi = 128; break;
    case DataType::kUInt8: lo = 0, hi = 256; break;
    case DataType::kInt16: lo = -32768, hi = 32768; break;
    case DataType::kInt32: lo = -2147483648.0, hi = 2147483648.0; break;
    default: break;
  }
  const double t = std::trunc(v);
  if (!(t >= lo && t < hi)) return std::nullopt;
  return static_cast<int64_t>(t);
}

/// Element `i` of `d` converted for a result of dtype `to`: either in `f` (floating results) or `s`. False when
/// the element cannot be known at generation time (a symbol read as a float, a conversion with no portable result).
bool element(const KnownData& d, int64_t i, DataType to, double* f, SymExpr* s) {
  if (uses_floats(to)) {
    if (!uses_floats(d.dtype) && !d.int_at(i).is_constant()) return false;
    *f = d.float_at(i);
    return true;
  }
  if (uses_floats(d.dtype)) {
    const std::optional<int64_t> v = float_to_int(to, d.float_at(i));
    if (!v) return false;
    *s = SymExpr(*v);
    return true;
  }
  *s = d.int_at(i);
  if (auto c = s->constant()) *s = wrap_int(to, *c);
  return true;
}

/// Elementwise combination of known inputs with numpy broadcasting into the result's static dims.
void fold_elementwise(OpContext& c, const std::vector<const KnownData*>& inputs,
                      const std::function<double(const std::vector<double>&)>& float_op,
                      const std::function<std::optional<SymExpr>(const std::vector<SymExpr>&)>& int_op,
                      int64_t max_elements) {
  auto dims = result_static_dims(c);
  if (!dims) return;
  const DataType dtype = c.result_info(0)->dtype;
  bool all_splat = true;
  for (const KnownData* in : inputs) all_splat = all_splat && in->splat;
  const int64_t numel = all_splat ? 1 : product(*dims);
  if (numel > max_elements) return;
  KnownData out{dtype, *dims, all_splat, {}, {}};
  const size_t rank = dims->size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < numel; ++flat) {
    // The multi-index of `flat`, then each input's flat index through broadcasting.
    int64_t rest = flat;
    for (size_t k = rank; k-- > 0;) {
      index[k] = (*dims)[k] == 0 ? 0 : rest % (*dims)[k];
      rest = (*dims)[k] == 0 ? 0 : rest / (*dims)[k];
    }
    std::vector<double> fs;
    std::vector<SymExpr> ss;
    for (const KnownData* in : inputs) {
      int64_t src = 0;
      if (!in->splat) {
        const size_t in_rank = in->dims.size();
        for (size_t k = 0; k < in_rank; ++k) {
          const int64_t d = in->dims[k];
          const int64_t at = d == 1 ? 0 : index[k + rank - in_rank];
          src = src * d + at;
        }
      }
      double f = 0;
      SymExpr s;
      // Each operand converted to the result's dtype first (for cast, the conversion is the whole op; a float
      // operand of an integer result goes into `s`, which the integer combination reads).
      if (!element(*in, src, dtype, &f, &s)) return;
      fs.push_back(f);
      ss.push_back(s);
    }
    if (uses_floats(dtype)) {
      out.floats.push_back(round_float(dtype, float_op(fs)));
    } else {
      auto v = int_op(ss);
      if (!v) return;
      if (auto cv = v->constant()) v = SymExpr(wrap_int(dtype, *cv));
      out.ints.push_back(*v);
    }
  }
  set_data(c, std::move(out));
}

std::optional<SymExpr> int_divide(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (ca && cb) {
    if (*cb == 0) return std::nullopt;  // a run-time error, not a constant
    return SymExpr(*ca / *cb);          // C++ (and Paddle) integer division truncates
  }
  return SymExpr::floor_div(a, b);  // dims and shape arithmetic: non-negative operands
}

const KnownData* known_input(OpContext& c, const std::string& name) {
  const ValueInfo* v = c.tensor(name);
  if (!v || v->is_vector || !v->data) return nullptr;
  return &*v->data;
}

/// Copies the data with the result's dims (reshape and friends): same elements in the same order.
void fold_same_elements(OpContext& c, const KnownData& in) {
  auto dims = result_static_dims(c);
  if (!dims) return;
  KnownData out = in;
  out.dims = *dims;
  set_data(c, std::move(out));
}

/// Gathers `in` (static dims) along `counts`/`starts` per axis, then gives it the result dims.
void fold_slice(OpContext& c, const KnownData& in, const std::vector<int64_t>& starts,
                const std::vector<int64_t>& counts, int64_t max_elements) {
  auto dims = result_static_dims(c);
  if (!dims) return;
  const int64_t numel = product(counts);
  if (numel > max_elements && !in.splat) return;
  KnownData out{in.dtype, *dims, in.splat, {}, {}};
  if (in.splat) {
    out.floats = in.floats;
    out.ints = in.ints;
    set_data(c, std::move(out));
    return;
  }
  const size_t rank = counts.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < numel; ++flat) {
    int64_t rest = flat, src = 0;
    for (size_t k = rank; k-- > 0;) {
      index[k] = rest % counts[k];
      rest /= counts[k];
    }
    for (size_t k = 0; k < rank; ++k) src = src * in.dims[k] + starts[k] + index[k];
    if (uses_floats(in.dtype)) out.floats.push_back(in.float_at(src));
    else out.ints.push_back(in.int_at(src));
  }
  set_data(c, std::move(out));
}

void fold_concat(OpContext& c, const std::vector<const ValueInfo*>& xs, int64_t axis, bool stack, int64_t max_elements) {
  auto dims = result_static_dims(c);
  if (!dims || xs.empty() || product(*dims) > max_elements) return;
  for (const ValueInfo* x : xs) {
    if (!x->data) return;
  }
  const DataType dtype = c.result_info(0)->dtype;
  const std::vector<int64_t>& first = xs[0]->data->dims;
  const int64_t rank = static_cast<int64_t>(first.size());
  if (axis < 0) axis += stack ? rank + 1 : rank;
  if (axis < 0 || axis > rank || (!stack && axis == rank)) return;
  // outer = product of dims before the axis; each input contributes `inner` contiguous elements per outer row.
  int64_t outer = 1;
  for (int64_t k = 0; k < axis && k < rank; ++k) outer *= first[k];
  KnownData out{dtype, *dims, false, {}, {}};
  for (int64_t o = 0; o < outer; ++o) {
    for (const ValueInfo* x : xs) {
      const KnownData& d = *x->data;
      const int64_t inner = outer == 0 ? 0 : product(d.dims) / outer;
      for (int64_t i = 0; i < inner; ++i) {
        double f = 0;
        SymExpr s;
        if (!element(d, o * inner + i, dtype, &f, &s)) return;
        if (uses_floats(dtype)) out.floats.push_back(f);
        else out.ints.push_back(s);
      }
    }
  }
  set_data(c, std::move(out));
}

/// split / split_with_num along axis 0 of a known tensor (`h, w = paddle.split(paddle.shape(x)[2:], 2)`): each
/// piece is a contiguous run of the row-major elements; the pieces' dims are the shape rule's.
void fold_split_axis0(OpContext& c, const KnownData& in) {
  ValueInfo* list = c.result_info(0);
  if (!list || !list->known || !list->is_vector || in.splat) return;
  int64_t at = 0;
  for (ValueInfo& piece : list->elements) {
    auto dims = static_dims(piece.dims);
    if (!dims) return;
    KnownData d{piece.dtype, *dims, false, {}, {}};
    for (int64_t i = 0, n = product(*dims); i < n; ++i, ++at) {
      if (at >= in.numel()) return;
      double f = 0;
      SymExpr v;
      if (!element(in, at, piece.dtype, &f, &v)) return;
      if (uses_floats(piece.dtype)) d.floats.push_back(f);
      else d.ints.push_back(v);
    }
    piece.data = std::move(d);
  }
}

/// A reduction of every element of known integer contents to one (`paddle.prod(paddle.shape(x)[1:])`): when the
/// result has one element, whatever the axes, every element goes into it.
void fold_reduce_all(OpContext& c, const KnownData& in, char kind) {
  auto dims = result_static_dims(c);
  const ValueInfo* r = c.result_info(0);
  if (!dims || product(*dims) != 1 || uses_floats(r->dtype) || uses_floats(in.dtype) || in.numel() < 1) return;
  if (in.splat && kind != 'M' && kind != 'm') return;  // a splat's count is its dims': leave sums and products
  SymExpr acc = in.int_at(0);
  for (int64_t i = 1; i < in.numel(); ++i) {
    const SymExpr v = in.int_at(i);
    acc = kind == '+' ? acc + v : kind == '*' ? acc * v : kind == 'M' ? SymExpr::max(acc, v) : SymExpr::min(acc, v);
  }
  if (auto k = acc.constant()) acc = wrap_int(r->dtype, *k);
  set_data(c, KnownData{r->dtype, *dims, false, {}, {acc}});
}

}  // namespace

void propagate_constants(OpContext& c, int64_t max_elements) {
  const std::string& op = c.base_name();
  if (c.result_count() == 0) return;
  if (op == "split" || op == "split_with_num") {
    const KnownData* x = known_input(c, "x");
    auto axis = c.static_int("axis");
    if (x && axis && (*axis == 0 || *axis == -static_cast<int64_t>(x->dims.size()))) fold_split_axis0(c, *x);
    return;
  }
  const ValueInfo* r0 = c.result_info(0);
  if (!r0 || !r0->known || r0->is_vector) return;
  const DataType dtype = r0->dtype;

  if (op == "full" || op == "full_like") {
    auto dims = result_static_dims(c);
    auto value = c.float_value("value");
    if (!dims || !value) return;
    KnownData d{dtype, *dims, true, {}, {}};
    if (uses_floats(dtype)) {
      d.floats.push_back(round_float(dtype, *value));
    } else {
      const std::optional<int64_t> v = float_to_int(dtype, *value);
      if (!v) return;
      d.ints.push_back(wrap_int(dtype, *v));
    }
    set_data(c, std::move(d));
  } else if (op == "full_int_array") {
    auto values = c.static_ints("value");
    if (!values || static_cast<int64_t>(values->size()) > max_elements) return;
    KnownData d{dtype, {static_cast<int64_t>(values->size())}, false, {}, {}};
    for (int64_t v : *values) {
      if (uses_floats(dtype)) d.floats.push_back(static_cast<double>(v));
      else d.ints.push_back(wrap_int(dtype, v));
    }
    set_data(c, std::move(d));
  } else if (op == "assign_value_" || op == "assign_value") {
    auto dims = result_static_dims(c);
    const ir::Attribute* values = c.attribute("values");
    if (!dims || !values || values->kind != ir::AttrKind::kArray) return;
    if (static_cast<int64_t>(values->elements.size()) != product(*dims) || product(*dims) > max_elements) return;
    KnownData d{dtype, *dims, false, {}, {}};
    for (const ir::Attribute& e : values->elements) {
      const bool floating = e.is_floating() || (e.kind == ir::AttrKind::kScalar && uses_floats(e.dtype));
      const bool boolean =
          e.kind == ir::AttrKind::kBool || (e.kind == ir::AttrKind::kScalar && e.dtype == DataType::kBool);
      // Integers stay integers (an int64 beyond 2^53 would not survive a trip through double).
      const int64_t i = boolean ? (e.bool_value ? 1 : 0) : e.int_value;
      if (uses_floats(dtype)) {
        d.floats.push_back(round_float(dtype, floating ? e.float_value : static_cast<double>(i)));
      } else {
        const std::optional<int64_t> v = floating ? float_to_int(dtype, e.float_value) : i;
        if (!v) return;
        d.ints.push_back(wrap_int(dtype, *v));
      }
    }
    set_data(c, std::move(d));
  } else if (op == "shape" || op == "shape64") {
    const ValueInfo* x = c.tensor(c.param(0));
    if (!x || x->is_vector) return;
    KnownData d{dtype, {static_cast<int64_t>(x->dims.size())}, false, {}, x->dims};
    set_data(c, std::move(d));
  } else if (op == "numel") {
    const ValueInfo* x = c.tensor(c.param(0));
    if (!x || x->is_vector) return;
    SymExpr n(int64_t{1});
    for (const SymExpr& dim : x->dims) n = n * dim;
    KnownData d{dtype, {}, false, {}, {n}};
    set_data(c, std::move(d));
  } else if (op == "cast") {
    const KnownData* x = known_input(c, c.param(0));
    if (!x) return;
    fold_elementwise(c, {x}, [](const std::vector<double>& v) { return v[0]; },
                     [](const std::vector<SymExpr>& v) { return std::optional<SymExpr>(v[0]); }, max_elements);
  } else if (op == "scale") {
    const KnownData* x = known_input(c, "x");
    auto scale = c.float_value("scale");
    auto bias = c.float_value("bias");
    const bool after = c.bool_value("bias_after_scale").value_or(true);
    if (!x || !scale || !bias) return;
    const double s = *scale, b = *bias;
    const bool int_exact = std::trunc(s) == s && std::trunc(b) == b;
    fold_elementwise(
        c, {x}, [&](const std::vector<double>& v) { return after ? v[0] * s + b : (v[0] + b) * s; },
        [&](const std::vector<SymExpr>& v) -> std::optional<SymExpr> {
          if (!int_exact) return std::nullopt;
          const SymExpr si = static_cast<int64_t>(s), bi = static_cast<int64_t>(b);
          return after ? v[0] * si + bi : (v[0] + bi) * si;
        },
        max_elements);
  } else if (op == "add" || op == "subtract" || op == "multiply" || op == "divide" || op == "maximum" ||
             op == "minimum") {
    const KnownData* x = known_input(c, "x");
    const KnownData* y = known_input(c, "y");
    if (!x || !y) return;
    const char kind = op == "add" ? '+' : op == "subtract" ? '-' : op == "multiply" ? '*' : op == "divide" ? '/'
                      : op == "maximum" ? 'M' : 'm';
    fold_elementwise(
        c, {x, y},
        [kind](const std::vector<double>& v) {
          switch (kind) {
            case '+': return v[0] + v[1];
            case '-': return v[0] - v[1];
            case '*': return v[0] * v[1];
            case '/': return v[0] / v[1];
            // NaN when either is NaN, as the kernels (std::max kept v[0] when v[1] was NaN)
            case 'M': return v[0] > v[1] || std::isnan(v[0]) ? v[0] : v[1];
            default: return v[0] < v[1] || std::isnan(v[0]) ? v[0] : v[1];
          }
        },
        [kind](const std::vector<SymExpr>& v) -> std::optional<SymExpr> {
          switch (kind) {
            case '+': return v[0] + v[1];
            case '-': return v[0] - v[1];
            case '*': return v[0] * v[1];
            case '/': return int_divide(v[0], v[1]);
            case 'M': return SymExpr::max(v[0], v[1]);
            default: return SymExpr::min(v[0], v[1]);
          }
        },
        max_elements);
  } else if (op == "greater_than" || op == "greater_equal" || op == "less_than" || op == "less_equal" ||
             op == "equal" || op == "not_equal") {
    // Integer comparisons of known values (a length from the shape against a constant: the condition of
    // paddleformers' causal-mask `if`), as 0 / 1 expressions: a > b is min(max(a - b, 0), 1) for integers.
    const KnownData* x = known_input(c, "x");
    const KnownData* y = known_input(c, "y");
    if (!x || !y || uses_floats(x->dtype) || uses_floats(y->dtype) || dtype != DataType::kBool) return;
    auto dims = result_static_dims(c);
    if (!dims) return;
    const bool splat = x->splat && y->splat;
    const int64_t numel = splat ? 1 : product(*dims);
    if (numel > max_elements || (!x->splat && x->numel() != numel) || (!y->splat && y->numel() != numel)) {
      return;  // (only same-shape or splat operands: no broadcasting of known contents here)
    }
    auto positive = [](const SymExpr& d) { return SymExpr::min(SymExpr::max(d, 0), 1); };  // d > 0, for integers
    KnownData out{DataType::kBool, *dims, splat, {}, {}};
    for (int64_t i = 0; i < numel; ++i) {
      const SymExpr a = x->int_at(x->splat ? 0 : i), b = y->int_at(y->splat ? 0 : i);
      SymExpr v;
      if (op == "greater_than") v = positive(a - b);
      else if (op == "greater_equal") v = positive(a - b + 1);
      else if (op == "less_than") v = positive(b - a);
      else if (op == "less_equal") v = positive(b - a + 1);
      else if (op == "equal") v = SymExpr(1) - positive(SymExpr::max(a - b, b - a));
      else v = positive(SymExpr::max(a - b, b - a));
      out.ints.push_back(v);
    }
    set_data(c, std::move(out));
  } else if (op == "floor_divide" || op == "remainder") {
    // Integer floor division and its remainder (Python's // and %, which Paddle's integer kernels follow):
    // `x.shape[1] // 2` of a dynamic dim is floor_div(s1, 2).
    const KnownData* x = known_input(c, "x");
    const KnownData* y = known_input(c, "y");
    if (!x || !y || uses_floats(dtype)) return;
    const bool rem = op == "remainder";
    fold_elementwise(
        c, {x, y}, [](const std::vector<double>&) { return 0.0; },
        [rem](const std::vector<SymExpr>& v) -> std::optional<SymExpr> {
          auto ca = v[0].constant(), cb = v[1].constant();
          if (cb && *cb == 0) return std::nullopt;  // a run-time error, not a constant
          SymExpr q;
          if (ca && cb) {
            int64_t t = *ca / *cb;
            if ((*ca % *cb != 0) && ((*ca < 0) != (*cb < 0))) --t;  // toward negative infinity
            q = t;
          } else {
            q = SymExpr::floor_div(v[0], v[1]);
          }
          return rem ? v[0] - q * v[1] : q;
        },
        max_elements);
  } else if (op == "full_with_tensor") {
    // full(shape_tensor, value_tensor): a splat of the value's known contents (static dims only, as for full).
    auto dims = result_static_dims(c);
    const KnownData* value = known_input(c, "value");
    if (!dims || !value || value->numel() < 1) return;
    double f = 0;
    SymExpr v;
    if (!element(*value, 0, dtype, &f, &v)) return;
    KnownData d{dtype, *dims, true, {}, {}};
    if (uses_floats(dtype)) d.floats.push_back(round_float(dtype, f));
    else d.ints.push_back(v);
    set_data(c, std::move(d));
  } else if (op == "sum" || op == "prod" || op == "max" || op == "min") {
    const KnownData* x = known_input(c, "x");
    if (x) fold_reduce_all(c, *x, op == "sum" ? '+' : op == "prod" ? '*' : op == "max" ? 'M' : 'm');
  } else if (op == "floor") {
    const KnownData* x = known_input(c, "x");
    if (!x) return;
    fold_elementwise(c, {x}, [](const std::vector<double>& v) { return std::floor(v[0]); },
                     [](const std::vector<SymExpr>& v) { return std::optional<SymExpr>(v[0]); }, max_elements);
  } else if (op == "reshape" || op == "flatten" || op == "squeeze" || op == "unsqueeze" || op == "assign") {
    const KnownData* x = known_input(c, "x");
    if (x) fold_same_elements(c, *x);
  } else if (op == "slice") {
    const KnownData* x = known_input(c, "input");
    auto axes = c.static_ints("axes");
    auto starts = c.static_ints("starts");
    auto ends = c.static_ints("ends");
    if (!x || !axes || !starts || !ends || axes->size() != starts->size() || axes->size() != ends->size()) return;
    const int64_t rank = static_cast<int64_t>(x->dims.size());
    std::vector<int64_t> first(x->dims.size(), 0), counts = x->dims;
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t ax = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      if (ax < 0 || ax >= rank) return;
      const int64_t n = x->dims[ax];
      int64_t s = (*starts)[i] < 0 ? (*starts)[i] + n : (*starts)[i];
      int64_t e = (*ends)[i] < 0 ? (*ends)[i] + n : (*ends)[i];
      s = std::min(std::max<int64_t>(s, 0), n);
      e = std::min(std::max<int64_t>(e, 0), n);
      if (e < s) return;
      first[ax] = s;
      counts[ax] = e - s;
    }
    fold_slice(c, *x, first, counts, max_elements);
  } else if (op == "concat" || op == "stack") {
    const std::vector<const ValueInfo*> xs = c.tensors("x");
    auto axis = c.static_int("axis");
    if (!axis) return;
    fold_concat(c, xs, *axis, op == "stack", max_elements);
  }
}

}  // namespace kforge::passes::detail
