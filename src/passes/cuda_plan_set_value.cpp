// The forms of set_value and set_value_with_tensor (cuda_plan_index.h: plan_cuda_index_map), as kernels/index_ops.cc
// with Paddle's slice normalisation: x's slice per dim, and where each dim's coordinate lands in the values (which
// broadcast to the slice's shape without its decrease axes, with a 1 for each none axis), checked in the order the
// kernel (codegen/cuda_index_set_value.cpp) read them.
#include <algorithm>
#include <climits>

#include "passes/cuda_plan_index_checks.h"

namespace kforge::passes::cuda_plan_internal {

bool IndexChecks::slice_range(const SymExpr& n, const SymExpr& start_given, const SymExpr& end_given, int64_t step,
                              CudaSliceRange* r) {
  r->step = step;
  r->sliced = true;
  const std::optional<int64_t> cn = n.constant(), cs = start_given.constant(), ce = end_given.constant();
  if (!cn || !cs || !ce) {
    if (step < 0) return fail("it steps backward through a slice whose bounds or dim are known only at run time");
    r->start = slice_bound(n, start_given, false);
    const SymExpr end = slice_bound(n, end_given, true);
    r->count = SymExpr::floor_div(end - r->start + (step - 1), step);
    return true;
  }
  // kernels/index_ops.cc's set_value_ranges (Paddle's CheckAndUpdateSliceAttrs).
  if (*cn == 0) {
    r->start = 0;
    r->count = 0;
    return true;
  }
  int64_t start = std::max<int64_t>(*cs < 0 ? *cs + *cn : *cs, 0);
  int64_t end = std::min(step > 0 && *ce < 0 ? *ce + *cn : *ce, *cn);
  if (step > 0) {
    start = std::min(start, *cn);
    end = std::max<int64_t>(end, 0);
    if (end < start) return fail("a slice's end comes before its start");
    r->count = (end - start + step - 1) / step;
  } else {
    start = std::min(start, *cn - 1);
    if (end < -1) end += *cn;
    end = std::max<int64_t>(end, -1);
    if (start < end) return fail("a slice's start comes before its end");
    r->count = (end - start + step + 1) / step;
  }
  r->start = start;
  return true;
}

std::optional<std::vector<SymExpr>> IndexChecks::int_array(std::string_view name) {
  const KernelArg* a = call_.arg(name);
  if (a != nullptr && a->kind == ArgKind::kSymbolic) return a->symbolic;
  const AttrConstant* c = constant(name);
  if (c == nullptr) return std::nullopt;
  return std::vector<SymExpr>(c->ints.begin(), c->ints.end());
}

bool IndexChecks::int_array_or_data(std::string_view name, std::vector<SymExpr>* given,
                                    std::vector<std::pair<uint32_t, size_t>>* from) {
  const KernelArg* a = call_.arg(name);
  if (a != nullptr && (a->kind == ArgKind::kTensorToAttr || a->kind == ArgKind::kTensorListToAttr)) {
    if (!slice_starts_from_data(*a, from, name)) return false;
    given->assign(from->size(), SymExpr(0));
    return true;
  }
  std::optional<std::vector<SymExpr>> values = int_array(name);
  if (!values) return false;
  *given = std::move(*values);
  from->assign(given->size(), {kNone, 0});
  return true;
}

bool IndexChecks::set_value(bool with_tensor) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const uint32_t values = with_tensor ? call_.tensor_arg("values") : kNone;
  if (!same_type(x, out, false)) return false;
  if (with_tensor && (values == kNone || value(values).dtype != value(x).dtype)) {
    return fail("its values are not a tensor of x's dtype");
  }
  if (with_tensor && value(values).buffer == value(out).buffer) {
    return fail("its values share its output's buffer, which the threads of one kernel would race on");
  }
  // Each bound given (a constant or an expression of the dims), or read from a tensor's values by the kernel.
  std::vector<SymExpr> given[3];
  std::vector<std::pair<uint32_t, size_t>> from[3];
  const bool bounds = int_array_or_data("starts", &given[0], &from[0]) &&
                      int_array_or_data("ends", &given[1], &from[1]) && int_array_or_data("steps", &given[2], &from[2]);
  for (const std::vector<std::pair<uint32_t, size_t>>& bound : from) {
    for (const auto& [v, element] : bound) {
      if (v != kNone && value(v).buffer == value(out).buffer) {
        return fail("a bound it reads from data shares its output's buffer, which the threads of one kernel would "
                    "race on");
      }
    }
  }
  const std::vector<SymExpr> *starts = &given[0], *ends = &given[1], *steps = &given[2];
  const AttrConstant* axes = bounds ? constant("axes") : nullptr;
  const AttrConstant* decrease = axes != nullptr ? constant("decrease_axes") : nullptr;
  const AttrConstant* none = decrease != nullptr ? constant("none_axes") : nullptr;
  if (none == nullptr) return false;
  const SymShape& xd = value(x).dims;
  const size_t rank = xd.size();
  if (starts->size() != axes->ints.size() || ends->size() != axes->ints.size() || steps->size() != axes->ints.size()) {
    return fail("its axes, starts, ends and steps differ in length");
  }
  std::vector<CudaSliceRange>& ranges = form_.ranges;
  for (size_t d = 0; d < rank; ++d) {
    CudaSliceRange whole;  // the dim not sliced: 0, 1, its size
    whole.start = 0;
    whole.count = xd[d];
    ranges.push_back(std::move(whole));
  }
  for (size_t i = 0; i < axes->ints.size(); ++i) {
    size_t a = 0;
    if (!normalize_axis(axes->ints[i], static_cast<int64_t>(rank), &a) || ranges[a].sliced) {
      return fail("its axes name an axis out of range, or one twice");
    }
    const std::optional<int64_t> step = (*steps)[i].constant();
    if (from[2][i].first == kNone && (!step || *step == 0)) {
      return fail("a step is 0 or not known at generation time");
    }
    if (from[0][i].first != kNone || from[1][i].first != kNone || from[2][i].first != kNone) {
      CudaSliceRange& r = ranges[a];
      r.sliced = true;
      r.at_run_time = true;
      r.start = (*starts)[i];
      r.end = (*ends)[i];
      r.step = step.value_or(1);
      r.start_from = from[0][i];
      r.end_from = from[1][i];
      r.step_from = from[2][i];
      continue;
    }
    if (!slice_range(xd[a], (*starts)[i], (*ends)[i], *step, &ranges[a])) return false;
  }
  // The values' target shape: the slice's dims but the decrease axes, a 1 inserted for each none axis; `place[d]`
  // is x's dim d's index in it (none for a dropped dim).
  std::vector<bool> dropped(rank, false);
  for (int64_t d : decrease->ints) {
    size_t a = 0;
    if (!normalize_axis(d, static_cast<int64_t>(rank), &a)) return fail("a decrease axis is out of range");
    dropped[a] = true;
  }
  // A slice counted at run time has no count here: the values broadcast to it as Paddle checks when it runs (a dim
  // of 1 broadcasts, any other is taken as the count).
  SymShape target;
  std::vector<bool> counted;
  std::vector<size_t> kept;
  for (size_t d = 0; d < rank; ++d) {
    if (!dropped[d]) {
      target.push_back(ranges[d].count);
      counted.push_back(!ranges[d].at_run_time);
      kept.push_back(d);
    }
  }
  std::vector<int64_t> none_sorted = none->ints;
  std::sort(none_sorted.begin(), none_sorted.end());
  std::vector<size_t> place(rank, SIZE_MAX);
  std::vector<bool> is_none(target.size(), false);
  for (int64_t a : none_sorted) {
    if (a < 0 || static_cast<size_t>(a) > target.size()) return fail("a none axis is out of range");
    target.insert(target.begin() + a, SymExpr(1));
    counted.insert(counted.begin() + a, true);
    is_none.insert(is_none.begin() + a, true);
  }
  for (size_t t = 0, next = 0; t < target.size(); ++t) {
    if (!is_none[t]) place[kept[next++]] = t;
  }
  // The values: a tensor broadcast to the target (numpy's rules), or the constant list of `values` over `shape`.
  SymShape vdims;
  if (with_tensor) {
    vdims = value(values).dims;
  } else {
    const AttrConstant* shape = constant("shape");
    const AttrConstant* list = shape != nullptr ? constant("values") : nullptr;
    if (list == nullptr) return false;
    form_.constants = list->scalars;
    vdims.assign(shape->ints.begin(), shape->ints.end());
    if (form_.constants.empty() || form_.constants.size() > 64) {
      return fail("it sets no values, or more than 64 constants");
    }
    if (sym_numel(vdims) != SymExpr(static_cast<int64_t>(form_.constants.size()))) {
      return fail("its values do not fill its shape");
    }
  }
  std::vector<SymExpr> vstride(target.size(), SymExpr(0));
  SymExpr stride = 1;
  for (size_t i = target.size(), v = vdims.size(); i-- > 0 && v-- > 0;) {
    if (counted[i] && vdims[v] != target[i] && vdims[v] != SymExpr(1)) {
      return fail("its values do not broadcast to the slice");
    }
    vstride[i] = vdims[v] == SymExpr(1) ? SymExpr(0) : stride;
    stride = stride * vdims[v];
  }
  for (size_t v = 0; v + target.size() < vdims.size(); ++v) {
    if (vdims[v] != SymExpr(1)) return fail("its values have more dims than the slice");
  }
  if (!with_tensor && moved_as_16_bits(form_.dtype)) {
    return fail("it sets 16-bit float values, which the CUDA kernel does not take");
  }
  for (size_t d = 0; d < rank; ++d) form_.value_strides.push_back(place[d] != SIZE_MAX ? vstride[place[d]] : 0);
  return true;
}

}  // namespace kforge::passes::cuda_plan_internal
