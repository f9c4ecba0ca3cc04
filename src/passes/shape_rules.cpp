// Shape rules of the infer_meta functions that kernels/ops.yaml names, at generation time and over
// symbolic dims. Each mirrors the reference implementation in kernels/meta_*.cc (Paddle's rules), so
// that the dims kforge allocates are exactly the dims the kernels check against.
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

std::string dims_text(const SymShape& s) { return to_string(s); }

std::string ints_text(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

/// Runs a rule; the result is "" or the problem.
using Rule = std::function<std::string(OpContext&)>;

/// Arguments of the rule by infer_meta param position.
struct Args {
  OpContext& c;
  const ValueInfo* tensor(size_t i) const { return c.tensor(c.param(i)); }
  std::vector<const ValueInfo*> tensors(size_t i) const { return c.tensors(c.param(i)); }
  const std::string& name(size_t i) const { return c.param(i); }
};

std::string runtime_value(const Args& a, size_t i) { return a.c.runtime_value(a.name(i)); }

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

std::string reshape(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  auto shape = c.ints(a.name(1));
  if (!shape) return runtime_value(a, 1);
  SymShape dims(shape->size());
  std::optional<size_t> unknown;
  SymExpr known = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    SymExpr s = (*shape)[i];
    auto cs = s.constant();
    if (cs && *cs == -1) {
      if (unknown) return fmt::format("shape {} has more than one -1", dims_text(*shape));
      unknown = i;
      continue;
    }
    if (cs && *cs == 0) {
      if (i >= x->dims.size()) {
        return fmt::format("shape {} copies dim {} (0) but x {} has rank {}", dims_text(*shape), i, dims_text(x->dims),
                           x->dims.size());
      }
      s = x->dims[i];
    } else if (cs && *cs < 0) {
      return fmt::format("shape {} has a negative dim {}", dims_text(*shape), *cs);
    }
    dims[i] = s;
    known *= s;
  }
  const SymExpr numel = sym_numel(x->dims);
  if (unknown) {
    auto ck = known.constant(), cn = numel.constant();
    if ((ck && *ck == 0) || (ck && cn && *cn % *ck != 0)) {
      return fmt::format("cannot reshape x {} ({} elements) to {}", dims_text(x->dims), numel.to_string(),
                         dims_text(*shape));
    }
    dims[*unknown] = SymExpr::floor_div(numel, known);
  } else if (known.is_constant() && numel.is_constant() && known != numel) {
    return fmt::format("cannot reshape x {} ({} elements) to {} ({} elements)", dims_text(x->dims), numel.to_string(),
                       dims_text(dims), known.to_string());
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string flatten(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INT(start_axis, 1);
  REQUIRE_STATIC_INT(stop_axis, 2);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  if (rank == 0) {
    c.set_result(0, x->dtype, {SymExpr(1)});
    return "";
  }
  int64_t start = 0, stop = 0;
  if (!normalize_axis(start_axis, rank, &start)) return bad_axis(start_axis, rank);
  if (!normalize_axis(stop_axis, rank, &stop)) return bad_axis(stop_axis, rank);
  if (stop < start) return fmt::format("stop_axis {} comes before start_axis {}", stop_axis, start_axis);
  SymShape dims(x->dims.begin(), x->dims.begin() + start);
  SymExpr product = 1;
  for (int64_t i = start; i <= stop; ++i) product *= x->dims[i];
  dims.push_back(product);
  dims.insert(dims.end(), x->dims.begin() + stop + 1, x->dims.end());
  c.set_result(0, x->dtype, dims);
  return "";
}

bool is_one(const SymExpr& e) { return e.constant() == std::optional<int64_t>(1); }

std::string squeeze(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(axis, 1);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  std::vector<bool> drop(x->dims.size(), false);
  if (axis.empty()) {
    for (size_t i = 0; i < x->dims.size(); ++i) drop[i] = is_one(x->dims[i]);
  }
  for (int64_t ax : axis) {
    int64_t d = 0;
    if (rank == 0 && (ax == 0 || ax == -1)) continue;
    if (!normalize_axis(ax, rank, &d)) return bad_axis(ax, rank);
    if (is_one(x->dims[d])) drop[d] = true;
  }
  SymShape dims;
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (!drop[i]) dims.push_back(x->dims[i]);
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string unsqueeze(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(axis, 1);
  const int64_t out_rank = static_cast<int64_t>(x->dims.size() + axis.size());
  if (out_rank > 9) return fmt::format("unsqueezing x {} by {} axes exceeds rank 9", dims_text(x->dims), axis.size());
  std::vector<int> marks(static_cast<size_t>(out_rank) + 1, 0);
  int64_t cur_rank = static_cast<int64_t>(x->dims.size());
  for (int64_t ax : axis) {
    const int64_t cur = ax < 0 ? ax + cur_rank + 1 : ax;
    if (cur < 0 || cur > cur_rank) return bad_axis(ax, cur_rank + 1);
    for (int64_t i = cur_rank; i >= cur; --i) {
      if (marks[static_cast<size_t>(i)] == 1) {
        marks[static_cast<size_t>(i) + 1] = 1;
        marks[static_cast<size_t>(i)] = 0;
      }
    }
    marks[static_cast<size_t>(cur)] = 1;
    ++cur_rank;
  }
  SymShape dims;
  size_t in = 0;
  for (int64_t o = 0; o < out_rank; ++o) dims.push_back(marks[static_cast<size_t>(o)] == 1 ? SymExpr(1) : x->dims[in++]);
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string transpose(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(perm, 1);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  if (static_cast<int64_t>(perm.size()) != rank) {
    return fmt::format("perm {} has {} entries for a tensor of rank {}", ints_text(perm), perm.size(), rank);
  }
  std::vector<bool> seen(perm.size(), false);
  SymShape dims;
  for (int64_t p : perm) {
    int64_t d = 0;
    if (!normalize_axis(p, rank, &d) || seen[d]) return fmt::format("perm {} is not a permutation of {} axes", ints_text(perm), rank);
    seen[d] = true;
    dims.push_back(x->dims[d]);
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string expand(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  auto shape = c.ints(a.name(1));
  if (!shape) return runtime_value(a, 1);
  if (shape->size() < x->dims.size()) {
    return fmt::format("shape {} has fewer dims than x {}", dims_text(*shape), dims_text(x->dims));
  }
  const size_t diff = shape->size() - x->dims.size();
  SymShape dims(shape->size());
  for (size_t i = 0; i < shape->size(); ++i) {
    const SymExpr xd = i < diff ? SymExpr(1) : x->dims[i - diff];
    const SymExpr& s = (*shape)[i];
    auto cs = s.constant();
    if (cs && *cs == -1) {
      if (i < diff) return fmt::format("shape {} has -1 at new dim {}", dims_text(*shape), i);
      dims[i] = xd;
    } else if (cs && *cs < 0) {
      return fmt::format("shape {} has a negative dim {}", dims_text(*shape), *cs);
    } else if (!is_one(xd) && xd.is_constant() && s.is_constant() && xd != s) {
      return fmt::format("cannot expand x {} to {}", dims_text(x->dims), dims_text(*shape));
    } else {
      dims[i] = s;
    }
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string concat(OpContext& c) {
  Args a{c};
  const std::vector<const ValueInfo*> xs = a.tensors(0);
  if (xs.empty()) return "concat of no inputs";
  REQUIRE_STATIC_INT(axis, 1);
  const ValueInfo& first = *xs[0];
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  int64_t ax = 0;
  if (!normalize_axis(axis, rank, &ax)) return bad_axis(axis, rank);
  SymShape dims = first.dims;
  dims[ax] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const ValueInfo& t = *xs[i];
    bool match = t.dims.size() == first.dims.size();
    for (int64_t d = 0; match && d < rank; ++d) {
      match = d == ax || t.dims[d] == first.dims[d] || !t.dims[d].is_constant() || !first.dims[d].is_constant();
      // Concat needs the dims outside its axis equal (no broadcast): two symbolic ones are taken equal where the
      // target checks that at run time (a KV cache's batch against the new token's).
      if (match && d != ax && t.dims[d] != first.dims[d] && !t.dims[d].is_constant() && !first.dims[d].is_constant()) {
        static_cast<void>(c.take_equal(first.dims[d], t.dims[d]));
      }
    }
    if (!match) {
      return fmt::format("input {} {} does not match input 0 {} outside axis {}", i, dims_text(t.dims),
                         dims_text(first.dims), ax);
    }
    if (t.dtype != first.dtype) return dtype_conflict(fmt::format("input {}", i), t.dtype, "input 0", first.dtype);
    dims[ax] += t.dims[ax];
  }
  c.set_result(0, first.dtype, dims);
  return "";
}

std::string split_outputs(OpContext& c, const ValueInfo& x, int64_t axis, const std::vector<SymExpr>& sizes) {
  std::vector<ValueInfo> elements;
  for (const SymExpr& s : sizes) {
    ValueInfo e;
    e.known = true;
    e.dtype = x.dtype;
    e.dims = x.dims;
    e.dims[axis] = s;
    elements.push_back(std::move(e));
  }
  c.set_result_list(0, std::move(elements));
  return "";
}

std::string split(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  auto sections = c.ints(a.name(1));
  if (!sections) return runtime_value(a, 1);
  REQUIRE_STATIC_INT(axis, 2);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t ax = 0;
  if (!normalize_axis(axis, rank, &ax)) return bad_axis(axis, rank);
  std::vector<SymExpr> sizes = *sections;
  std::optional<size_t> unknown;
  SymExpr total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto cs = sizes[i].constant();
    if (cs && *cs == -1 && !unknown) {
      unknown = i;
    } else if (cs && *cs < 0) {
      return fmt::format("sections {} may hold one -1 and no other negative value", dims_text(sizes));
    } else {
      total += sizes[i];
    }
  }
  const SymExpr n = x->dims[ax];
  if (unknown) {
    sizes[*unknown] = n - total;
  } else if (n.is_constant() && total.is_constant() && n != total) {
    return fmt::format("sections {} do not add up to {}, the size of axis {} of x {}", dims_text(sizes), n.to_string(),
                       ax, dims_text(x->dims));
  }
  return split_outputs(c, *x, ax, sizes);
}

std::string split_with_num(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INT(num, 1);
  REQUIRE_STATIC_INT(axis, 2);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t ax = 0;
  if (!normalize_axis(axis, rank, &ax)) return bad_axis(axis, rank);
  if (num <= 0) return fmt::format("num must be positive, got {}", num);
  if (auto n = x->dims[ax].constant(); n && *n % num != 0) {
    return fmt::format("axis {} of x {} does not split into {} equal parts", ax, dims_text(x->dims), num);
  }
  return split_outputs(c, *x, ax, std::vector<SymExpr>(static_cast<size_t>(num), SymExpr::floor_div(x->dims[ax], num)));
}

/// AddNInferMeta: the elementwise sum of a list; every input has the first one's dtype and dims.
std::string add_n(OpContext& c) {
  Args a{c};
  const std::vector<const ValueInfo*> xs = a.tensors(0);
  if (xs.empty()) return "add_n of no inputs";
  const ValueInfo& first = *xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    const ValueInfo& t = *xs[i];
    bool match = t.dims.size() == first.dims.size();
    for (size_t d = 0; match && d < first.dims.size(); ++d) {
      match = t.dims[d] == first.dims[d] || !t.dims[d].is_constant() || !first.dims[d].is_constant();
    }
    if (!match) return fmt::format("input {} {} differs from input 0 {}", i, dims_text(t.dims), dims_text(first.dims));
    if (t.dtype != first.dtype) return dtype_conflict(fmt::format("input {}", i), t.dtype, "input 0", first.dtype);
  }
  c.set_result(0, first.dtype, first.dims);
  return "";
}

std::string stack(OpContext& c) {
  Args a{c};
  const std::vector<const ValueInfo*> xs = a.tensors(0);
  if (xs.empty()) return "stack of no inputs";
  REQUIRE_STATIC_INT(axis, 1);
  const ValueInfo& first = *xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    if (xs[i]->dims.size() != first.dims.size()) {
      return fmt::format("input {} {} differs from input 0 {}", i, dims_text(xs[i]->dims), dims_text(first.dims));
    }
    if (xs[i]->dtype != first.dtype) return dtype_conflict(fmt::format("input {}", i), xs[i]->dtype, "input 0", first.dtype);
  }
  int64_t ax = 0;
  const int64_t rank = static_cast<int64_t>(first.dims.size()) + 1;
  if (!normalize_axis(axis, rank, &ax)) return bad_axis(axis, rank);
  SymShape dims = first.dims;
  dims.insert(dims.begin() + ax, SymExpr(static_cast<int64_t>(xs.size())));
  c.set_result(0, first.dtype, dims);
  return "";
}

/// Elements [start, end) that a slice takes on an axis of size n (start/end as written, possibly negative
/// or past the end): Paddle's clamping, over a symbolic n for the common forms.
std::optional<SymExpr> slice_count(const SymExpr& n, int64_t start, int64_t end, std::string* why) {
  if (auto cn = n.constant()) {
    int64_t s = start < 0 ? start + *cn : start, e = end < 0 ? end + *cn : end;
    s = std::min(std::max<int64_t>(s, 0), *cn);
    e = std::min(std::max<int64_t>(e, 0), *cn);
    if (e < s) {
      *why = fmt::format("end {} comes before start {} on an axis of size {}", end, start, *cn);
      return std::nullopt;
    }
    return SymExpr(e - s);
  }
  // A dynamic axis: start and end are taken as within it (or `end` as "to the end" when huge).
  const bool to_end = end >= (int64_t{1} << 30);
  const SymExpr s = start < 0 ? n + start : SymExpr(start);
  const SymExpr e = to_end ? n : (end < 0 ? n + end : SymExpr(end));
  return e - s;
}

/// slice_count for starts and ends that may be expressions of the dims (passes/axis.h slice_bound); two constants
/// keep slice_count's rules and messages.
std::optional<SymExpr> slice_count_of(const SymExpr& n, const SymExpr& start, const SymExpr& end, std::string* why) {
  auto cs = start.constant(), ce = end.constant();
  if (cs && ce) return slice_count(n, *cs, *ce, why);
  // An end before the start is an error in the kernel (as in Paddle), not an empty slice: no max(..., 0).
  return slice_bound(n, end, true) - slice_bound(n, start, false);
}

std::string slice(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(axes, 1);
  REQUIRE_SYMBOLIC_INTS(starts, 2);
  REQUIRE_SYMBOLIC_INTS(ends, 3);
  REQUIRE_STATIC_INTS(decrease_axis, 5);
  if (starts.size() != axes.size() || ends.size() != axes.size()) {
    return fmt::format("axes, starts and ends have {}, {} and {} values; they must match", axes.size(), starts.size(),
                       ends.size());
  }
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  SymShape counts = x->dims;
  std::vector<bool> seen(x->dims.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = 0;
    if (!normalize_axis(axes[i], rank, &ax)) return bad_axis(axes[i], rank);
    if (seen[ax]) return fmt::format("axis {} is sliced twice", axes[i]);
    seen[ax] = true;
    std::string why;
    auto count = slice_count_of(x->dims[ax], starts[i], ends[i], &why);
    if (!count) return why;
    counts[ax] = *count;
  }
  std::vector<bool> drop(x->dims.size(), false);
  for (int64_t d : decrease_axis) {
    int64_t ax = 0;
    if (!normalize_axis(d, rank, &ax)) return bad_axis(d, rank);
    if (auto cc = counts[ax].constant(); cc && *cc != 1) {
      return fmt::format("decrease_axis {} has size {} after slicing, expected 1", d, *cc);
    }
    drop[ax] = true;
  }
  SymShape dims;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (!drop[i]) dims.push_back(counts[i]);
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string strided_slice(OpContext& c) {
  Args a{c};
  REQUIRE_TENSOR(x, 0);
  REQUIRE_STATIC_INTS(axes, 1);
  REQUIRE_SYMBOLIC_INTS(starts, 2);
  REQUIRE_SYMBOLIC_INTS(ends, 3);
  REQUIRE_STATIC_INTS(strides, 4);
  if (starts.size() != axes.size() || ends.size() != axes.size() || strides.size() != axes.size()) {
    return "axes, starts, ends and strides must have the same number of values";
  }
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  SymShape dims = x->dims;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = 0;
    if (!normalize_axis(axes[i], rank, &ax)) return bad_axis(axes[i], rank);
    auto cn = x->dims[ax].constant();
    const std::optional<int64_t> cs = starts[i].constant(), ce = ends[i].constant();
    if (!cn || !cs || !ce) {
      // A dynamic axis, or bounds that are expressions of the dims (`x[:, ::2]` of a dynamic width): forward
      // steps only, with slice's rule for where the bounds land (passes/axis.h slice_bound).
      if (strides[i] <= 0) {
        return fmt::format("strided_slice with stride {} of the axis {}, whose size or bounds are known only at run "
                           "time, is not supported",
                           strides[i], ax);
      }
      const SymExpr& n = x->dims[ax];
      dims[ax] = SymExpr::ceil_div(slice_bound(n, ends[i], true) - slice_bound(n, starts[i], false), strides[i]);
      continue;
    }
    const int64_t n = *cn, step = strides[i];
    int64_t start = *cs, end = *ce;
    if (step == 0) return fmt::format("stride on axis {} is 0", ax);
    if (start < 0) start = std::max<int64_t>(start + n, 0);
    if (end < 0 && !(end == -1 && step < 0)) end = std::max<int64_t>(end + n, 0);
    if (step > 0) {
      if (start > end) return fmt::format("on axis {} start {} is after end {} with a positive stride", ax, *cs, *ce);
      start = std::min(start, n);
      end = std::min(end, n);
      dims[ax] = (end - start + step - 1) / step;
    } else {
      if (start < end) return fmt::format("on axis {} start {} is before end {} with a negative stride", ax, *cs, *ce);
      const int64_t left = std::max<int64_t>(end + 1, 0), right = std::min(start + 1, n);
      dims[ax] = right > left ? (right - left + (-step) - 1) / (-step) : 0;
    }
  }
  c.set_result(0, x->dtype, dims);
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
      {"ReshapeInferMeta", reshape},
      {"FlattenInferMeta", flatten},
      {"SqueezeInferMeta", squeeze},
      {"UnsqueezeInferMeta", unsqueeze},
      {"TransposeInferMeta", transpose},
      {"ExpandInferMeta", expand},
      {"ConcatInferMeta", concat},
      {"SplitInferMeta", split},
      {"SplitWithNumInferMeta", split_with_num},
      {"StackInferMeta", stack},
      {"AddNInferMeta", add_n},
      {"SliceRawInferMeta", slice},
      {"StridedSliceInferMeta", strided_slice},
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
  return rules().contains(func) || index_nn_shape_rules().contains(func) || graphnet_shape_rules().contains(func) ||
         detection_shape_rules().contains(func) || has_math_shape_rule(func);
}

std::string run_shape_rule(const std::string& func, OpContext& ctx) {
  auto it = rules().find(func);
  if (it != rules().end()) return it->second(ctx);
  auto more = index_nn_shape_rules().find(func);
  if (more != index_nn_shape_rules().end()) return more->second(ctx);
  auto graphnet = graphnet_shape_rules().find(func);
  if (graphnet != graphnet_shape_rules().end()) return graphnet->second(ctx);
  auto detection = detection_shape_rules().find(func);
  if (detection != detection_shape_rules().end()) return detection->second(ctx);
  return has_math_shape_rule(func) ? run_math_shape_rule(func, ctx) : "unknown-rule";
}

}  // namespace kforge::passes::detail
