// Shape rules of the ops that move data (kernels/meta_*.cc): reshape, flatten, squeeze, unsqueeze, transpose,
// expand; concat, split, stack (and add_n, shaped as its first input); slice and strided_slice.
// movement_shape_rules() is their table, which run_shape_rule (shape_rules.cpp) consults after its own.
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

}  // namespace

const std::map<std::string, std::string (*)(OpContext&)>& movement_shape_rules() {
  static const std::map<std::string, std::string (*)(OpContext&)> kRules = {
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
  };
  return kRules;
}

}  // namespace kforge::passes::detail
