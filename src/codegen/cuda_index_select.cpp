// The index-mapped CUDA kernels of the ops that pick, place or combine elements by an index or a rank
// (codegen/cuda_index.h; the plain data movement is cuda_index.cpp's, the arithmetic cuda_index_compute.cpp's), each
// computing what the CPU kernel of kernels/ computes, in the same order:
//   - topk (kernels/reduce_math.cc): one thread per element of x counts the elements of its line that come before it
//     in a strict order (NaN first when largest, last when smallest; equal values by the lower index:
//     kforge_index.cuh's topk_rank; the CPU kernel orders equal values as Paddle's does, which a GPU cannot
//     reproduce without running libstdc++'s partial_sort / nth_element: ties may come out in another order) and, when that rank is under k, stores the element and its index there. No sort: the same answer for every
//     schedule, and slow only for long lines (the count is over the whole line);
//   - gather_nd (kernels/index_movement.cc): the slice that each row of the index picks, an index outside its axis
//     (after Paddle's negative wrap) giving zeros where the CPU kernel's status is an error;
//   - scatter (kernels/index_ops.cc): out row r is x's, or for overwrite the last update whose index is r, or without
//     it the sum of the updates whose index is r in index order (Paddle's ScatterAssignAdd);
//   - roll (kernels/movement.cc), pad (constant, any rank: kernels/index_movement.cc), add_n (in input order,
//     kernels/elementwise.cc);
//   - set_value, set_value_with_tensor (kernels/index_ops.cc, Paddle's slice normalisation): out[e] is x's element
//     outside the strided slice, inside it the value's element at the same place of the slice (the values broadcast
//     to the slice's shape without its decrease axes, with a 1 for each none axis);
//   - assign outside a fused group (a copy that a set_value_ then writes in place: x.clone() before y[...] = v).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/axis.h"

namespace kforge::codegen::index_text {

namespace {

constexpr std::array<std::string_view, 9> kSelectOps = {"topk", "gather_nd", "scatter", "roll", "pad", "add_n",
                                                        "set_value", "set_value_with_tensor", "assign"};

class SelectCall : public IndexBuilder {
 public:
  using IndexBuilder::IndexBuilder;

  std::optional<std::vector<CudaIndexKernel>> build() {
    const std::string& op = call_.op;
    bool ok = false;
    if (op == "topk") ok = topk();
    else if (op == "gather_nd") ok = gather_nd();
    else if (op == "scatter") ok = scatter();
    else if (op == "roll") ok = roll();
    else if (op == "pad") ok = pad();
    else if (op == "add_n") ok = add_n();
    else if (op == "assign") ok = assign();
    else ok = set_value(op == "set_value_with_tensor");
    if (!ok) return std::nullopt;
    return take();
  }

 private:
  // The C++ type of an arithmetic dtype (bool excluded): integers, float32, float64; "" after fail().
  std::string number_type(uint32_t v) {
    const ir::DataType d = value(v).dtype;
    if (d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16 || d == ir::DataType::kBool ||
        !move_type(d)) {
      fail(fmt::format("it computes on {} values; the CUDA kernel takes integers, float32 and float64",
                       ir::dtype_name(d)));
      return "";
    }
    return *move_type(d);
  }

  uint32_t output(size_t i) const {
    return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
  }

