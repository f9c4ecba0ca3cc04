// The CUDA kernels of set_value and set_value_with_tensor (cuda_index_select_call.h), as kernels/index_ops.cc with
// Paddle's slice normalisation: out[e] is x's element outside the strided slice, inside it the value's element at
// the same place of the slice (the values broadcast to the slice's shape without its decrease axes).
#include "codegen/cuda_index_select_call.h"

namespace kforge::codegen::index_text::select_internal {

bool SelectCall::slice_range(const SymExpr& n, const SymExpr& start_given, const SymExpr& end_given, int64_t step, Range* r) {
  r->step = step;
  const std::optional<int64_t> cn = n.constant(), cs = start_given.constant(), ce = end_given.constant();
  if (!cn || !cs || !ce) {
    if (step < 0) return fail("it steps backward through a slice whose bounds or dim are known only at run time");
    r->start = passes::slice_bound(n, start_given, false);
    const SymExpr end = passes::slice_bound(n, end_given, true);
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

std::optional<std::vector<SymExpr>> SelectCall::int_array(std::string_view name) {
  const KernelArg* a = call_.arg(name);
  if (a != nullptr && a->kind == ArgKind::kSymbolic) return a->symbolic;
  const passes::AttrConstant* c = constant(call_, name, why_);
  if (c == nullptr) return std::nullopt;
  return std::vector<SymExpr>(c->ints.begin(), c->ints.end());
}

bool SelectCall::set_value(bool with_tensor) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const uint32_t values = with_tensor ? call_.tensor_arg("values") : kNone;
  const std::string type = same_type(x, out, false);
  if (type.empty()) return false;
  if (with_tensor && (values == kNone || value(values).dtype != value(x).dtype)) {
    return fail("its values are not a tensor of x's dtype");
  }
  if (with_tensor && value(values).buffer == value(out).buffer) {
    return fail("its values share its output's buffer, which the threads of one kernel would race on");
  }
  const std::optional<std::vector<SymExpr>> starts = int_array("starts");
  const std::optional<std::vector<SymExpr>> ends = starts ? int_array("ends") : std::nullopt;
  const std::optional<std::vector<SymExpr>> steps = ends ? int_array("steps") : std::nullopt;
  const passes::AttrConstant* axes = steps ? constant(call_, "axes", why_) : nullptr;
  const passes::AttrConstant* decrease = axes != nullptr ? constant(call_, "decrease_axes", why_) : nullptr;
  const passes::AttrConstant* none = decrease != nullptr ? constant(call_, "none_axes", why_) : nullptr;
  if (none == nullptr) return false;
  const SymShape& xd = value(x).dims;
  const size_t rank = xd.size();
  if (starts->size() != axes->ints.size() || ends->size() != axes->ints.size() || steps->size() != axes->ints.size()) {
    return fail("its axes, starts, ends and steps differ in length");
  }
  std::vector<Range> ranges(rank);
  std::vector<bool> sliced(rank, false);
  for (size_t d = 0; d < rank; ++d) ranges[d] = Range{0, xd[d], 1};
  for (size_t i = 0; i < axes->ints.size(); ++i) {
    size_t a = 0;
    if (!passes::normalize_axis(axes->ints[i], static_cast<int64_t>(rank), &a) || sliced[a]) {
      return fail("its axes name an axis out of range, or one twice");
    }
    const std::optional<int64_t> step = (*steps)[i].constant();
    if (!step || *step == 0) return fail("a step is 0 or not known at generation time");
    if (!slice_range(xd[a], (*starts)[i], (*ends)[i], *step, &ranges[a])) return false;
    sliced[a] = true;
  }
  // The values' target shape: the slice's dims but the decrease axes, a 1 inserted for each none axis; `place[d]`
  // is x's dim d's index in it (none for a dropped dim).
  std::vector<bool> dropped(rank, false);
  for (int64_t d : decrease->ints) {
    size_t a = 0;
    if (!passes::normalize_axis(d, static_cast<int64_t>(rank), &a)) return fail("a decrease axis is out of range");
    dropped[a] = true;
  }
  SymShape target;
  std::vector<size_t> kept;
  for (size_t d = 0; d < rank; ++d) {
    if (!dropped[d]) {
      target.push_back(ranges[d].count);
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
    is_none.insert(is_none.begin() + a, true);
  }
  for (size_t t = 0, next = 0; t < target.size(); ++t) {
    if (!is_none[t]) place[kept[next++]] = t;
  }
  // The values: a tensor broadcast to the target (numpy's rules), or the constant list of `values` over `shape`.
  SymShape vdims;
  std::vector<passes::ScalarConstant> constants;
  if (with_tensor) {
    vdims = value(values).dims;
  } else {
    const passes::AttrConstant* shape = constant(call_, "shape", why_);
    const passes::AttrConstant* list = shape != nullptr ? constant(call_, "values", why_) : nullptr;
    if (list == nullptr) return false;
    constants = list->scalars;
    vdims.assign(shape->ints.begin(), shape->ints.end());
    if (constants.empty() || constants.size() > 64) return fail("it sets no values, or more than 64 constants");
    if (passes::sym_numel(vdims) != SymExpr(static_cast<int64_t>(constants.size()))) {
      return fail("its values do not fill its shape");
    }
  }
  std::vector<SymExpr> vstride(target.size(), SymExpr(0));
  SymExpr stride = 1;
  for (size_t i = target.size(), v = vdims.size(); i-- > 0 && v-- > 0;) {
    if (vdims[v] != target[i] && vdims[v] != SymExpr(1)) return fail("its values do not broadcast to the slice");
    vstride[i] = vdims[v] == SymExpr(1) ? SymExpr(0) : stride;
    stride = stride * vdims[v];
  }
  for (size_t v = 0; v + target.size() < vdims.size(); ++v) {
    if (vdims[v] != SymExpr(1)) return fail("its values have more dims than the slice");
  }
  KernelText k = text();
  const std::string in = k.input(x, type);
  const std::string vals = with_tensor ? k.input(values, type) : "vals";
  k.output(out, type);
  k.coordinates(xd);
  if (!with_tensor) {
    std::string list;
    for (const passes::ScalarConstant& c : constants) {
      const std::string one =
          type == "bool" ? ((c.is_floating ? c.float_value != 0 : c.int_value != 0) ? "true" : "false")
          : type == "uint16_t" ? ""
          : c.is_floating ? fmt::format("static_cast<{}>({:.17g})", type, c.float_value)
                          : fmt::format("static_cast<{}>({}LL)", type, c.int_value);
      if (one.empty()) return fail("it sets 16-bit float values, which the CUDA kernel does not take");
      list += (list.empty() ? "" : ", ") + one;
    }
    k.line(fmt::format("const {} vals[{}] = {{{}}};", type, constants.size(), list));
  }
  std::vector<std::string> inside;
  std::string voff;
  for (size_t d = 0; d < rank; ++d) {
    const Range& r = ranges[d];
    const std::string t = "t" + std::to_string(d);
    if (!sliced[d]) {
      k.line(fmt::format("[[maybe_unused]] const int64_t {} = c{};", t, d));
    } else {
      k.line(fmt::format("const int64_t {}_ = c{} - {};", t, d, k.size(r.start)));
      k.line(fmt::format("const int64_t {0} = {0}_ / {1};", t, r.step));
      inside.push_back(fmt::format("{0}_ % {1} == 0 && {0} >= 0 && {0} < {2}", t, r.step, k.size(r.count)));
    }
    if (place[d] != SIZE_MAX && vstride[place[d]] != SymExpr(0)) {
      voff += (voff.empty() ? "" : " + ") + fmt::format("{} * {}", t, k.size(vstride[place[d]]));
    }
  }
  std::string when;
  for (const std::string& c : inside) when += (when.empty() ? "" : " && ") + c;
  const std::string load = fmt::format("{}[{}]", vals, voff.empty() ? "0" : voff);
  k.line(fmt::format("out[e] = {} ? {} : {}[e];", when.empty() ? "true" : when, load, in));
  add(k, value(out).numel());
  return true;
}

}  // namespace kforge::codegen::index_text::select_internal