  // topk along `axis`: thread e is x's element j of its line; its rank among the line's elements decides where it goes.
  bool topk() {
    const uint32_t x = call_.tensor_arg("x"), out = output(0), indices = output(1);
    if (x == kNone || (out == kNone && indices == kNone)) return fail("it needs an input and an output");
    const std::string type = out != kNone ? same_type(x, out, false) : number_type(x);
    if (type.empty()) return false;
    if (type == "bool" || type == "uint16_t") return fail("it ranks bool or 16-bit float values, which the CUDA kernel does not take");
    const std::optional<int64_t> k = constant_int(call_, "k", why_);
    const std::optional<int64_t> given = k ? constant_int(call_, "axis", why_) : std::nullopt;
    const std::optional<bool> largest = call_.constant_bool("largest");
    if (!given) return false;
    if (!largest) return fail("its largest is not a constant known at generation time");
    if (indices != kNone && value(indices).dtype != ir::DataType::kInt64) return fail("its indices are not int64");
    for (uint32_t v : {out, indices}) {
      if (v != kNone && value(v).buffer == value(x).buffer) return fail("an output shares its input's buffer");
    }
    const SymShape& xd = value(x).dims;
    SymExpr outer = 1, len = 1, inner = 1;
    if (!xd.empty()) {
      size_t a = 0;
      if (!passes::normalize_axis(*given, static_cast<int64_t>(xd.size()), &a)) return fail("its axis is out of range");
      for (size_t d = 0; d < a; ++d) outer = outer * xd[d];
      len = xd[a];
      for (size_t d = a + 1; d < xd.size(); ++d) inner = inner * xd[d];
    }
    if (*k < 0) return fail("its k is negative");
    KernelText t = text();
    const std::string in = t.input(x, type);
    if (out != kNone) t.output(out, type, "out");
    if (indices != kNone) t.output(indices, "int64_t", "out_indices");
    const std::string n = t.size(len), step = t.size(inner);
    t.line(fmt::format("const int64_t i = e % {0}, j = (e / {0}) % {1}, o = e / {0} / {1};", step, n));
    t.line(fmt::format("const int64_t base = o * {} * {} + i;", n, step));
    t.line(fmt::format("const {} v = {}[e];", type, in));
    t.line(fmt::format("const int64_t rank = kforge::cuda_index::topk_rank<{}>({} + base, {}, {}, j, v, {});", type,
                       in, n, step, *largest ? "true" : "false"));
    t.line(fmt::format("if (rank < {}) {{", *k));
    const std::string at = fmt::format("(o * {} + rank) * {} + i", *k, step);
    if (out != kNone) t.line(fmt::format("  out[{}] = v;", at));
    if (indices != kNone) t.line(fmt::format("  out_indices[{}] = j;", at));
    t.line("}");
    add(t, value(x).numel(), true);
    return true;
  }

  // gather_nd: index [..., k] picks, per row, the slice x[i0, ..., ik-1, :].
  bool gather_nd() {
    const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
    const std::string type = same_type(x, out, false);
    if (type.empty() || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs an index") : false;
    const std::string itype = index_type(index);
    if (itype.empty()) return false;
    const SymShape& xd = value(x).dims;
    const SymShape& id = value(index).dims;
    const std::optional<int64_t> depth = id.empty() ? std::optional<int64_t>(0) : id.back().constant();
    if (!depth || *depth < 0 || static_cast<size_t>(*depth) > xd.size()) {
      return fail("its index's last dim is not known at generation time, or exceeds x's rank");
    }
    const size_t k = static_cast<size_t>(*depth);
    SymExpr slice = 1;
    for (size_t d = k; d < xd.size(); ++d) slice = slice * xd[d];
    KernelText t = text();
    const std::string in = t.input(x, type), idx = t.input(index, itype);
    t.output(out, type);
    const std::string s = t.size(slice);
    t.line(fmt::format("const int64_t r = e / {};", s));
    t.line("int64_t at = 0;");
    t.line("bool inside = true;");
    SymExpr stride = slice;
    for (size_t j = k; j-- > 0;) {
      const std::string dim = t.size(xd[j]);
      t.line(fmt::format("{{ int64_t p = static_cast<int64_t>({}[r * {} + {}]);", idx, k, j));
      t.line(fmt::format("  if (p < 0) p += {};", dim));
      t.line(fmt::format("  inside = inside && p >= 0 && p < {};", dim));
      t.line(fmt::format("  at += p * {}; }}", t.size(stride)));
      stride = stride * xd[j];
    }
    t.line(fmt::format("out[e] = inside ? {}[at + e % {}] : {}(0);", in, s, type));
    add(t, value(out).numel());
    return true;
  }

  // scatter of 1-D index rows into x's rows (in place or not: each thread reads and writes its own element).
  bool scatter() {
    const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), updates = call_.tensor_arg("updates"),
                   out = out_value();
    const std::string type = same_type(x, out, false);
    const std::optional<bool> overwrite = call_.constant_bool("overwrite");
    if (type.empty() || index == kNone || updates == kNone) return type.empty() ? false : fail("it needs an index and updates");
    if (!overwrite) return fail("its overwrite is not a constant known at generation time");
    if (!*overwrite && number_type(x).empty()) return false;
    const std::string itype = index_type(index);
    if (itype.empty()) return false;
    if (value(updates).dtype != value(x).dtype) return fail("its updates and x differ in dtype");
    if (value(updates).buffer == value(out).buffer) return fail("its updates share its output's buffer");
    const SymShape& xd = value(x).dims;
    if (xd.empty()) return fail("its x has no rows");
    SymExpr row = 1;
    for (size_t d = 1; d < xd.size(); ++d) row = row * xd[d];
    KernelText t = text();
    const std::string in = t.input(x, type), idx = t.input(index, itype), up = t.input(updates, type);
    t.output(out, type);
    const std::string w = t.size(row), count = t.size(value(index).numel());
    t.line(fmt::format("const int64_t r = e / {}, c = e % {};", w, w));
    if (*overwrite) {
      t.line("int64_t last = -1;");
      t.line(fmt::format("for (int64_t q = 0; q < {}; ++q) if (static_cast<int64_t>({}[q]) == r) last = q;", count, idx));
      t.line(fmt::format("out[e] = last < 0 ? {}[e] : {}[last * {} + c];", in, up, w));
    } else {
      t.line("bool hit = false;");
      t.line(fmt::format("{} acc = 0;", type));
      t.line(fmt::format("for (int64_t q = 0; q < {}; ++q) {{", count));
      t.line(fmt::format("  if (static_cast<int64_t>({}[q]) != r) continue;", idx));
      t.line("  hit = true;");
      t.line(fmt::format("  acc += {}[q * {} + c];", up, w));
      t.line("}");
      t.line(fmt::format("out[e] = hit ? acc : {}[e];", in));
    }
    add(t, value(out).numel());
    return true;
  }

  // roll: out[c] = x[(c - shift) mod n] along each rolled axis, or along the flattened tensor without axes.
  bool roll() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    const passes::AttrConstant* shifts = type.empty() ? nullptr : constant(call_, "shifts", why_);
    const passes::AttrConstant* axes = shifts != nullptr ? constant(call_, "axis", why_) : nullptr;
    if (axes == nullptr || !own_buffer(x, out)) return false;
    const SymShape& xd = value(x).dims;
    const bool flat = axes->ints.empty();
    if (flat ? shifts->ints.size() != 1 : shifts->ints.size() != axes->ints.size()) {
      return fail("its shifts and axes differ in length");
    }
    const SymShape dims = flat ? SymShape{value(x).numel()} : xd;
    std::vector<int64_t> shift(dims.size(), 0);
    for (size_t i = 0; i < shifts->ints.size(); ++i) {
      size_t a = 0;
      if (!flat && !passes::normalize_axis(axes->ints[i], static_cast<int64_t>(xd.size()), &a)) {
        return fail("its axis names an axis out of range");
      }
      shift[a] += shifts->ints[i];  // Paddle adds the shifts of an axis named twice
    }
    KernelText t = text();
    const std::string in = t.input(x, type);
    t.output(out, type);
    t.coordinates(dims);
    std::vector<std::string> coords;
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string c = "c" + std::to_string(d);
      if (shift[d] == 0) {
        coords.push_back(c);
        continue;
      }
      const std::string n = t.size(dims[d]);
      t.line(fmt::format("const int64_t s{0} = (({1} % {2}) + {2}) % {2};", d, shift[d], n));
      t.line(fmt::format("const int64_t i{0} = (c{0} - s{0} + {1}) % {1};", d, n));
      coords.push_back("i" + std::to_string(d));
    }
    t.line(fmt::format("out[e] = {}[{}];", in, t.offset(coords, dims)));
    add(t, value(out).numel());
    return true;
  }

  // pad (constant) of any rank: paddings [before_0, after_0, before_1, ...].
  bool pad() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    const passes::AttrConstant* pads = type.empty() ? nullptr : constant(call_, "paddings", why_);
    const std::optional<double> fill = pads != nullptr ? constant_float(call_, "pad_value", why_) : std::nullopt;
    if (!fill || !own_buffer(x, out)) return false;
    const SymShape& xd = value(x).dims;
    const SymShape& od = value(out).dims;
    if (pads->ints.size() != 2 * xd.size() || od.size() != xd.size()) {
      return fail("its paddings are not two per dim of x");
    }
    if (type == "uint16_t" && *fill != 0) return fail("a 16-bit float pad value is not supported");
    KernelText t = text();
    const std::string in = t.input(x, type);
    t.output(out, type);
    t.coordinates(od);
    std::vector<std::string> coords, inside;
    for (size_t d = 0; d < xd.size(); ++d) {
      const int64_t before = pads->ints[2 * d];
      if (before == 0 && pads->ints[2 * d + 1] == 0) {
        coords.push_back("c" + std::to_string(d));
        continue;
      }
      t.line(fmt::format("const int64_t i{0} = c{0} - {1};", d, before));
      inside.push_back(fmt::format("i{0} >= 0 && i{0} < {1}", d, t.size(xd[d])));
      coords.push_back("i" + std::to_string(d));
    }
    const std::string load = fmt::format("{}[{}]", in, t.offset(coords, xd));
    if (inside.empty()) {
      t.line(fmt::format("out[e] = {};", load));
    } else {
      const std::string v = type == "bool" ? (*fill != 0 ? "true" : "false")
                            : type == "float" ? cpp_float(static_cast<float>(*fill))
                                              : fmt::format("static_cast<{}>({:.17g})", type, *fill);
      std::string when = inside[0];
      for (size_t i = 1; i < inside.size(); ++i) when += " && " + inside[i];
      t.line(fmt::format("out[e] = {} ? {} : {};", when, load, v));
    }
    add(t, value(out).numel());
    return true;
  }

  // One sliced axis of set_value: the first element, the step and the count (expressions of the dims where the
  // bounds are; those need a forward step).
  struct Range {
    SymExpr start, count;
    int64_t step = 1;
  };
  bool slice_range(const SymExpr& n, const SymExpr& start_given, const SymExpr& end_given, int64_t step, Range* r) {
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

  // The values of an IntArray attribute: constants, or expressions of the dims.
  std::optional<std::vector<SymExpr>> int_array(std::string_view name) {
    const KernelArg* a = call_.arg(name);
    if (a != nullptr && a->kind == ArgKind::kSymbolic) return a->symbolic;
    const passes::AttrConstant* c = constant(call_, name, why_);
    if (c == nullptr) return std::nullopt;
    return std::vector<SymExpr>(c->ints.begin(), c->ints.end());
  }

  // set_value (constant values) and set_value_with_tensor (a values tensor) into a strided slice of x.
  bool set_value(bool with_tensor) {
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

  // assign: a copy of x's elements.
  bool assign() {
    const uint32_t x = call_.tensor_arg("x"), out = out_value();
    const std::string type = same_type(x, out, false);
    if (type.empty() || !own_buffer(x, out)) return false;
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.line(fmt::format("out[e] = {}[e];", in));
    add(k, value(out).numel());
    return true;
  }

  // add_n: out = inputs[0] + inputs[1] + ... in input order, in the inputs' type.
  bool add_n() {
    const KernelArg* xs = call_.arg("inputs");
    const uint32_t out = out_value();
    if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || out == kNone) {
      return fail("it needs a list of inputs and one output");
    }
    KernelText t = text();
    std::vector<std::string> names;
    for (uint32_t v : xs->values) {
      if (same_type(v, out, false).empty() || number_type(v).empty()) return false;
      if (value(v).dims != value(out).dims) return fail("its inputs and output differ in dims");
      names.push_back(t.input(v, number_type(v)));
    }
    const std::string type = number_type(out);
    t.output(out, type);
    t.line(fmt::format("{} acc = {}[e];", type, names[0]));
    for (size_t i = 1; i < names.size(); ++i) t.line(fmt::format("acc += {}[e];", names[i]));
    t.line("out[e] = acc;");
    add(t, value(out).numel());
    return true;
  }
};

}  // namespace

bool is_select_op(std::string_view op) {
  return std::find(kSelectOps.begin(), kSelectOps.end(), op) != kSelectOps.end();
}

std::optional<std::vector<CudaIndexKernel>> select_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why) {
  SelectCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  return builder.build();
}

}  // namespace kforge::codegen::index_text
